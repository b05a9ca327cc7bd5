import {stat} from 'node:fs/promises'
import {z} from 'zod'

import {listFiles} from '../core/search.js'
import {displayPath} from '../core/workspace.js'
import {defineTool, type ToolContext, ToolError} from './tool.js'

const MAX_RESULTS = 500
const BATCH = 64

export default defineTool({
  access: 'read',
  description:
    'Find files by glob pattern (e.g. "**/*.ts", "src/**/*.test.ts"), relative to path. Skips .gitignored files. Returns workspace-relative paths, most recently modified first.',
  globFields: ['pattern'],
  input: z.object({
    path: z.string().optional().describe('Directory to search in (default: workspace root)'),
    pattern: z.string().describe('Glob pattern to match files against'),
  }),
  name: 'Glob',
  pathField: 'path',
  async run(input, ctx) {
    const base = searchDirectory(ctx)
    const files = await listFiles(ctx.root, base, {pattern: input.pattern, signal: ctx.signal})

    const found: Array<{file: string; modified: number}> = []
    // Checked in batches: thousands of files at once would only queue up in libuv's thread pool.
    for (let at = 0; at < files.length; at += BATCH) {
      await Promise.all(
        files.slice(at, at + BATCH).map(async (file) => {
          if (!(await ctx.readable(file))) return
          try {
            found.push({file, modified: (await stat(file)).mtimeMs})
          } catch {
            // Deleted since it was listed.
          }
        }),
      )
    }

    if (found.length === 0) return 'No files found'
    found.sort((a, b) => b.modified - a.modified || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
    const lines = found.slice(0, MAX_RESULTS).map(({file}) => displayPath(ctx.root, file))
    if (found.length > MAX_RESULTS) {
      lines.push(`(truncated: showing ${MAX_RESULTS} of ${found.length} matches; narrow the pattern or path)`)
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
