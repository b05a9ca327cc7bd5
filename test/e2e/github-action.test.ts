/**
 * The wave Action's own step (action.yml, "Handle the event") run as a runner runs it, against the GitHub
 * stand-in and the scripted Messages API (test/support/action-step.ts): a refusal is an answer, not a
 * failure. A typo, a self-approval and a stale plan each get their reply in the thread and end the step
 * green with outcome `refused` and wave's exit code in `exit-code`; `fail-on-refusal: true` fails it
 * instead (the control: the same refusal, the step red); a failure of wave's (the model API failing)
 * still fails the step, outcome `failed`.
 */
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {type ActionStepResult, runActionStep} from '../support/action-step.js'
import {type Sandbox, sha256, TEST_API_KEY} from '../support/cli.js'
import {freshRunner, GITHUB_TOKEN, git, githubComment, githubJobEnv, nameIn, PLAN, planTurns, useGitHubForge} from '../support/forge-fixture.js'
import type {GitHubServer} from '../support/github-server.js'
import type {MessagesServer} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
let github: GitHubServer
let remote: string
let headSha: string
let runs = 0
useGitHubForge({permissions: {alice: 'write', mona: 'maintain'}}, (made) => {
  ;({forge: github, headSha, remote, sandbox, server} = made)
})

/** The Action's step for one comment on pull request 7, in a fresh runner, with the workflow's `with:` (`inputs`). */
async function actionOn(body: string, by: string, inputs: Record<string, string> = {}): Promise<ActionStepResult> {
  const {checkout, runner} = freshRunner(sandbox, remote, ++runs)
  const eventPath = path.join(runner, 'event.json')
  writeFileSync(eventPath, JSON.stringify(githubComment(github, 7, body, by).event))
  const env = githubJobEnv(github, {eventName: 'issue_comment', eventPath, run: runs, runner})
  return runActionStep('wave', {
    checkout,
    env,
    home: sandbox.home,
    inputs: {'anthropic-api-key': TEST_API_KEY, 'base-url': server.url, ...inputs},
    runner,
    token: GITHUB_TOKEN,
  })
}

const repliesTo = (login: string) => github.commentsOn(7).filter((c) => c.body.includes(`@${login} `) && !c.body.startsWith('<!--'))
const planName = () => nameIn(github.commentsOn(7).find((c) => c.body.startsWith('<!-- wave:plan:'))!.body)

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
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)

    // A failure of wave's: the model API answers 500 (nothing scripted); the comment says so and the step fails.
    const failed = await actionOn('/wave plan Add a goodbye function', 'alice')
    expect(failed.code).toBe(1)
    expect(failed.outputs).toMatchObject({'exit-code': '1', outcome: 'failed'})
  })
})
