// The wave:tools hook of an example wave plugin. Plain JavaScript (ES modules), so it needs no build.
//
// wave calls it once per session with {apiVersion, z, ToolError, defineTool, workspace} (plus oclif's
// config and context) and takes the tools it returns. Build input schemas with the `z` wave passes:
// it is wave's own zod, so the schemas are exactly the kind wave validates and shows the model.
// Do not write to stdout here (this.log does): stdout carries wave's result.
import {readFile, appendFile} from 'node:fs/promises'

/** @param {{apiVersion: number, z: typeof import('zod').z, ToolError: new (message: string) => Error}} options */
export default async function waveTools({apiVersion, z, ToolError}) {
  if (apiVersion !== 1) return []

  const wordCount = {
    name: 'WordCount',
    description: 'Counts the lines, words and characters of a text file in the workspace.',
    // read: offered in every mode, plan mode included.
    access: 'read',
    input: z.object({
      file_path: z.string().describe('The file to count, absolute or relative to the workspace root'),
    }),
    // wave resolves this field, checks it against the policy (workspace only) and hands it over as ctx.target.
    pathField: 'file_path',
    async run(input, ctx) {
      if (ctx.target.kind !== 'file') throw new ToolError(`${input.file_path} is not a file.`)
      const text = await readFile(ctx.target.real, 'utf8')
      const lines = text === '' ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
      const words = text.split(/\s+/).filter(Boolean).length
      return `${input.file_path}: ${lines} lines, ${words} words, ${text.length} characters`
    },
  }

  const appendNote = {
    name: 'AppendNote',
    description: 'Appends one line of text to a notes file in the workspace (created if missing).',
    // write: never in plan mode; in acceptEdits and bypassPermissions, inside the workspace only.
    access: 'write',
    input: z.object({
      file_path: z.string().describe('The notes file, relative to the workspace root'),
      note: z.string().min(1).describe('The line to append'),
    }),
    pathField: 'file_path',
    async run(input, ctx) {
      if (ctx.target.kind === 'directory') throw new ToolError(`${input.file_path} is a directory.`)
      await appendFile(ctx.target.real, input.note.replaceAll('\n', ' ') + '\n')
      return `Appended a note to ${input.file_path}.`
    },
  }

  return [wordCount, appendNote]
}
