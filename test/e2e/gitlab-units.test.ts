/**
 * A plan with units on GitLab, end to end (issue 36): `/wave approve` in a note binds the units and runs
 * nothing, leaving the child pipeline (one job per unit, extending the template of
 * examples/gitlab-ci/wave-unit.gitlab-ci.yml) in the job's report folder for wave.gitlab-ci.yml's
 * wave:units trigger; the note shows a pending row per unit; each unit's job runs its unit and reports
 * its row (`wave gitlab --unit-result`, WAVE_THREAD naming the merge request as the recipe passes it
 * down), two of them interleaved so one writes over the other's row and the other writes it again; the
 * merge job runs `wave plans merge` on the results and `wave gitlab --units-merged` shows each unit's
 * outcome and delivers. Against the GitLab stand-in, a bare git remote and the scripted Messages API.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {gunzipSync} from 'node:zlib'

import {describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {renderSticky, type StickyState, stickyBody} from '../../src/review/comment-body.js'
import {encodeData} from '../../src/review/transport.js'
import type {UnitRow} from '../../src/review/unit-rows.js'
import {GITLAB_WORDS} from '../../src/forges/gitlab/client.js'

import {runWave, type RunWaveResult, type Sandbox, sha256} from '../support/cli.js'
import {
  expectTokenKept,
  FAREWELL,
  freshRunner,
  GITLAB_TOKEN,
  git,
  gitlabJobEnv,
  jobWithPlan,
  mergeResults,
  MR,
  nameIn,
  noteEvent,
  planTurns,
  runTurns,
  statusOf,
  UNITS_PLAN,
  useGitLabForge,
} from '../support/forge-fixture.js'
import type {GitLabServer, StoredNote} from '../support/gitlab-server.js'
import {type MessagesServer, reply} from '../support/messages-server.js'

const TEMPLATE = parse(readFileSync(fileURLToPath(new URL('../../examples/gitlab-ci/wave-unit.gitlab-ci.yml', import.meta.url)), 'utf8')) as Record<
  string,
  unknown
>

let sandbox: Sandbox
let server: MessagesServer
let gitlab: GitLabServer
let remote: string
let headSha: string
let jobs = 0
useGitLabForge({members: {alice: 30, mona: 40}}, (made) => {
  ;({forge: gitlab, headSha, remote, sandbox, server} = made)
})

/**
 * One pipeline job: a fresh clone (prepared by `before`, which answers wave gitlab's arguments), or the
 * runner and checkout of an earlier job (`place`: a unit's job reporting after its run); CI_PROJECT_DIR the checkout.
 */
async function job(
  payload: unknown,
  env: Record<string, string> = {},
  before?: (job: {checkout: string; runner: string}) => string[] | Promise<string[]>,
  place?: {checkout: string; runner: string},
) {
  jobs++
  const {checkout, runner} = place ?? freshRunner(sandbox, remote, jobs)
  const args = (await before?.({checkout, runner})) ?? []
  const variables: Record<string, string> = {...gitlabJobEnv(gitlab, {checkout, job: jobs, remote, runner, source: 'parent_pipeline'}), ...env}
  if (payload !== undefined) {
    const payloadPath = path.join(runner, 'TRIGGER_PAYLOAD')
    writeFileSync(payloadPath, JSON.stringify(payload))
    variables.TRIGGER_PAYLOAD = payloadPath
  }

  const result: RunWaveResult = await runWave(['gitlab', '--json', ...args], {cwd: checkout, env: variables, home: sandbox.home, server, timeoutMs: 90_000})
  expectTokenKept(
    GITLAB_TOKEN,
    result,
    checkout,
    gitlab.notes.map((n) => n.body),
  )
  return {checkout, result, runner}
}

const note = (body: string, by = 'alice') => noteEvent(gitlab, MR, body, by).payload

function stickyOn(): StoredNote {
  const found = gitlab.notesOn(MR).filter((n) => n.body.startsWith('<!-- wave:plan:'))
  expect(found).toHaveLength(1)
  return found[0]
}

interface Approved {
  name: string
  /** The approval job's runner: its WAVE_HOME holds the approved plan (wave:run's artifact). */
  runner: string
  checkout: string
}

/** `/wave plan` then `/wave approve` of UNITS_PLAN in notes; the approval's job. */
async function approvedUnits(env: Record<string, string> = {}): Promise<Approved & {result: RunWaveResult}> {
  server.push(...planTurns(UNITS_PLAN))
  expect((await job(note('/wave plan Add a farewell function'))).result.code).toBe(0)
  const name = nameIn(stickyOn().body)
  const approve = await job(note(`/wave approve ${name} --sha256 ${sha256(UNITS_PLAN)}`, 'mona'), env)
  expect(approve.result.code, approve.result.stderr).toBe(0)
  return {...approve, name}
}

const withPlan = (approved: Approved, job: {checkout: string; runner: string}) => jobWithPlan(job, approved, headSha)

/** Both units' jobs, one after the other (farewell writes its file, other changes nothing): their results' paths. */
async function runUnits(approved: Approved): Promise<Record<'farewell' | 'other', string>> {
  const results: Record<string, string> = {}
  for (const [unit, turns] of [
    ['farewell', runTurns()],
    ['other', [reply('src/other/ needs no change.')]],
  ] as const) {
    const made = freshRunner(sandbox, remote, ++jobs)
    const plan = withPlan(approved, made)
    server.push(...turns)
    const run = await runWave(['run', plan, '--unit', unit], {
      cwd: made.checkout,
      env: {WAVE_HOME: path.join(made.runner, 'wave')},
      home: sandbox.home,
      server,
      timeoutMs: 90_000,
    })
    expect(run.code, run.stderr).toBe(0)
    results[unit] = plan.replace(/\.md$/, `.unit-${unit}.json`)
  }

  return results as Record<'farewell' | 'other', string>
}

/**
 * A unit's report, as the template's after_script makes it: in the unit's job (its checkout with the
 * unit's changes, its WAVE_HOME), in the child pipeline (no note event): the thread from WAVE_THREAD.
 */
const reportUnit = (result: string) => {
  const runner = path.resolve(result, '..', '..', '..')
  return job(undefined, {WAVE_THREAD: 'mr-7'}, () => ['--unit-result', result], {checkout: path.join(runner, 'checkout'), runner})
}

/** A unit's row of the **Units** table (its status in the second column; the contract's table of units has its paths there). */
/** The merge job (wave:merge): the results and patches in wave-units/, `wave plans merge --json` (exit `expected`), then `wave gitlab --units-merged`. */
function mergeJob(approved: Approved, results: string[], expected: number) {
  return job(undefined, {WAVE_THREAD: 'mr-7'}, async (made) => {
    const merge = await mergeResults(made, withPlan(approved, made), results, sandbox.home)
    expect(merge.code, merge.stderr).toBe(expected)
    writeFileSync(path.join(made.runner, 'wave-merge.json'), merge.stdout)
    return ['--units-merged', path.join(made.runner, 'wave-merge.json')]
  })
}

/**
 * What a maintainer who may edit wave's note could write: its rows changed by `change`, with a hidden
 * block to match (nothing in it is secret: anyone can make one). wave cannot tell it from its own.
 */
function forgedRows(note: StoredNote, change: (rows: UnitRow[]) => UnitRow[]): string {
  const data = /<!-- wave:data ([A-Za-z0-9+/=]+) -->\s*$/.exec(note.body)![1]
  const {plan, state} = JSON.parse(gunzipSync(Buffer.from(data, 'base64')).toString('utf8')) as {plan?: string; state: StickyState}
  const forged = {...state, units: change(state.units ?? [])}
  const bytes = plan === undefined ? undefined : Buffer.from(plan, 'base64')
  const shown = renderSticky(forged, bytes?.toString('utf8'), GITLAB_WORDS)
  return stickyBody(shown, encodeData(forged, bytes, shown))
}

const rowOf = (body: string, unit: string) => body.split('\n').find((line) => line.startsWith(`| \`${unit}\` | `) && /^\| `[^`]+` \| [⏳✅❌]/u.test(line))

describe('wave gitlab: a plan with units', {timeout: 300_000}, () => {
  it("/wave approve leaves the child pipeline and a pending row per unit; each unit's job reports its row; the merge of their results reports each unit and delivers", async () => {
    const approved = await approvedUnits({WAVE_GITLAB_UNITS_FILE: 'wave-artifacts/units.gitlab-ci.yml'})
    expect(JSON.parse(approved.result.stdout)).toMatchObject({outcome: 'approved', units: ['farewell', 'other']})
    // Only planning asked the model: the approval's job ran nothing.
    expect(server.messageRequests).toHaveLength(2)
    const child = parse(readFileSync(path.join(approved.checkout, 'wave-artifacts', 'units.gitlab-ci.yml'), 'utf8')) as Record<string, unknown>
    expect(child.include).toEqual([{local: 'wave-unit.gitlab-ci.yml'}])
    const jobsOf = {...TEMPLATE, ...child}
    const real = Object.keys(jobsOf).filter((key) => !key.startsWith('.') && !['stages', 'include', 'variables'].includes(key))
    expect(real.sort()).toEqual(['wave-unit-farewell', 'wave-unit-other', 'wave:merge'])
    expect(child['wave-unit-farewell']).toEqual({
      extends: '.wave-unit-from-note',
      script: ['wave run "$WAVE_PLAN" --unit "$UNIT"'],
      variables: {UNIT: 'farewell', WAVE_PLAN: approved.name},
    })
    // The approved plan is where wave:run's after_script keeps it for the unit jobs.
    expect(JSON.parse(readFileSync(path.join(approved.runner, 'wave', 'plans', `${approved.name}.approval.json`), 'utf8')).units).toHaveLength(2)
    const pending = stickyOn().body
    expect(statusOf(pending)).toBe('🏃 running')
    expect(rowOf(pending, 'farewell')).toBe('| `farewell` | ⏳ pending |  |  |')
    expect(rowOf(pending, 'other')).toBe('| `other` | ⏳ pending |  |  |')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    const results = await runUnits(approved)
    const farewell = await reportUnit(results.farewell)
    expect(farewell.result.code, farewell.result.stderr).toBe(0)
    expect(JSON.parse(farewell.result.stdout)).toMatchObject({outcome: 'reported', plan: {status: 'running'}})
    expect(rowOf(stickyOn().body, 'farewell')).toMatch(/^\| `farewell` \| ✅ succeeded \| test -f src\/farewell.ts passed \| \$/)
    expect(rowOf(stickyOn().body, 'other')).toBe('| `other` | ⏳ pending |  |  |')

    // The merge job: its own pipeline (no note event), the thread from WAVE_THREAD, the results merged onto the planned commit.
    const merged = await mergeJob(approved, [results.farewell, results.other], 0)
    expect(merged.result.code, merged.result.stderr).toBe(0)
    const done = stickyOn().body
    expect(statusOf(done)).toBe('✅ done')
    expect(rowOf(done, 'farewell')).toMatch(/^\| `farewell` \| ✅ merged \| test -f src\/farewell.ts passed \| \$/)
    expect(rowOf(done, 'other')).toMatch(/^\| `other` \| ✅ merged \| none \| \$/)
    expect(git(remote, ['show', 'refs/heads/feature:src/farewell.ts'])).toBe(FAREWELL.trimEnd())
  })

  it("two units' reports interleaved: one writes over the other's row, which is written again; both rows end in the note (control: one after the other, each written once)", async () => {
    const approved = await approvedUnits()
    const results = await runUnits(approved)
    const listed = {method: 'GET', path: /\/merge_requests\/7\/notes$/}
    const noteWrites = () => gitlab.writes().filter((r) => r.method === 'PUT' && /\/merge_requests\/7\/notes\/\d+$/.test(r.path)).length
    const before = noteWrites()

    // farewell's report reads the note; its answer (both rows pending) is held until other's report has written.
    const farewellRead = gitlab.hold(listed, 'stale')
    const farewell = reportUnit(results.farewell)
    await farewellRead.arrived
    // other's report reads, writes its row, then reads again to verify: that read is held until farewell has written.
    const otherVerify = gitlab.hold({...listed, skip: 1}, 'fresh')
    const other = reportUnit(results.other)
    await otherVerify.arrived
    expect(rowOf(stickyOn().body, 'other')).toContain('✅ succeeded')
    farewellRead.release()
    expect((await farewell).result.code).toBe(0)
    // farewell wrote from its stale read: other's row is gone.
    expect(rowOf(stickyOn().body, 'other')).toBe('| `other` | ⏳ pending |  |  |')
    otherVerify.release()
    const otherJob = await other
    expect(otherJob.result.code, otherJob.result.stderr).toBe(0)
    expect(JSON.parse(otherJob.result.stdout).message).toContain('(written 2 times: another job wrote over it)')
    expect(rowOf(stickyOn().body, 'farewell')).toContain('✅ succeeded')
    expect(rowOf(stickyOn().body, 'other')).toContain('✅ succeeded')
    expect(noteWrites() - before).toBe(3)

    // Control: the same two reports again, one after the other: each writes its row once.
    const control = noteWrites()
    const reads = () => gitlab.requests.filter((r) => r.method === 'GET' && listed.path.test(r.path)).length
    for (const result of [results.farewell, results.other]) {
      const readsBefore = reads()
      const reported = await reportUnit(result)
      expect(reported.result.code, reported.result.stderr).toBe(0)
      expect(JSON.parse(reported.result.stdout).message).not.toContain('written 2 times')
      // A report uncontended: the note read right before its write, and once after it to verify.
      expect(reads() - readsBefore).toBe(2)
    }
    expect(noteWrites() - control).toBe(2)
  })

  it("a row someone else wrote is no evidence: farewell's job never reported, a maintainer's edit says it succeeded, and the merge says it is missing (exit 7)", async () => {
    const approved = await approvedUnits()
    const results = await runUnits(approved)
    const sticky = stickyOn()
    const succeeded = {checks: [{command: 'test -f src/farewell.ts', exitCode: 0}], costUsd: 0.01, exitCode: 0}
    gitlab.editNote(
      sticky.id,
      forgedRows(sticky, (rows) => rows.map((row) => (row.name === 'farewell' ? {...row, ...succeeded} : row))),
    )
    // other's job reports: wave reads the edited note as its own (the forgery holds) and leaves farewell's row as it found it.
    expect((await reportUnit(results.other)).result.code).toBe(0)
    expect(rowOf(stickyOn().body, 'farewell')).toMatch(/^\| `farewell` \| ✅ succeeded \| test -f src\/farewell.ts passed \|/)
    expect(rowOf(stickyOn().body, 'other')).toContain('✅ succeeded')

    // The merge reads the results, not the rows: farewell has none.
    const merged = await mergeJob(approved, [results.other], 7)
    expect(merged.result.code).toBe(7)
    const body = stickyOn().body
    expect(statusOf(body)).toBe('❌ failed')
    expect(rowOf(body, 'farewell')).toBe('| `farewell` | ⏳ pending |  |  |')
    expect(body).toContain('unit farewell missing')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })

  it('control: --units-merged or --unit-result without a thread (no WAVE_THREAD, no note event) is a usage error, and no note changes', async () => {
    const approved = await approvedUnits()
    const before = stickyOn().body
    for (const flag of ['--units-merged', '--unit-result']) {
      const reported = await job(undefined, {}, ({runner}) => {
        writeFileSync(path.join(runner, 'report.json'), '{}')
        return [flag, path.join(runner, 'report.json')]
      })
      expect(reported.result.code).toBe(2)
      expect(reported.result.stderr).toContain(`${flag} reports on a plan's note: set WAVE_THREAD`)
    }

    expect(stickyOn().body).toBe(before)
    expect(approved.name).toBe(nameIn(before))
  })
})
