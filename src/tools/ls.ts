import {readdir, readlink} from 'node:fs/promises'
import path from 'node:path'
import {z} from 'zod'

import {displayPath} from '../base/workspace/paths.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

const MAX_ENTRIES = 1000

export default defineTool({
  access: 'read',
  description:
    `List a directory ("." is the workspace root), sorted: directories end in "/", symlinks show as "name -> target" (not followed); at most ${MAX_ENTRIES} entries. ` +
    'Entries outside the workspace or denied by a rule are left out. Fails on a missing path or a file (use Read).',
  input: () =>
    z.object({
      path: z.string(),
    }),
  name: 'LS',
  resultCap: DEFAULT_RESULT_CAP,
  pathField: 'path',
  async run(_input, ctx) {
    const target = ctx.target
    if (!target) throw new ToolError('LS needs path.')
    if (target.kind === 'missing') throw new ToolError(`Directory does not exist: ${target.input}`)
    if (target.kind !== 'directory') throw new ToolError(`${target.input} is not a directory: use Read for files.`)

    const listed = (await readdir(target.real, {withFileTypes: true})).filter((entry) => entry.name !== '.git')
    // As Glob and Grep do: an entry the call may not read (denied by a Read rule, or a symlink that leads
    // out of the workspace) is left out, not even named.
    const readable = await Promise.all(listed.map((entry) => ctx.readable(path.join(target.real, entry.name))))
    const entries = listed.filter((_, index) => readable[index])
    if (entries.length === 0) return `(${displayPath(ctx.root, target.real)} is empty)`

    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const lines = await Promise.all(
      entries.slice(0, MAX_ENTRIES).map(async (entry) => {
        if (entry.isDirectory()) return `${entry.name}/`
        if (entry.isSymbolicLink()) {
          // Shown, not followed: where it leads may lie outside the workspace.
          const to = await readlink(path.join(target.real, entry.name)).catch(() => '?')
          return `${entry.name} -> ${to}`
        }

        return entry.name
      }),
    )
    if (entries.length > MAX_ENTRIES) {
      lines.push(`(truncated: showing ${MAX_ENTRIES} of ${entries.length} entries; use Glob to narrow down)`)
    }

    return lines.join('\n')
  },
})
