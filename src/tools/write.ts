import {z} from 'zod'

import {writableRoot, writeFileWithin} from '../base/workspace/confinement.js'
import {displayPath} from '../base/workspace/paths.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

export default defineTool({
  access: 'write',
  description:
    'Create or replace a whole file (UTF-8), creating missing parent directories. To change part of an existing file use Edit; read a file before replacing it. ' +
    'Fails on a directory or a non-regular file. Refused outside the workspace, in .git/ and .wave/, and in plan mode for every file but the plan.',
  input: () =>
    z.object({
      content: z.string(),
      file_path: z.string(),
    }),
  name: 'Write',
  resultCap: DEFAULT_RESULT_CAP,
  pathField: 'file_path',
  async run(input, ctx) {
    const target = ctx.target
    if (!target) throw new ToolError('Write needs file_path.')
    if (target.kind === 'directory') throw new ToolError(`${target.input} is a directory; give the path of a file to write.`)
    if (target.kind === 'other') throw new ToolError(`${target.input} is not a regular file; Write writes regular files only.`)

    // The real path has every symlink resolved: the missing directories are created on the way to it,
    // one level at a time, without following a link that appeared since the path was checked.
    await writeFileWithin(writableRoot(ctx.root, target.real), target.real, input.content, {createDirectories: true})
    return `Wrote ${Buffer.byteLength(input.content, 'utf8')} bytes to ${displayPath(ctx.root, target.real)}`
  },
})
