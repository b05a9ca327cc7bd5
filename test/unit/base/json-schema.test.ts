import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {ExitCode, WaveError} from '../../../src/base/errors.js'
import {compileOutputSchema, outputSchemaArgument, schemaDigest} from '../../../src/base/json-schema.js'

const SCHEMA = {
  additionalProperties: false,
  properties: {count: {type: 'integer'}, day: {format: 'date', type: 'string'}, color: {enum: ['red', 'blue']}},
  required: ['count', 'color'],
  type: 'object',
}

async function refusal(value: string): Promise<WaveError> {
  const error = await outputSchemaArgument(value).catch((thrown: unknown) => thrown)
  expect(error).toBeInstanceOf(WaveError)
  expect((error as WaveError).exitCode).toBe(ExitCode.usage)
  return error as WaveError
}

describe('outputSchemaArgument', () => {
  it('accepts a value that matches, and names each problem of one that does not', async () => {
    const schema = await outputSchemaArgument(JSON.stringify(SCHEMA))
    expect(schema.schema).toEqual(SCHEMA)
    expect(schema.problems({color: 'red', count: 3, day: '2026-11-27'})).toEqual([])
    // "placeholder" for an integer, a missing field, a bad format, an extra key: each one refused.
    expect(schema.problems({count: 'placeholder', day: 'someday', extra: 1})).toEqual([
      "(root) must have required property 'color'",
      '(root) must NOT have additional properties (extra)',
      '/count must be integer',
      '/day must match format "date"',
    ])
    expect(schema.problems({color: 'green', count: 1})).toEqual(['/color must be equal to one of the allowed values: "red", "blue"'])
  })

  it('reads @FILE, and digests the schema however it is spelled', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wave-schema-'))
    try {
      const file = path.join(dir, 'schema.json')
      writeFileSync(file, JSON.stringify(SCHEMA, null, 4))
      const fromFile = await outputSchemaArgument(`@${file}`)
      const reordered = await outputSchemaArgument(
        JSON.stringify({type: 'object', required: ['count', 'color'], properties: SCHEMA.properties, additionalProperties: false}),
      )
      expect(fromFile.sha256).toBe(reordered.sha256)
      expect(fromFile.sha256).toBe(schemaDigest(SCHEMA))
      expect(schemaDigest({...SCHEMA, required: ['count']})).not.toBe(fromFile.sha256)
      expect((await refusal(`@${path.join(dir, 'missing.json')}`)).message).toMatch(/--json-schema @.*missing\.json: cannot read/)
    } finally {
      rmSync(dir, {force: true, recursive: true})
    }
  })

  it('refuses what is not JSON, not a JSON Schema, or not an object at its root (exit 2)', async () => {
    expect((await refusal('{type: object}')).message).toMatch(/^--json-schema is not JSON: /)
    expect((await refusal('[1]')).message).toMatch(/must be a JSON object/)
    expect((await refusal('{"type": "string"}')).message).toMatch(/root must be \{"type": "object"\}, not "string"/)
    expect((await refusal('{"properties": {}}')).message).toMatch(/root must be \{"type": "object"\}/)
    expect((await refusal('{"type": "object", "properties": {"a": {"type": "integr"}}}')).message).toMatch(/is not a valid JSON Schema: \/properties\/a\/type/)
    expect((await refusal('{"type": "object", "required": "a"}')).message).toMatch(/is not a valid JSON Schema/)
    expect((await refusal('{"type": "object", "$ref": "#/$defs/missing"}')).message).toMatch(/is not a valid JSON Schema: can't resolve reference/)
  })

  it('takes draft-07 when $schema names it (definitions and all)', async () => {
    const schema = await compileOutputSchema(
      {
        $schema: 'http://json-schema.org/draft-07/schema#',
        definitions: {n: {type: 'number'}},
        properties: {n: {$ref: '#/definitions/n'}},
        type: 'object',
      },
      'the record',
    )
    expect(schema.problems({n: 'x'})).toEqual(['/n must be number'])
    expect(schema.problems({n: 2})).toEqual([])
  })
})

describe('patterns on a linear-time engine (issue 48)', () => {
  it('runs each pattern of a schema as its own, the issue’s backtracking value included', async () => {
    const schema = await compileOutputSchema(
      {
        patternProperties: {'^x-': {type: 'string'}},
        properties: {code: {pattern: '^[A-Z]{3}$', type: 'string'}, words: {pattern: String.raw`^(\w+\s?)*$`, type: 'string'}},
        type: 'object',
      },
      'the flag',
    )
    expect(schema.problems({code: 'ABC', words: 'two words', 'x-a': 'y'})).toEqual([])
    expect(schema.problems({code: 'abc', words: `${'a'.repeat(36)}!`, 'x-a': 1})).toEqual([
      '/code must match pattern "^[A-Z]{3}$"',
      String.raw`/words must match pattern "^(\w+\s?)*$"`,
      '/x-a must be string',
    ])
  })

  it('refuses a pattern RE2 cannot run, in properties or patternProperties (exit 2)', async () => {
    expect((await refusal('{"type": "object", "properties": {"a": {"type": "string", "pattern": "(?<=x)a"}}}')).message).toMatch(
      /^--json-schema: the pattern "\(\?<=x\)a" cannot run on a linear-time engine \(.*\); wave runs schema patterns with RE2's syntax/,
    )
    expect((await refusal(String.raw`{"type": "object", "patternProperties": {"^(a)\\1$": {}}}`)).message).toMatch(/cannot run on a linear-time engine/)
  })
})
