/**
 * Text a command takes from its user beyond a flag's literal value: a task from stdin (`--task -`) or a
 * file (`--task-file`), a system prompt addition from a file (`--append-system-prompt @file`). Every
 * failure is a usage error (exit 2), before any session starts.
 */
import {readFile} from 'node:fs/promises'

import {usageError} from './errors.js'

/** The task of `--task TEXT`, `--task -` (stdin) or `--task-file FILE`; undefined when neither flag is given. */
export async function taskText(flags: {task?: string; 'task-file'?: string}, stdin: NodeJS.ReadStream = process.stdin): Promise<string | undefined> {
  if (flags['task-file'] !== undefined) return nonEmpty(await readText(flags['task-file'], '--task-file'), `The task file ${flags['task-file']} is empty.`)
  if (flags.task !== '-') return flags.task
  if (stdin.isTTY) {
    // No command waits for a keyboard: a task on stdin must be piped in.
    throw usageError(
      '--task - reads the task from stdin, but stdin is a terminal.',
      'Pipe the task in (echo "..." | wave plan --task -), or use --task-file FILE.',
    )
  }

  const chunks: Buffer[] = []
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk))
  return nonEmpty(Buffer.concat(chunks).toString('utf8'), 'The task read from stdin (--task -) is empty.')
}

/** `--append-system-prompt`: the text as given, or a file's text when it starts with `@`. */
export async function appendedPrompt(value: string | undefined): Promise<string | undefined> {
  if (value === undefined) return undefined
  const text = value.startsWith('@') ? await readText(value.slice(1), '--append-system-prompt') : value
  return nonEmpty(
    text,
    value.startsWith('@') ? `The file ${value.slice(1)} given to --append-system-prompt is empty.` : '--append-system-prompt needs text (or @FILE).',
  )
}

async function readText(file: string, flag: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'not found' : code === 'EISDIR' ? 'a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message
    throw usageError(`Cannot read ${file} (${flag}): ${why}.`)
  }
}

function nonEmpty(text: string, message: string): string {
  if (!text.trim()) throw usageError(message)
  return text.trim()
}
