/**
 * Regular expressions that cannot hang wave. JavaScript's engine backtracks: `^(a+)+$` on a line of 41
 * `a`s and a `b` takes longer than a session lasts, and even `\w+_\d+` is quadratic on one long line.
 * Grep's and Glob's patterns are therefore run by re2js, a port of RE2 (the engine behind Go's regexp,
 * with ripgrep's semantics): time linear in the text, whatever the pattern.
 *
 * Patterns arrive in JavaScript syntax (as models write them) and are translated: `\s`, `.`, `\uXXXX`,
 * named groups and class escapes keep their JavaScript meaning; RE2's own syntax (`\pL`, `(?i)` anywhere,
 * `[[:alpha:]]`, `\Q...\E`, `\A`, `\z`) is accepted too. What no linear-time engine can do,
 * backreferences and lookaround, is refused with the construct named.
 *
 * Patterns here match one line at a time: nothing they contain can match a line break, so a match found
 * in a block of whole lines lies within one of its lines (see content.ts).
 */
import {createRequire} from 'node:module'

import type {RE2JS} from 're2js'

import {ToolError} from '../tool.js'

// Loaded on first use, not with the command: re2js takes ~30 ms to load, which a session that never
// searches should not pay before its first request.
let engine: typeof import('re2js') | undefined
const re2js = () => (engine ??= createRequire(import.meta.url)('re2js') as typeof import('re2js'))

/** The pattern cannot be run: the message, for the model, says why and what to write instead. */
export class PatternError extends ToolError {
  constructor(message: string) {
    super(message)
    this.name = 'PatternError'
  }
}

export interface LinearRegex {
  regex: RE2JS
  /** The pattern in RE2 syntax, as compiled. */
  source: string
  /** Some part of the pattern ignores case (the -i flag, or an inline `(?i)`). */
  ignoresCase: boolean
  /** The pattern might match a line break (a Unicode class such as `\P{L}`): a block's match must be confirmed line by line. */
  crossesLines: boolean
  /** The compiled program's size: the work per character when the DFA gives way to the NFA. */
  instructions: number
}

interface LinearOptions {
  ignoreCase?: boolean
  /**
   * Lines (Grep, the default): the pattern is run over blocks of whole lines, `^` and `$` match at line
   * ends, and nothing else matches a line break. Otherwise the pattern is tested against one whole
   * string (a path), as JavaScript would.
   */
  lines?: boolean
  /**
   * Grep's multiline (ripgrep's `-U --multiline-dotall`): the pattern runs over a whole file, `.` and
   * `\n` match line breaks, `^` and `$` still match at line ends. Takes the place of `lines`.
   */
  multiline?: boolean
}

/** Compiles a JavaScript-syntax pattern for RE2. Throws PatternError. */
export function compileLinear(pattern: string, {ignoreCase = false, lines = true, multiline = false}: LinearOptions = {}): LinearRegex {
  const translated = multiline ? translate(pattern, false, true) : translate(pattern, lines)
  let regex: RE2JS
  try {
    const {RE2JS: Engine} = re2js()
    regex = Engine.compile(translated.source, (lines || multiline ? Engine.MULTILINE : 0) | (ignoreCase ? Engine.CASE_INSENSITIVE : 0))
  } catch (error) {
    // re2js: "error parsing regexp: missing closing ): `(`"
    const reason = (error as Error).message.replace(/^error parsing regexp: /, '').replace('`(?m)', '`')
    throw new PatternError(`Invalid regular expression: ${reason}.`)
  }

  return {
    crossesLines: multiline || translated.crossesLines,
    ignoresCase: ignoreCase || translated.ignoresCase,
    instructions: regex.re2().numberOfInstructions(),
    regex,
    source: translated.source,
  }
}

/**
 * The text a pattern stands for when it is a plain string (letters, digits, punctuation that is not
 * special, escaped punctuation): `TODO\(perf\)` → `TODO(perf)`. Such a pattern needs no regex engine.
 */
export function plainLiteral(pattern: string): string | undefined {
  if (pattern === '' || /[\n\r]/.test(pattern)) return undefined
  let text = ''
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]
    if (char === '\\') {
      const next = pattern[i + 1]
      if (next === undefined || !/[!-/:-@[-`{-~]/.test(next)) return undefined
      text += next
      i++
    } else if ('^$.|?*+()[]{}'.includes(char)) {
      return undefined
    } else {
      text += char
    }
  }

  return text
}

// ---------------------------------------------------------------------------------------------- translation

/** Matches nothing: what a line, which never holds a line break, makes of `\n`. */
const NOTHING = String.raw`[^\x00-\x{10FFFF}]`
/** JavaScript's `.`: anything but a line terminator. */
const DOT = String.raw`[^\n\r\x{2028}\x{2029}]`

type Range = [number, number]
const MAX_CODE_POINT = 0x10_ff_ff
const NEWLINE = 0x0a
const DIGITS: Range[] = [[0x30, 0x39]]
const WORD: Range[] = [
  [0x30, 0x39],
  [0x41, 0x5a],
  [0x5f, 0x5f],
  [0x61, 0x7a],
]
/** JavaScript's `\s`: ECMAScript WhiteSpace and LineTerminator. */
const SPACE: Range[] = [
  [0x09, 0x0d],
  [0x20, 0x20],
  [0xa0, 0xa0],
  [0x16_80, 0x16_80],
  [0x20_00, 0x20_0a],
  [0x20_28, 0x20_29],
  [0x20_2f, 0x20_2f],
  [0x20_5f, 0x20_5f],
  [0x30_00, 0x30_00],
  [0xfe_ff, 0xfe_ff],
]

const CLASS_ESCAPES: Record<string, Range[]> = {
  D: complement(DIGITS),
  S: complement(SPACE),
  W: complement(WORD),
  d: DIGITS,
  s: SPACE,
  w: WORD,
}

interface Translation {
  source: string
  ignoresCase: boolean
  crossesLines: boolean
}

/**
 * JavaScript regex syntax (without the u flag) → RE2 syntax; `dotAll`: `.` matches line breaks too (the
 * s flag). Throws PatternError for what RE2 cannot do.
 */
function translate(pattern: string, lines = true, dotAll = false): Translation {
  const out: string[] = []
  let ignoresCase = false
  let crossesLines = false
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]
    switch (char) {
      case '\\': {
        if (pattern[i + 1] === 'Q') {
          // RE2's quoting: everything up to \E (or the end) is literal.
          const close = pattern.indexOf(String.raw`\E`, i + 2)
          const quoted = pattern.slice(i + 2, close === -1 ? pattern.length : close)
          for (const quotedChar of quoted) out.push(literal(quotedChar.codePointAt(0)!, lines))
          i = close === -1 ? pattern.length : close + 1
          break
        }

        const escaped = readEscape(pattern, i, false, lines)
        i = escaped.end
        if (escaped.ranges) out.push(classOf(escaped.ranges, false, [], lines))
        else if (escaped.raw !== undefined) {
          out.push(escaped.raw)
          if (escaped.unicodeClass) crossesLines = true
        } else out.push(literal(escaped.codePoint!, lines))
        break
      }

      case '[': {
        const parsed = readClass(pattern, i, lines)
        i = parsed.end
        out.push(parsed.source)
        if (parsed.crossesLines) crossesLines = true
        break
      }

      case '(': {
        const group = readGroupOpening(pattern, i)
        i = group.end
        out.push(group.source)
        if (group.ignoresCase) ignoresCase = true
        break
      }

      case '.': {
        out.push(dotAll ? '(?s:.)' : DOT)
        break
      }

      case '{': {
        // A count ({2}, {2,}, {2,5}) or, as in JavaScript without the u flag, a literal brace.
        const count = /^\{\d+(?:,\d*)?\}/.exec(pattern.slice(i))
        if (count) {
          out.push(count[0])
          i += count[0].length - 1
        } else {
          out.push(String.raw`\{`)
        }

        break
      }

      case '}':
      case ']': {
        out.push(`\\${char}`)
        break
      }

      default: {
        // Quantifiers, anchors, alternation and `)` mean the same in both; a surrogate pair is one character.
        const codePoint = pattern.codePointAt(i)!
        if (codePoint > 0xff_ff || codePoint === NEWLINE) {
          out.push(literal(codePoint, lines))
          if (codePoint > 0xff_ff) i++
        } else {
          out.push(char)
        }
      }
    }
  }

  return {crossesLines, ignoresCase, source: out.join('')}
}

interface Escape {
  /** Index of the escape's last character. */
  end: number
  /** A single character. */
  codePoint?: number
  /** A class of characters (`\d`, `\s`...). */
  ranges?: Range[]
  /** RE2 syntax to pass on as it is (`\b`, `\pL`, `\A`). */
  raw?: string
  /** `raw` is a Unicode class, which may hold a line break. */
  unicodeClass?: boolean
}

/** The escape starting at the backslash at `at`, outside or inside a class. */
function readEscape(pattern: string, at: number, inClass: boolean, lines: boolean): Escape {
  const next = pattern[at + 1]
  if (next === undefined) throw new PatternError(String.raw`Invalid regular expression: \ at end of pattern.`)
  const rest = pattern.slice(at + 2)
  const controls: Record<string, number> = {f: 0x0c, n: NEWLINE, r: 0x0d, t: 0x09, v: 0x0b}
  if (next in CLASS_ESCAPES) return {end: at + 1, ranges: CLASS_ESCAPES[next]}
  if (next in controls) return {codePoint: controls[next], end: at + 1}
  if (next === 'b' && inClass) return {codePoint: 0x08, end: at + 1}
  if ((next === 'b' || next === 'B') && !inClass) return {end: at + 1, raw: `\\${next}`}
  // Lines are matched one at a time: the start and end of the text are the line's.
  if (next === 'A' && !inClass) return {end: at + 1, raw: lines ? '^' : String.raw`\A`}
  if (next === 'z' && !inClass) return {end: at + 1, raw: lines ? '$' : String.raw`\z`}
  if (next === '0' && !/^\d/.test(rest)) return {codePoint: 0, end: at + 1}
  if (/[1-9]/.test(next)) {
    throw new PatternError(
      `Backreferences (\\${next}) are not supported: Grep uses a linear-time engine (RE2 syntax, as ripgrep). Match the repeated text explicitly.`,
    )
  }

  if (next === 'k' && rest.startsWith('<')) {
    throw new PatternError(
      String.raw`Backreferences (\k<name>) are not supported: Grep uses a linear-time engine (RE2 syntax, as ripgrep). Match the repeated text explicitly.`,
    )
  }

  if (next === 'x') {
    const hex = /^[\dA-Fa-f]{2}/.exec(rest) ?? (/^\{[\dA-Fa-f]{1,6}\}/.exec(rest) as RegExpExecArray | null)
    if (hex) return {codePoint: Number.parseInt(hex[0].replaceAll(/[{}]/g, ''), 16), end: at + 1 + hex[0].length}
    return {codePoint: 0x78, end: at + 1}
  }

  if (next === 'u') {
    const braced = /^\{([\dA-Fa-f]{1,6})\}/.exec(rest)
    if (braced) return {codePoint: Number.parseInt(braced[1], 16), end: at + 1 + braced[0].length}
    const hex = /^[\dA-Fa-f]{4}/.exec(rest)
    if (!hex) return {codePoint: 0x75, end: at + 1}
    const unit = Number.parseInt(hex[0], 16)
    // A surrogate pair spelled as two escapes is one character.
    const low = /^\\u(d[c-f][\dA-Fa-f]{2})/i.exec(rest.slice(4))
    if (unit >= 0xd8_00 && unit <= 0xdb_ff && low) {
      const codePoint = (unit - 0xd8_00) * 0x4_00 + (Number.parseInt(low[1], 16) - 0xdc_00) + 0x1_00_00
      return {codePoint, end: at + 11}
    }

    return {codePoint: unit, end: at + 5}
  }

  if (next === 'c') {
    const letter = /^[A-Za-z]/.exec(rest)
    if (letter) return {codePoint: letter[0].codePointAt(0)! % 32, end: at + 2}
    return {codePoint: 0x5c, end: at} // `\c` alone is a backslash and a c in JavaScript.
  }

  if (next === 'p' || next === 'P') {
    const name = /^(?:\{[^}]*\}|[A-Za-z])/.exec(rest)
    if (name) return {end: at + 1 + name[0].length, raw: `\\${next}${name[0]}`, unicodeClass: true}
  }

  if (/[A-Za-z]/.test(next)) {
    // RE2 knows a few more (\a, \Q...\E handled by the caller); JavaScript would read the others as the letter.
    if (next === 'a') return {end: at + 1, raw: String.raw`\a`}
    throw new PatternError(`Invalid regular expression: \\${next} is not an escape Grep knows. Write the letter without a backslash, or see RE2's syntax.`)
  }

  const codePoint = pattern.codePointAt(at + 1)!
  return {codePoint, end: at + (codePoint > 0xff_ff ? 2 : 1)}
}

/** The group opening at `at`: `(`, `(?:`, a named group, inline flags; lookaround is refused. */
function readGroupOpening(pattern: string, at: number): {source: string; end: number; ignoresCase: boolean} {
  const rest = pattern.slice(at)
  if (!rest.startsWith('(?')) return {end: at, ignoresCase: false, source: '('}
  const lookaround = /^\(\?<?[=!]/.exec(rest)
  if (lookaround) {
    const kind = lookaround[0].includes('<') ? 'Lookbehind' : 'Lookahead'
    throw new PatternError(
      `${kind} ${lookaround[0]}...) is not supported: Grep uses a linear-time engine (RE2 syntax, as ripgrep). Match the surrounding text instead, or filter the matches in a second search.`,
    )
  }

  const named = /^\(\?P?<([A-Za-z_]\w*)>/.exec(rest)
  if (named) return {end: at + named[0].length - 1, ignoresCase: false, source: `(?P<${named[1]}>`}
  const flags = /^\(\?([imsU]*)(?:-([imsU]*))?([:)])/.exec(rest)
  if (flags) return {end: at + flags[0].length - 1, ignoresCase: flags[1].includes('i'), source: flags[0]}
  throw new PatternError(`Invalid regular expression: unknown group syntax ${rest.slice(0, 4)}.`)
}

/**
 * The class opening at `at`, as one RE2 class. Characters and ranges are spelled as code points, class
 * escapes as their ranges; a line break is taken out of a class (added to a negated one's set).
 */
function readClass(pattern: string, at: number, lines: boolean): {source: string; end: number; crossesLines: boolean} {
  let i = at + 1
  const negated = pattern[i] === '^'
  if (negated) i++
  const ranges: Range[] = []
  const raw: string[] = []
  // Between items: the start of a range waiting for `-` and its end.
  let pending: number | undefined
  let dash = false
  const addCharacter = (codePoint: number) => {
    if (dash && pending !== undefined) {
      if (codePoint < pending) {
        throw new PatternError(
          `Invalid regular expression: range ${String.fromCodePoint(pending)}-${String.fromCodePoint(codePoint)} out of order in a character class.`,
        )
      }

      ranges.push([pending, codePoint])
      pending = undefined
      dash = false
      return
    }

    if (pending !== undefined) ranges.push([pending, pending])
    if (dash) ranges.push([0x2d, 0x2d])
    dash = false
    pending = codePoint
  }

  const flush = () => {
    if (pending !== undefined) ranges.push([pending, pending])
    if (dash) ranges.push([0x2d, 0x2d])
    pending = undefined
    dash = false
  }

  // In JavaScript `]` right after `[` or `[^` closes the class: `[]` matches nothing, `[^]` anything.
  for (; i < pattern.length && pattern[i] !== ']'; i++) {
    const char = pattern[i]
    if (char === '\\') {
      const escaped = readEscape(pattern, i, true, lines)
      i = escaped.end
      if (escaped.ranges || escaped.raw !== undefined) {
        // `[\d-z]`: a class escape cannot end a range; the dash is a dash.
        flush()
        if (escaped.ranges) ranges.push(...escaped.ranges)
        else raw.push(escaped.raw!)
      } else {
        addCharacter(escaped.codePoint!)
      }
    } else if (char === '[' && /^\[:\^?[a-z]+:\]/.test(pattern.slice(i))) {
      // A POSIX class ([:alpha:]), as RE2 and ripgrep read it.
      const posix = /^\[:\^?[a-z]+:\]/.exec(pattern.slice(i))![0]
      flush()
      raw.push(posix)
      i += posix.length - 1
    } else if (char === '-' && pending !== undefined && !dash && pattern[i + 1] !== ']') {
      dash = true
    } else {
      const codePoint = pattern.codePointAt(i)!
      if (codePoint > 0xff_ff) i++
      addCharacter(codePoint)
    }
  }

  if (i >= pattern.length) throw new PatternError(`Invalid regular expression: missing closing ] for the character class at ${at + 1}.`)
  flush()
  const source = negated && lines ? classOf([...ranges, [NEWLINE, NEWLINE]], true, raw, lines) : classOf(ranges, negated, raw, lines)
  // A Unicode or POSIX class inside a positive class may hold a line break; a negated class cannot.
  return {crossesLines: !negated && raw.length > 0, end: i, source}
}

/** An RE2 class of `ranges` (and RE2 class items); for lines, a line break taken out of a positive class. */
function classOf(ranges: Range[], negated: boolean, raw: string[], lines: boolean): string {
  const kept = negated || !lines ? normalize(ranges) : subtract(normalize(ranges), NEWLINE)
  if (kept.length === 0 && raw.length === 0) return negated ? String.raw`[\x00-\x{10FFFF}]` : NOTHING
  const items = kept.map(([lo, hi]) => (lo === hi ? hexOf(lo) : `${hexOf(lo)}-${hexOf(hi)}`))
  return `[${negated ? '^' : ''}${items.join('')}${raw.join('')}]`
}

function literal(codePoint: number, lines: boolean): string {
  if (codePoint === NEWLINE && lines) return NOTHING
  return hexOf(codePoint)
}

const hexOf = (codePoint: number) => `\\x{${codePoint.toString(16)}}`

function normalize(ranges: Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0])
  const merged: Range[] = []
  for (const [lo, hi] of sorted) {
    const last = merged.at(-1)
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi)
    else merged.push([lo, hi])
  }

  return merged
}

function complement(ranges: Range[]): Range[] {
  const out: Range[] = []
  let next = 0
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1])
    next = hi + 1
  }

  if (next <= MAX_CODE_POINT) out.push([next, MAX_CODE_POINT])
  return out
}

function subtract(ranges: Range[], codePoint: number): Range[] {
  return ranges.flatMap(([lo, hi]): Range[] => {
    if (codePoint < lo || codePoint > hi) return [[lo, hi]]
    return [
      [lo, codePoint - 1],
      [codePoint + 1, hi],
    ].filter(([a, b]) => a <= b) as Range[]
  })
}
