import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {readRevisions, recordRevision, revisionDiff} from '../../../src/plans/revisions.js'
import {planSidecars} from '../../../src/plans/store.js'

let dir: string
let planPath: string
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'wave-revisions-'))
  planPath = path.join(dir, 'brave-otter.md')
})
afterEach(() => rmSync(dir, {force: true, recursive: true}))

const FIRST = '# Plan\n\n1. Add a farewell\n'
const SECOND = '# Plan\n\n1. Add a farewell\n2. Test it\n'

describe('revisions', () => {
  it('diffs the revisions recorded (control: an untouched file is trusted)', async () => {
    recordRevision(planPath, Buffer.from(FIRST))
    recordRevision(planPath, Buffer.from(SECOND), 'test it')
    expect(readRevisions(planPath).map((r) => r.revision)).toEqual([1, 2])
    const diff = await revisionDiff({current: Buffer.from(SECOND), from: '1', planPath})
    expect(diff).toMatchObject({added: 1, removed: 0})
  })

  it('refuses a revision whose text was rewritten under its old sha256 (exit 4), naming the file', async () => {
    recordRevision(planPath, Buffer.from(FIRST))
    recordRevision(planPath, Buffer.from(SECOND))
    const file = planSidecars(planPath).revisions
    // Revision 1 rewritten to read as revision 2 does: the diff would show +0 −0.
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n')
    lines[0] = JSON.stringify({...JSON.parse(lines[0]), text: SECOND})
    writeFileSync(file, lines.join('\n') + '\n')
    expect(() => readRevisions(planPath)).toThrow(expect.objectContaining({exitCode: 4, message: expect.stringContaining(file)}))
    await expect(revisionDiff({current: Buffer.from(SECOND), from: '1', planPath})).rejects.toThrow(/revision 1's text has sha256/)
  })
})
