/** Which unit results a merge takes (app/merge.ts, checkResults): this plan's, this approval's, known units, each once. */
import {describe, expect, it} from 'vitest'

import {checkResults} from '../../../src/flows/merge.js'
import {approvalRecordSchema} from '../../../src/plans/approval.js'
import type {UnitResult} from '../../../src/plans/unit-result.js'

const SHA = 'a'.repeat(64)
const record = approvalRecordSchema.parse({
  decidedAt: 'd1',
  decision: 'approved',
  plan: {name: 'p', sha256: SHA},
  units: [
    {name: 'api', paths: ['api/**']},
    {name: 'web', paths: ['web/**']},
  ],
  version: 1,
})

const result = (unit: string, extra: Partial<UnitResult> = {}) => ({
  file: `/r/${unit}.json`,
  patch: Buffer.alloc(0),
  result: {
    approvalDecidedAt: 'd1',
    base: 'b'.repeat(40),
    costUsd: 0,
    endedAt: 'e',
    exitCode: 0,
    outcome: 'succeeded' as const,
    patch: {bytes: 0, file: `${unit}.patch`, sha256: 'c'.repeat(64)},
    plan: {name: 'p', sha256: SHA},
    report: {changed: [], checks: [], denials: [], enforce: 'strict' as const, outOfScope: [], scope: [], untouched: []},
    startedAt: 's',
    turns: 1,
    unit,
    version: 1 as const,
    ...extra,
  },
})

describe('checkResults', () => {
  it("takes this plan's results by unit (control)", () => {
    expect([...checkResults(record, [result('api'), result('web')], '/plans/p.md').keys()]).toEqual(['api', 'web'])
  })

  it("refuses another plan's, another approval's, an unknown unit's, and a unit twice, naming the file", () => {
    expect(() => checkResults(record, [result('api', {plan: {name: 'p', sha256: 'f'.repeat(64)}})], '/plans/p.md')).toThrow(
      'The unit result /r/api.json is of another plan',
    )
    expect(() => checkResults(record, [result('api', {approvalDecidedAt: 'd0'})], '/plans/p.md')).toThrow('ran under another approval of p')
    expect(() => checkResults(record, [result('mobile')], '/plans/p.md')).toThrow('is of unit mobile, which p does not have (its units: api, web)')
    expect(() => checkResults(record, [result('api'), {...result('api'), file: '/r/again.json'}], '/plans/p.md')).toThrow(
      'The unit api has two results: /r/api.json and /r/again.json',
    )
  })
})
