import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {z} from 'zod'

import {ExitCode, WaveError} from '../../../src/base/errors.js'
import {type JsonFileOptions, parseJsonText, readJsonFile} from '../../../src/base/json.js'

const schema = z.strictObject({
  name: z.string(),
  tags: z.array(z.string().min(1, 'must not be empty')).default([]),
})

const options: JsonFileOptions = {
  exitCode: ExitCode.notApproved,
  hint: 'Fix it.',
  invalid: (problem, fault) => `${fault === 'unreadable' ? 'Unreadable' : 'Bad'} thing: ${problem}.`,
}

let root: string

beforeEach(() => {
  root = mkdtempSync(path.join(tmpdir(), 'wave-json-'))
})

afterEach(() => {
  rmSync(root, {force: true, recursive: true})
})

/** The error readJsonFile throws for `content` (a directory when undefined). */
function failure(content: string | undefined, more: Partial<JsonFileOptions> = {}): WaveError {
  const file = path.join(root, 'thing.json')
  if (content === undefined) mkdirSync(file)
  else writeFileSync(file, content)
  try {
    readJsonFile(file, schema, {...options, ...more})
  } catch (error) {
    expect(error).toBeInstanceOf(WaveError)
    return error as WaveError
  }

  throw new Error('readJsonFile did not throw')
}

describe('readJsonFile', () => {
  it('returns the validated value, with the schema defaults', () => {
    const file = path.join(root, 'thing.json')
    writeFileSync(file, '{"name": "x"}')
    expect(readJsonFile(file, schema, options)).toEqual({name: 'x', tags: []})
  })

  it('returns undefined for a missing file, or throws what `missing` gives', () => {
    const file = path.join(root, 'absent.json')
    expect(readJsonFile(file, schema, options)).toBeUndefined()
    expect(readJsonFile(path.join(root, 'absent', 'below.json'), schema, options)).toBeUndefined()
    expect(() => readJsonFile(file, schema, {...options, missing: () => new WaveError('None here.', ExitCode.usage)})).toThrow('None here.')
  })

  it.each<[string, string | undefined, string]>([
    ['a directory', undefined, 'Unreadable thing: it is a directory.'],
    ['text that is not JSON', '{"name": ', 'Bad thing: not valid JSON ('],
    ['an empty file', '  \n', 'Bad thing: not valid JSON ('],
    ['a value of the wrong type, at its path', '{"name": "x", "tags": ["a", ""]}', 'Bad thing: tags[1]: must not be empty.'],
    ['the wrong top-level type, with no path', '[]', 'Bad thing: Invalid input: expected object, received array.'],
    ['an unknown key', '{"name": "x", "colour": 1, "size": 2}', 'Bad thing: colour: unknown key (also size).'],
    ['several issues, counting the rest', '{"tags": [1, 2]}', 'Bad thing: name: Invalid input: expected string, received undefined (and 2 more).'],
  ])('says what is wrong with %s in one line, with the caller’s exit code and hint', (_name, content, start) => {
    const error = failure(content)
    expect(error.message.startsWith(start)).toBe(true)
    expect(error.message).not.toContain('\n')
    expect(error.exitCode).toBe(ExitCode.notApproved)
    expect(error.hint).toBe('Fix it.')
  })

  it('names unknown keys as the caller calls them, and reads an empty file as `empty` when given', () => {
    expect(failure('{"name": "x", "colour": 1}', {keyNoun: 'setting'}).message).toBe('Bad thing: colour: unknown setting.')
    expect(parseJsonText(' ', z.object({}), {...options, empty: {}})).toEqual({})
  })
})
