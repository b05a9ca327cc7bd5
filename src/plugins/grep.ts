import {readFile, stat} from 'node:fs/promises'
import path from 'node:path'
import picomatch from 'picomatch'
import {z} from 'zod'

import {decodeForDisplay, looksBinary} from '../core/files.js'
import {listFiles} from '../core/search.js'
import {displayPath} from '../core/workspace.js'
import {defineTool, type ToolContext, ToolError} from './tool.js'

const MAX_FILES = 250
const MAX_CONTENT_LINES = 500
/** Stay below the dispatcher's result cap, which would cut lines out of the middle. */
const MAX_OUTPUT_CHARS = 30_000
/** A matching line of a minified file can be huge; show its start. */
const MAX_LINE_CHARS = 500
const MAX_FILE_BYTES = 10 * 1024 * 1024
const BATCH = 16

const OUTPUT_MODES = ['content', 'files_with_matches', 'count'] as const
type OutputMode = (typeof OUTPUT_MODES)[number]

export default defineTool({
  access: 'read',
  description:
    'Search file contents with a JavaScript regular expression, line by line. Skips .gitignored and binary files. output_mode: files_with_matches (default, paths), content (path:line:text), count (path:N). Filter files with glob.',
  globFields: ['glob'],
  input: z.object({
    '-i': z.boolean().optional().describe('Case-insensitive search'),
    glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.{ts,tsx}"'),
    output_mode: z.enum(OUTPUT_MODES).optional().describe('What to return (default files_with_matches)'),
    path: z.string().optional().describe('File or directory to search (default: workspace root)'),
    pattern: z.string().describe('Regular expression to search for'),
  }),
  name: 'Grep',
  pathField: 'path',
  async run(input, ctx) {
    const regex = compile(input.pattern, input['-i'] ?? false)
    const search: Search = {literal: literalBytes(regex), mode: input.output_mode ?? 'files_with_matches', regex}
    const files = await filesToSearch(ctx, input.glob)

    const matches: FileMatches[] = []
    for (let at = 0; at < files.length; at += BATCH) {
      ctx.signal.throwIfAborted()
      const batch = await Promise.all(files.slice(at, at + BATCH).map((file) => searchFile(file, search)))
      for (const found of batch) if (found) matches.push(found)
    }

    const shown = matches.map((found) => ({...found, shown: displayPath(ctx.root, found.file)}))
    shown.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0))

    switch (search.mode) {
      case 'content': {
        return formatContent(shown)
      }

      case 'count': {
        return formatFiles(shown.map(({count, shown}) => `${shown}:${count}`))
      }

      case 'files_with_matches': {
        return formatFiles(shown.map(({shown}) => shown))
      }
    }
  },
})

/** JavaScript regex syntax, plus a leading `(?i)` as ripgrep users write it. */
function compile(pattern: string, ignoreCase: boolean): RegExp {
  let source = pattern
  let flags = ignoreCase ? 'i' : ''
  if (source.startsWith('(?i)')) {
    source = source.slice(4)
    flags = 'i'
  }

  try {
    return new RegExp(source, flags)
  } catch (error) {
    throw new ToolError(
      `Invalid regular expression: ${(error as Error).message}. The pattern is a JavaScript regex: escape literal ( ) [ ] { } . * + ? | with a backslash.`,
    )
  }
}

/**
 * The UTF-8 bytes of a pattern without metacharacters, which lets a file that lacks them be skipped
 * without decoding it. Exact for such a pattern: it cannot match across a line break, and valid UTF-8
 * decodes one to one (U+FFFD, which invalid bytes also decode to, is excluded).
 */
function literalBytes(regex: RegExp): Buffer | undefined {
  if (regex.flags.includes('i') || !/^[^\\^$.*+?()[\]{}|\r\n\uFFFD]+$/.test(regex.source)) return undefined
  return Buffer.from(regex.source, 'utf8')
}

/** The explicit file named by `path`, or the files below the searched directory that pass `glob`. */
async function filesToSearch(ctx: ToolContext, glob: string | undefined): Promise<string[]> {
  const target = ctx.target
  if (target?.kind === 'missing') throw new ToolError(`Path does not exist: ${target.input}`)
  if (target?.kind === 'other') throw new ToolError(`${target.input} is neither a file nor a directory.`)
  if (target?.kind === 'file') return [target.real]

  const base = target?.real ?? ctx.root
  let files = await listFiles(ctx.root, base, {signal: ctx.signal})
  if (glob !== undefined) {
    // As in ripgrep and .gitignore, a pattern without a slash (`*.ts`) matches the file name at any
    // depth. picomatch's own matchBase option would apply that to `src/*.ts` too, so it is done here.
    const matches = picomatch(glob, {dot: true})
    const byName = !glob.includes('/')
    files = files.filter((file) => matches(byName ? path.basename(file) : path.relative(base, file).split(path.sep).join('/')))
  }

  const readable = await Promise.all(files.map((file) => ctx.readable(file)))
  return files.filter((_, index) => readable[index])
}

interface FileMatches {
  file: string
  /** Matching lines. */
  count: number
  /** The first matching lines with their 1-based numbers (content mode only). */
  lines: Array<{number: number; text: string}>
}

interface Search {
  regex: RegExp
  literal?: Buffer
  mode: OutputMode
}

async function searchFile(file: string, {literal, mode, regex}: Search): Promise<FileMatches | undefined> {
  let bytes: Buffer
  try {
    const info = await stat(file)
    if (!info.isFile() || info.size > MAX_FILE_BYTES) return undefined
    bytes = await readFile(file)
  } catch {
    // Gone or unreadable since it was listed: nothing to report.
    return undefined
  }

  if (literal && !bytes.includes(literal)) return undefined
  if (looksBinary(bytes)) return undefined
  const text = decodeForDisplay(bytes)
  const found: FileMatches = {count: 0, file, lines: []}
  const lines = text.split('\n')
  // A final line break ends the last line; it does not start another one.
  if (lines.at(-1) === '') lines.pop()
  for (const [index, raw] of lines.entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (!regex.test(line)) continue
    found.count++
    if (mode === 'files_with_matches') break
    if (mode === 'content' && found.lines.length < MAX_CONTENT_LINES) found.lines.push({number: index + 1, text: line})
  }

  return found.count > 0 ? found : undefined
}

function formatFiles(lines: string[]): string {
  if (lines.length === 0) return 'No files found'
  const kept = lines.slice(0, MAX_FILES)
  if (lines.length > MAX_FILES) {
    kept.push(`(truncated: showing ${MAX_FILES} of ${lines.length} files; narrow the pattern, path or glob)`)
  }

  return kept.join('\n')
}

function formatContent(matches: Array<FileMatches & {shown: string}>): string {
  const total = matches.reduce((sum, found) => sum + found.count, 0)
  if (total === 0) return 'No matches found'
  const out: string[] = []
  let chars = 0
  outer: for (const found of matches) {
    for (const {number, text} of found.lines) {
      const cut = text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}… [${text.length - MAX_LINE_CHARS} more characters]` : text
      const line = `${found.shown}:${number}:${cut}`
      if (out.length >= MAX_CONTENT_LINES || chars + line.length > MAX_OUTPUT_CHARS) break outer
      out.push(line)
      chars += line.length + 1
    }
  }

  if (out.length < total) {
    out.push(`(truncated: showing ${out.length} of ${total} matching lines; narrow the pattern, path or glob)`)
  }

  return out.join('\n')
}
