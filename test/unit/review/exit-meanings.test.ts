/**
 * The words a plan's comment gives an exit code are the design's table's: every code but success has
 * them, keyed by the one table (base/errors.ts), and each says what design.md's row says.
 */
import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {EXIT_MEANINGS} from '../../../src/review/comment-body.js'
import {ExitCode} from '../../../src/base/errors.js'

const design = readFileSync(new URL('../../../docs/design.md', import.meta.url), 'utf8')
/** design.md's exit-code rows: code → meaning. */
const rows = new Map([...design.matchAll(/^\| (\d+) \| (.+) \|$/gm)].map((row) => [Number(row[1]), row[2]]))

describe('the exit codes a comment explains', () => {
  it('are every code of the one table but success, and no other', () => {
    const codes = Object.values(ExitCode).filter((code) => code !== ExitCode.ok)
    expect(
      Object.keys(EXIT_MEANINGS)
        .map(Number)
        .sort((a, b) => a - b),
    ).toEqual([...codes].sort((a, b) => a - b))
    expect([...rows.keys()].sort((a, b) => a - b)).toEqual([...Object.values(ExitCode)].sort((a, b) => a - b))
  })

  it('say what the design says of a result not as asked and of unmet checks', () => {
    expect(rows.get(ExitCode.refused)).toContain('never matched `--json-schema`')
    expect(EXIT_MEANINGS[ExitCode.refused]).toMatch(/refused, ended without a result, .*output limit, or its result never matched the JSON Schema/)
    expect(rows.get(ExitCode.unmet)).toContain('a merge of units')
    expect(EXIT_MEANINGS[ExitCode.unmet]).toContain('a merge of units incomplete')
  })
})
