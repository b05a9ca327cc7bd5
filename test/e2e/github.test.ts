/**
 * `wave github` end to end: bin/run.js handles one event at a time, as one workflow run would, against a
 * stand-in for the GitHub REST API (test/support/github-server.ts), a bare git repository as the remote,
 * and the scripted Messages API. Every run gets a fresh clone and a fresh WAVE_HOME, as a fresh runner
 * would: whatever a later run knows of a plan came through GitHub (its comment) and git.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {Marked, type Token} from 'marked'
import {describe, expect, it} from 'vitest'

import {runWave, type RunWaveResult, type Sandbox, sha256} from '../support/cli.js'
import {
  DENIED_RUN_TALLY,
  deniedRunTurns,
  expectPlanNotes,
  expectRunReport,
  expectTokenKept,
  FAREWELL,
  firstUserText,
  freshRunner,
  git,
  GITHUB_TOKEN,
  githubComment,
  githubFixture,
  githubJobEnv,
  nameIn,
  notedPlanTurns,
  PLAN,
  planTurns,
  REVISED,
  runTurns,
  statusOf,
  useGitHubForge,
  pushToFeature,
} from '../support/forge-fixture.js'
import type {GitHubServer, StoredComment} from '../support/github-server.js'
import {type MessagesServer, reply, toolResults, toolUse} from '../support/messages-server.js'

const TOKEN = GITHUB_TOKEN

let sandbox: Sandbox
let server: MessagesServer
let github: GitHubServer
let remote: string
let headSha: string
let runs = 0
// The remote, holding main and a pull request's branch "feature" (one commit ahead); pull request 7 and issue 12.
useGitHubForge({issue: true, permissions: {alice: 'write', mona: 'maintain', paula: 'read', rita: 'read'}}, (made) => {
  ;({forge: github, headSha, remote, sandbox, server} = made)
})

/** One workflow run: a fresh clone of the remote, a fresh WAVE_HOME, the event in a file. */
async function onGitHub(eventName: string, payload: unknown, env: Record<string, string> = {}): Promise<RunWaveResult> {
  const {checkout, runner} = freshRunner(sandbox, remote, ++runs)
  const eventPath = path.join(runner, 'event.json')
  writeFileSync(eventPath, JSON.stringify(payload))
  const result = await runWave(['github'], {
    cwd: checkout,
    env: {
      ...githubJobEnv(github, {eventName, eventPath, run: runs, runner}),
      ...env,
    },
    home: sandbox.home,
    server,
    timeoutMs: 60_000,
  })
  expectTokenKept(
    TOKEN,
    result,
    checkout,
    github.comments.map((c) => c.body),
  )
  return result
}

const fixture = githubFixture

/** A person's comment, written in the thread now (or at `at`), and the issue_comment event it makes. */
const comment = (issue: number, body: string, by = 'alice', at?: string) => githubComment(github, issue, body, by, at)

const stickies = (issue: number) => github.commentsOn(issue).filter((c) => c.body.startsWith('<!-- wave:plan:'))
function stickyOn(issue: number): StoredComment {
  const found = stickies(issue)
  expect(found).toHaveLength(1)
  return found[0]
}

const repliesTo = (issue: number, login: string) =>
  github.commentsOn(issue).filter((c) => c.user.type === 'Bot' && c.body.includes(`@${login} `) && !c.body.startsWith('<!--'))

/** `/wave plan` on the pull request, checked to have worked; returns the plan's name and sha256. */
async function planOnPull(task = 'Add a farewell function'): Promise<{name: string; sha: string; sticky: StoredComment}> {
  server.push(...planTurns())
  const result = await onGitHub('issue_comment', comment(7, `/wave plan ${task}`).event)
  expect(result.code, result.stderr).toBe(0)
  const sticky = stickyOn(7)
  return {name: nameIn(sticky.body), sha: sha256(PLAN), sticky}
}

describe('wave github: /wave plan', () => {
  it('posts one comment with the plan, its sha256, the commit and the exact answers, created then updated in place', async () => {
    server.push(...planTurns())
    const {event} = comment(7, '/wave plan Add a farewell function\r\n\r\nKeep it small.')
    const result = await onGitHub('issue_comment', event)
    expect(result.code, result.stderr).toBe(0)

    const sticky = stickyOn(7)
    const name = nameIn(sticky.body)
    expect(name).toMatch(/^[a-z]+(-[a-z]+)+$/)
    expect(statusOf(sticky.body)).toBe('⏳ awaiting approval')
    expect(sticky.body).toContain('```markdown\n' + PLAN.trimEnd() + '\n```')
    expect(sticky.body).toContain(`| sha256 | \`${sha256(PLAN)}\` |`)
    // Made against the pull request's head commit, on its branch.
    expect(sticky.body).toContain(`| Commit | \`${headSha}\` (feature) |`)
    expect(sticky.body).toContain(`/wave approve ${name} --sha256 ${sha256(PLAN)}`)
    expect(sticky.body).toContain(`/wave request-changes ${name} <what to change>`)
    expect(sticky.body).toContain(`/wave reject ${name} <reason>`)
    expect(sticky.body).toMatch(/\| Proposed mode \| `acceptEdits` \|/)
    // What planning cost, from the session's own usage (or saying the model has no price).
    expect(sticky.body).toMatch(/^\| Cost \| planning (\$\d+\.\d+|cost unknown \(no price for this model\)) \|$/m)

    // Posted once while planning, then edited in place (the commit statuses have their own test).
    const writes = github.writes().filter((r) => !r.path.includes('/statuses/'))
    expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /repos/octo/demo/issues/7/comments',
      `PATCH /repos/octo/demo/issues/comments/${sticky.id}`,
    ])
    expect(writes[0].body.body).toContain('🕐 planning')

    // The model was given the task as written, lines and all.
    expect(firstUserText(server.messageRequests[0])).toContain('Add a farewell function\n\nKeep it small.')
    expect(result.stdout).toContain(`Planned ${name}`)
  })

  it('plans when the label is added to a pull request, with its title and body as the task', async () => {
    server.push(...planTurns())
    const result = await onGitHub('pull_request', fixture('pull_request.labeled.json'))
    expect(result.code, result.stderr).toBe(0)
    expect(firstUserText(server.messageRequests[0])).toContain('Greet people by name\n\nAdds a greeting.')
    expect(statusOf(stickyOn(7).body)).toBe('⏳ awaiting approval')

    const other = fixture('pull_request.labeled.json')
    other.label.name = 'bug'
    const ignored = await onGitHub('pull_request', other)
    expect(ignored.code).toBe(0)
    expect(ignored.stdout).toContain('Nothing applies')
    expect(server.messageRequests).toHaveLength(2)
  })
})

describe('wave github: /wave approve', () => {
  it('by a writer: runs the plan from the comment and pushes a commit to the pull request branch', async () => {
    const {name, sha, sticky} = await planOnPull()
    const planning = server.messageRequests.length
    server.push(...runTurns())
    const approval = comment(7, `/wave approve ${name} --sha256 ${sha}\n\nLooks right.`, 'mona')
    const result = await onGitHub('issue_comment', approval.event)
    expect(result.code, result.stderr).toBe(0)

    // The run's conversation starts from the approved plan's bytes, which came through the comment.
    const run = server.messageRequests.slice(planning)
    expect(run).toHaveLength(2)
    expect(firstUserText(run[0])).toContain(PLAN.trimEnd())
    expect(firstUserText(run[0])).toContain(sha)

    // One commit on the pull request's branch, on top of the planned head.
    const [commit, parent, subject] = git(remote, ['log', '-1', '--format=%H%n%P%n%s', 'refs/heads/feature']).split('\n')
    expect(parent).toBe(headSha)
    expect(subject).toBe('wave: Add a farewell function')
    expect(git(remote, ['show', 'refs/heads/feature:src/farewell.ts']) + '\n').toBe(FAREWELL)
    expect(git(remote, ['log', '-1', '--format=%B', 'refs/heads/feature'])).toContain(approval.stored.html_url)
    expect(github.createdPulls).toEqual([])

    // The approval record the run went by names the commenter, the proposed mode, and these bytes.
    const record = JSON.parse(readFileSync(path.join(sandbox.root, `runner-${runs}`, 'wave', 'plans', `${name}.approval.json`), 'utf8'))
    expect(record).toMatchObject({
      allow: [],
      approver: 'mona',
      decision: 'approved',
      mode: 'acceptEdits',
      plan: {name, sha256: sha},
      repository: {head: headSha},
    })

    // The same comment says so.
    const after = stickyOn(7)
    expect(after.id).toBe(sticky.id)
    expect(statusOf(after.body)).toBe('✅ done')
    expect(after.body).toContain('| Approved by | @mona |')
    expect(after.body).toContain(`https://github.test/octo/demo/commit/${commit}`)
    expect(result.stdout).toContain(`pushed ${commit.slice(0, 12)} to feature`)
  })

  it("binds a plan's units in the approval record, as wave approve does", async () => {
    const units = `${PLAN}\n## Scope\n- src/**\n\n## Units\n\n### farewell\n#### Scope\n- src/farewell.ts\n\n### other\n#### Scope\n- src/other/**\n`
    server.push(...planTurns(units))
    expect((await onGitHub('issue_comment', comment(7, '/wave plan Add a farewell function').event)).code).toBe(0)
    const name = nameIn(stickyOn(7).body)
    // No run here: a plan with units fans out to one job per unit (test/e2e/forge-units.test.ts).
    const result = await onGitHub('issue_comment', comment(7, `/wave approve ${name} --sha256 ${sha256(units)}`, 'mona').event)
    expect(result.code, result.stderr).toBe(0)
    const record = JSON.parse(readFileSync(path.join(sandbox.root, `runner-${runs}`, 'wave', 'plans', `${name}.approval.json`), 'utf8'))
    expect(record.units).toEqual([
      {name: 'farewell', paths: ['src/farewell.ts'], verify: []},
      {name: 'other', paths: ['src/other/**'], verify: []},
    ])
  })

  it('on an issue: pushes wave/<plan> and opens a pull request against the default branch linking the plan and the approval', async () => {
    server.push(...planTurns())
    expect((await onGitHub('issue_comment', comment(12, '/wave plan Add a farewell function').event)).code).toBe(0)
    const sticky = stickyOn(12)
    const name = nameIn(sticky.body)
    // An issue's plan is made against the tip of the default branch.
    expect(sticky.body).toContain(`| Commit | \`${git(remote, ['rev-parse', 'refs/heads/main'])}\` (main) |`)

    server.push(...runTurns())
    const approval = comment(12, '/wave approve')
    const result = await onGitHub('issue_comment', approval.event)
    expect(result.code, result.stderr).toBe(0)

    expect(git(remote, ['show', `refs/heads/wave/${name}:src/farewell.ts`]) + '\n').toBe(FAREWELL)
    expect(git(remote, ['rev-parse', `refs/heads/wave/${name}^`])).toBe(git(remote, ['rev-parse', 'refs/heads/main']))
    expect(github.createdPulls).toHaveLength(1)
    const pull = github.createdPulls[0]
    expect(pull).toMatchObject({base: 'main', head: `wave/${name}`, title: 'wave: Add a farewell function'})
    expect(pull.body).toContain(sticky.html_url)
    expect(pull.body).toContain(approval.stored.html_url)
    expect(pull.body).toContain(sha256(PLAN))
    expect(stickyOn(12).body).toContain(`| Delivered | [pull request](https://github.test/octo/demo/pull/${pull.number}) from \`wave/${name}\` |`)
    // The pull request the run opened is the delivered commit's own, not a sibling sharing it: success there.
    expect(github.statusesOf(git(remote, ['rev-parse', `refs/heads/wave/${name}`]))['wave/apply']).toMatchObject({state: 'success'})
  })

  it('by a reader: replies that they may not, and does nothing else', async () => {
    const {name, sha, sticky} = await planOnPull()
    const before = {body: sticky.body, updated: sticky.updated_at}
    const planning = server.messageRequests.length
    const result = await onGitHub('issue_comment', comment(7, `/wave approve ${name} --sha256 ${sha}`, 'rita').event)

    expect(result.code).toBe(0)
    expect(result.stdout).toContain('@rita may not')
    const [answer] = repliesTo(7, 'rita')
    expect(answer.body).toContain('@rita you may not ask wave to act here: that takes write permission on the repository, and you have the role read.')
    expect(server.messageRequests).toHaveLength(planning)
    expect(stickyOn(7)).toMatchObject({body: before.body, updated_at: before.updated})
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })

  it('takes the minimum permission from the configuration (here maintain: a writer may not)', async () => {
    const result = await onGitHub('issue_comment', comment(7, '/wave plan Add a farewell function').event, {WAVE_GITHUB_MIN_PERMISSION: 'maintain'})
    expect(result.code).toBe(0)
    expect(repliesTo(7, 'alice')[0].body).toContain('that takes maintain permission on the repository, and you have the role write')
    expect(stickies(7)).toEqual([])
    expect(server.requests).toEqual([])
  })

  it('refuses a plan changed after the approving comment was written, and an approval naming an older sha256', async () => {
    const {name, sha} = await planOnPull()
    // alice approves the plan she read...
    const early = comment(7, `/wave approve ${name}`, 'alice')
    // ...while mona's request for changes is handled first: the plan is revised.
    server.push(...planTurns(REVISED))
    expect((await onGitHub('issue_comment', comment(7, `/wave request-changes ${name} Call it goodbye`, 'mona').event)).code).toBe(0)
    const revised = stickyOn(7)
    expect(revised.body).toContain(`| sha256 | \`${sha256(REVISED)}\` |`)
    const modelCalls = server.messageRequests.length

    const refused = await onGitHub('issue_comment', early.event)
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain('changed after the approval was written')
    expect(repliesTo(7, 'alice')[0].body).toContain('changed after the approval was written')

    // A comment written now, but copied from the old version (its sha256), is refused too.
    const stale = await onGitHub('issue_comment', comment(7, `/wave approve ${name} --sha256 ${sha}`, 'alice').event)
    expect(stale.code).toBe(4)
    expect(stale.stderr).toContain(`names sha256 ${sha.slice(0, 12)}`)

    expect(server.messageRequests).toHaveLength(modelCalls)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
    expect(stickyOn(7)).toMatchObject({body: revised.body, updated_at: revised.updated_at})
  })

  it('finds plans only in its own comments: a look-alike comment by a person is no plan', async () => {
    server.push(...planTurns())
    expect((await onGitHub('issue_comment', comment(12, '/wave plan Add a farewell function').event)).code).toBe(0)
    // paula copies wave's comment, plan block and all, onto the pull request.
    github.addComment(7, stickyOn(12).body, {login: 'paula'})
    const planning = server.messageRequests.length
    const result = await onGitHub('issue_comment', comment(7, '/wave approve').event)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('No plan in this thread to approve')
    expect(server.messageRequests).toHaveLength(planning)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })
})

describe('wave github: failures', () => {
  it('reports a failed run in the comment with what its exit code means; a new approval runs it again', async () => {
    const {name, sticky} = await planOnPull()
    // No model turn scripted for the run: the API answers 500, not retried.
    const failed = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`).event)
    expect(failed.code).toBe(1)
    const after = stickyOn(7)
    expect(after.id).toBe(sticky.id)
    expect(statusOf(after.body)).toBe('❌ failed')
    expect(after.body).toContain('**The run failed** (exit 1: runtime failure')
    expect(after.body).toContain(`/wave approve ${name} --sha256 ${sha256(PLAN)}`)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    server.push(...runTurns())
    const again = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`).event)
    expect(again.code, again.stderr).toBe(0)
    expect(statusOf(stickyOn(7).body)).toBe('✅ done')
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })

  it('refuses a plan whose pull request branch moved since (exit 4), before any model request', async () => {
    const {name} = await planOnPull()
    git(sandbox.repo, ['checkout', '-q', 'feature'])
    git(sandbox.repo, ['commit', '-q', '--allow-empty', '-m', 'Another push'])
    git(sandbox.repo, ['push', '-q', 'origin', 'feature'])
    const moved = git(remote, ['rev-parse', 'refs/heads/feature'])
    github.pulls.get(7)!.head.sha = moved
    const planning = server.messageRequests.length

    const result = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`).event)
    expect(result.code).toBe(4)
    expect(result.stderr).toContain(`Plan ${name} is stale: it was made against ${headSha.slice(0, 12)}, and feature is now at ${moved.slice(0, 12)}`)
    expect(repliesTo(7, 'alice')[0].body).toContain('is stale')
    expect(server.messageRequests).toHaveLength(planning)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(moved)
  })
})

describe('wave github: a plan planned again', {timeout: 120_000}, () => {
  /** A commit pushed to the pull request's branch: its head moves, and the plans made before are stale. */
  function pushToPull(): string {
    const moved = pushToFeature(sandbox, remote)
    github.pulls.get(7)!.head.sha = moved
    return moved
  }

  it('after a push, /wave plan OLD: OLD’s comment says it was planned again as NEW; /wave approve OLD is refused naming NEW, NEW runs', async () => {
    const {name: old} = await planOnPull()
    const moved = pushToPull()
    server.push(...planTurns())
    const again = await onGitHub('issue_comment', comment(7, `/wave plan ${old}`).event)
    expect(again.code, again.stderr).toBe(0)
    const [before, after] = stickies(7)
    const fresh = nameIn(after.body)
    expect(fresh).not.toBe(old)
    expect(statusOf(after.body)).toBe('⏳ awaiting approval')
    expect(again.stdout).toContain(`${old}'s comment says it was planned again as ${fresh}`)

    // The old comment, edited in place: replaced, naming the new plan and its commit; no answer that approves it.
    expect(nameIn(before.body)).toBe(old)
    expect(statusOf(before.body)).toBe('↪️ superseded')
    expect(before.body).toContain(
      `**Planned again as \`${fresh}\`** on \`${moved.slice(0, 12)}\` ([its comment](${after.html_url})): this plan can no longer be approved`,
    )
    expect(before.body).toContain(`| Planned again as | \`${fresh}\` on \`${moved.slice(0, 12)}\` |`)
    expect(before.body).not.toContain(`/wave approve ${old}`)
    expect(before.body).not.toContain('awaiting approval')
    // Its history stays, the replacement added to it; its plan, commit and sha256 are as they were.
    expect(before.body).toMatch(/- \S+ planned by @alice \(sha256 `[0-9a-f]{12}`\)/)
    expect(before.body).toMatch(new RegExp(`- \\S+ superseded by @alice .*: planned again as ${fresh} on ${moved.slice(0, 12)}`))
    expect(before.body).toContain(`| Commit | \`${headSha}\` (feature) |`)
    expect(before.body).toContain(`| sha256 | \`${sha256(PLAN)}\` |`)
    // The head's statuses are the new plan's.
    expect(github.statusesOf(moved)['wave/plan']).toMatchObject({description: `Plan ${fresh} awaits approval`, state: 'success'})

    const asked = server.messageRequests.length
    const refused = await onGitHub('issue_comment', comment(7, `/wave approve ${old} --sha256 ${sha256(PLAN)}`, 'mona').event)
    expect(refused.code).toBe(3)
    const line = `Plan ${old} was planned again as ${fresh} on ${moved.slice(0, 12)}: approve ${fresh}.`
    expect(refused.stderr).toContain(line)
    expect(repliesTo(7, 'mona').at(-1)!.body).toContain(line)
    expect(server.messageRequests).toHaveLength(asked)
    // A bare /wave approve never suggests the superseded plan: the new one is the only plan to approve.
    server.push(...runTurns())
    const bare = await onGitHub('issue_comment', comment(7, '/wave approve', 'mona').event)
    expect(bare.code, bare.stderr).toBe(0)
    expect(bare.stdout).toContain(`Ran ${fresh}, approved by @mona`)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(moved)
    expect(statusOf(stickies(7)[1].body)).toBe('✅ done')
    expect(statusOf(stickies(7)[0].body)).toBe('↪️ superseded')

    // /wave plan OLD once more: the task's newest plan (NEW, done) is not replaced; the new plan names OLD's task.
    server.push(...planTurns())
    const third = await onGitHub('issue_comment', comment(7, `/wave plan ${old}`).event)
    expect(third.code, third.stderr).toBe(0)
    expect(firstUserText(server.messageRequests.at(-2)!)).toContain('Add a farewell function')
    expect(stickies(7)).toHaveLength(3)
    expect(statusOf(stickies(7)[1].body)).toBe('✅ done')
  })

  it('control: a planning again that failed (the model API failing, a budget stop) leaves OLD’s comment awaiting approval, as it was', async () => {
    const {name: old} = await planOnPull()
    pushToPull()
    const [shown] = stickies(7).map((c) => c.body)
    // Nothing scripted: the API answers 500.
    const failed = await onGitHub('issue_comment', comment(7, `/wave plan ${old}`).event)
    expect(failed.code).toBe(1)
    server.push(...planTurns())
    const stopped = await onGitHub('issue_comment', comment(7, `/wave plan ${old}`).event, {WAVE_MAX_BUDGET_USD: '0.000001'})
    expect(stopped.code, stopped.stderr).toBe(5)
    const all = stickies(7)
    expect(all).toHaveLength(3)
    expect(all.slice(1).map((c) => statusOf(c.body))).toEqual(['❌ failed', '❌ failed'])
    expect(all[0].body).toBe(shown)
    expect(statusOf(all[0].body)).toBe('⏳ awaiting approval')
    expect(all[0].body).toContain(`/wave approve ${old} --sha256 ${sha256(PLAN)}`)
  })
})

describe('wave github: a manual run', () => {
  it('opens an issue holding the task and plans there, against the commit the run was started on', async () => {
    server.push(...planTurns())
    const main = git(remote, ['rev-parse', 'refs/heads/main'])
    const result = await onGitHub('workflow_dispatch', fixture('workflow_dispatch.json'), {GITHUB_REF_NAME: 'main', GITHUB_SHA: main})
    expect(result.code, result.stderr).toBe(0)
    const opened = [...github.issues.values()].filter((issue) => ![7, 12].includes(issue.number))
    expect(opened).toHaveLength(1)
    expect(opened[0]).toMatchObject({pull: false, title: 'wave: Add a farewell function'})
    expect(opened[0].body).toContain('@alice asked wave to plan this on `main`')
    const sticky = stickyOn(opened[0].number)
    expect(sticky.body).toContain(`| Commit | \`${main}\` (main) |`)
    expect(statusOf(sticky.body)).toBe('⏳ awaiting approval')
  })
})

describe('wave github: /wave request-changes and /wave reject', () => {
  it('revises with the feedback and updates the same comment; the revised plan is what then runs', async () => {
    const {name, sticky} = await planOnPull()
    const planning = server.messageRequests.length
    const written = github.writes().length
    server.push(...planTurns(REVISED))
    const feedback = 'Name the function goodbye, not farewell.'
    const result = await onGitHub('issue_comment', comment(7, `/wave request-changes ${name} ${feedback}`).event)
    expect(result.code, result.stderr).toBe(0)

    // The revision's conversation carries the feedback; only the plan's comment was written to, in place.
    expect(firstUserText(server.messageRequests[planning])).toContain(feedback)
    const writes = github
      .writes()
      .slice(written)
      .filter((r) => !r.path.includes('/statuses/'))
    expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual(Array(3).fill(`PATCH /repos/octo/demo/issues/comments/${sticky.id}`))
    expect(writes.map((r) => statusOf(r.body.body))).toEqual(['✏️ changes requested', '🕐 revising', '⏳ awaiting approval'])
    const revised = stickyOn(7)
    expect(revised.id).toBe(sticky.id)
    expect(statusOf(revised.body)).toBe('⏳ awaiting approval')
    expect(revised.body).toContain('```markdown\n' + REVISED.trimEnd() + '\n```')
    expect(revised.body).not.toContain(PLAN.trimEnd())
    expect(revised.body).toContain(`/wave approve ${name} --sha256 ${sha256(REVISED)}`)
    expect(revised.body).toMatch(/changes requested by @alice .*Name the function goodbye/)

    server.push(...runTurns())
    const approved = await onGitHub('issue_comment', comment(7, `/wave approve ${name} --sha256 ${sha256(REVISED)}`, 'mona').event)
    expect(approved.code, approved.stderr).toBe(0)
    expect(firstUserText(server.messageRequests.at(-2)!)).toContain(REVISED.trimEnd())
  })

  it('rejects with the reason; the plan can then no longer be approved', async () => {
    const {name} = await planOnPull()
    const result = await onGitHub('issue_comment', comment(7, `/wave reject ${name} Out of scope for this PR`).event)
    expect(result.code, result.stderr).toBe(0)
    const sticky = stickyOn(7)
    expect(statusOf(sticky.body)).toBe('🚫 rejected')
    expect(sticky.body).toContain('Out of scope for this PR')
    expect(sticky.body).not.toContain('/wave approve')

    const approve = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`).event)
    expect(approve.code).toBe(3)
    expect(approve.stderr).toContain(`Plan ${name} is rejected`)
  })
})

describe('wave github: what the comment and the job summary show', {timeout: 120_000}, () => {
  it("the model's to-do list, its open questions and the plan's contract, then the run's checks and its denied calls", async () => {
    server.push(...notedPlanTurns())
    const planSummary = path.join(sandbox.root, 'plan-summary.md')
    const planned = await onGitHub('issue_comment', comment(7, '/wave plan Add a farewell function').event, {GITHUB_STEP_SUMMARY: planSummary})
    expect(planned.code, planned.stderr).toBe(0)
    const sticky = stickyOn(7)
    const name = nameIn(sticky.body)
    const summary = readFileSync(planSummary, 'utf8')
    expect(summary).toContain(`## wave github\n\nPlanned ${name}`)
    expectPlanNotes(sticky.body, 'comment')
    expectPlanNotes(summary, 'job summary')

    server.push(...deniedRunTurns())
    const planning = server.messageRequests.length
    const runSummary = path.join(sandbox.root, 'run-summary.md')
    const ran = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, {
      GITHUB_STEP_SUMMARY: runSummary,
      // What is shown is the subject here, not the sandbox: the check runs as approved either way.
      WAVE_GITHUB_SANDBOX: 'off',
    })
    expect(ran.code, ran.stderr).toBe(0)
    expect(toolResults(server.messageRequests[planning + 1])[0].text).toMatch(/^Permission denied/)
    expect(existsSync(path.join(sandbox.root, `runner-${runs}`, 'escaped.txt'))).toBe(false)
    // The text tally, the comment and the job summary each count the denied call.
    expect(ran.stderr).toContain(DENIED_RUN_TALLY)
    const done = stickyOn(7)
    expect(statusOf(done.body)).toBe('✅ done')
    expectRunReport(done.body, 'comment')
    expectRunReport(readFileSync(runSummary, 'utf8'), 'job summary')
    expect(git(remote, ['show', 'refs/heads/feature:src/farewell.ts']) + '\n').toBe(FAREWELL)
  })
})

describe('wave github: events that ask nothing', () => {
  it('exits 0 without a request for a comment not starting with /wave, an edit, an app, and an unrelated event', async () => {
    const plain = comment(7, 'Thanks! Could wave look at this? /wave plan later').event
    const edited = {...(comment(7, '/wave plan Do it').event as object), action: 'edited'}
    const byApp = comment(7, '/wave approve', 'dependabot[bot]').event as {comment: {user: {type: string}}}
    byApp.comment.user.type = 'Bot'
    for (const [name, payload] of [
      ['issue_comment', plain],
      ['issue_comment', edited],
      ['issue_comment', byApp],
      ['push', fixture('push.json')],
    ] as const) {
      const result = await onGitHub(name, payload)
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toMatch(/^Nothing applies: /)
    }

    expect(github.requests).toEqual([])
    expect(server.requests).toEqual([])
  })

  it('answers /wave with a typo by listing the commands (exit 2)', async () => {
    const result = await onGitHub('issue_comment', comment(7, '/wave aprove').event)
    expect(result.code).toBe(2)
    expect(repliesTo(7, 'alice')[0].body).toContain('/wave request-changes [<plan>] <what to change>')
  })
})

describe('wave github: separation of duties', {timeout: 120_000}, () => {
  it('require-other-approver: the person who asked for the plan may not approve it; someone else may', async () => {
    const {name} = await planOnPull()
    const planning = server.messageRequests.length
    const own = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'alice').event, {WAVE_REQUIRE_OTHER_APPROVER: '1'})
    expect(own.code).toBe(3)
    expect(own.stderr).toContain(
      `Plan ${name} was asked for by @alice, who may not approve it too: an approval must come from someone else (require-other-approver).`,
    )
    expect(repliesTo(7, 'alice').at(-1)!.body).toContain('Ask another person with access to approve it.')
    expect(server.messageRequests).toHaveLength(planning)
    expect(statusOf(stickyOn(7).body)).toBe('⏳ awaiting approval')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    server.push(...runTurns())
    const other = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, {WAVE_REQUIRE_OTHER_APPROVER: '1'})
    expect(other.code, other.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })

  it('required-approvals 2: the first approval is recorded ("1 of 2") and runs nothing, the same person counts once, the requester never under require-other-approver; the second person runs it', async () => {
    github.permissions = {...github.permissions, bob: 'write'}
    const {name} = await planOnPull()
    const planning = server.messageRequests.length
    const two = {WAVE_REQUIRE_OTHER_APPROVER: '1', WAVE_REQUIRED_APPROVALS: '2'}
    const approve = (by: string) => onGitHub('issue_comment', comment(7, `/wave approve ${name}`, by).event, two)
    const nothingRan = () => {
      expect(server.messageRequests).toHaveLength(planning)
      expect(statusOf(stickyOn(7).body)).toBe('⏳ awaiting approval')
      expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
      expect(github.statusesOf(headSha)['wave/apply']).toMatchObject({state: 'pending'})
    }

    // The requester is refused before anything is counted.
    expect((await approve('alice')).code).toBe(3)
    expect(stickyOn(7).body).not.toContain('| Approvals |')
    nothingRan()

    const first = await approve('mona')
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toContain(`Approval 1 of 2 for ${name} by @mona`)
    expect(stickyOn(7).body).toContain('| Approvals | 1 of 2: @mona |')
    nothingRan()

    const again = await approve('mona')
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain(`@mona already approved ${name}: 1 of 2 approvals`)
    expect(stickyOn(7).body).toContain('| Approvals | 1 of 2: @mona |')
    nothingRan()

    server.push(...runTurns())
    const second = await approve('bob')
    expect(second.code, second.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
    expect(stickyOn(7).body).toContain('| Approved by | @bob |')
    expect(github.statusesOf(headSha)['wave/apply']).toMatchObject({state: 'success'})
  })

  it('control: required-approvals 2 without require-other-approver counts the requester: hers, then another approval, runs it', async () => {
    const {name} = await planOnPull()
    const planning = server.messageRequests.length
    const counted = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'alice').event, {WAVE_REQUIRED_APPROVALS: '2'})
    expect(counted.code, counted.stderr).toBe(0)
    expect(stickyOn(7).body).toContain('| Approvals | 1 of 2: @alice |')
    expect(server.messageRequests).toHaveLength(planning)

    server.push(...runTurns())
    const ran = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, {WAVE_REQUIRED_APPROVALS: '2'})
    expect(ran.code, ran.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })

  it('require-review and require-mergeable: refused until someone else approved in a review and the pull request can merge', async () => {
    const {name} = await planOnPull()
    const planning = server.messageRequests.length
    const strict = {WAVE_REQUIRE_MERGEABLE: '1', WAVE_REQUIRE_REVIEW: '1'}
    const pull = github.pulls.get(7)!
    // The author's own approval does not count, and mona's newest review asks for changes.
    pull.reviews = [
      {state: 'APPROVED', user: 'alice'},
      {state: 'APPROVED', user: 'mona'},
      {state: 'CHANGES_REQUESTED', user: 'mona'},
    ]
    const unreviewed = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, strict)
    expect(unreviewed.code).toBe(3)
    expect(unreviewed.stderr).toContain(
      'Pull request #7 needs an approval by someone other than @alice before wave runs a plan, and its only approvals are by @alice (require-review).',
    )
    expect(repliesTo(7, 'mona').at(-1)!.body).toContain('Approve the pull request on GitHub, then approve the plan again.')

    pull.reviews.push({state: 'APPROVED', user: 'mona'})
    pull.mergeable = false
    const conflicted = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, strict)
    expect(conflicted.code).toBe(3)
    expect(conflicted.stderr).toContain('Pull request #7 cannot be merged')
    expect(server.messageRequests).toHaveLength(planning)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    pull.mergeable = true
    server.push(...runTurns())
    const approved = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, strict)
    expect(approved.code, approved.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })
})

describe('wave github: commit statuses and the dollar cap', {timeout: 120_000}, () => {
  const statusLog = (sha: string) => github.statuses.filter((s) => s.sha === sha).map((s) => `${s.context} ${s.state}`)

  it('sets wave/plan and wave/apply on the head at each stage, linking the comment, and on the commit the run pushed', async () => {
    const {name, sha, sticky} = await planOnPull()
    // Pending while planning, then the plan made and the apply awaited, each linking the plan's comment.
    expect(statusLog(headSha)).toEqual(['wave/plan pending', 'wave/plan success', 'wave/apply pending'])
    expect(github.statusesOf(headSha)['wave/apply']).toMatchObject({description: `Plan ${name} awaits /wave approve`, target_url: sticky.html_url})
    expect(github.statuses.every((s) => s.target_url === sticky.html_url)).toBe(true)

    server.push(...runTurns())
    const ran = await onGitHub('issue_comment', comment(7, `/wave approve ${name} --sha256 ${sha}`, 'mona').event)
    expect(ran.code, ran.stderr).toBe(0)
    const pushed = git(remote, ['rev-parse', 'refs/heads/feature'])
    expect(statusLog(headSha).slice(3)).toEqual(['wave/plan success', 'wave/apply pending', 'wave/apply success'])
    expect(github.statusesOf(headSha)['wave/apply'].description).toBe(`Ran ${name}, approved by @mona: delivered ${pushed.slice(0, 12)}`)
    // The pushed commit is the pull request's head now: branch protection finds both statuses there.
    expect(github.statusesOf(pushed)).toMatchObject({'wave/apply': {state: 'success'}, 'wave/plan': {state: 'success'}})
  })

  /** Pull request 12 opened on the same head as 7 (its branch a copy of feature), open or closed; then a plan on 7 approved and run. */
  async function runWithSibling(state: 'open' | 'closed'): Promise<{name: string; pushed: string}> {
    github.addPull({base: {ref: 'main'}, head: {ref: 'feature-copy', sha: headSha}, number: 12, title: 'The same commits'}).state = state
    const {name, sha} = await planOnPull()
    server.push(...runTurns())
    const ran = await onGitHub('issue_comment', comment(7, `/wave approve ${name} --sha256 ${sha}`, 'mona').event)
    expect(ran.code, ran.stderr).toBe(0)
    return {name, pushed: git(remote, ['rev-parse', 'refs/heads/feature'])}
  }

  it('wave/apply is not success on a head another open pull request shares: failure, naming it', async () => {
    const {pushed} = await runWithSibling('open')
    // The status on the shared head would pass #12's branch protection, where nothing was approved.
    expect(github.statusesOf(headSha)['wave/apply']).toMatchObject({
      description: `${headSha.slice(0, 12)} is also the head of #12: plan and apply it there`,
      state: 'failure',
    })
    expect(github.statuses.some((s) => s.sha === headSha && s.context === 'wave/apply' && s.state === 'success')).toBe(false)
    // The commit the run pushed heads #7 alone.
    expect(github.statusesOf(pushed)['wave/apply']).toMatchObject({state: 'success'})
  })

  it('control: the same pull request closed shares nothing, and wave/apply is success on the head', async () => {
    const {name, pushed} = await runWithSibling('closed')
    expect(github.statusesOf(headSha)['wave/apply']).toMatchObject({
      description: `Ran ${name}, approved by @mona: delivered ${pushed.slice(0, 12)}`,
      state: 'success',
    })
  })

  it('a run stopped at its budget sets wave/apply to failure, its spend shown; a token without statuses: write is warned about once', async () => {
    github.refuseStatuses = true
    server.push(...planTurns())
    const planned = await onGitHub('issue_comment', comment(7, '/wave plan Add a farewell function').event)
    expect(planned.code, planned.stderr).toBe(0)
    expect(github.statuses).toHaveLength(0)
    expect(planned.stderr.match(/statuses: write/g)).toHaveLength(1)
    const name = nameIn(stickyOn(7).body)

    github.refuseStatuses = false
    server.push(...runTurns())
    const stopped = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, {WAVE_MAX_BUDGET_USD: '0.000001'})
    expect(stopped.code, stopped.stderr).toBe(5)
    expect(github.statusesOf(headSha)['wave/apply']).toMatchObject({state: 'failure'})
    expect(github.statusesOf(headSha)['wave/apply'].description).toBe(`The run of ${name} failed (exit 5: the agent stopped at a limit)`)
    const sticky = stickyOn(7)
    expect(sticky.body).toMatch(/\*\*The run failed\*\* \(exit 5: [^)]+\) before finishing\):\n> Stopped at the budget: \$\d+\.\d{4} spent/)
    expect(sticky.body).toMatch(/^\| Cost \| planning \$\d+\.\d{4} · run \$\d+\.\d{4} \|$/m)
    // No resume promised: the budget shown with the plan binds its runs, a resumed one's too.
    expect(stopped.stderr).toContain(`binds its runs, /wave resume included: to give it more, raise WAVE_MAX_BUDGET_USD, then revise the plan`)
    expect(sticky.body).not.toContain('To continue the run where it stopped')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })

  it('a run stopped at the budget its approval bound: the hint names the cap’s setting and planning again, not the CLI’s re-approval with a higher flag', async () => {
    server.push(...planTurns())
    const setting = {WAVE_MAX_BUDGET_USD: '0.04', WAVE_MAX_BUDGET_USD_SETTING: 'the max-budget-usd input'}
    const planned = await onGitHub('issue_comment', comment(7, '/wave plan Add a farewell function').event, setting)
    expect(planned.code, planned.stderr).toBe(0)
    const name = nameIn(stickyOn(7).body)
    // The approving job has no cap of its own (the input emptied since): the approval's, the one shown with the plan, binds.
    // The run reads the file it writes again and again, past that budget.
    const reads = Array.from({length: 30}, () => reply(toolUse('Read', {file_path: 'README.md'})))
    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), ...reads, reply('Added src/farewell.ts.'))
    const stopped = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, {
      WAVE_MAX_BUDGET_USD_SETTING: 'the max-budget-usd input',
    })
    expect(stopped.code, stopped.stderr).toBe(5)
    expect(stopped.stderr).toMatch(/Stopped at the budget: \$\d+\.\d{4} spent, [^.]+ the approval's --max-budget-usd 0\.04/)
    expect(stopped.stderr).toContain(
      `Hint: The budget shown with the plan (at most 0.04 USD a session) binds its runs, /wave resume included: to give it more, raise the max-budget-usd input, then revise the plan (/wave request-changes ${name} <what to change>) or plan its task again (/wave plan ${name}), and approve it.`,
    )
    // The CLI's way (a new wave approve with a higher flag) is no way on a forge, nor is /wave resume.
    expect(stopped.stderr).not.toMatch(/approve the plan again with a higher|--unit-budget-usd|raise the job's --max-budget-usd/)
    const sticky = stickyOn(7)
    expect(sticky.body).toContain('> Stopped at the budget')
    expect(sticky.body).not.toContain('To continue the run where it stopped')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })

  it('--max-budget-usd stops a plan with exit 5: the spend in the comment, the job summary and the status; the approval records the budget shown', async () => {
    server.push(...planTurns())
    const summaryFile = path.join(sandbox.root, 'budget-summary.md')
    const stopped = await onGitHub('issue_comment', comment(7, '/wave plan Add a farewell function').event, {
      GITHUB_STEP_SUMMARY: summaryFile,
      WAVE_MAX_BUDGET_USD: '0.000001',
    })
    expect(stopped.code, stopped.stderr).toBe(5)
    expect(stopped.stderr).toMatch(/Stopped at the budget: \$\d+\.\d{4} spent, more than WAVE_MAX_BUDGET_USD 0\.000001/)
    const failed = stickyOn(7)
    expect(statusOf(failed.body)).toBe('❌ failed')
    expect(failed.body).toMatch(
      /\*\*Planning failed\*\* \(exit 5: the agent stopped at a limit \(max turns, budget\) before finishing\):\n> Stopped at the budget: \$\d+\.\d{4} spent/,
    )
    expect(failed.body).toMatch(/^\| Cost \| planning \$\d+\.\d{4} \|$/m)
    expect(failed.body).toContain('| Budget | at most $0.0000 a session (each plan, revision and run) |')
    expect(github.statusesOf(headSha)['wave/plan']).toMatchObject({state: 'failure'})
    expect(github.statusesOf(headSha)['wave/plan'].description).toMatch(/^Planning [a-z-]+ failed \(exit 5: the agent stopped at a limit\)$/)
    // The job summary in words and money, never the JSON's keys.
    const summary = readFileSync(summaryFile, 'utf8')
    expect(summary).toContain('| Session ended | stopped at the budget (WAVE_MAX_BUDGET_USD 0.000001) |')
    expect(summary).toMatch(/^\| Cost \| \$\d+\.\d{4} \|$/m)
    expect(summary).not.toMatch(/costUsd|stopReason|planPath/)

    // Control: with room in the budget the plan is made, and the approval records the budget its comment showed.
    server.push(...planTurns())
    const planned = await onGitHub('issue_comment', comment(7, '/wave plan Add a farewell function').event, {WAVE_MAX_BUDGET_USD: '25'})
    expect(planned.code, planned.stderr).toBe(0)
    const sticky = stickies(7).at(-1)!
    const name = nameIn(sticky.body)
    expect(sticky.body).toContain('| Budget | at most $25.00 a session (each plan, revision and run) |')
    server.push(...runTurns())
    const ran = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, {WAVE_MAX_BUDGET_USD: '40'})
    expect(ran.code, ran.stderr).toBe(0)
    const record = JSON.parse(readFileSync(path.join(sandbox.root, `runner-${runs}`, 'wave', 'plans', `${name}.approval.json`), 'utf8'))
    expect(record.maxBudgetUsd).toBe(25)
  })
})

/** Every token of a comment as GitHub-flavoured Markdown (the project's lexer), nested ones included. */
function tokensOf(markdown: string): Token[] {
  const all: Token[] = []
  const walk = (tokens: Token[] | undefined) => {
    for (const token of tokens ?? []) {
      all.push(token)
      walk((token as {tokens?: Token[]}).tokens)
      for (const item of (token as {items?: Array<{tokens?: Token[]}>}).items ?? []) walk(item.tokens)
    }
  }

  walk(new Marked({gfm: true}).lexer(markdown))
  return all
}

describe("wave github: the model's words on the comment", {timeout: 120_000}, () => {
  it('an oversized to-do list of images and headings: inert and cut, the run delivered with its report on the comment', async () => {
    const {name} = await planOnPull()
    // 2,000 steps of incompressible text, 300 KB in all: the comment takes 65,536 characters.
    const todos = Array.from({length: 2000}, (_, i) => ({
      activeForm: `Doing ${i}`,
      content:
        i % 2 === 0
          ? `![pixel](https://evil.example/p.png?d=${sha256(String(i))}) step ${i}`
          : `# Heading of my own ${i} <img src="https://evil.example/${sha256(`x${i}`)}.png">`,
      status: i === 0 ? ('in_progress' as const) : ('pending' as const),
    }))
    server.push(reply(toolUse('TodoWrite', {todos})), ...runTurns())
    const result = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event)
    expect(result.code, result.stderr).toBe(0)

    // Delivered, and the comment says so, with the report, within GitHub's limit.
    expect(git(remote, ['show', 'refs/heads/feature:src/farewell.ts']) + '\n').toBe(FAREWELL)
    const body = stickyOn(7).body
    expect(body.length).toBeLessThanOrEqual(65_536)
    expect(statusOf(body)).toBe('✅ done')
    expect(body).toContain('**Planned versus actual**')
    expect(body).toContain('| Delivered |')
    expect(body).toContain('**To-do list** (2000 steps; the first 50 shown)')
    expect(body).toContain('- … and 1950 more')

    // No image, link or HTML of the model's; the only headings are wave's own.
    const tokens = tokensOf(body)
    expect(tokens.filter((token) => token.type === 'image')).toEqual([])
    expect(tokens.filter((token) => token.type === 'link' && token.raw.includes('evil.example'))).toEqual([])
    expect(tokens.filter((token) => token.type === 'html' && token.raw.includes('evil.example'))).toEqual([])
    expect(tokens.filter((token) => token.type === 'heading').map((token) => (token as Token & {text: string}).text)).toEqual([
      `wave plan \`${name}\`: ✅ done`,
    ])
    // The steps are still there to read, as text.
    expect(body).toContain('Heading of my own 1 &lt;img src="https\\://evil.example/')
  })
})

describe('wave github: duties go by identity', {timeout: 120_000}, () => {
  it('require-other-approver: a requester renamed on GitHub (same user id) may not approve her own plan; someone else may', async () => {
    const {name} = await planOnPull()
    const planning = server.messageRequests.length
    github.renameUser('alice', 'alice-renamed')
    const own = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'alice-renamed').event, {WAVE_REQUIRE_OTHER_APPROVER: '1'})
    expect(own.code).toBe(3)
    expect(own.stderr).toContain(`Plan ${name} was asked for by @alice, who may not approve it too`)
    expect(server.messageRequests).toHaveLength(planning)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    // Control: mona's approval runs it.
    server.push(...runTurns())
    const other = await onGitHub('issue_comment', comment(7, `/wave approve ${name}`, 'mona').event, {WAVE_REQUIRE_OTHER_APPROVER: '1'})
    expect(other.code, other.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })
})
