import {describe, expect, it} from 'vitest'

import {KEPT_OUTPUT_CHARS, OutputEvidence} from '../../../src/plans/evidence.js'

const ok = (n: number) => `ok ${n} a passing assertion with some words in it to take room`

function rendered(lines: string[], chunk = 97): string {
  const evidence = new OutputEvidence()
  const text = lines.join('\n') + '\n'
  // In odd-sized chunks, as a pipe delivers them: lines are cut across chunks.
  for (let i = 0; i < text.length; i += chunk) evidence.append(text.slice(i, i + chunk))
  return evidence.render()
}

describe('a check’s kept output', () => {
  it('keeps a failing line from the middle of 300 lines, numbered, with the head and the tail', () => {
    const lines = Array.from({length: 300}, (_, i) => ok(i + 1))
    lines[149] = 'not ok 64 should be equal'
    lines[150] = '    at Test.assert (/work/node_modules/tape/lib/test.js:228:54)'
    lines[151] = '    at Test.equal (/work/node_modules/tape/lib/test.js:371:10)'
    const kept = rendered(lines)
    expect(kept).toContain('150 | not ok 64 should be equal')
    // The stack's first frame, not the rest of it.
    expect(kept).toContain('151 |     at Test.assert')
    expect(kept).not.toContain('Test.equal')
    expect(kept).toMatch(/^\s*1 \| ok 1 /m)
    expect(kept).toMatch(/^300 \| ok 300 /m)
    expect(kept).toContain('[300 lines of output; kept')
    expect(kept).toMatch(/\[\.\.\. lines \d+-149 not kept \.\.\.\]/)
    expect(kept.length).toBeLessThanOrEqual(KEPT_OUTPUT_CHARS)
  })

  it('control: the same output without a failure keeps no middle line', () => {
    const lines = Array.from({length: 300}, (_, i) => ok(i + 1))
    const kept = rendered(lines)
    expect(kept).not.toMatch(/^150 \|/m)
    expect(kept).not.toContain('look like failures')
  })

  it('keeps FAIL, Error and AssertionError lines, and not words that only contain them', () => {
    const lines = Array.from({length: 200}, (_, i) => ok(i + 1))
    lines[40] = ' FAIL  src/sum.test.js'
    lines[60] = 'AssertionError [ERR_ASSERTION]: 1 == 2'
    lines[80] = 'TypeError: x is not a function'
    lines[100] = 'no errors, 0 failures, ErrorBoundary rendered'
    const kept = rendered(lines)
    expect(kept).toContain(' 41 |  FAIL  src/sum.test.js')
    expect(kept).toContain(' 61 | AssertionError')
    expect(kept).toContain(' 81 | TypeError: x is not a function')
    expect(kept).not.toContain('101 |')
  })

  it('stays within its cap when every line looks like a failure, the first failures kept', () => {
    const lines = Array.from({length: 5000}, (_, i) => `Error: failure number ${i + 1} ${'x'.repeat(300)}`)
    const kept = rendered(lines, 4096)
    expect(kept.length).toBeLessThanOrEqual(KEPT_OUTPUT_CHARS)
    expect(kept).toContain('Error: failure number 1 ')
  })

  it('shows short output whole, without numbers', () => {
    expect(rendered(['checked', 'all good'])).toBe('checked\nall good')
    expect(new OutputEvidence().render()).toBe('')
  })
})
