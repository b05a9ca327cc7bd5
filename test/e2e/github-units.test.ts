/**
 * A plan with units on GitHub, end to end (issue 36): `/wave plan` shows the units and what is wrong
 * with them in the sticky comment; `/wave approve` binds them and runs nothing, writing the matrix to
 * the step's outputs ($GITHUB_OUTPUT) for the workflow's next jobs; the merge job's `wave github
 * --units-merged` shows a row per unit and the plan's checks on the merged tree, then delivers, or
 * says the merge was incomplete (exit 7). Against the GitHub stand-in, a bare git remote, and the
 * scripted Messages API; every job a fresh clone and a fresh WAVE_HOME.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {runWave, type RunWaveResult, type Sandbox, sha256} from '../support/cli.js'
import {expectTokenKept, FAREWELL, forgeRemote, freshRunner, git, nameIn, PLAN, planTurns, runTurns, statusOf, UNITS_PLAN} from '../support/forge-fixture.js'
import {type GitHubServer, startGitHubServer, type StoredComment} from '../support/github-server.js'
import type {MessagesServer} from '../support/messages-server.js'
import {useScriptedSession} from '../support/session.js'

const TOKEN = 'ghs_test-token-never-logged-0123456789'
const FIXTURES = fileURLToPath(new URL('../fixtures/github/', import.meta.url))

let sandbox: Sandbox
let server: MessagesServer
let github: GitHubServer
let remote: string
let headSha: string
let runs = 0
useScriptedSession((session) => ({sandbox, server} = session))

beforeEach(async () => {
  const made = forgeRemote(sandbox)
  remote = made.remote
  headSha = made.headSha
  github = await startGitHubServer({owner: 'octo', permissions: {alice: 'write', mona: 'maintain'}, remote, repo: 'demo', token: TOKEN})
  github.addPull({base: {ref: 'main'}, body: 'Adds a greeting.', head: {ref: 'feature', sha: headSha}, number: 7, title: 'Greet people by name'})
})

afterEach(async () => {
  await github.close()
})

interface Job {
  result: RunWaveResult
  /** What the job left in $GITHUB_OUTPUT, name → value. */
  outputs: Record<string, string>
  checkout: string
  runner: string
}

/** One job of the workflow run: a fresh clone (prepared by `before`, which answers wave github's arguments), the event in a file. */
async function onGitHub(payload: unknown, before?: (job: {checkout: string; runner: string}) => string[]): Promise<Job> {
  const {checkout, runner} = freshRunner(sandbox, remote, ++runs)
  const args = before?.({checkout, runner}) ?? []
  const eventPath = path.join(runner, 'event.json')
  const outputFile = path.join(runner, 'github-output')
  writeFileSync(eventPath, JSON.stringify(payload))
  writeFileSync(outputFile, '')
  const result = await runWave(['github', '--json', ...args], {
    cwd: checkout,
    env: {
      GITHUB_API_URL: github.url,
      GITHUB_EVENT_NAME: 'issue_comment',
      GITHUB_EVENT_PATH: eventPath,
      GITHUB_OUTPUT: outputFile,
      GITHUB_REPOSITORY: 'octo/demo',
      GITHUB_RUN_ID: String(9000 + runs),
      GITHUB_SERVER_URL: 'https://github.test',
      GITHUB_TOKEN: TOKEN,
      WAVE_HOME: path.join(runner, 'wave'),
    },
    home: sandbox.home,
    server,
    timeoutMs: 90_000,
  })
  expectTokenKept(
    TOKEN,
    result,
    checkout,
    github.comments.map((c) => c.body),
  )
  const outputs = Object.fromEntries(
    readFileSync(outputFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/=(.*)/s).slice(0, 2) as [string, string]),
  )
  return {checkout, outputs, result, runner}
}

function comment(body: string, by = 'alice'): unknown {
  const stored = github.addComment(7, body, {login: by})
  const event = JSON.parse(readFileSync(path.join(FIXTURES, 'issue_comment.pull_request.json'), 'utf8'))
  event.comment = {
    ...event.comment,
    body,
    created_at: stored.created_at,
    html_url: stored.html_url,
    id: stored.id,
    updated_at: stored.updated_at,
    user: {...event.comment.user, id: github.userId(by), login: by},
  }
  event.sender = {...event.sender, id: github.userId(by), login: by}
  return event
}

function stickyOn(): StoredComment {
  const found = github.commentsOn(7).filter((c) => c.body.startsWith('<!-- wave:plan:'))
  expect(found).toHaveLength(1)
  return found[0]
}

/** `/wave plan` then `/wave approve` of UNITS_PLAN: the approval's job, the plan's name and its approve event. */
async function approvedUnits(): Promise<{approve: Job; name: string; event: unknown}> {
  server.push(...planTurns(UNITS_PLAN))
  expect((await onGitHub(comment('/wave plan Add a farewell function'))).result.code).toBe(0)
  const name = nameIn(stickyOn().body)
  const event = comment(`/wave approve ${name} --sha256 ${sha256(UNITS_PLAN)}`, 'mona')
  const approve = await onGitHub(event)
  expect(approve.result.code, approve.result.stderr).toBe(0)
  return {approve, event, name}
}

/** What `wave plans merge --json` prints for the plan: farewell merged (or failed with exit 7), other merged with no change. */
function mergeResult(name: string, farewell: 'merged' | 'failed'): unknown {
  const check = {command: 'test -f src/farewell.ts', exitCode: farewell === 'merged' ? 0 : 1}
  return {
    applied: farewell === 'merged',
    base: headSha,
    checks: farewell === 'merged' ? [{...check, outputTail: ''}] : [],
    costUsd: 0.25,
    failed: farewell === 'merged' ? [] : ['farewell'],
    missing: [],
    name,
    outcome: farewell === 'merged' ? 'merged' : 'incomplete',
    planPath: `/tmp/wave/plans/${name}.md`,
    problem: farewell === 'merged' ? null : 'the unit farewell failed (exit 7)',
    sha256: sha256(UNITS_PLAN),
    units: [
      {
        changed: ['src/farewell.ts'],
        checks: [check],
        costUsd: 0.15,
        exitCode: farewell === 'merged' ? 0 : 7,
        outOfScope: [],
        result: 'farewell.json',
        status: farewell,
        unit: 'farewell',
      },
      {
        changed: [],
        checks: [],
        costUsd: 0.1,
        exitCode: 0,
        outOfScope: [],
        result: 'other.json',
        status: farewell === 'merged' ? 'merged' : 'skipped',
        unit: 'other',
      },
    ],
    version: 1,
  }
}

/** The merge job: the planned commit checked out with the merged tree on it, then wave github --units-merged. */
function mergeJob(event: unknown, merge: unknown): Promise<Job> {
  return onGitHub(event, ({checkout, runner}) => {
    git(checkout, ['checkout', '-q', headSha])
    writeFileSync(path.join(checkout, 'src', 'farewell.ts'), FAREWELL)
    writeFileSync(path.join(runner, 'merge.json'), JSON.stringify(merge))
    return ['--units-merged', path.join(runner, 'merge.json')]
  })
}

describe('wave github: a plan with units', {timeout: 240_000}, () => {
  it("shows the units in the plan's comment, and what is wrong with them (control: a plan whose units are sound shows no problem)", async () => {
    const overlapping = `${PLAN}\n## Scope\n- src/**\n\n## Units\n\n### a\n#### Scope\n- src/**\n\n### b\n#### Scope\n- src/farewell.ts\n`
    server.push(...planTurns(overlapping))
    expect((await onGitHub(comment('/wave plan Split it'))).result.code).toBe(0)
    const bad = stickyOn().body
    expect(bad).toContain('| `a` | `src/**` | none |')
    expect(bad).toContain('**Problems with the units** (an approval is refused until the plan is revised):')
    expect(bad).toMatch(/^- .*\ba\b.*\bb\b/m)
    github.comments.splice(0) // the thread starts over for the control
    server.push(...planTurns(UNITS_PLAN))
    expect((await onGitHub(comment('/wave plan Add a farewell function'))).result.code).toBe(0)
    const good = stickyOn().body
    expect(good).toContain('**Units** (2: each runs as its own job, held to its paths)')
    expect(good).toContain('| `farewell` | `src/farewell.ts` | test -f src/farewell.ts |')
    expect(good).toContain('| `other` | `src/other/**` | none |')
    expect(good).not.toContain('Problems with the units')
  })

  it("/wave approve binds the units and runs nothing: the step's outputs carry the matrix, the comment a pending row per unit", async () => {
    const {approve, name} = await approvedUnits()
    // Only planning asked the model: the approval's job ran no session.
    expect(server.messageRequests).toHaveLength(2)
    expect(approve.outputs).toEqual({
      'has-units': 'true',
      'plan-path': path.join(approve.runner, 'wave', 'plans', `${name}.md`),
      units: '{"include":[{"unit":"farewell"},{"unit":"other"}]}',
    })
    expect(JSON.parse(approve.result.stdout)).toMatchObject({outcome: 'approved', units: ['farewell', 'other']})
    const body = stickyOn().body
    expect(statusOf(body)).toBe('🏃 running')
    expect(body).toContain('| `farewell` | ⏳ pending |  |  |')
    expect(body).toContain('| `other` | ⏳ pending |  |  |')
    const record = JSON.parse(readFileSync(path.join(approve.runner, 'wave', 'plans', `${name}.approval.json`), 'utf8'))
    expect(record.units.map((unit: {name: string}) => unit.name)).toEqual(['farewell', 'other'])
    // Nothing was pushed: the units' jobs do the work.
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })

  it('control: a plan without units runs in the approval job, and has-units is false', async () => {
    server.push(...planTurns())
    expect((await onGitHub(comment('/wave plan Add a farewell function'))).result.code).toBe(0)
    const name = nameIn(stickyOn().body)
    server.push(...runTurns())
    const approve = await onGitHub(comment(`/wave approve ${name} --sha256 ${sha256(PLAN)}`, 'mona'))
    expect(approve.result.code, approve.result.stderr).toBe(0)
    expect(approve.outputs).toEqual({'has-units': 'false'})
    expect(stickyOn().body).not.toContain('**Units**')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).not.toBe(headSha)
  })

  it('the merge job shows a row per unit and the merged checks, then pushes the merged tree to the pull request', async () => {
    const {event, name} = await approvedUnits()
    const merge = await mergeJob(event, mergeResult(name, 'merged'))
    expect(merge.result.code, merge.result.stderr).toBe(0)
    expect(JSON.parse(merge.result.stdout)).toMatchObject({outcome: 'merged'})
    const body = stickyOn().body
    expect(statusOf(body)).toBe('✅ done')
    expect(body).toContain('| `farewell` | ✅ merged | test -f src/farewell.ts passed | $0.1500 |')
    expect(body).toContain('| `other` | ✅ merged | none | $0.1000 |')
    expect(body).toContain("**The plan's checks on the merged tree:** test -f src/farewell.ts passed")
    const pushed = git(remote, ['rev-parse', 'refs/heads/feature'])
    expect(pushed).not.toBe(headSha)
    expect(git(remote, ['show', `${pushed}:src/farewell.ts`])).toBe(FAREWELL.trimEnd())
    expect(merge.outputs).toEqual({'has-units': 'false'})
  })

  it('a failed unit: the row says so with its exit code, the plan failed (exit 7), and nothing is pushed', async () => {
    const {event, name} = await approvedUnits()
    const merge = await mergeJob(event, mergeResult(name, 'failed'))
    expect(merge.result.code).toBe(7)
    const body = stickyOn().body
    expect(statusOf(body)).toBe('❌ failed')
    expect(body).toContain('| `farewell` | ❌ failed (exit 7) | test -f src/farewell.ts exit 1 | $0.1500 |')
    expect(body).toContain('| `other` | ✅ succeeded | none | $0.1000 |')
    expect(body).toContain('the unit farewell failed (exit 7)')
    // The failed unit's job is re-run, then the merge: no /wave resume for a plan's units.
    expect(body).not.toContain('/wave resume')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })

  it('refuses a merge of another version of the plan (exit 4), leaving the comment as it was', async () => {
    const {event, name} = await approvedUnits()
    const before = stickyOn().body
    const merge = await mergeJob(event, {...(mergeResult(name, 'merged') as object), sha256: sha256('another plan')})
    expect(merge.result.code).toBe(4)
    expect(merge.result.stderr).toContain(`The merge is of plan ${name} with sha256 ${sha256('another plan')}`)
    expect(stickyOn().body).toBe(before)
  })
})
