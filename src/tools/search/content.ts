/**
 * Grep's reading and matching, apart from the crawl so that a search worker thread loads only this (and
 * node's own modules): engine.ts runs it on the main thread and starts it as the worker's entry point.
 * Everything per file is synchronous, reusing one buffer; see engine.ts.
 */
import {isUtf8} from 'node:buffer'
import {closeSync, constants, openSync, readSync} from 'node:fs'
import {isMainThread, parentPort, workerData} from 'node:worker_threads'

import {BINARY_SNIFF_BYTES, decodeForDisplay, looksBinary} from '../../base/workspace/files.js'
import {compileLinear, plainLiteral} from './linear-regex.js'
import type {RE2JS} from 're2js'

export type ContentMode = 'content' | 'files_with_matches' | 'count'

/** What Grep looks for; plain data, so that it can be posted to a worker. */
export interface ContentQuery {
  /** A regular expression in JavaScript syntax, run by RE2 (linear-regex.ts) against each line (without its line break). */
  source: string
  flags: string
  mode: ContentMode
  /** Skip files larger than this. */
  maxFileBytes: number
  /** Keep at most this many matching lines per file (content mode). */
  maxLines: number
  /** Keep at most this many characters of a matching line; `length` tells the rest. */
  maxLineChars: number
  /** Content mode: lines of context kept before and after each matching line (ripgrep's -B, -A). */
  before?: number
  after?: number
  /** The pattern runs over the whole file: `.` and `\n` match line breaks (ripgrep's -U --multiline-dotall). */
  multiline?: boolean
}

export interface ContentMatch {
  file: string
  /** Matching lines (1 in files_with_matches mode: the search stops at the first). */
  count: number
  /**
   * Content mode: the first matching lines (and their context lines, marked), in order, 1-based numbers,
   * text cut to maxLineChars; at most maxLines of them.
   */
  lines: MatchedLine[]
}

interface MatchedLine {
  number: number
  text: string
  length: number
  /** A line shown for context (-A, -B, -C), not a match. */
  context?: true
}

/**
 * Sorts matches by path and empties the lines of those past the first `keep` lines, which no output can
 * show (whatever else is found, it can only push them further back). Returns the lines kept.
 */
export function keepFirstLines(matches: ContentMatch[], keep: number): number {
  matches.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
  let kept = 0
  for (const match of matches) {
    if (kept >= keep) match.lines = []
    kept += match.lines.length
  }

  return kept
}

/** A query made ready to run: the regex, the literals a matching file must contain, where to look for lines. */
interface CompiledQuery {
  key: string
  /** Whether a line (or a block of whole lines) holds a match: a plain string's search, or RE2 (linear-regex.ts). */
  test: (text: string) => boolean
  /** A match might span lines (see LinearRegex): a block's match must be confirmed line by line. */
  crossesLines: boolean
  /** Matching work per byte in the worst case: the RE2 program's size, 1 for a plain string. */
  cost: number
  /** Bytes each matching file contains: the required literals, or with -i their caseless runs. */
  literals: Buffer[]
  /**
   * Case-insensitive: ASCII strings each matching file contains in some case, as regexes to run on the
   * bytes read as Latin-1 (a plain copy, unlike UTF-8 decoding). Exact: ASCII bytes read the same either
   * way, and only `ſ` (U+017F) and the Kelvin sign (U+212A) fold onto ASCII letters, spelled in.
   */
  folded: RegExp[]
  /** A string every matching line contains (case-sensitive searches): only lines holding it are tested. */
  anchor?: string
  /** Multiline: the [start, end) offsets of every match in a whole text. */
  ranges?: (text: string) => Array<[number, number]>
}

/**
 * For a case-insensitive search: the longest run of ASCII characters without case (digits, `_`,
 * punctuation, two at least) in each required literal. Case folding never maps any other character
 * onto them, so a matching file holds those exact bytes: a plain byte search rules most files out
 * before any decoding (`user_id` → `_`, `v2_api` → `2_`).
 */
function caselessRuns(literals: string[]): Buffer[] {
  const runs: Buffer[] = []
  for (const literal of literals) {
    if (!/^[\u0020-\u007E]+$/.test(literal)) continue
    const longest = literal.split(/[A-Za-z]+/).reduce((best, run) => (run.length > best.length ? run : best), '')
    if (longest.length >= 2) runs.push(Buffer.from(longest, 'latin1'))
  }

  return runs
}

/** The query compiled last in this thread: Grep compiles it to refuse a bad pattern, then each file's search uses it. */
let lastCompiled: CompiledQuery | undefined

/** The query as the search runs it: a plain string's search, or RE2 (throws PatternError for a bad pattern). */
export function compileQuery(query: ContentQuery): CompiledQuery {
  const multiline = query.multiline ?? false
  const key = `${query.flags}${multiline ? 'U' : ''}/${query.source}`
  if (lastCompiled?.key === key) return lastCompiled
  const literals = requiredLiterals(query.source)
  // A plain string holds no line break: multiline or not, it matches the same.
  const plain = query.flags.includes('i') ? undefined : plainLiteral(query.source)
  const linear = plain === undefined ? compileLinear(query.source, {ignoreCase: query.flags.includes('i'), multiline}) : undefined
  const ignoresCase = linear?.ignoresCase ?? false
  lastCompiled = {
    // Lines found by a plain string's own search hold it: that search is their test.
    anchor: plain ?? (ignoresCase ? undefined : literals[0]),
    cost: linear?.instructions ?? 1,
    crossesLines: linear?.crossesLines ?? false,
    folded: ignoresCase ? literals.filter((literal) => /^[\u0020-\u007E]+$/.test(literal)).map((literal) => foldedLiteral(literal)) : [],
    key,
    literals: ignoresCase ? caselessRuns(literals) : literals.map((literal) => Buffer.from(literal, 'utf8')),
    ranges: multiline && linear ? (text) => matchRanges(linear.regex, text) : undefined,
    test: linear ? (text) => linear.regex.test(text) : (text) => text.includes(plain!),
  }
  return lastCompiled
}

/** What `search` answers for a file it leaves to a worker thread: matching it could take the main thread too long. */
export const DEFERRED = 'deferred'

/** Reads and matches files synchronously, reusing one buffer. */
export class Searcher {
  private buffer = Buffer.allocUnsafe(256 * 1024)

  /**
   * The file's matches. With `maxCost`, a file whose worst-case matching work (its size times the
   * regex program's, which bounds RE2's slowest path) exceeds it is not matched here: DEFERRED.
   */
  search(file: string, query: ContentQuery): ContentMatch | undefined
  search(file: string, query: ContentQuery, maxCost: number): ContentMatch | typeof DEFERRED | undefined
  search(file: string, query: ContentQuery, maxCost = Number.POSITIVE_INFINITY): ContentMatch | typeof DEFERRED | undefined {
    const compiled = compileQuery(query)
    const bytes = this.read(file, query.maxFileBytes)
    if (!bytes) return undefined
    for (const literal of compiled.literals) if (!bytes.includes(literal)) return undefined
    if (compiled.folded.length > 0) {
      const latin1 = bytes.toString('latin1')
      for (const literal of compiled.folded) if (!literal.test(latin1)) return undefined
    }

    if (bytes.length * compiled.cost > maxCost) return DEFERRED
    const text = decodeText(bytes)
    if (text === undefined) return undefined
    return matchLines(file, text, compiled, query)
  }

  /** The file's bytes (a view of the shared buffer), or undefined when it is unreadable, not a regular file, or too big. */
  private read(file: string, maxBytes: number): Buffer | undefined {
    let fd: number
    try {
      // O_NONBLOCK: a FIFO swapped in since the crawl must not hang the search; O_NOFOLLOW: nor a symlink lead out.
      fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOFOLLOW ?? 0))
    } catch {
      return undefined
    }

    try {
      // Read to the end rather than fstat first: a Stats object costs more than the read(2) it would save.
      // A regular file's read comes back short only at its end, so most files take one read(2), not two
      // (the second, empty one was a tenth of a search's system time).
      let length = 0
      while (true) {
        if (length === this.buffer.length) {
          if (length > maxBytes) return undefined
          const bigger = Buffer.allocUnsafe(Math.min(this.buffer.length * 4, maxBytes + 1))
          this.buffer.copy(bigger, 0, 0, length)
          this.buffer = bigger
        }

        const wanted = this.buffer.length - length
        const read = readSync(fd, this.buffer, length, wanted, null)
        length += read
        if (read < wanted) break
      }

      return length > maxBytes ? undefined : this.buffer.subarray(0, length)
    } catch {
      return undefined // A directory (EISDIR), a FIFO or socket (EAGAIN), a file gone...
    } finally {
      closeSync(fd)
    }
  }
}

const REPLACEMENT_CHARACTER = Buffer.from('\uFFFD', 'utf8')
const BYTE_ORDER_MARK = Buffer.from('\uFEFF', 'utf8')

/**
 * The text of a file, or undefined when it looks binary: looksBinary and decodeForDisplay, with a fast
 * path for valid UTF-8 (nearly every source file) that gives the same answer and the same text.
 */
function decodeText(bytes: Buffer): string | undefined {
  const sample = bytes.subarray(0, BINARY_SNIFF_BYTES)
  if (sample.includes(0)) return undefined
  // Valid UTF-8 decodes without replacement characters, so it is text, unless it spells U+FFFD itself.
  if (isUtf8(bytes) && !sample.includes(REPLACEMENT_CHARACTER)) {
    // TextDecoder drops a leading byte order mark; toString keeps it.
    return (bytes.subarray(0, 3).equals(BYTE_ORDER_MARK) ? bytes.subarray(3) : bytes).toString('utf8')
  }

  return looksBinary(bytes) ? undefined : decodeForDisplay(bytes)
}

/**
 * The matching lines of a file. RE2 runs over whole blocks of lines at once (its DFA is fastest on long
 * input), and nothing in a translated pattern matches a line break, so the text has a match exactly when
 * one of its lines has: a whole-text test answers files_with_matches, and rules out most files otherwise.
 * Then lines are tested one by one: those holding the anchor literal, or all of them.
 */
function matchLines(file: string, text: string, compiled: CompiledQuery, query: ContentQuery): ContentMatch | undefined {
  if (text.length === 0) return undefined // No line at all.
  // A CR before a line break (or at the very end) belongs to the line break: lines are matched without it.
  if (text.includes('\r')) text = text.replaceAll(/\r(?=\n|$)/g, '')
  // A final line break ends the last line; it does not start another one.
  const body = text.endsWith('\n') ? text.slice(0, -1) : text
  const {anchor, crossesLines, ranges, test} = compiled
  if (ranges) return matchAcrossLines(file, body, ranges, query)
  if (query.mode === 'files_with_matches' && !crossesLines) return test(body) ? {count: 1, file, lines: []} : undefined
  if (!anchor && !test(body)) return undefined

  const found: ContentMatch = {count: 0, file, lines: []}
  // Line numbers are counted only as far as a tested line, and only where they are shown.
  const numbered = query.mode === 'content'
  let number = 0
  let counted = 0
  for (let start = 0; start <= body.length; ) {
    if (anchor) {
      const at = body.indexOf(anchor, start)
      if (at === -1) break
      start = body.lastIndexOf('\n', at) + 1
    }

    let end = body.indexOf('\n', start)
    if (end === -1) end = body.length
    const line = body.slice(start, end)
    if (numbered) {
      for (let at = body.indexOf('\n', counted); at !== -1 && at < start; at = body.indexOf('\n', at + 1)) number++
      counted = start
    }

    start = end + 1
    if (!test(line)) continue
    found.count++
    if (query.mode === 'files_with_matches') break
    if (numbered && found.lines.length < query.maxLines) found.lines.push(shownLine(line, number + 1, query))
  }

  if (found.count === 0) return undefined
  if (numbered && ((query.before ?? 0) > 0 || (query.after ?? 0) > 0))
    found.lines = withContext(
      body.split('\n'),
      found.lines.map(({number}) => number),
      query,
    )
  return found
}

function shownLine(line: string, number: number, query: ContentQuery, context = false): MatchedLine {
  const shown: MatchedLine = {length: line.length, number, text: line.length > query.maxLineChars ? line.slice(0, query.maxLineChars) : line}
  if (context) shown.context = true
  return shown
}

/** The matching lines (1-based numbers, ascending) with `before` and `after` lines of context each, at most maxLines in all. */
function withContext(lines: string[], matched: number[], query: ContentQuery): MatchedLine[] {
  const isMatch = new Set(matched)
  const out: MatchedLine[] = []
  let last = 0 // the last line number taken
  for (const number of matched) {
    const from = Math.max(last + 1, number - (query.before ?? 0))
    const to = Math.min(lines.length, number + (query.after ?? 0))
    for (let n = from; n <= to; n++) {
      if (out.length >= query.maxLines) return out
      out.push(shownLine(lines[n - 1], n, query, !isMatch.has(n)))
      last = n
    }
  }

  return out
}

/**
 * Multiline: every line a match touches is a matching line (as ripgrep prints them), counted once. The
 * matches are found over the whole text, so a pattern may span lines.
 */
function matchAcrossLines(file: string, body: string, ranges: (text: string) => Array<[number, number]>, query: ContentQuery): ContentMatch | undefined {
  const found = ranges(body)
  if (found.length === 0) return undefined
  if (query.mode === 'files_with_matches') return {count: 1, file, lines: []}
  // Line starts, to turn offsets into line numbers.
  const starts = [0]
  for (let at = body.indexOf('\n'); at !== -1; at = body.indexOf('\n', at + 1)) starts.push(at + 1)
  const lineOf = (offset: number) => {
    let low = 0
    let high = starts.length - 1
    while (low < high) {
      const mid = (low + high + 1) >> 1
      if (starts[mid] <= offset) low = mid
      else high = mid - 1
    }

    return low + 1
  }

  const matched = new Set<number>()
  for (const [start, end] of found) {
    const last = lineOf(Math.max(start, end - 1))
    for (let n = lineOf(start); n <= last; n++) matched.add(n)
  }

  const numbers = [...matched].sort((a, b) => a - b)
  if (query.mode === 'count') return {count: numbers.length, file, lines: []}
  const lines = body.split('\n')
  return {count: numbers.length, file, lines: withContext(lines, numbers, query)}
}

/** The [start, end) offsets of the regex's matches in `text`, left to right, an empty match stepping on by one character. */
function matchRanges(regex: RE2JS, text: string): Array<[number, number]> {
  const out: Array<[number, number]> = []
  const matcher = regex.matcher(text)
  let from = 0
  while (from <= text.length && matcher.find(from)) {
    const start = matcher.start()
    const end = matcher.end()
    out.push([start, end])
    from = end > start ? end : end + 1
  }

  return out
}

/**
 * A case-insensitive regex for an ASCII literal, run on bytes read as Latin-1: RE2 also folds `ſ`
 * (U+017F) onto s and the Kelvin sign (U+212A) onto k, whose UTF-8 bytes are spelled in. A plain
 * literal, so V8's engine runs it in time linear in the text.
 */
function foldedLiteral(literal: string): RegExp {
  const spelled = escapeRegex(literal).replaceAll(/s/gi, '(?:s|\u00C5\u00BF)').replaceAll(/k/gi, '(?:k|\u00E2\u0084\u00AA)')
  return new RegExp(spelled, 'i')
}

/**
 * Strings every match of the regex contains (the longest three; in some case under the i flag): a file
 * without one of them is skipped without decoding it. Conservative: the runs of literal characters in
 * a pattern with no alternation, cut at anything that is not plainly one required character (classes,
 * escapes such as \w or \u0041, groups, optional or repeated characters), never with a line break or
 * U+FFFD (which invalid bytes decode to) in them.
 */
export function requiredLiterals(source: string): string[] {
  const runs: string[] = []
  let run = ''
  const end = () => {
    // A quantifier can split a surrogate pair: keep whole characters only.
    if (/[\uD800-\uDBFF]$/.test(run)) run = run.slice(0, -1)
    if (/^[\uDC00-\uDFFF]/.test(run)) run = run.slice(1)
    if (run.length >= 2) runs.push(run)
    run = ''
  }

  for (let i = 0; i < source.length; i++) {
    const char = source[i]
    const next = source[i + 1]
    let literal: string | undefined
    if (char === '\\') {
      // An escaped symbol is that symbol; an escaped letter or digit is a class, an escape or a backreference.
      if (next === undefined || /[\dA-Za-z]/.test(next)) {
        end()
        i = skipEscape(source, i + 1)
        continue
      }

      literal = next
      i++
    } else if (char === '|') {
      return []
    } else if (char === '[') {
      end()
      i = skipClass(source, i)
      continue
    } else if (char === '(') {
      end()
      const close = skipGroup(source, i)
      if (close === -1) return []
      i = close
      continue
    } else if ('^$.)]}'.includes(char)) {
      end()
      continue
    } else if ('*+?'.includes(char)) {
      // A quantifier after a group, a class or a quantifier: the run has ended already.
      end()
      continue
    } else if (char === '{') {
      // A count such as {2,3} (or a literal brace): skip to its end, whatever it says.
      end()
      const close = source.indexOf('}', i)
      if (close !== -1) i = close
      continue
    } else {
      literal = char
    }

    const after = source[i + 1]
    if (after !== undefined && '*?{'.includes(after)) {
      end() // The character is optional: the run ends before it.
      continue
    }

    if (literal === '\n' || literal === '\r' || literal === '\uFFFD') {
      end()
      continue
    }

    run += literal
    if (after === '+') end() // Required once, but the run cannot go on past the repetition.
  }

  end()
  // The likeliest to be missing first: the more characters other than lower-case letters, digits and
  // blanks (the bulk of source text), the rarer; then the longer.
  const rarity = (run: string) => run.replaceAll(/[\d\sa-z]/g, '').length
  return runs.sort((a, b) => rarity(b) - rarity(a) || b.length - a.length).slice(0, 3)
}

/** The index of the last character of the escape whose letter or digit is at `at` (\u0041, \x41, \cJ, \12, \k<name>, \p{L}, \pL). */
function skipEscape(source: string, at: number): number {
  const letter = source[at]
  const span = (pattern: RegExp) => at + (pattern.exec(source.slice(at + 1))?.[0].length ?? 0)
  if (letter === 'u') return span(/^(?:[\dA-Fa-f]{4}|\{[\dA-Fa-f]+\})/)
  if (letter === 'x') return span(/^[\dA-Fa-f]{2}/)
  if (letter === 'c') return span(/^[A-Za-z]/)
  if (letter === 'k') return span(/^<[^>]*>/)
  if (letter === 'p' || letter === 'P') return span(/^(?:\{[^}]*\}|[A-Za-z])/)
  if (/\d/.test(letter)) return span(/^\d*/)
  return at
}

function escapeRegex(text: string): string {
  return text.replaceAll(/[$()*+.?[\\\]^{|}/]/g, String.raw`\$&`)
}

/** The index of the `]` closing the class opened at `open`. */
function skipClass(source: string, open: number): number {
  let i = open + 1
  if (source[i] === '^') i++
  if (source[i] === ']') i++
  for (; i < source.length; i++) {
    if (source[i] === '\\') i++
    else if (source[i] === ']') return i
  }

  return source.length
}

/** The index of the `)` closing the group opened at `open`, or -1 when it is not closed. */
function skipGroup(source: string, open: number): number {
  let depth = 0
  for (let i = open; i < source.length; i++) {
    const char = source[i]
    if (char === '\\') i++
    else if (char === '[') i = skipClass(source, i)
    else if (char === '(') depth++
    else if (char === ')' && --depth === 0) return i
  }

  return -1
}

// ---------------------------------------------------------------------------------------------- worker

export interface BatchRequest {
  id: number
  files: string[]
  query: ContentQuery
  /** Lines past the first this many of the batch (in path order) are not sent back. */
  keepLines?: number
}

export interface BatchResponse {
  id: number
  matches?: ContentMatch[]
  error?: string
}

if (!isMainThread && (workerData as {waveSearchWorker?: boolean} | undefined)?.waveSearchWorker && parentPort) {
  const port = parentPort
  const searcher = new Searcher()
  port.on('message', ({files, id, keepLines, query}: BatchRequest) => {
    try {
      const matches: ContentMatch[] = []
      for (const file of files) {
        const match = searcher.search(file, query)
        if (match) matches.push(match)
      }

      if (keepLines !== undefined) keepFirstLines(matches, keepLines)

      port.postMessage({id, matches} satisfies BatchResponse)
    } catch (error) {
      port.postMessage({error: error instanceof Error ? error.message : String(error), id} satisfies BatchResponse)
    }
  })
}
