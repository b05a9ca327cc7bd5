import {statSync} from 'node:fs'
import {z} from 'zod'

import {listFiles} from './search/engine.js'
import {displayPath} from '../base/workspace/paths.js'
import {DEFAULT_RESULT_CAP, defineTool, type ToolContext, ToolError} from './tool.js'

const MAX_RESULTS = 500
/** How long the synchronous stat loop runs before it yields to the event loop. */
const SLICE_MS = 10

export default defineTool({
  access: 'read',
  description:
    'Find files by glob pattern ("src/**/*.ts") under path (default: the workspace root), skipping .gitignored files: ' +
    `workspace-relative paths, newest first, at most ${MAX_RESULTS}, with a note when more matched: then narrow the pattern or path. ` +
    'An absolute pattern or one with ".." is refused: set path instead. Fails when path is missing or not a directory.',
  globFields: ['pattern'],
  input: () =>
    z.object({
      path: z.string().optional(),
      pattern: z.string(),
    }),
  name: 'Glob',
  resultCap: DEFAULT_RESULT_CAP,
  pathField: 'path',
  async run(input, ctx) {
    const base = searchDirectory(ctx)
    const files = await listFiles(ctx.root, base, {pattern: input.pattern, signal: ctx.signal})

    // Modification times with synchronous stats, in slices: the promise-based stat costs a trip through
    // libuv's thread pool per file, several times the stat itself over thousands of files.
    const found: Array<{file: string; modified: number}> = []
    for (let at = 0; at < files.length; ) {
      const deadline = performance.now() + SLICE_MS
      do {
        const file = files[at++]
        const info = statSync(file, {throwIfNoEntry: false})
        if (info) found.push({file, modified: info.mtimeMs}) // Else deleted since it was listed.
      } while (at < files.length && performance.now() < deadline)
      if (at < files.length) await new Promise((resolve) => setImmediate(resolve))
      ctx.signal.throwIfAborted()
    }

    const readable = await Promise.all(found.map(({file}) => ctx.readable(file)))
    const kept = found.filter((_, index) => readable[index])
    if (kept.length === 0) return 'No files found'
    kept.sort((a, b) => b.modified - a.modified || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    const lines = kept.slice(0, MAX_RESULTS).map(({file}) => displayPath(ctx.root, file))
    if (kept.length > MAX_RESULTS) {
      lines.push(`(truncated: showing ${MAX_RESULTS} of ${kept.length} matches; narrow the pattern or path)`)
    }

    return lines.join('\n')
  },
})

/** The directory a search tool runs in: the checked `path`, or the workspace root. */
function searchDirectory(ctx: ToolContext): string {
  const target = ctx.target
  if (!target) return ctx.root
  if (target.kind === 'missing') throw new ToolError(`Directory does not exist: ${target.input}`)
  if (target.kind !== 'directory') throw new ToolError(`${target.input} is not a directory; path must name a directory to search in.`)
  return target.real
}
