import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {reportTally} from '../../../src/output/report-view.js'
import {buildReport, reportProblem} from '../../../src/plans/report.js'
import {readRevisions, recordRevision, revisionDiff} from '../../../src/plans/revisions.js'
import {sha256} from '../../support/cli.js'

const check = (command: string, exitCode: number | null) => ({command, durationMs: 10, exitCode, outputTail: ''})

describe('the run report', () => {
  it("compares the scope with what changed, Terraform's way", () => {
    const report = buildReport({
      changed: ['src/cli.ts', 'docs/x.md', 'test/a.test.ts', 'src/cli.ts'],
      checks: [check('npm test', 0), check('npm run lint', 0)],
      denials: [
        {reason: 'r', summary: 's', tool: 'Bash'},
        {reason: 'r', summary: 't', tool: 'Bash'},
      ],
      scope: {enforce: 'warn', paths: ['src/cli.ts', 'test', 'lib/**']},
    })
    expect(report).toMatchObject({changed: ['docs/x.md', 'src/cli.ts', 'test/a.test.ts'], outOfScope: ['docs/x.md'], untouched: ['lib/**']})
    expect(reportTally(report)).toBe(
      'Run complete: 2 changed in scope, 1 outside (docs/x.md), 1 untouched; checks: npm test passed, npm run lint passed; 2 calls denied',
    )
    expect(reportProblem(report)).toBeUndefined()
  })

  it("fails a run on a failing check, and on leaving a strict scope (a command's deviation counts even if undone)", () => {
    const failing = buildReport({changed: [], checks: [check('npm test', 1), check('slow', null)], denials: [], scope: {enforce: 'warn', paths: ['a']}})
    expect(reportProblem(failing)).toBe('npm test failed (exit 1), slow did not finish')
    const strict = buildReport({changed: ['a'], checks: [], denials: [], deviations: ['b'], scope: {enforce: 'strict', paths: ['a']}})
    expect(strict.outOfScope).toEqual(['b'])
    expect(reportProblem(strict)).toBe('changed outside the strict scope: b')
    const warned = buildReport({changed: ['a'], checks: [], denials: [], deviations: ['b'], scope: {enforce: 'warn', paths: ['a']}})
    expect(reportProblem(warned)).toBeUndefined()
  })

  it('with no approved scope (an old record), reports the changes and holds them to nothing', () => {
    const report = buildReport({changed: ['x'], checks: [], denials: []})
    expect(report).toMatchObject({enforce: null, outOfScope: [], scope: null, untouched: []})
    expect(reportTally(report)).toBe('Run complete: 1 changed (no approved scope); checks: none; 0 calls denied')
  })
})

describe('plan revisions', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'wave-revisions-'))
  })
  afterEach(() => rmSync(dir, {force: true, recursive: true}))

  it('keeps each new revision once, with the feedback that asked for it, and diffs from the one last decided on', async () => {
    const plan = path.join(dir, 'p.md')
    const first = Buffer.from('# P\n\n- a\n')
    const second = Buffer.from('# P\n\n- a\n- b\n')
    expect(recordRevision(plan, first).revision).toBe(1)
    expect(recordRevision(plan, first).revision).toBe(1)
    expect(recordRevision(plan, second, 'add b').revision).toBe(2)
    expect(readRevisions(plan).map((revision) => [revision.revision, revision.feedback])).toEqual([
      [1, null],
      [2, 'add b'],
    ])

    const diff = (await revisionDiff({current: second, decidedSha256: sha256(first), planPath: plan}))!
    expect(diff).toMatchObject({added: 1, feedback: ['add b'], removed: 0})
    expect(diff.from.label).toBe('revision 1 (last decided on)')
    expect(diff.patch).toContain('\n+- b\n')
    // The plan edited by hand since: "current" is not a kept revision, and is what the diff goes to.
    writeFileSync(plan, '# P\n\n- c\n')
    const edited = (await revisionDiff({current: Buffer.from('# P\n\n- c\n'), from: '2', planPath: plan}))!
    expect(edited.to.label).toBe('current')
    expect(edited).toMatchObject({added: 1, removed: 2})
    // A line that cannot be read is skipped, not fatal.
    writeFileSync(path.join(dir, 'p.revisions.jsonl'), 'not json\n', {flag: 'a'})
    expect(readRevisions(plan)).toHaveLength(2)
  })
})
