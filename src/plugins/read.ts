import {createReadStream} from 'node:fs'
import {stat} from 'node:fs/promises'
import {z} from 'zod'

import {decodeForDisplay, looksBinary, readFileHead} from '../core/workspace/files.js'
import {displayPath} from '../core/workspace/paths.js'
import {defineTool, ToolError} from './tool.js'

const DEFAULT_LIMIT = 2000
const MAX_LINE_CHARS = 2000
/** Stop before the dispatcher's result cap (40 000) would cut lines out of the middle. */
const MAX_OUTPUT_CHARS = 36_000
const NEWLINE = 0x0a

export default defineTool({
  access: 'read',
  description:
    'Read a text file. Returns numbered lines (cat -n style), up to 2000 lines from offset; long lines are cut. For large files read on with offset and limit. Use LS for directories.',
  input: z.object({
    file_path: z.string().describe('File to read, absolute or relative to the workspace root'),
    limit: z.number().int().positive().optional().describe('Number of lines to read (default 2000)'),
    offset: z.number().int().min(0).optional().describe('1-based line number to start at'),
  }),
  name: 'Read',
  pathField: 'file_path',
  async run(input, ctx) {
    const target = ctx.target
    if (!target) throw new ToolError('Read needs file_path.')
    if (target.kind === 'missing') throw new ToolError(`File does not exist: ${target.input}`)
    if (target.kind === 'directory') throw new ToolError(`${target.input} is a directory, not a file: use LS to list it.`)
    // A FIFO or device could block forever or never end.
    if (target.kind === 'other') throw new ToolError(`${target.input} is not a regular file; Read reads regular files only.`)

    const shown = displayPath(ctx.root, target.real)
    const {size} = await stat(target.real)
    if (size === 0) return `(${shown} exists but is empty.)`
    if (looksBinary(await readFileHead(target.real))) {
      return `${shown}: binary file, ${size} bytes. Read shows text files only.`
    }

    const first = Math.max(input.offset ?? 1, 1)
    const limit = input.limit ?? DEFAULT_LIMIT
    const page = await readLines(target.real, first, limit, ctx.signal)

    if (page.lines.length === 0) {
      return `${shown} has ${page.total} line${page.total === 1 ? '' : 's'}; offset ${first} is past the end.`
    }

    const width = Math.max(6, String(first + page.lines.length - 1).length)
    let output = ''
    let count = 0
    for (const line of page.lines) {
      const numbered = `${String(first + count).padStart(width)}\t${cutLine(line)}\n`
      if (count > 0 && output.length + numbered.length > MAX_OUTPUT_CHARS) break
      output += numbered
      count++
    }

    const last = first + count - 1
    if (last < page.total) {
      output += `\n(Showing lines ${first}-${last} of ${page.total}. To read on, call Read with offset=${last + 1}.)`
    }

    return output.trimEnd()
  },
})

function cutLine(line: string): string {
  if (line.length <= MAX_LINE_CHARS) return line
  return `${line.slice(0, MAX_LINE_CHARS)}… [line truncated: ${line.length - MAX_LINE_CHARS} more characters]`
}

interface Page {
  /** The requested lines, without their line breaks. */
  lines: string[]
  /** How many lines the file has. */
  total: number
}

/**
 * Streams the file, decoding only the wanted lines and merely counting the others, so that a page of a
 * large log costs little memory. Lines are split on LF bytes, which never occur inside a multi-byte
 * UTF-8 character; a CR before the LF is dropped.
 */
async function readLines(file: string, first: number, limit: number, signal: AbortSignal): Promise<Page> {
  const lines: string[] = []
  let lineNumber = 1
  // The start of a line that continues in the next chunk; its bytes are kept only if it will be shown.
  let partial: Buffer[] = []
  let pending = false

  const wanted = () => lineNumber >= first && lines.length < limit
  const endLine = (tail: Buffer) => {
    if (wanted()) {
      const text = decodeForDisplay(partial.length > 0 ? Buffer.concat([...partial, tail]) : tail)
      lines.push(text.endsWith('\r') ? text.slice(0, -1) : text)
    }

    lineNumber++
    partial = []
    pending = false
  }

  for await (const chunk of createReadStream(file, {signal}) as AsyncIterable<Buffer>) {
    let start = 0
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      endLine(chunk.subarray(start, end))
      start = end + 1
    }

    if (start < chunk.length) {
      pending = true
      if (wanted()) partial.push(chunk.subarray(start))
    }
  }

  // A last line without a final line break.
  if (pending) endLine(Buffer.alloc(0))
  return {lines, total: lineNumber - 1}
}
