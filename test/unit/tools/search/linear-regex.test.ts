import {describe, expect, it} from 'vitest'

import {compileLinear, PatternError, plainLiteral} from '../../../../src/tools/search/linear-regex.js'
import {ToolError} from '../../../../src/tools/tool.js'

/** Whether the pattern, as Grep runs it, matches the line (lines hold no line break). */
const matchesLine = (pattern: string, line: string, ignoreCase = false) => compileLinear(pattern, {ignoreCase}).regex.test(line)

describe('compileLinear: JavaScript syntax keeps its meaning under RE2', () => {
  // Every row is checked against V8 too (on short lines, where backtracking costs nothing).
  it.each<[string, string]>([
    [String.raw`foo\s+bar`, 'foo \t bar'],
    [String.raw`foo\sbar`, 'foo\u00A0bar'],
    [String.raw`foo\sbar`, 'foo\u2003bar'],
    [String.raw`a\Sb`, 'a\u00A0b'],
    ['a.c', 'abc'],
    ['a.c', 'a\rc'],
    ['a.c', 'a\u2028c'],
    [String.raw`\u0041\x42`, 'AB'],
    [String.raw`\uD83D\uDE00`, '😀'],
    [String.raw`\w+_\d+`, 'user_42'],
    [String.raw`\W\D`, '-x'],
    [String.raw`[\s\S]`, 'x'],
    ['[]', 'x'],
    ['[^]', 'x'],
    ['[a-]', '-'],
    [String.raw`[\d-z]`, '-'],
    [String.raw`[^\d\s]`, 'x'],
    [String.raw`[^\d\s]`, ' 1'],
    [String.raw`\bfoo\b`, 'a foo b'],
    [String.raw`\bfoo\b`, 'afoob'],
    ['a{2}', 'aa'],
    ['a{2,}', 'a'],
    ['a{', 'a{'],
    ['x}', 'x}'],
    [']', ']'],
    [String.raw`\/path`, '/path'],
    [String.raw`\cA`, '\u0001'],
    [String.raw`\0`, '\0'],
    [String.raw`(?<year>\d{4})-(?:\d\d)`, '2024-05'],
    ['colou?r|grey', 'gray'],
    ['^$', ''],
    ['^ab$', 'ab'],
    ['x*?y', 'xxy'],
  ])('%j on %j', (pattern, line) => {
    expect(matchesLine(pattern, line)).toBe(new RegExp(pattern).test(line))
  })

  it.each<[string, string]>([
    ['ÉCOLE', 'école'],
    ['needle', 'NeEdLe'],
    ['[a-c]+', 'ABC'],
  ])('-i: %j on %j', (pattern, line) => {
    expect(matchesLine(pattern, line, true)).toBe(true)
    expect(new RegExp(pattern, 'i').test(line)).toBe(true)
  })

  it('reads characters, not UTF-16 halves (as the u flag would)', () => {
    expect(matchesLine('^a.c$', 'a😀c')).toBe(true)
    expect(matchesLine(String.raw`\u{1F600}`, '😀')).toBe(true)
  })

  it('takes RE2 syntax that JavaScript lacks, as ripgrep users write it', () => {
    expect(matchesLine('(?i)needle', 'NEEDLE')).toBe(true)
    expect(compileLinear('a(?i)b').ignoresCase).toBe(true)
    expect(matchesLine(String.raw`\pL+\d`, 'é1')).toBe(true)
    expect(matchesLine('[[:alpha:]]+', 'abc')).toBe(true)
    expect(matchesLine(String.raw`\Qa.b*\E`, 'a.b*')).toBe(true)
    expect(matchesLine(String.raw`\Qa.b*\E`, 'axbb')).toBe(false)
    expect(matchesLine(String.raw`\Afoo\z`, 'foo')).toBe(true)
    expect(matchesLine('(?P<n>x)', 'x')).toBe(true)
  })

  it('matches nothing across a line break: a block of lines matches only where a line does', () => {
    const block = 'ab\ncd'
    for (const pattern of [
      String.raw`b\nc`,
      String.raw`b\sc`,
      'b[^x]c',
      String.raw`b\Wc`,
      String.raw`b\Dc`,
      'b[\\s\\S]c',
      'b.c',
      String.raw`b[\x00-\x7f]c`,
      String.raw`b\cJc`,
    ]) {
      expect(matchesLine(pattern, block), pattern).toBe(false)
    }

    expect(matchesLine('^cd$', block)).toBe(true)
    expect(matchesLine('b$', block)).toBe(true)
  })

  it('says when a Unicode class could hold a line break, and the block must be confirmed line by line', () => {
    expect(compileLinear(String.raw`\P{L}`).crossesLines).toBe(true)
    expect(compileLinear(String.raw`[\p{Cc}x]`).crossesLines).toBe(true)
    expect(compileLinear(String.raw`[^\p{L}]`).crossesLines).toBe(false)
    expect(compileLinear(String.raw`\w+`).crossesLines).toBe(false)
  })

  it('tests whole strings, line breaks included, when not matching lines (glob paths)', () => {
    const {regex} = compileLinear('^a[^/]*b$', {lines: false})
    expect(regex.test('a\nb')).toBe(true)
    expect(regex.test('x\nab')).toBe(false)
  })
})

describe('compileLinear: patterns that would hang a backtracking engine', () => {
  // V8 takes 2^n steps for each of these on the line below: minutes from about 30 characters on.
  it.each<[string, string, boolean]>([
    ['^(a+)+$', `${'a'.repeat(5000)}b`, false],
    ['^(a+)+$', 'a'.repeat(5000), true],
    ['(a|aa)+b', 'a'.repeat(5000), false],
    [String.raw`(\w+\s?)+$`, `${'word '.repeat(2000)}!`, false],
    ['^(([a-z])+.)+[A-Z]([a-z])+$', 'a'.repeat(5000), false],
    ['(x+x+)+y', 'x'.repeat(5000), false],
    [String.raw`\w+_\d+ =`, 'a'.repeat(200_000), false],
  ])('%s on a long line answers at once', (pattern, line, expected) => {
    const started = performance.now()
    expect(matchesLine(pattern, line)).toBe(expected)
    expect(performance.now() - started).toBeLessThan(1000)
  })
})

describe('compileLinear: what RE2 cannot do is refused, naming the construct', () => {
  it.each<[string, RegExp]>([
    [String.raw`(a)\1`, /^Backreferences \(\\1\) are not supported: Grep uses a linear-time engine/],
    [String.raw`(?<q>')\w+\k<q>`, /^Backreferences \(\\k<name>\) are not supported/],
    ['foo(?=bar)', /^Lookahead \(\?=\.\.\.\) is not supported/],
    ['foo(?!bar)', /^Lookahead \(\?!\.\.\.\) is not supported/],
    ['(?<=a)b', /^Lookbehind \(\?<=\.\.\.\) is not supported/],
    ['(?<!a)b', /^Lookbehind \(\?<!\.\.\.\) is not supported/],
    ['foo(', /^Invalid regular expression: missing closing \): `foo\(`\.$/],
    ['[z-a]', /^Invalid regular expression: range z-a out of order/],
    ['a{1001}', /^Invalid regular expression: invalid repeat count/],
    ['a**', /^Invalid regular expression: invalid nested repetition operator/],
    [String.raw`\e`, /^Invalid regular expression: \\e is not an escape Grep knows/],
    ['[abc', /^Invalid regular expression: missing closing \]/],
    ['abc\\', /^Invalid regular expression: \\ at end of pattern/],
  ])('%s', (pattern, says) => {
    const error = (() => {
      try {
        compileLinear(pattern)
      } catch (error_) {
        return error_
      }
    })()
    expect(error).toBeInstanceOf(PatternError)
    expect(error).toBeInstanceOf(ToolError)
    expect((error as Error).message).toMatch(says)
  })
})

describe('plainLiteral', () => {
  it.each<[string, string | undefined]>([
    ['wave_bench_needle_7f3a', 'wave_bench_needle_7f3a'],
    [String.raw`TODO\(perf\)`, 'TODO(perf)'],
    ['a-b: c/d, "e" <f> #g @h', 'a-b: c/d, "e" <f> #g @h'],
    ['', undefined],
    ['a.b', undefined],
    [String.raw`\d`, undefined],
    ['a{2}', undefined],
    ['(?i)a', undefined],
    ['a\nb', undefined],
  ])('%j → %j', (pattern, expected) => {
    expect(plainLiteral(pattern)).toBe(expected)
  })
})
