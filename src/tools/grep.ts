import path from 'node:path'
import {z} from 'zod'

import {type ContentMatch, type ContentQuery, FileQueue, listFiles, searchFiles, type SearchResult} from './search/engine.js'
import {FILE_TYPE_NAMES, fileTypeMatcher} from './search/file-types.js'
import {globMatcher} from './search/glob-matcher.js'
import {compileQuery} from './search/content.js'
import {displayPath} from '../base/workspace/paths.js'
import {defineTool, type ToolContext, ToolError} from './tool.js'

/** Claude Code's default head_limit: entries (lines, files or counts) shown when the model names none. */
const DEFAULT_HEAD_LIMIT = 250
const RESULT_CAP = 40_000
/** Content output stops here, below the declared cap, so that the wrapper never cuts lines out of its middle. */
const MAX_OUTPUT_CHARS = 30_000
/** A matching line of a minified file can be huge; show its start. */
const MAX_LINE_CHARS = 500
const MAX_FILE_BYTES = 10 * 1024 * 1024
/** The most lines of context asked for around a match. */
const MAX_CONTEXT = 100
/**
 * A search that takes longer is stopped with an error result. RE2 is linear in the text, but a pattern
 * with a huge program (`(?:a|b|...){1000}`, 130 µs a byte) over a large tree can still take hours.
 */
const GREP_TIME_LIMIT_MS = 60_000

const OUTPUT_MODES = ['content', 'files_with_matches', 'count'] as const

export default defineTool({
  access: 'read',
  description:
    `Search file contents with a regular expression (ripgrep syntax; no backreferences or lookaround), line by line unless multiline (. and \\n then match line breaks). Skips .gitignored and binary files, and files over ${MAX_FILE_BYTES / 1024 / 1024} MB. ` +
    `output_mode: files_with_matches (default), content (ripgrep's path:line:text; lines cut at ${MAX_LINE_CHARS} characters) or count. ` +
    '-A, -B, -C (or context) and -n (default true) in content mode only. ' +
    `head_limit (default ${DEFAULT_HEAD_LIMIT}, 0 for all) and offset page through the entries, up to ${MAX_OUTPUT_CHARS} characters a page; a page that is not the last says which offset comes next. ` +
    'An invalid pattern fails with the reason: escape literal ( ) [ ] { } . * + ? | with a backslash.',
  globFields: ['glob'],
  input: () => {
    const count = z.number().int().nonnegative().optional()
    return z.object({
      '-A': count,
      '-B': count,
      '-C': count,
      '-i': z.boolean().optional(),
      '-n': z.boolean().optional(),
      context: count,
      glob: z.string().optional(),
      head_limit: count,
      multiline: z.boolean().optional(),
      offset: count,
      output_mode: z.enum(OUTPUT_MODES).optional(),
      path: z.string().optional(),
      pattern: z.string(),
      type: z.string().optional(),
    })
  },
  name: 'Grep',
  resultCap: RESULT_CAP,
  pathField: 'path',
  async run(input, ctx) {
    const mode = input.output_mode ?? 'files_with_matches'
    const offset = input.offset ?? 0
    const limit = input.head_limit === 0 ? Number.POSITIVE_INFINITY : (input.head_limit ?? DEFAULT_HEAD_LIMIT)
    // Lines of context, as ripgrep takes them: -C (or context) for both sides, -A and -B over it.
    const around = input['-C'] ?? input.context ?? 0
    const [before, after] = mode === 'content' ? [input['-B'] ?? around, input['-A'] ?? around].map((n) => Math.min(n, MAX_CONTEXT)) : [0, 0]
    let type: ((name: string) => boolean) | undefined
    if (input.type !== undefined) {
      type = fileTypeMatcher(input.type)
      if (!type) throw new ToolError(`Unknown file type "${input.type}". Known types: ${FILE_TYPE_NAMES.join(', ')}; or filter with glob instead.`)
    }

    // Entries past this many need not be kept: no page up to it can show them.
    const wanted = offset + limit
    const query: ContentQuery = {
      after,
      before,
      flags: input['-i'] ? 'i' : '',
      maxFileBytes: MAX_FILE_BYTES,
      maxLineChars: MAX_LINE_CHARS,
      maxLines: wanted,
      mode,
      multiline: input.multiline ?? false,
      source: input.pattern,
    }
    // Compiled here to refuse a bad pattern with its reason before anything is searched; the search uses it.
    compileQuery(query)
    const result = await searchWithin(GREP_TIME_LIMIT_MS, ctx, {glob: input.glob, keep: wanted, type}, query)

    const shown = result.matches.map((found) => ({...found, shown: displayPath(ctx.root, found.file)}))
    shown.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0))
    const page = {limit, offset}

    switch (mode) {
      case 'content': {
        if (result.lines === 0) return 'No matches found'
        const lines = contentLines(shown, input['-n'] ?? true, before + after > 0)
        // Without context a line shown is a matching line, all of them counted; with context the count of
        // lines is known when every matching line was kept (the kept ones add up to the total).
        const keptMatches = shown.reduce((sum, found) => sum + found.lines.filter((line) => !line.context).length, 0)
        const total = before + after === 0 ? result.lines : keptMatches === result.lines ? lines.length : undefined
        return paginate(lines, total, page, 'lines')
      }

      case 'count': {
        if (result.files === 0) return 'No files found'
        return paginate(
          shown.map(({count, shown}) => `${shown}:${count}`),
          result.files,
          page,
          'files',
        )
      }

      case 'files_with_matches': {
        if (result.files === 0) return 'No files found'
        return paginate(
          shown.map(({shown}) => shown),
          result.files,
          page,
          'files',
        )
      }
    }
  },
})

/** `search`, stopped with an error result when it takes longer than `limit` ms; an interruption stays an interruption. */
export async function searchWithin(limit: number, ctx: ToolContext, filter: SearchFilter, query: ContentQuery): Promise<SearchResult> {
  const timeout = AbortSignal.timeout(limit)
  try {
    return await search({...ctx, signal: AbortSignal.any([ctx.signal, timeout])}, filter, query)
  } catch (error) {
    if (timeout.aborted && !ctx.signal.aborted) {
      throw new ToolError(
        `Grep timed out after ${limit / 1000} s and was stopped. Narrow path or glob, or simplify the pattern (large repetitions such as {500} cost the most).`,
      )
    }

    throw error
  }
}

/** Which files a search takes, and how many entries (files, or lines in content mode) it keeps: the first in path order. */
interface SearchFilter {
  glob?: string
  /** ripgrep's --type, as a test of the file's name. */
  type?: (name: string) => boolean
  /** Default: all. */
  keep?: number
}

/** Searches the file named by `path`, or the files below the searched directory that pass `glob` and `type`, while they are listed. */
async function search(ctx: ToolContext, filter: SearchFilter, query: ContentQuery): Promise<SearchResult> {
  const target = ctx.target
  if (target?.kind === 'missing') throw new ToolError(`Path does not exist: ${target.input}`)
  if (target?.kind === 'other') throw new ToolError(`${target.input} is neither a file nor a directory.`)
  // Kept: what a page can show (the first files in path order; in content mode, the first lines).
  // Whether a file may be read is asked of the files with a match only: the crawl neither follows nor
  // lists symbolic links, so what it finds below a checked directory lies inside it.
  const keep =
    filter.keep === undefined || filter.keep === Number.POSITIVE_INFINITY ? {} : query.mode === 'content' ? {keepLines: filter.keep} : {keepFiles: filter.keep}
  const options = {...keep, readable: ctx.readable, signal: ctx.signal}
  // A file named on purpose is searched whatever its name, as ripgrep does.
  if (target?.kind === 'file') return searchFiles([target.real], query, options)

  const base = target?.real ?? ctx.root
  const {glob, type} = filter
  let accept: ((file: string) => boolean) | undefined
  if (glob !== undefined) {
    // As in ripgrep and .gitignore, a pattern without a slash (`*.ts`) matches the file name at any
    // depth. picomatch's own matchBase option would apply that to `src/*.ts` too, so it is done here.
    const matches = globMatcher(glob)
    const byName = !glob.includes('/')
    accept = (file) => matches(byName ? path.basename(file) : path.relative(base, file).split(path.sep).join('/'))
  }

  if (type) {
    const byGlob = accept
    accept = (file) => type(path.basename(file)) && (!byGlob || byGlob(file))
  }

  const queue = new FileQueue()
  const listing = listFiles(ctx.root, base, {
    onFiles: (files) => queue.push(accept ? files.filter(accept) : files),
    signal: ctx.signal,
  }).finally(() => queue.close())
  const [result] = await Promise.all([searchFiles(queue, query, options), listing])
  return result
}

/**
 * Content mode's lines as ripgrep prints them: `path:N:text` for a match, `path-N-text` for context
 * (without numbers, `path:text` and `path-text`), and `--` between groups that do not touch.
 */
function contentLines(matches: Array<ContentMatch & {shown: string}>, numbers: boolean, withContext: boolean): string[] {
  const out: string[] = []
  for (const found of matches) {
    let previous: number | undefined
    for (const {context, length, number, text} of found.lines) {
      if (withContext && out.length > 0 && (previous === undefined || number > previous + 1)) out.push('--')
      previous = number
      const cut = length > text.length ? `${text}… [${length - text.length} more characters]` : text
      const mark = context ? '-' : ':'
      out.push(numbers ? `${found.shown}${mark}${number}${mark}${cut}` : `${found.shown}${mark}${cut}`)
    }
  }

  return out
}

/**
 * One page of entries: `offset` skipped, then at most `limit`, and no more than fit MAX_OUTPUT_CHARS.
 * A page that is not the last ends with a line naming the offset of the next one; `total` is undefined
 * when only the entries up to the page's end were kept (more may follow).
 */
function paginate(entries: string[], total: number | undefined, {limit, offset}: {limit: number; offset: number}, unit: 'files' | 'lines'): string {
  const all = total ?? entries.length
  if (offset > 0 && offset >= entries.length && total !== undefined) {
    return `No ${unit} past offset ${offset}: there are ${total} in all.`
  }

  const page: string[] = []
  let chars = 0
  for (const entry of entries.slice(offset, offset + limit)) {
    if (page.length > 0 && chars + entry.length > MAX_OUTPUT_CHARS) break
    page.push(entry)
    chars += entry.length + 1
  }

  const next = offset + page.length
  // Not all were kept (total unknown): some lie past the page.
  const more = total === undefined || next < total
  if (!more) return page.join('\n')
  const of = total === undefined ? '' : ` of ${all}`
  page.push(`(more: showing ${unit} ${offset + 1}-${next}${of}; pass offset: ${next} for the next page, or narrow the pattern, path, glob or type)`)
  return page.join('\n')
}
