import {closeSync, fstatSync, openSync, readSync} from 'node:fs'
import {performance} from 'node:perf_hooks'
import {z} from 'zod'

import {decodeForDisplay, looksBinary} from '../base/workspace/files.js'
import {displayPath} from '../base/workspace/paths.js'
import {defineTool, ToolError} from './tool.js'

const DEFAULT_LIMIT = 2000
const MAX_LINE_CHARS = 2000
const RESULT_CAP = 40_000
/** A page stops here, below the declared cap, so that the wrapper never cuts lines out of its middle and the note on reading on survives. */
const MAX_OUTPUT_CHARS = RESULT_CAP - 4000
const NEWLINE = 0x0a

export default defineTool({
  access: 'read',
  description:
    `Read a text file as numbered lines: limit lines (default ${DEFAULT_LIMIT}) from offset (1-based). ` +
    `Lines over ${MAX_LINE_CHARS} characters are cut; a page stops before ${MAX_OUTPUT_CHARS} characters and names the offset to read on from. ` +
    'Read several files in parallel, in one turn. ' +
    'Fails on a missing file or a directory (use LS); a binary file is described, not shown. Paths outside the workspace, or denied by a rule, are refused.',
  input: () =>
    z.object({
      file_path: z.string(),
      limit: z.number().int().positive().optional(),
      offset: z.number().int().min(0).optional(),
    }),
  name: 'Read',
  resultCap: RESULT_CAP,
  pathField: 'file_path',
  async run(input, ctx) {
    const target = ctx.target
    if (!target) throw new ToolError('Read needs file_path.')
    if (target.kind === 'missing') throw new ToolError(`File does not exist: ${target.input}`)
    if (target.kind === 'directory') throw new ToolError(`${target.input} is a directory, not a file: use LS to list it.`)
    // A FIFO or device could block forever or never end.
    if (target.kind === 'other') throw new ToolError(`${target.input} is not a regular file; Read reads regular files only.`)

    const shown = displayPath(ctx.root, target.real)
    const first = Math.max(input.offset ?? 1, 1)
    const limit = input.limit ?? DEFAULT_LIMIT
    // Synchronous calls, a chunk at a time: for the small files most reads are, each costs microseconds
    // where a promise-based call costs a trip through libuv's thread pool; a long scan yields (readPage).
    const fd = openSync(target.real, 'r')
    try {
      const size = fstatSync(fd).size
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES)
      const head = chunk.subarray(0, readSync(fd, chunk, 0, CHUNK_BYTES, 0))
      if (head.length === 0) return `(${shown} exists but is empty.)`
      if (looksBinary(head)) return `${shown}: binary file, ${size} bytes. Read shows text files only.`
      const page = await readPage(fd, chunk, head.length, first, limit, ctx.signal)
      if (page.lines.length === 0) {
        return `${shown} has ${page.total} line${page.total === 1 ? '' : 's'}; offset ${first} is past the end.`
      }

      const last = first + page.lines.length - 1
      // Claude Code's numbering (2.1.x): the number flush left, a tab, the line. cat -n's padding to six
      // columns would add up to five characters a line, sent and then re-read from the cache every turn.
      let output = page.lines.map((line, index) => `${first + index}\t${line}`).join('\n')
      if (page.total === undefined) {
        output += `\n\n(Showing lines ${first}-${last}; the file goes on (${size} bytes). To read on, call Read with offset=${last + 1}.)`
      } else if (last < page.total) {
        output += `\n\n(Showing lines ${first}-${last} of ${page.total}. To read on, call Read with offset=${last + 1}.)`
      }

      return output
    } finally {
      closeSync(fd)
    }
  },
})

/** Bytes read per call. */
const CHUNK_BYTES = 64 * 1024
/** The line number and tab before each shown line, at most (the page's cap counts them). */
const NUMBERING_CHARS = 9
const CARRIAGE_RETURN = 0x0d
/** Enough bytes of a shown line to decode it up to the cut (a UTF-8 character is at most 4 bytes): more is not kept. */
const KEPT_LINE_BYTES = 4 * (MAX_LINE_CHARS + 1)
/** Past a full page, how much more of the file is read to count its lines; beyond it the total is left unknown. */
const COUNTED_TAIL_BYTES = 256 * 1024
/** A long scan gives the event loop a turn this often (ms), so that an interruption gets through. */
const YIELD_MS = 10

interface Page {
  /** The shown lines, without their line breaks, each cut to MAX_LINE_CHARS with a marker. */
  lines: string[]
  /** How many lines the file has; undefined when the page ended more than COUNTED_TAIL_BYTES before the end. */
  total?: number
}

/**
 * Reads the page from `fd`, whose first `filled` bytes are in `chunk`: the lines before `first` are only
 * counted, a shown line keeps at most KEPT_LINE_BYTES (the rest of it is counted, not kept), and reading
 * stops once the page is full (`limit` lines, or MAX_OUTPUT_CHARS of output), but for a short tail read
 * to count the lines. Memory and time follow what is shown, not the file's size: a page of a 600 MB log,
 * or of a file that is one 600 MB line, holds a few chunks. Lines are split on LF bytes, which never occur
 * inside a multi-byte UTF-8 character; a CR before the LF is dropped.
 */
async function readPage(fd: number, chunk: Buffer, filled: number, first: number, limit: number, signal: AbortSignal): Promise<Page> {
  const lines: string[] = []
  let outputChars = 0
  let lineNumber = 1
  /** The current line, if shown: its first KEPT_LINE_BYTES (copied: the chunk is reused), and how much more it had. */
  let kept: Buffer[] = []
  let keptBytes = 0
  let droppedBytes = 0
  let lastByte = -1
  let pending = false
  let full = false
  /** Once the page is full: the position at which counting the rest of the file stops. */
  let countUntil = Number.POSITIVE_INFINITY
  let position = 0
  let yieldAt = performance.now() + YIELD_MS

  const shows = () => !full && lineNumber >= first
  const keep = (bytes: Buffer) => {
    const room = Math.max(0, KEPT_LINE_BYTES - keptBytes)
    if (room > 0) kept.push(Buffer.from(bytes.subarray(0, room)))
    keptBytes += Math.min(room, bytes.length)
    droppedBytes += Math.max(0, bytes.length - room)
    if (bytes.length > 0) lastByte = bytes[bytes.length - 1]
  }

  const endLine = (tail: Buffer) => {
    if (shows()) {
      let shown: string
      if (kept.length === 0 && tail.length <= KEPT_LINE_BYTES) {
        shown = shownLine(tail, 0, tail.at(-1) === CARRIAGE_RETURN)
      } else {
        keep(tail)
        shown = shownLine(Buffer.concat(kept, keptBytes), droppedBytes, lastByte === CARRIAGE_RETURN)
      }

      // A line that would take the output past the result cap starts the next page (the first always shows).
      if (lines.length > 0 && outputChars + shown.length + NUMBERING_CHARS > MAX_OUTPUT_CHARS) {
        full = true
      } else {
        lines.push(shown)
        outputChars += shown.length + NUMBERING_CHARS
        full = lines.length === limit
      }

      if (full) countUntil = position + COUNTED_TAIL_BYTES
    }

    lineNumber++
    kept = []
    keptBytes = 0
    droppedBytes = 0
    lastByte = -1
    pending = false
  }

  for (;;) {
    const bytes = chunk.subarray(0, filled)
    let start = 0
    for (let end = bytes.indexOf(NEWLINE); end !== -1 && !full; end = bytes.indexOf(NEWLINE, start)) {
      endLine(bytes.subarray(start, end))
      start = end + 1
    }

    if (full) {
      // Past the page: only the line breaks are counted.
      for (let end = bytes.indexOf(NEWLINE, start); end !== -1; end = bytes.indexOf(NEWLINE, end + 1)) lineNumber++
      pending = bytes.at(-1) !== NEWLINE
    } else if (start < bytes.length) {
      pending = true
      if (shows()) keep(bytes.subarray(start))
    }

    position += filled
    if (position >= countUntil) return {lines}
    if (signal.aborted) throw signal.reason
    if (performance.now() > yieldAt) {
      await new Promise((resolve) => setImmediate(resolve))
      yieldAt = performance.now() + YIELD_MS
    }

    filled = readSync(fd, chunk, 0, CHUNK_BYTES, position)
    if (filled === 0) break
  }

  // A last line without a final line break.
  if (pending) endLine(Buffer.alloc(0))
  return {lines, total: lineNumber - 1}
}

/** A line as shown: decoded, a CR before its LF dropped, cut to MAX_LINE_CHARS with a marker saying how much more there was. */
function shownLine(bytes: Buffer, droppedBytes: number, endsWithCr: boolean): string {
  if (droppedBytes === 0) {
    const text = decodeForDisplay(endsWithCr ? bytes.subarray(0, -1) : bytes)
    if (text.length <= MAX_LINE_CHARS) return text
    return `${text.slice(0, MAX_LINE_CHARS)}… [line truncated: ${text.length - MAX_LINE_CHARS} more characters]`
  }

  // Only the start of the line was kept: what was not is counted in bytes (a UTF-8 character takes 1 to 4).
  const head = decodeForDisplay(bytes).slice(0, MAX_LINE_CHARS)
  const more = bytes.length - Buffer.byteLength(head) + droppedBytes - (endsWithCr ? 1 : 0)
  return `${head}… [line truncated: ${more} more bytes]`
}
