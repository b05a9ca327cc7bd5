import {mkdtempSync, readFileSync, realpathSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {approvalRecordSchema} from '../../../src/plans/approval.js'
import {failedChecksMessage, runChecks} from '../../../src/plans/checks.js'
import {checkLogPath} from '../../../src/plans/store.js'

let root: string
beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-checks-')))
})
afterEach(() => rmSync(root, {force: true, recursive: true}))

describe('the approved checks', () => {
  it('keep the failing line of 300 for the retry turn, and the whole output in the file beside the transcript', async () => {
    const planPath = path.join(root, 'gentle-breeze.md')
    const command = `seq 1 300 | sed 's/^150$/not ok 64 should be equal/'; exit 1`
    // Unsandboxed here: what is kept does not depend on the sandbox (the e2e suites run it contained).
    const [result] = await runChecks([{command}], {
      outputFile: (index) => checkLogPath(planPath, index),
      root,
      sandbox: {enabled: false, network: false},
      signal: new AbortController().signal,
    })
    expect(result.exitCode).toBe(1)
    expect(result.outputFile).toBe(path.join(root, 'gentle-breeze.check-1.log'))
    expect(readFileSync(result.outputFile!, 'utf8').split('\n')).toHaveLength(301)
    expect(result.outputTail).toContain('150 | not ok 64 should be equal')
    expect(failedChecksMessage([result], {attempt: 1, of: 2})).toContain('150 | not ok 64 should be equal')
  })
})

describe('the approval record’s sandbox', () => {
  const record = (sandbox: unknown) => approvalRecordSchema.safeParse({decision: 'approved', plan: {sha256: 'a'.repeat(64)}, sandbox, version: 1})

  it('keeps named hosts, and refuses them with the whole network, with the sandbox off, or when they are no host names', () => {
    const parsed = record({enabled: true, network: false, networkAllow: ['registry.npmjs.org']})
    expect(parsed.success && parsed.data.sandbox).toEqual({enabled: true, network: false, networkAllow: ['registry.npmjs.org']})
    expect(record({enabled: true, network: true, networkAllow: ['registry.npmjs.org']}).success).toBe(false)
    expect(record({enabled: false, network: false, networkAllow: ['registry.npmjs.org']}).success).toBe(false)
    expect(record({enabled: true, network: false, networkAllow: ['https://registry.npmjs.org/']}).success).toBe(false)
    // Control: a record without hosts is as before.
    const plain = record(undefined)
    expect(plain.success && plain.data.sandbox).toEqual({enabled: true, network: false})
  })
})
