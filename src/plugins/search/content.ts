/**
 * Grep's reading and matching, apart from the crawl so that a search worker thread loads only this (and
 * node's own modules): search.ts runs it on the main thread and starts it as the worker's entry point.
 * Everything per file is synchronous, reusing one buffer; see search.ts.
 */
import {isUtf8} from 'node:buffer'
import {closeSync, constants, openSync, readSync} from 'node:fs'
import {isMainThread, parentPort, workerData} from 'node:worker_threads'

import {BINARY_SNIFF_BYTES, decodeForDisplay, looksBinary} from '../../core/workspace/files.js'

export type ContentMode = 'content' | 'files_with_matches' | 'count'

/** What Grep looks for; plain data, so that it can be posted to a worker. */
export interface ContentQuery {
  /** A JavaScript regular expression, tested against each line (without its line break). */
  source: string
  flags: string
  mode: ContentMode
  /** Skip files larger than this. */
  maxFileBytes: number
  /** Keep at most this many matching lines per file (content mode). */
  maxLines: number
  /** Keep at most this many characters of a matching line; `length` tells the rest. */
  maxLineChars: number
}

export interface ContentMatch {
  file: string
  /** Matching lines (1 in files_with_matches mode: the search stops at the first). */
  count: number
  /** Content mode: the first matching lines, 1-based numbers, text cut to maxLineChars. */
  lines: Array<{number: number; text: string; length: number}>
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

/** A query made ready to run: the regex, the literals a matching file must contain, the whole-text scanner. */
interface CompiledQuery {
  key: string
  regex: RegExp
  /** Bytes each matching file contains: the required literals, or with -i their caseless runs. */
  literals: Buffer[]
  /**
   * Case-insensitive: ASCII strings each matching file contains in some case, as regexes to run on the
   * bytes read as Latin-1 (a plain copy, unlike UTF-8 decoding). Exact: ASCII bytes read the same either
   * way, and no other character matches an ASCII letter without the u flag.
   */
  folded: RegExp[]
  /** The regex with the g and m flags, or undefined when a whole-text scan could miss a line's match. */
  scanner?: RegExp
  /** Whether the pattern may use `$`, which a CR before the line break would defeat in a whole-text scan. */
  dollar: boolean
  /** Whether the pattern may use `^` or `$`. */
  anchored: boolean
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

/** Reads and matches files synchronously, reusing one buffer. */
export class Searcher {
  private buffer = Buffer.allocUnsafe(256 * 1024)
  private compiled?: CompiledQuery

  search(file: string, query: ContentQuery): ContentMatch | undefined {
    const compiled = this.compile(query)
    const bytes = this.read(file, query.maxFileBytes)
    if (!bytes) return undefined
    for (const literal of compiled.literals) if (!bytes.includes(literal)) return undefined
    if (compiled.folded.length > 0) {
      const latin1 = bytes.toString('latin1')
      for (const literal of compiled.folded) if (!literal.test(latin1)) return undefined
    }

    const text = decodeText(bytes)
    if (text === undefined) return undefined
    return matchLines(file, text, compiled, query)
  }

  private compile(query: ContentQuery): CompiledQuery {
    const key = `${query.flags}/${query.source}`
    if (this.compiled?.key !== key) {
      const {flags, source} = query
      // A line's match is a match of the whole text at the same place, unless a lookaround sees past
      // the line's end (or a `$` meets the CR of a CRLF line break, checked per file).
      const lookaround = /\(\?<?[=!]/.test(source)
      const literals = requiredLiterals(source)
      this.compiled = {
        anchored: /[$^]/.test(source),
        dollar: source.includes('$'),
        key,
        folded: flags.includes('i') ? literals.filter((literal) => /^[\u0020-\u007E]+$/.test(literal)).map((literal) => new RegExp(escapeRegex(literal), 'i')) : [],
        literals: flags.includes('i') ? caselessRuns(literals) : literals.map((literal) => Buffer.from(literal, 'utf8')),
        regex: new RegExp(source, flags),
        scanner: lookaround ? undefined : new RegExp(source, `${flags}gm`),
      }
    }

    return this.compiled
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
      // Read to the end rather than fstat first: one more read(2) costs less than building a Stats object.
      let length = 0
      while (true) {
        if (length === this.buffer.length) {
          if (length > maxBytes) return undefined
          const bigger = Buffer.allocUnsafe(Math.min(this.buffer.length * 4, maxBytes + 1))
          this.buffer.copy(bigger, 0, 0, length)
          this.buffer = bigger
        }

        const read = readSync(fd, this.buffer, length, this.buffer.length - length, null)
        if (read === 0) break
        length += read
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

function matchLines(file: string, text: string, compiled: CompiledQuery, query: ContentQuery): ContentMatch | undefined {
  const found: ContentMatch = {count: 0, file, lines: []}
  const {regex, scanner} = compiled
  // With a scanner, only the lines where the whole-text scan finds a match are tested one by one: a
  // match in a line is a match of the whole text at the same place, so the lines before the scan's
  // next match have none. And a scan match that lies within one line is a match of that line, unless
  // the pattern has an anchor and the text a CR, U+2028 or U+2029 (line ends for the m flag only).
  const scan = scanner && !(compiled.dollar && text.includes('\r')) ? scanner : undefined
  const settles = scan !== undefined && !(compiled.anchored && /[\r\u2028\u2029]/.test(text))
  let number = 0
  for (let start = 0; start < text.length; ) {
    let matchStart = -1
    let matchEnd = -1
    if (scan) {
      scan.lastIndex = start
      const next = scan.exec(text)
      if (!next) break
      for (let at = text.indexOf('\n', start); at !== -1 && at < next.index; at = text.indexOf('\n', start)) {
        number++
        start = at + 1
      }

      if (start >= text.length) break // An empty match after the final line break: no line there.
      matchStart = next.index
      matchEnd = next.index + next[0].length
    }

    let end = text.indexOf('\n', start)
    if (end === -1) end = text.length
    number++
    // A final line break ends the last line; it does not start another one. A CR before it belongs to it.
    const lineEnd = end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end
    const line = text.slice(start, lineEnd)
    const within = settles && matchStart >= start && matchEnd <= lineEnd
    start = end + 1
    if (!within && !regex.test(line)) continue
    found.count++
    if (query.mode === 'files_with_matches') break
    if (query.mode === 'content' && found.lines.length < query.maxLines) {
      found.lines.push({length: line.length, number, text: line.length > query.maxLineChars ? line.slice(0, query.maxLineChars) : line})
    }
  }

  return found.count > 0 ? found : undefined
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

/** The index of the last character of the escape whose letter or digit is at `at` (\u0041, \x41, \cJ, \12, \k<name>, \p{L}). */
function skipEscape(source: string, at: number): number {
  const letter = source[at]
  const span = (pattern: RegExp) => at + (pattern.exec(source.slice(at + 1))?.[0].length ?? 0)
  if (letter === 'u') return span(/^(?:[\dA-Fa-f]{4}|\{[\dA-Fa-f]+\})/)
  if (letter === 'x') return span(/^[\dA-Fa-f]{2}/)
  if (letter === 'c') return span(/^[A-Za-z]/)
  if (letter === 'k') return span(/^<[^>]*>/)
  if (letter === 'p' || letter === 'P') return span(/^\{[^}]*\}/)
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
