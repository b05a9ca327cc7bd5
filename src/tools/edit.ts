import {readFile} from 'node:fs/promises'
import {z} from 'zod'

import {writableRoot, writeFileWithin} from '../base/workspace/confinement.js'
import {decodeForEditing, detectLineEnding, looksBinary, withLineEnding} from '../base/workspace/files.js'
import {displayPath} from '../base/workspace/paths.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

export default defineTool({
  access: 'write',
  description:
    'Replace old_string with new_string in a file; line endings are kept. Read the file first, and copy old_string from it exactly, whitespace and indentation included, without the line-number prefix. ' +
    'old_string must occur exactly once, else the call fails with the count: add surrounding lines to make it unique, or set replace_all to change every occurrence. ' +
    'Fails on a missing file (create it with Write), a binary or non-UTF-8 file, or old_string equal to new_string; refused where Write is.',
  input: () =>
    z.object({
      file_path: z.string(),
      new_string: z.string(),
      old_string: z.string(),
      replace_all: z.boolean().optional(),
    }),
  name: 'Edit',
  resultCap: DEFAULT_RESULT_CAP,
  pathField: 'file_path',
  async run(input, ctx) {
    const target = ctx.target
    if (!target) throw new ToolError('Edit needs file_path.')
    if (target.kind === 'missing') throw new ToolError(`File does not exist: ${target.input}. Use Write to create a new file.`)
    if (target.kind !== 'file') throw new ToolError(`${target.input} is not a regular file; Edit changes text files only.`)
    if (input.old_string === input.new_string) throw new ToolError('old_string and new_string are the same: there is nothing to change.')

    const shown = displayPath(ctx.root, target.real)
    const bytes = await readFile(target.real)
    if (looksBinary(bytes)) throw new ToolError(`${shown} is a binary file; Edit changes text files only.`)
    const text = decodeForEditing(bytes)
    if (text === undefined) {
      throw new ToolError(`${shown} is not valid UTF-8; editing it would corrupt it. Leave it unchanged or rewrite it whole with Write.`)
    }

    if (input.old_string === '') {
      if (text.length > 0) {
        throw new ToolError(`old_string is empty but ${shown} is not: give the exact text to replace, or use Write to replace the whole file.`)
      }

      await writeFileWithin(writableRoot(ctx.root, target.real), target.real, input.new_string)
      return `Edited ${shown}: wrote the content of the empty file.`
    }

    const {count, newString, oldString} = matchLineEndings(text, input.old_string, input.new_string)
    if (count === 0) {
      throw new ToolError(`old_string was not found in ${shown}. Read the file and copy the exact text, including whitespace and indentation.`)
    }

    if (count > 1 && !input.replace_all) {
      throw new ToolError(
        `old_string occurs ${count} times in ${shown}. Include more surrounding lines to make it unique, or set replace_all to true to change every occurrence.`,
      )
    }

    // split/join and slicing, not String.replace: `$&` or `$1` in new_string must stay literal.
    const updated = input.replace_all
      ? text.split(oldString).join(newString)
      : text.slice(0, text.indexOf(oldString)) + newString + text.slice(text.indexOf(oldString) + oldString.length)
    await writeFileWithin(writableRoot(ctx.root, target.real), target.real, updated)
    return `Edited ${shown}: replaced ${count} occurrence${count === 1 ? '' : 's'}.`
  },
})

/**
 * Models write LF. In a CRLF file, old and new strings are converted to CRLF so they match and the file
 * keeps one line ending; the strings as given are the fallback for a file with mixed line endings.
 */
function matchLineEndings(text: string, oldString: string, newString: string): {count: number; oldString: string; newString: string} {
  if (detectLineEnding(text) === '\r\n') {
    const converted = {newString: withLineEnding(newString, '\r\n'), oldString: withLineEnding(oldString, '\r\n')}
    const count = occurrences(text, converted.oldString)
    if (count > 0) return {count, ...converted}
  }

  return {count: occurrences(text, oldString), newString, oldString}
}

/** Non-overlapping occurrences, as split/join would replace them. */
function occurrences(text: string, search: string): number {
  return text.split(search).length - 1
}
