/**
 * A plan with units on GitHub, end to end (issue 36): `/wave plan` shows the units and what is wrong
 * with them in the sticky comment; `/wave approve` binds them and runs nothing, writing the matrix to
 * the step's outputs ($GITHUB_OUTPUT) for the workflow's next jobs; each unit's job runs its unit
 * (`wave run --unit`) and reports its row (`wave github --unit-result`), two of them interleaved so one
 * writes over the other's row and the other writes it again; the merge job runs `wave plans merge` on
 * the units' results and `wave github --units-merged` shows a row per unit and the plan's checks on the
 * merged tree, then delivers, or says the merge was incomplete (exit 7). Against the GitHub stand-in, a
 * bare git remote, and the scripted Messages API; every job a fresh clone and a fresh WAVE_HOME.
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {runWave, type RunWaveResult, type Sandbox, sha256} from '../support/cli.js'
import {
  expectTokenKept,
  FAREWELL,
  freshRunner,
  GITHUB_TOKEN,
  git,
  githubComment,
  githubJobEnv,
  jobWithPlan,
  mergeResults,
  nameIn,
  PLAN,
  planTurns,
  runTurns,
  statusOf,
  UNITS_PLAN,
  useGitHubForge,
} from '../support/forge-fixture.js'
import type {GitHubServer, StoredComment} from '../support/github-server.js'
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

interface Job {
  result: RunWaveResult
  /** What the job left in $GITHUB_OUTPUT, name → value. */
  outputs: Record<string, string>
  checkout: string
  runner: string
}

/** One `wave github` job of the workflow run: a fresh clone (prepared by `before`, which answers wave github's arguments) or an earlier job's (`place`), the event in a file. */
async function startGitHub(
  payload: unknown,
  before?: (job: {checkout: string; runner: string}) => string[] | Promise<string[]>,
  place?: {checkout: string; runner: string},
): Promise<Job> {
  runs++
  const {checkout, runner} = place ?? freshRunner(sandbox, remote, runs)
  const args = (await before?.({checkout, runner})) ?? []
  const eventPath = path.join(runner, 'event.json')
  const outputFile = path.join(runner, 'github-output')
  writeFileSync(eventPath, JSON.stringify(payload))
  writeFileSync(outputFile, '')
  const result = await runWave(['github', '--json', ...args], {
    cwd: checkout,
    env: {...githubJobEnv(github, {eventName: 'issue_comment', eventPath, run: runs, runner}), GITHUB_OUTPUT: outputFile},
    home: sandbox.home,
    server,
    timeoutMs: 90_000,
  })
  expectTokenKept(
    GITHUB_TOKEN,
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

const onGitHub = startGitHub
const comment = (body: string, by = 'alice') => githubComment(github, 7, body, by).event

function stickyOn(): StoredComment {
  const found = github.commentsOn(7).filter((c) => c.body.startsWith('<!-- wave:plan:'))
  expect(found).toHaveLength(1)
  return found[0]
}

interface Approved {
  approve: Job
  name: string
  event: unknown
}

/** `/wave plan` then `/wave approve` of UNITS_PLAN: the approval's job, the plan's name and its approve event. */
async function approvedUnits(): Promise<Approved> {
  server.push(...planTurns(UNITS_PLAN))
  expect((await onGitHub(comment('/wave plan Add a farewell function'))).result.code).toBe(0)
  const name = nameIn(stickyOn().body)
  const event = comment(`/wave approve ${name} --sha256 ${sha256(UNITS_PLAN)}`, 'mona')
  const approve = await onGitHub(event)
  expect(approve.result.code, approve.result.stderr).toBe(0)
  return {approve, event, name}
}

const withPlan = (approved: Approved, job: {checkout: string; runner: string}) =>
  jobWithPlan(job, {name: approved.name, runner: approved.approve.runner}, headSha)

/** A unit's job: `wave run --unit` on the scripted model's `turns`; its result's path (the patch beside it). */
async function runUnit(approved: Approved, unit: string, expected: number, ...flags: string[]): Promise<string> {
  const job = freshRunner(sandbox, remote, ++runs)
  const plan = withPlan(approved, job)
  const run = await runWave(['run', plan, '--unit', unit, ...flags], {
    cwd: job.checkout,
    env: {WAVE_HOME: path.join(job.runner, 'wave')},
    home: sandbox.home,
    server,
    timeoutMs: 90_000,
  })
  expect(run.code, run.stderr).toBe(expected)
  return plan.replace(/\.md$/, `.unit-${unit}.json`)
}

/** Both units' jobs: farewell writes its file (or, `failing`, nothing: its check fails, exit 7); other changes nothing. */
async function runUnits(approved: Approved, failing = false): Promise<Record<'farewell' | 'other', string>> {
  server.push(...(failing ? [reply('Nothing to write.')] : runTurns()))
  const farewell = await runUnit(approved, 'farewell', failing ? 7 : 0, '--verify-retries', '0')
  server.push(reply('src/other/ needs no change.'))
  const other = await runUnit(approved, 'other', 0)
  return {farewell, other}
}

/** A unit's report: `wave github --unit-result` with its result, in the unit's job after its run (its checkout with the unit's changes, its WAVE_HOME). */
const reportUnit = (approved: Approved, result: string) => {
  const runner = path.resolve(result, '..', '..', '..')
  return startGitHub(approved.event, () => ['--unit-result', result], {checkout: path.join(runner, 'checkout'), runner})
}

/** The merge job: the results and patches in one folder, `wave plans merge --json` on the planned commit, then `wave github --units-merged`. */
async function mergeJob(
  approved: Approved,
  results: string[],
  edit?: (merge: Record<string, unknown>, made: {checkout: string}) => void,
): Promise<Job & {merge: Record<string, unknown>}> {
  let merge: Record<string, unknown> = {}
  const job = await startGitHub(approved.event, async (made) => {
    const merged = await mergeResults(made, withPlan(approved, made), results, sandbox.home)
    expect([0, 7], merged.stderr).toContain(merged.code)
    merge = JSON.parse(merged.stdout)
    edit?.(merge, made)
    writeFileSync(path.join(made.runner, 'merge.json'), JSON.stringify(merge))
    return ['--units-merged', path.join(made.runner, 'merge.json')]
  })
  return {...job, merge}
}

/** A unit's row of the **Units** table (its status in the second column; the contract's table of units has its paths there). */
const rowOf = (body: string, unit: string) => body.split('\n').find((line) => line.startsWith(`| \`${unit}\` | `) && /^\| `[^`]+` \| [⏳✅❌]/u.test(line))
const commentWrites = () => github.writes().filter((r) => r.method === 'PATCH' && /\/issues\/comments\/\d+$/.test(r.path))

describe('wave github: a plan with units', {timeout: 300_000}, () => {
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

  it("each unit's job reports its row as it ends; the merge of their results shows every row and the merged checks, then pushes", async () => {
    const approved = await approvedUnits()
    const results = await runUnits(approved)

    const farewell = await reportUnit(approved, results.farewell)
    expect(farewell.result.code, farewell.result.stderr).toBe(0)
    expect(JSON.parse(farewell.result.stdout)).toMatchObject({outcome: 'reported', plan: {name: approved.name, status: 'running'}})
    let body = stickyOn().body
    expect(rowOf(body, 'farewell')).toMatch(/^\| `farewell` \| ✅ succeeded \| test -f src\/farewell.ts passed \| \$/)
    expect(rowOf(body, 'other')).toBe('| `other` | ⏳ pending |  |  |')
    // A unit's row is not the plan's end: the plan runs on until the merge, and nothing is pushed.
    expect(statusOf(body)).toBe('🏃 running')
    expect(farewell.outputs).toEqual({'has-units': 'false'})

    expect((await reportUnit(approved, results.other)).result.code).toBe(0)
    body = stickyOn().body
    expect(rowOf(body, 'farewell')).toContain('✅ succeeded')
    expect(rowOf(body, 'other')).toMatch(/^\| `other` \| ✅ succeeded \| none \| \$/)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    const merge = await mergeJob(approved, [results.farewell, results.other])
    expect(merge.merge).toMatchObject({applied: true, problem: null, sha256: sha256(UNITS_PLAN)})
    expect(merge.result.code, merge.result.stderr).toBe(0)
    expect(JSON.parse(merge.result.stdout)).toMatchObject({outcome: 'merged'})
    body = stickyOn().body
    expect(statusOf(body)).toBe('✅ done')
    expect(rowOf(body, 'farewell')).toMatch(/^\| `farewell` \| ✅ merged \| test -f src\/farewell.ts passed \| \$/)
    expect(rowOf(body, 'other')).toMatch(/^\| `other` \| ✅ merged \| none \| \$/)
    expect(body).toContain("**The plan's checks on the merged tree:** test -f src/farewell.ts passed")
    const pushed = git(remote, ['rev-parse', 'refs/heads/feature'])
    expect(pushed).not.toBe(headSha)
    expect(git(remote, ['show', `${pushed}:src/farewell.ts`])).toBe(FAREWELL.trimEnd())
    expect(merge.outputs).toEqual({'has-units': 'false'})
  })

  it("delivers only the units' paths: a merge result listing README.md and a workflow commits neither (control: a path inside a unit it lists is committed)", async () => {
    const approved = await approvedUnits()
    const results = await runUnits(approved)
    // As a plan check could leave them: files written in the work tree, and the merge's JSON rewritten to list them.
    const merge = await mergeJob(approved, [results.farewell, results.other], (merged, made) => {
      writeFileSync(path.join(made.checkout, 'README.md'), 'pwned\n')
      mkdirSync(path.join(made.checkout, '.github', 'workflows'), {recursive: true})
      writeFileSync(path.join(made.checkout, '.github', 'workflows', 'x.yml'), 'pwned\n')
      mkdirSync(path.join(made.checkout, 'src', 'other'), {recursive: true})
      writeFileSync(path.join(made.checkout, 'src', 'other', 'extra.ts'), 'export const extra = 1\n')
      const units = merged.units as Array<{unit: string; changed: string[]}>
      units.find((unit) => unit.unit === 'farewell')!.changed.push('README.md', '.github/workflows/x.yml')
      units.find((unit) => unit.unit === 'other')!.changed.push('src/other/extra.ts')
    })
    expect(merge.result.code, merge.result.stderr).toBe(0)
    const pushed = git(remote, ['rev-parse', 'refs/heads/feature'])
    const committed = git(remote, ['diff', '--name-only', headSha, pushed]).split('\n').sort()
    expect(committed).toEqual(['src/farewell.ts', 'src/other/extra.ts'])
  })

  it("two units' reports interleaved: one writes over the other's row, which is written again; both rows end in the comment (control: one after the other, each written once)", async () => {
    const approved = await approvedUnits()
    const results = await runUnits(approved)
    const listed = {method: 'GET', path: /\/issues\/7\/comments$/}
    const before = commentWrites().length

    // farewell's report reads the comment; its answer (both rows pending) is held until other's report has written.
    const farewellRead = github.hold(listed, 'stale')
    const farewell = reportUnit(approved, results.farewell)
    await farewellRead.arrived
    // other's report reads, writes its row, then reads again to verify: that read is held until farewell has written.
    const otherVerify = github.hold({...listed, skip: 1}, 'fresh')
    const other = reportUnit(approved, results.other)
    await otherVerify.arrived
    expect(rowOf(stickyOn().body, 'other')).toContain('✅ succeeded')
    farewellRead.release()
    const farewellJob = await farewell
    expect(farewellJob.result.code, farewellJob.result.stderr).toBe(0)
    // farewell wrote from its stale read: other's row is gone.
    expect(rowOf(stickyOn().body, 'other')).toBe('| `other` | ⏳ pending |  |  |')
    otherVerify.release()
    const otherJob = await other
    expect(otherJob.result.code, otherJob.result.stderr).toBe(0)
    expect(JSON.parse(otherJob.result.stdout).message).toContain('(written 2 times: another job wrote over it)')
    const body = stickyOn().body
    expect(rowOf(body, 'farewell')).toContain('✅ succeeded')
    expect(rowOf(body, 'other')).toContain('✅ succeeded')
    expect(commentWrites().length - before).toBe(3)

    // Control: the same two reports again, one after the other: each writes its row once.
    const control = commentWrites().length
    const reads = () => github.requests.filter((r) => r.method === 'GET' && listed.path.test(r.path)).length
    for (const result of [results.farewell, results.other]) {
      const readsBefore = reads()
      const job = await reportUnit(approved, result)
      expect(job.result.code, job.result.stderr).toBe(0)
      expect(JSON.parse(job.result.stdout).message).not.toContain('written 2 times')
      // A report uncontended: the comment read right before its write, and once after it to verify.
      expect(reads() - readsBefore).toBe(2)
    }
    expect(commentWrites().length - control).toBe(2)
    expect(rowOf(stickyOn().body, 'other')).toContain('✅ succeeded')
  })

  it("refuses a unit's result of another version of the plan (exit 4), of another approval or an unknown unit (exit 2), leaving the comment as it was", async () => {
    const approved = await approvedUnits()
    server.push(reply('src/other/ needs no change.'))
    const result = await runUnit(approved, 'other', 0)
    const real = JSON.parse(readFileSync(result, 'utf8'))
    const before = stickyOn().body
    const tampered = async (change: (result: Record<string, unknown>) => void) => {
      const copy = JSON.parse(JSON.stringify(real))
      change(copy)
      const file = result.replace(/\.json$/, `.tampered-${runs}.json`)
      writeFileSync(file, JSON.stringify(copy))
      return (await reportUnit(approved, file)).result
    }

    const otherBytes = await tampered((copy) => Object.assign(copy.plan as object, {sha256: sha256('another plan')}))
    expect(otherBytes.code).toBe(4)
    expect(otherBytes.stderr).toContain(`The result of unit other is of plan ${approved.name} with sha256 ${sha256('another plan')}`)
    const otherApproval = await tampered((copy) => Object.assign(copy, {approvalDecidedAt: '2030-01-01T00:00:00.000Z'}))
    expect(otherApproval.code).toBe(2)
    expect(otherApproval.stderr).toContain('ran under another approval')
    const unknown = await tampered((copy) => Object.assign(copy, {unit: 'mobile'}))
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('has no such unit (its units: farewell, other)')
    expect(stickyOn().body).toBe(before)

    // Control: the result as the unit's job wrote it is reported.
    expect((await reportUnit(approved, result)).result.code).toBe(0)
    expect(rowOf(stickyOn().body, 'other')).toContain('✅ succeeded')
  })

  it('a failed unit: its row says so with its exit code, the merge names it, the plan failed (exit 7), and nothing is pushed', async () => {
    const approved = await approvedUnits()
    const results = await runUnits(approved, true)
    expect((await reportUnit(approved, results.farewell)).result.code).toBe(0)
    expect(rowOf(stickyOn().body, 'farewell')).toMatch(/^\| `farewell` \| ❌ failed \(exit 7\) \| test -f src\/farewell.ts exit 1 \| \$/)
    const merge = await mergeJob(approved, [results.farewell, results.other])
    expect(merge.merge).toMatchObject({applied: false, failed: ['farewell']})
    expect(merge.result.code).toBe(7)
    const body = stickyOn().body
    expect(statusOf(body)).toBe('❌ failed')
    expect(rowOf(body, 'farewell')).toMatch(/^\| `farewell` \| ❌ failed \(exit 7\) \| test -f src\/farewell.ts exit 1 \|/)
    expect(rowOf(body, 'other')).toMatch(/^\| `other` \| ✅ succeeded \| none \|/)
    expect(body).toContain('unit farewell failed')
    // The failed unit's job is re-run, then the merge: no /wave resume for a plan's units.
    expect(body).not.toContain('/wave resume')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })

  it('refuses a merge of another version of the plan (exit 4), leaving the comment as it was', async () => {
    const approved = await approvedUnits()
    const results = await runUnits(approved)
    const before = stickyOn().body
    const merge = await mergeJob(approved, [results.farewell, results.other], (output) => Object.assign(output, {sha256: sha256('another plan')}))
    expect(merge.result.code).toBe(4)
    expect(merge.result.stderr).toContain(`The merge is of plan ${approved.name} with sha256 ${sha256('another plan')}`)
    expect(stickyOn().body).toBe(before)
  })
})
