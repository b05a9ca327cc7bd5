/**
 * The wave Action's own step (action.yml, "Handle the event") run as a runner runs it, against the GitHub
 * stand-in and the scripted Messages API (test/support/action-step.ts): a refusal is an answer, not a
 * failure. A typo, a self-approval and a stale plan each get their reply in the thread and end the step
 * green with outcome `refused` and wave's exit code in `exit-code`; `fail-on-refusal: true` fails it
 * instead (the control: the same refusal, the step red); a failure of wave's (the model API failing)
 * still fails the step, outcome `failed`. A plan with units approved in a workflow without unit jobs
 * runs to its end in the Action's job: each unit, its row, the merge, the delivery, wave/apply ended
 * (`units: jobs`, the control, leaves them to the workflow's unit jobs: pending, the matrix in the outputs).
 */
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {type ActionStepResult, runActionStep} from '../support/action-step.js'
import {type Sandbox, sha256, TEST_API_KEY} from '../support/cli.js'
import {
  FAREWELL,
  firstUserText,
  freshRunner,
  GITHUB_TOKEN,
  git,
  githubComment,
  githubFixture,
  githubJobEnv,
  nameIn,
  PLAN,
  planTurns,
  REVISED,
  runTurns,
  statusOf,
  UNITS_PLAN,
  useGitHubForge,
  pushToFeature,
} from '../support/forge-fixture.js'
import type {GitHubServer} from '../support/github-server.js'
import {type MessagesServer, reply} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
let github: GitHubServer
let remote: string
let headSha: string
let runs = 0
useGitHubForge({permissions: {alice: 'write', mona: 'maintain'}}, (made) => {
  ;({forge: github, headSha, remote, sandbox, server} = made)
})

/** The Action's steps for one comment on pull request 7, in a fresh runner, with the workflow's `with:` (`inputs`). */
async function actionOn(body: string, by: string, inputs: Record<string, string> = {}): Promise<ActionStepResult & {install: ActionStepResult}> {
  return actionFor('issue_comment', githubComment(github, 7, body, by).event, inputs)
}

/**
 * The Action's steps for one event, in a fresh runner, with the workflow's `with:` (`inputs`): the
 * project's dependencies installed (its own step, which must pass), then wave's step.
 */
async function actionFor(eventName: string, event: unknown, inputs: Record<string, string> = {}): Promise<ActionStepResult & {install: ActionStepResult}> {
  const {checkout, runner} = freshRunner(sandbox, remote, ++runs)
  const eventPath = path.join(runner, 'event.json')
  writeFileSync(eventPath, JSON.stringify(event))
  const env = githubJobEnv(github, {eventName, eventPath, run: runs, runner})
  const job = {
    checkout,
    env,
    home: sandbox.home,
    inputs: {'anthropic-api-key': TEST_API_KEY, 'base-url': server.url, ...inputs},
    runner,
    token: GITHUB_TOKEN,
  }
  const install = await runActionStep('deps', job)
  expect(install.code, install.stdout + install.stderr).toBe(0)
  return {...(await runActionStep('wave', job)), install}
}

const repliesTo = (login: string) => github.commentsOn(7).filter((c) => c.body.includes(`@${login} `) && !c.body.startsWith('<!--'))
const sticky = () => github.commentsOn(7).find((c) => c.body.startsWith('<!-- wave:plan:'))!
const planName = () => nameIn(sticky().body)
const rowOf = (body: string, unit: string) => body.split('\n').find((line) => line.startsWith(`| \`${unit}\` | `) && /^\| `[^`]+` \| [⏳✅❌]/u.test(line))

/** /wave plan of UNITS_PLAN by alice, then /wave approve by mona, each the Action's step; the approval's step. */
async function approvedUnits(units: Parameters<MessagesServer['push']>, inputs: Record<string, string> = {}): Promise<ActionStepResult> {
  server.push(...planTurns(UNITS_PLAN))
  expect((await actionOn('/wave plan Add a farewell function', 'alice', inputs)).code).toBe(0)
  // What the units' sessions are given, in order: farewell's, then other's.
  server.push(...units)
  return actionOn(`/wave approve ${planName()} --sha256 ${sha256(UNITS_PLAN)}`, 'mona', inputs)
}

describe('the Action: a refusal is an answer, not a failure', {timeout: 180_000}, () => {
  it('a typo gets its reply and a green step (outcome refused, exit-code 2); fail-on-refusal: true turns the same reply red', async () => {
    const typo = await actionOn('/wave aprove', 'alice')
    expect(typo.code, typo.stderr).toBe(0)
    expect(typo.outputs).toMatchObject({'exit-code': '2', outcome: 'refused'})
    expect(typo.stdout).toContain('::notice::wave answered the comment with a refusal (exit 2)')
    expect(repliesTo('alice')).toHaveLength(1)
    expect(repliesTo('alice')[0].body).toContain('Unknown command /wave aprove')

    // Control: the workflow asks refusals to fail the job.
    const strict = await actionOn('/wave aprove', 'alice', {'fail-on-refusal': 'true'})
    expect(strict.code).toBe(2)
    expect(strict.outputs).toMatchObject({'exit-code': '2', outcome: 'refused'})
    expect(repliesTo('alice')).toHaveLength(2)
    expect(server.messageRequests).toHaveLength(0)
  })

  it('a self-approval and a stale plan are refused green; a failure of wave’s still fails the step (outcome failed)', async () => {
    server.push(...planTurns())
    const planned = await actionOn('/wave plan Add a farewell function', 'alice', {'require-other-approver': 'true'})
    expect(planned.code, planned.stderr).toBe(0)
    expect(planned.outputs).toMatchObject({'exit-code': '0', outcome: 'planned'})
    const name = planName()

    const self = await actionOn(`/wave approve ${name} --sha256 ${sha256(PLAN)}`, 'alice', {'require-other-approver': 'true'})
    expect(self.code, self.stderr).toBe(0)
    expect(self.outputs).toMatchObject({'exit-code': '3', outcome: 'refused'})
    expect(repliesTo('alice').at(-1)!.body).toContain('may not approve it too')

    // The pull request's branch moves: the plan is stale.
    git(sandbox.repo, ['checkout', '-q', 'feature'])
    git(sandbox.repo, ['commit', '-q', '--allow-empty', '-m', 'Another push'])
    git(sandbox.repo, ['push', '-q', 'origin', 'feature'])
    github.pulls.get(7)!.head.sha = git(remote, ['rev-parse', 'refs/heads/feature'])
    const stale = await actionOn(`/wave approve ${name} --sha256 ${sha256(PLAN)}`, 'mona', {'require-other-approver': 'true'})
    expect(stale.code, stale.stderr).toBe(0)
    expect(stale.outputs).toMatchObject({'exit-code': '4', outcome: 'refused'})
    expect(repliesTo('mona').at(-1)!.body).toContain('is stale')
    expect(repliesTo('mona').at(-1)!.body).toContain(`Plan its task again on the current head: /wave plan ${name}`)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)

    // /wave plan NAME: the same task, planned again on the moved head, in a comment of its own.
    const asked = server.messageRequests.length
    server.push(...planTurns())
    const again = await actionOn(`/wave plan ${name}`, 'alice')
    expect(again.code, again.stderr).toBe(0)
    expect(again.outputs.outcome).toBe('planned')
    expect(firstUserText(server.messageRequests[asked])).toContain('Add a farewell function')
    const stickies = github.commentsOn(7).filter((c) => c.body.startsWith('<!-- wave:plan:'))
    expect(stickies).toHaveLength(2)
    const moved = git(remote, ['rev-parse', 'refs/heads/feature'])
    expect(stickies[1].body).toContain(moved.slice(0, 12))
    // The old plan's comment says it was planned again; approving it is refused green, naming the new plan.
    const fresh = nameIn(stickies[1].body)
    expect(statusOf(stickies[0].body)).toBe('↪️ superseded')
    const replaced = await actionOn(`/wave approve ${name} --sha256 ${sha256(PLAN)}`, 'mona')
    expect(replaced.code, replaced.stderr).toBe(0)
    expect(replaced.outputs).toMatchObject({'exit-code': '3', outcome: 'refused'})
    expect(repliesTo('mona').at(-1)!.body).toContain(`Plan ${name} was planned again as ${fresh} on ${moved.slice(0, 12)}: approve ${fresh}.`)
    // Control: a one-word task that names no plan here is planned as the task it is.
    server.push(...planTurns())
    const plain = await actionOn('/wave plan tidy-imports', 'alice')
    expect(plain.code, plain.stderr).toBe(0)
    expect(firstUserText(server.messageRequests.at(-2)!)).toContain('tidy-imports')

    // A failure of wave's: the model API answers 500 (nothing scripted); the comment says so and the step fails.
    const failed = await actionOn('/wave plan Add a goodbye function', 'alice')
    expect(failed.code).toBe(1)
    expect(failed.outputs).toMatchObject({'exit-code': '1', outcome: 'failed'})

    // A bare /wave approve names only plans with a file to approve: not the one whose planning failed.
    const failedName = nameIn(
      github
        .commentsOn(7)
        .filter((c) => c.body.startsWith('<!-- wave:plan:'))
        .at(-1)!.body,
    )
    expect(failedName).not.toBe(name)
    const bare = await actionOn('/wave approve', 'mona')
    expect(bare.outputs).toMatchObject({'exit-code': '2', outcome: 'refused'})
    const [several] = repliesTo('mona')
      .at(-1)!
      .body.split('\n')
      .filter((line) => line.includes('Several plans'))
    expect(several).toContain(fresh)
    // Nor the plan planned again.
    expect(several).not.toContain(name)
    expect(several).not.toContain(failedName)
  })
})

describe('the Action: a plan with units approved in a workflow without unit jobs', {timeout: 300_000}, () => {
  it('runs each unit in the job, fills its row, merges and delivers: wave/apply success, outcome merged', async () => {
    // farewell writes its file; other has nothing to change.
    const approve = await approvedUnits([...runTurns(), reply('src/other/ needs no change.')])
    expect(approve.code, approve.stderr).toBe(0)
    expect(approve.outputs).toMatchObject({'exit-code': '0', 'has-units': 'false', outcome: 'merged'})
    const body = sticky().body
    expect(statusOf(body)).toBe('✅ done')
    expect(rowOf(body, 'farewell')).toMatch(/^\| `farewell` \| ✅ merged \| test -f src\/farewell.ts passed \| \$/)
    expect(rowOf(body, 'other')).toMatch(/^\| `other` \| ✅ merged \| none \| \$/)
    const pushed = git(remote, ['rev-parse', 'refs/heads/feature'])
    expect(git(remote, ['rev-parse', `${pushed}^`])).toBe(headSha)
    expect(git(remote, ['show', `${pushed}:src/farewell.ts`])).toBe(FAREWELL.trimEnd())
    expect(github.statusesOf(pushed)['wave/apply']).toMatchObject({state: 'success'})
  })

  it('a unit that fails its check: the merge names it, wave/apply failure, the step red (exit 7), nothing pushed', async () => {
    const approve = await approvedUnits([reply('Nothing to write.'), reply('Still nothing.'), reply('No.'), reply('src/other/ needs no change.')])
    expect(approve.code).toBe(7)
    expect(approve.outputs).toMatchObject({'exit-code': '7', outcome: 'failed'})
    const body = sticky().body
    expect(rowOf(body, 'farewell')).toContain('❌ failed')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
    expect(github.statusesOf(headSha)['wave/apply']).toMatchObject({state: 'failure'})
  })

  it('control: units: jobs leaves them to the workflow’s unit jobs (pending rows, the matrix in the outputs, no unit run)', async () => {
    const approve = await approvedUnits([], {units: 'jobs'})
    expect(approve.code, approve.stderr).toBe(0)
    expect(approve.outputs).toMatchObject({'has-units': 'true', outcome: 'approved', units: '{"include":[{"unit":"farewell"},{"unit":"other"}]}'})
    expect(rowOf(sticky().body, 'farewell')).toBe('| `farewell` | ⏳ pending |  |  |')
    // Only planning asked the model.
    expect(server.messageRequests).toHaveLength(2)
  })
})

describe('the Action: a budget stop names the input the workflow set', {timeout: 120_000}, () => {
  it('max-budget-usd stops the plan (exit 5) and the comment names the max-budget-usd input, never WAVE_MAX_BUDGET_USD', async () => {
    server.push(...planTurns())
    const stopped = await actionOn('/wave plan Add a farewell function', 'alice', {'max-budget-usd': '0.001'})
    expect(stopped.code).toBe(5)
    expect(stopped.outputs).toMatchObject({'exit-code': '5', outcome: 'failed'})
    const said = github
      .commentsOn(7)
      .map((c) => c.body)
      .join('\n')
    expect(said).toContain('the max-budget-usd input 0.001')
    expect(said).not.toContain('WAVE_MAX_BUDGET_USD')
    expect(JSON.parse(stopped.stdout.split('\n')[0]).budget.source).toEqual({kind: 'variable', setting: 'the max-budget-usd input'})
  })
})

describe("the Action: the project's dependencies before the model", {timeout: 180_000}, () => {
  // The install's output is the project's: a mention, a fence of its own and a line of HTML try to escape the comment's fence.
  const FAILING = "echo 'npm ERR! could not resolve left-pad@^9'; echo '@mona look' >&2; printf '```\\n<img src=x>\\n'; exit 3"
  const said = () =>
    github
      .commentsOn(7)
      .map((c) => c.body)
      .join('\n')

  /** The fenced block of `body` that holds `text`: its fence, and what is inside. */
  function fenceHolding(body: string, text: string): {fence: string; inside: string} {
    const match = /^(`{3,})\n([\s\S]*?)\n\1$/m.exec(body.slice(body.lastIndexOf('Its last lines:')))
    expect(match, body).not.toBeNull()
    expect(match![2]).toContain(text)
    return {fence: match![1], inside: match![2]}
  }

  it('a failed install on /wave plan: the reply shows the command, exit, the tail in a fence and install-command; no model request, the job fails (exit 1)', async () => {
    const failed = await actionOn('/wave plan Add a farewell function', 'alice', {'install-command': FAILING})
    expect(failed.install.stdout).toContain("::error::The project's dependencies were not installed")
    expect(failed.code).toBe(1)
    expect(failed.outputs).toMatchObject({'exit-code': '1', outcome: 'failed'})
    expect(server.messageRequests).toHaveLength(0)
    const [answer] = repliesTo('alice')
    expect(answer.body).toContain("**The project's dependencies were not installed**, so wave asked no model and ran nothing")
    expect(answer.body).toContain('exited 3')
    expect(answer.body).toContain('set `install-command` to the command that installs')
    const {fence, inside} = fenceHolding(answer.body, 'npm ERR! could not resolve left-pad@\u200B^9')
    // The tail's own ``` cannot close the fence, its mention pings no one, its HTML stays text inside the fence.
    expect(fence.length).toBeGreaterThan(3)
    expect(inside).toContain('```\n<img src=x>')
    expect(answer.body).not.toMatch(/@mona/)
    expect(answer.body).toContain('@\u200Bmona look')
    expect(github.commentsOn(7).filter((c) => c.body.startsWith('<!-- wave:plan:'))).toHaveLength(0)
    expect(JSON.parse(failed.stdout.split('\n')[0]).error).toMatchObject({exitCode: 1})
  })

  it('a failed install on /wave approve: the plan’s comment says so, its status and approval untouched; control: the install fixed, the same approval runs', async () => {
    server.push(...planTurns())
    const planned = await actionOn('/wave plan Add a farewell function', 'alice', {'install-command': 'echo installed; true'})
    expect(planned.code, planned.stderr).toBe(0)
    expect(sticky().body).toContain('Dependencies: `echo installed; true` (install-command).')
    const name = planName()

    const failed = await actionOn(`/wave approve ${name} --sha256 ${sha256(PLAN)}`, 'mona', {'install-command': FAILING})
    expect(failed.code).toBe(1)
    expect(failed.outputs).toMatchObject({'exit-code': '1', outcome: 'failed'})
    // Only the planning asked the model.
    expect(server.messageRequests).toHaveLength(2)
    const body = sticky().body
    expect(statusOf(body)).toBe('⏳ awaiting approval')
    expect(body).toContain("**The project's dependencies were not installed**")
    fenceHolding(body, 'npm ERR! could not resolve left-pad')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    // Control: the install works now; the same approval command runs the plan.
    server.push(...runTurns())
    const ran = await actionOn(`/wave approve ${name} --sha256 ${sha256(PLAN)}`, 'mona')
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.outputs.outcome).toBe('ran')
    const done = sticky().body
    expect(statusOf(done)).toBe('✅ done')
    expect(done).not.toContain('were not installed')
    expect(done).toContain('Dependencies: none installed (no lockfile or manifest).')
    expect(said()).not.toContain('@mona look')
  })

  it('control: every comment of a job whose install succeeded says what was installed, and the model is asked', async () => {
    server.push(...planTurns())
    const planned = await actionOn('/wave plan Add a farewell function', 'alice', {'install-command': 'none'})
    expect(planned.code, planned.stderr).toBe(0)
    expect(server.messageRequests).toHaveLength(2)
    expect(sticky().body).toContain('Dependencies: none installed (install-command: none).')
    const typo = await actionOn('/wave aprove', 'alice')
    expect(typo.code).toBe(0)
    expect(repliesTo('alice').at(-1)!.body).toContain('Dependencies: none installed (no lockfile or manifest).')
  })
})

describe('the Action: replan-on-push', {timeout: 180_000}, () => {
  /** The pull_request synchronize event GitHub sends when `by` pushes new commits to pull request 7's branch, now at `head`. */
  const pushEvent = (head: string, by: string) => {
    const event = githubFixture('pull_request.labeled.json') as unknown as {
      action: string
      label?: unknown
      pull_request: {head: {sha: string}}
      sender: unknown
    }
    event.action = 'synchronize'
    delete event.label
    event.pull_request.head.sha = head
    event.sender = {id: 5002, login: by, type: 'User'}
    return event
  }

  it('plans a pending plan’s task again on the new head; an approved plan is left as it is; off (the default), a push plans nothing', async () => {
    // A plan awaiting approval, and another approved (it ran, and its delivery moved the branch).
    server.push(...planTurns())
    expect((await actionOn('/wave plan Add a farewell function', 'alice')).code).toBe(0)
    const pending = planName()
    server.push(...planTurns(REVISED))
    expect((await actionOn('/wave plan Add a goodbye function', 'alice')).code).toBe(0)
    const approvedName = nameIn(github.commentsOn(7).filter((c) => c.body.startsWith('<!-- wave:plan:'))[1].body)
    server.push(...runTurns())
    const ran = await actionOn(`/wave approve ${approvedName} --sha256 ${sha256(REVISED)}`, 'mona')
    expect(ran.code, ran.stderr).toBe(0)
    // Then alice pushes to the branch.
    const head = pushToFeature(sandbox, remote)
    github.pulls.get(7)!.head.sha = head
    const stickies = () => github.commentsOn(7).filter((c) => c.body.startsWith('<!-- wave:plan:'))
    const bodies = () => stickies().map((c) => c.body)
    const before = bodies()

    // Control: replan-on-push left at its default: the push asks nothing of the model, no comment changes.
    const asked = server.messageRequests.length
    const off = await actionFor('pull_request', pushEvent(head, 'alice'))
    expect(off.code, off.stderr).toBe(0)
    expect(off.outputs.outcome).toBe('ignored')
    expect(server.messageRequests).toHaveLength(asked)
    expect(bodies()).toEqual(before)

    // A push by someone who may not act here (read): passed over, no reply in the thread, no model request.
    github.permissions.rita = 'read'
    const comments = github.commentsOn(7).length
    const outsider = await actionFor('pull_request', pushEvent(head, 'rita'), {'replan-on-push': 'true'})
    expect(outsider.code, outsider.stderr).toBe(0)
    expect(outsider.outputs.outcome).toBe('ignored')
    expect(github.commentsOn(7)).toHaveLength(comments)
    expect(server.messageRequests).toHaveLength(asked)

    // On: the pending plan's task is planned again on the new head, in a comment of its own.
    server.push(...planTurns())
    const on = await actionFor('pull_request', pushEvent(head, 'alice'), {'replan-on-push': 'true'})
    expect(on.code, on.stderr).toBe(0)
    expect(on.outputs.outcome).toBe('planned')
    const requests = server.messageRequests.slice(asked)
    expect(requests).toHaveLength(2)
    expect(firstUserText(requests[0])).toContain('Add a farewell function')
    expect(firstUserText(requests[0])).not.toContain('goodbye')
    expect(stickies()).toHaveLength(3)
    const fresh = stickies()[2].body
    expect(fresh).toContain(`| Commit | \`${head}\` (feature) |`)
    expect(statusOf(fresh)).toBe('⏳ awaiting approval')
    expect(fresh).toContain(`the task of ${pending}, planned again on ${head.slice(0, 12)}`)
    expect(on.outputs.plan).toBe(nameIn(fresh))
    // The approved plan's comment is as it was; the pending one's says it was planned again.
    expect(bodies()[1]).toEqual(before[1])
    expect(statusOf(bodies()[0])).toBe('↪️ superseded')
    expect(bodies()[0]).toContain(`**Planned again as \`${nameIn(fresh)}\`** on \`${head.slice(0, 12)}\``)
    expect(github.statusesOf(head)['wave/plan']).toMatchObject({state: 'success'})

    // The same push handled again: the task's newest plan is on the head, so nothing is planned twice.
    const again = await actionFor('pull_request', pushEvent(head, 'alice'), {'replan-on-push': 'true'})
    expect(again.code, again.stderr).toBe(0)
    expect(again.outputs.outcome).toBe('ignored')
    expect(server.messageRequests).toHaveLength(asked + 2)
    expect(stickies()).toHaveLength(3)
  })
})
