import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

/** A unit's job as the approval holds it (plans/unit-result.ts): the narrowed record, the gates, the result file's schema. */
import {describe, expect, it} from 'vitest'

import {type ApprovalRecord, approvalRecordSchema} from '../../../src/plans/approval.js'
import type {PlanState} from '../../../src/plans/lifecycle.js'
import {checkLogPath, checkLogs, unitOutputPaths} from '../../../src/plans/store.js'
import {assertUnitUnspent, parseUnitResult, runsOf, unitOf, unitRecord, unitsLeft} from '../../../src/plans/unit-result.js'

const SHA = 'a'.repeat(64)
const record: ApprovalRecord = approvalRecordSchema.parse({
  decidedAt: '2026-11-27T10:00:00.000Z',
  decision: 'approved',
  maxBudgetUsd: 10,
  plan: {name: 'p', sha256: SHA},
  scope: {enforce: 'warn', paths: ['src/**']},
  units: [
    {budgetUsd: 2, name: 'api', paths: ['src/api/**'], verify: [{command: 'npm test -w api'}]},
    {name: 'web', paths: ['src/web/**']},
  ],
  verify: [{command: 'npm test'}],
  version: 1,
})

const state = (runs: PlanState['runs']): PlanState => ({
  createdAt: 't',
  model: 'm',
  name: 'p',
  repository: null,
  runs,
  status: 'approved',
  task: 't',
  updatedAt: 't',
  version: 1,
  workspace: '/w',
})
const run = (unit: string | undefined, exitCode: number | undefined, startedAt = '2026-11-27T11:00:00.000Z') => ({
  approvalSha256: SHA,
  changedFiles: [],
  exitCode,
  startedAt,
  ...(unit ? {unit} : {}),
})

describe('the record a unit runs under', () => {
  it('is the approval narrowed to the unit: its paths strict, its checks, the lower of the budgets', () => {
    const api = unitRecord(record, unitOf(record, 'api', '/plans/p.md'))
    expect(api.scope).toEqual({enforce: 'strict', paths: ['src/api/**']})
    expect(api.verify).toEqual([{command: 'npm test -w api'}])
    expect(api.maxBudgetUsd).toBe(2)
    // A unit without checks has none (the plan's run once, on the merged tree); without a budget, the plan's.
    const web = unitRecord(record, unitOf(record, 'web', '/plans/p.md'))
    expect(web.verify).toEqual([])
    expect(web.maxBudgetUsd).toBe(10)
    expect(web.plan).toEqual(record.plan)
  })

  it('an unknown unit names the units; a plan without units says so (exit 2)', () => {
    expect(() => unitOf(record, 'mobile', '/plans/p.md')).toThrow('The plan p has no unit named mobile; its units: api, web.')
    expect(() => unitOf({...record, units: undefined}, 'api', '/plans/p.md')).toThrow(/The plan p has no units/)
    try {
      unitOf(record, 'mobile', '/plans/p.md')
    } catch (error) {
      expect((error as {exitCode: number}).exitCode).toBe(2)
    }
  })
})

describe('a unit runs once per approval; a failed one again', () => {
  it('refuses a unit that succeeded under this approval (exit 3), not one that failed, nor one of an earlier approval', () => {
    expect(() => assertUnitUnspent(record, '/plans/p.md', state([run('api', 0)]), 'api')).toThrow(/The unit api of p already succeeded/)
    expect(() => assertUnitUnspent(record, '/plans/p.md', state([run('api', 7)]), 'api')).not.toThrow()
    expect(() => assertUnitUnspent(record, '/plans/p.md', state([run('api', 0)]), 'web')).not.toThrow()
    expect(() => assertUnitUnspent(record, '/plans/p.md', state([run('api', 0, '2026-11-27T09:00:00.000Z')]), 'api')).not.toThrow()
    expect(() => assertUnitUnspent({...record, spentAt: 'then'}, '/plans/p.md', state([]), 'web')).toThrow(/every unit succeeded/)
  })

  it('counts the units left, and picks a unit its own runs', () => {
    expect(unitsLeft(record, state([run('api', 0), run('web', 7)]))).toEqual(['web'])
    expect(unitsLeft(record, state([run('api', 0), run('web', 0, '2026-11-27T12:00:00.000Z')]))).toEqual([])
    expect(runsOf(state([run('api', 0), run('web', 7), run(undefined, 1)]), 'web')?.runs.map((r) => r.exitCode)).toEqual([7])
  })
})

describe('the unit result file', () => {
  const valid = {
    approvalDecidedAt: record.decidedAt,
    base: 'b'.repeat(40),
    costUsd: 0.5,
    endedAt: 'e',
    exitCode: 0,
    outcome: 'succeeded',
    patch: {bytes: 10, file: 'p.unit-api.patch', sha256: 'c'.repeat(64)},
    plan: {name: 'p', sha256: SHA},
    report: {changed: [], checks: [], denials: [], enforce: 'strict', outOfScope: [], scope: ['src/api/**'], untouched: []},
    startedAt: 's',
    turns: 2,
    unit: 'api',
    version: 1,
  }

  it('reads a valid result, and refuses one whose patch is a path, or whose unit name is not a name (naming the file)', () => {
    expect(parseUnitResult(JSON.stringify(valid), 'r.json').unit).toBe('api')
    expect(() => parseUnitResult(JSON.stringify({...valid, patch: {...valid.patch, file: '../../etc/passwd'}}), 'r.json')).toThrow(
      /The unit result r\.json is malformed: patch\.file: the patch is named by a file name beside the result/,
    )
    expect(() => parseUnitResult(JSON.stringify({...valid, unit: '../x'}), 'r.json')).toThrow(/unit: a unit name/)
    expect(() => parseUnitResult(JSON.stringify({...valid, plan: {name: 'p', sha256: 'nope'}}), 'r.json')).toThrow(/plan\.sha256/)
  })

  it('lives beside the plan by default', () => {
    expect(unitOutputPaths('/plans/p.md', 'api')).toEqual({patch: '/plans/p.unit-api.patch', result: '/plans/p.unit-api.json'})
    // Units run side by side on one machine too: each unit's checks keep their whole output in logs of their own.
    expect(checkLogPath('/plans/p.md', 0)).toBe('/plans/p.check-1-1.log')
    expect(checkLogPath('/plans/p.md', 1, 'api', 3)).toBe('/plans/p.unit-api.check-3-2.log')
  })

  it('numbers each round of a run’s checks after the rounds already beside the plan: a retry or a resumed run writes over none', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wave-rounds-'))
    try {
      const plan = path.join(dir, 'p.md')
      // A stopped run's two rounds, and a unit's round (another series: not counted).
      for (const file of ['p.check-1-1.log', 'p.check-2-1.log', 'p.unit-api.check-7-1.log']) writeFileSync(path.join(dir, file), '')
      const logs = await checkLogs(plan)
      expect(logs.after).toBe(2)
      expect(logs.path(3, 1)).toBe(path.join(dir, 'p.check-3-2.log'))
      expect((await checkLogs(plan, 'api')).after).toBe(7)
      // Control: a plan with no round yet: its first round is 1.
      expect((await checkLogs(path.join(dir, 'q.md'))).after).toBe(0)
    } finally {
      rmSync(dir, {force: true, recursive: true})
    }
  })
})
