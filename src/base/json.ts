/**
 * The JSON files wave reads (settings, plan state, approval records): read, parsed and validated against
 * a zod schema in one place, so that every bad file is reported the same way: one line naming the file
 * and what is wrong with it, down to the first schema issue and where it is (`permissions.allow[1]: …`).
 * Each caller words its line, and chooses the exit code and what a missing file means.
 */
import {readFileSync} from 'node:fs'

import type {z} from 'zod'

import {type ExitCodeValue, WaveError} from './errors.js'

/** Why a file that is there cannot be used: it cannot be read, or its content is not what it must be. */
type JsonFileFault = 'malformed' | 'unreadable'

export interface JsonFileOptions {
  /**
   * The error's one line, given what is wrong: "it is a directory", "not valid JSON (…)",
   * "mode: Invalid option: …" (the first schema issue, with its path).
   */
  invalid: (problem: string, fault: JsonFileFault) => string
  /** The exit code of a file that cannot be read or is malformed. */
  exitCode: ExitCodeValue
  hint?: string
  /** A file that is not there: undefined is returned, unless this gives the error to throw instead. */
  missing?: () => Error
  /** The value of a file holding only white space; without it, such a file is not valid JSON. */
  empty?: unknown
  /** What the schema's keys are, for a key it does not know: "unknown setting" (default "key"). */
  keyNoun?: string
}

/** Reads, parses and validates a JSON file; undefined when there is none and `missing` is not given. */
export function readJsonFile<T extends z.ZodType>(file: string, schema: T, options: JsonFileOptions & {missing: () => Error}): z.output<T>
export function readJsonFile<T extends z.ZodType>(file: string, schema: T, options: JsonFileOptions): z.output<T> | undefined
export function readJsonFile<T extends z.ZodType>(file: string, schema: T, options: JsonFileOptions): z.output<T> | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      if (options.missing) throw options.missing()
      return undefined
    }

    throw fault(options, code === 'EISDIR' ? 'it is a directory' : `cannot be read (${(error as Error).message})`, 'unreadable')
  }

  return parseJsonText(text, schema, options)
}

/** Parses and validates JSON text read from a file; errors are worded as readJsonFile's. */
export function parseJsonText<T extends z.ZodType>(text: string, schema: T, options: JsonFileOptions): z.output<T> {
  let json: unknown
  if (options.empty !== undefined && text.trim() === '') json = options.empty
  else {
    try {
      json = JSON.parse(text)
    } catch (error) {
      throw fault(options, `not valid JSON (${(error as Error).message})`, 'malformed')
    }
  }

  const parsed = schema.safeParse(json)
  if (!parsed.success) {
    const {issues} = parsed.error
    const where = issuePath(issues[0])
    const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : ''
    throw fault(options, `${where ? `${where}: ` : ''}${issueMessage(issues[0], options.keyNoun ?? 'key')}${more}`, 'malformed')
  }

  return parsed.data
}

const fault = (options: JsonFileOptions, problem: string, kind: JsonFileFault) => new WaveError(options.invalid(problem, kind), options.exitCode, options.hint)

/** Where an issue is, as a reader of the file would write it: `permissions.allow[1]`, `mcpServers.docs.cmd`. */
function issuePath(issue: z.core.$ZodIssue): string {
  const keys = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : issue.path
  return keys.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('')
}

function issueMessage(issue: z.core.$ZodIssue, keyNoun: string): string {
  if (issue.code === 'unrecognized_keys') return `unknown ${keyNoun}${issue.keys.length > 1 ? ` (also ${issue.keys.slice(1).join(', ')})` : ''}`
  // A record's bad key or a set's bad element: the inner issue says what is wrong with it.
  if ((issue.code === 'invalid_key' || issue.code === 'invalid_element') && issue.issues[0]) return issue.issues[0].message
  return issue.message
}
