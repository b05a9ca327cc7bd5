import {mkdir} from 'node:fs/promises'
import path from 'node:path'
import {z} from 'zod'

import {writeTextFileAtomic} from '../core/workspace/files.js'
import {displayPath} from '../core/workspace/paths.js'
import {defineTool, ToolError} from './tool.js'

export default defineTool({
  access: 'write',
  description:
    'Create or overwrite a file with the given content (UTF-8), creating parent directories as needed. Prefer Edit for changing part of an existing file.',
  input: z.object({
    content: z.string().describe('The complete new content of the file'),
    file_path: z.string().describe('File to write, absolute or relative to the workspace root'),
  }),
  name: 'Write',
  pathField: 'file_path',
  async run(input, ctx) {
    const target = ctx.target
    if (!target) throw new ToolError('Write needs file_path.')
    if (target.kind === 'directory') throw new ToolError(`${target.input} is a directory; give the path of a file to write.`)
    if (target.kind === 'other') throw new ToolError(`${target.input} is not a regular file; Write writes regular files only.`)

    // The real path already has every symlink resolved, so the directories are created where the file lands.
    await mkdir(path.dirname(target.real), {recursive: true})
    await writeTextFileAtomic(target.real, input.content)
    return `Wrote ${Buffer.byteLength(input.content, 'utf8')} bytes to ${displayPath(ctx.root, target.real)}`
  },
})
