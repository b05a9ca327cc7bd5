import path from 'node:path'
import {z} from 'zod'

import {type ContentMatch, type ContentQuery, FileQueue, listFiles, searchFiles, type SearchResult} from './search/engine.js'
import {globMatcher} from './search/glob-matcher.js'
import {compileQuery} from './search/content.js'
import {displayPath} from '../core/workspace/paths.js'
import {defineTool, type ToolContext, ToolError} from './tool.js'

const MAX_FILES = 250
const MAX_CONTENT_LINES = 500
const RESULT_CAP = 40_000
/** Content output stops here, below the declared cap, so that the wrapper never cuts lines out of its middle. */
const MAX_OUTPUT_CHARS = 30_000
/** A matching line of a minified file can be huge; show its start. */
const MAX_LINE_CHARS = 500
const MAX_FILE_BYTES = 10 * 1024 * 1024
/**
 * A search that takes longer is stopped with an error result. RE2 is linear in the text, but a pattern
 * with a huge program (`(?:a|b|...){1000}`, 130 µs a byte) over a large tree can still take hours.
 */
export const GREP_TIME_LIMIT_MS = 60_000

const OUTPUT_MODES = ['content', 'files_with_matches', 'count'] as const

export default defineTool({
  access: 'read',
  description:
    `Search file contents with a regular expression (JavaScript or RE2/ripgrep syntax; no backreferences or lookaround), line by line. Skips .gitignored and binary files, and files over ${MAX_FILE_BYTES / 1024 / 1024} MB. ` +
    `output_mode: files_with_matches (default; paths, at most ${MAX_FILES}), content (path:line:text, at most ${MAX_CONTENT_LINES} lines or ${MAX_OUTPUT_CHARS} characters, lines cut at ${MAX_LINE_CHARS}), count (path:N). ` +
    'A truncated result says so: narrow the pattern, path or glob. An invalid pattern fails with the reason: escape literal ( ) [ ] { } . * + ? | with a backslash. ' +
    'Use Grep, not grep or rg in Bash.',
  globFields: ['glob'],
  input: z.object({
    '-i': z.boolean().optional().describe('Case-insensitive search'),
    glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.{ts,tsx}"'),
    output_mode: z.enum(OUTPUT_MODES).optional().describe('What to return (default files_with_matches)'),
    path: z.string().optional().describe('File or directory to search (default: workspace root)'),
    pattern: z.string().describe('Regular expression to search for'),
  }),
  name: 'Grep',
  resultCap: RESULT_CAP,
  pathField: 'path',
  async run(input, ctx) {
    const ignoreCase = input['-i'] ?? false
    const query: ContentQuery = {
      flags: ignoreCase ? 'i' : '',
      maxFileBytes: MAX_FILE_BYTES,
      maxLineChars: MAX_LINE_CHARS,
      maxLines: MAX_CONTENT_LINES,
      mode: input.output_mode ?? 'files_with_matches',
      source: input.pattern,
    }
    // Compiled here to refuse a bad pattern with its reason before anything is searched; the search uses it.
    compileQuery(query)
    const result = await searchWithin(GREP_TIME_LIMIT_MS, ctx, input.glob, query)

    const shown = result.matches.map((found) => ({...found, shown: displayPath(ctx.root, found.file)}))
    shown.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0))

    switch (query.mode) {
      case 'content': {
        return formatContent(shown, result.lines)
      }

      case 'count': {
        return formatFiles(shown.map(({count, shown}) => `${shown}:${count}`), result.files)
      }

      case 'files_with_matches': {
        return formatFiles(shown.map(({shown}) => shown), result.files)
      }
    }
  },
})

/** `search`, stopped with an error result when it takes longer than `limit` ms; an interruption stays an interruption. */
export async function searchWithin(limit: number, ctx: ToolContext, glob: string | undefined, query: ContentQuery): Promise<SearchResult> {
  const timeout = AbortSignal.timeout(limit)
  try {
    return await search({...ctx, signal: AbortSignal.any([ctx.signal, timeout])}, glob, query)
  } catch (error) {
    if (timeout.aborted && !ctx.signal.aborted) {
      throw new ToolError(`Grep timed out after ${limit / 1000} s and was stopped. Narrow path or glob, or simplify the pattern (large repetitions such as {500} cost the most).`)
    }

    throw error
  }
}

/** Searches the file named by `path`, or the files below the searched directory that pass `glob`, while they are listed. */
async function search(ctx: ToolContext, glob: string | undefined, query: ContentQuery): Promise<SearchResult> {
  const target = ctx.target
  if (target?.kind === 'missing') throw new ToolError(`Path does not exist: ${target.input}`)
  if (target?.kind === 'other') throw new ToolError(`${target.input} is neither a file nor a directory.`)
  // Kept: what the output can show (the first files in path order; in content mode, the first lines).
  // Whether a file may be read is asked of the files with a match only: the crawl neither follows nor
  // lists symbolic links, so what it finds below a checked directory lies inside it.
  const keep = query.mode === 'content' ? {keepLines: MAX_CONTENT_LINES} : {keepFiles: MAX_FILES}
  const options = {...keep, readable: ctx.readable, signal: ctx.signal}
  if (target?.kind === 'file') return searchFiles([target.real], query, options)

  const base = target?.real ?? ctx.root
  let accept: ((file: string) => boolean) | undefined
  if (glob !== undefined) {
    // As in ripgrep and .gitignore, a pattern without a slash (`*.ts`) matches the file name at any
    // depth. picomatch's own matchBase option would apply that to `src/*.ts` too, so it is done here.
    const matches = globMatcher(glob)
    const byName = !glob.includes('/')
    accept = (file) => matches(byName ? path.basename(file) : path.relative(base, file).split(path.sep).join('/'))
  }

  const queue = new FileQueue()
  const listing = listFiles(ctx.root, base, {
    onFiles: (files) => queue.push(accept ? files.filter(accept) : files),
    signal: ctx.signal,
  }).finally(() => queue.close())
  const [result] = await Promise.all([searchFiles(queue, query, options), listing])
  return result
}

function formatFiles(lines: string[], total: number): string {
  if (total === 0) return 'No files found'
  const kept = lines.slice(0, MAX_FILES)
  if (total > kept.length) {
    kept.push(`(truncated: showing ${kept.length} of ${total} files; narrow the pattern, path or glob)`)
  }

  return kept.join('\n')
}

function formatContent(matches: Array<ContentMatch & {shown: string}>, total: number): string {
  if (total === 0) return 'No matches found'
  const out: string[] = []
  let chars = 0
  outer: for (const found of matches) {
    for (const {length, number, text} of found.lines) {
      const cut = length > text.length ? `${text}… [${length - text.length} more characters]` : text
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
