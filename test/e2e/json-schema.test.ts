/**
 * `--json-schema` (issue 38): the model gives the session's result through StructuredOutput, whose
 * input_schema is the schema given; wave checks the input against the schema (a "placeholder" where an
 * integer is asked for does not pass), feeds what is wrong back as the tool's error for three tries,
 * puts the value in the JSON result as `structured_output`, and ends with exit 6 when it never matched.
 * An invalid schema is exit 2 before any request; a run's schema is bound by its approval.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {readJson, type Sandbox, sha256, writePlanFile} from '../support/cli.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolNames, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const SCHEMA = {
  additionalProperties: false,
  properties: {color: {enum: ['red', 'blue']}, count: {type: 'integer'}},
  required: ['count', 'color'],
  type: 'object',
}
const SCHEMA_TEXT = JSON.stringify(SCHEMA)
const GOOD = {color: 'blue', count: 4}

const offeredSchema = (request: RecordedRequest) =>
  (request.body.tools as Array<{name: string; input_schema: unknown}>).find((tool) => tool.name === 'StructuredOutput')?.input_schema

/** The text of the newest user message of a request (a reminder is one). */
function lastUserText(request: RecordedRequest): string {
  const last = [...request.body.messages].reverse().find((message: {role: string}) => message.role === 'user')
  return typeof last.content === 'string' ? last.content : last.content.map((block: {text?: string}) => block.text ?? '').join('\n')
}

const parsedJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!)

describe('satisfied on the first try', () => {
  it('plan: StructuredOutput is offered with the schema as its input_schema, and the value is the result', async () => {
    server.push(
      (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Count.\n', file_path: planPathIn(request)})),
      reply(toolUse('StructuredOutput', GOOD), toolUse('ExitPlanMode', {})),
    )
    const result = await wave(['plan', '--task', 'Count the colors', '--json-schema', SCHEMA_TEXT, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(offeredSchema(server.messageRequests[0])).toEqual(SCHEMA)
    const json = parsedJson(result.stdout)
    expect(json).toMatchObject({ok: true, structured_output: GOOD})
    expect(json.version).toBeDefined()
    // Both calls of the second turn ran, and the session ended after them: no third request.
    expect(server.messageRequests).toHaveLength(2)
  })

  it('plan without --json-schema: no StructuredOutput offered, no structured_output (control)', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Count.\n', file_path: planPathIn(request)})), reply(toolUse('ExitPlanMode', {})))
    const result = await wave(['plan', '--task', 'Count the colors', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).not.toContain('StructuredOutput')
    expect(parsedJson(result.stdout)).not.toHaveProperty('structured_output')
  })

  it('run --task from @FILE: stream-json carries it in the result event', async () => {
    const file = path.join(sandbox.home, 'schema.json')
    writeFileSync(file, JSON.stringify(SCHEMA, null, 2))
    server.push(reply(toolUse('StructuredOutput', GOOD)), reply('Counted.'))
    const result = await wave(['run', '--task', 'Count the colors', '--json-schema', `@${file}`, '--output-format', 'stream-json'])
    expect(result.code, result.stderr).toBe(0)
    expect(offeredSchema(server.messageRequests[0])).toEqual(SCHEMA)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.at(-1)).toMatchObject({ok: true, result: 'Counted.', structured_output: GOOD, type: 'result'})
    expect(toolResults(server.messageRequests[1])[0].is_error ?? false).toBe(false)
  })
})

describe('run --task whose model plans first', () => {
  const planning = () =>
    server.push(
      reply(toolUse('EnterPlanMode', {})),
      (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Count the colors.\n', file_path: planPathIn(request)})),
      reply(toolUse('ExitPlanMode', {})),
    )

  it('hands the task on with its plan (exit 10): no structured result is asked of the planning', async () => {
    planning()
    const result = await wave(['run', '--task', 'Count the colors', '--json-schema', SCHEMA_TEXT])
    expect(result.code, result.stderr).toBe(10)
    expect(server.messageRequests).toHaveLength(3)
  })

  it('with --approve: the run that carries out the plan gives the result', async () => {
    planning()
    server.push(reply('Nothing to say.'), reply(toolUse('StructuredOutput', GOOD)), reply('Counted.'))
    const result = await wave(['run', '--task', 'Count the colors', '--json-schema', SCHEMA_TEXT, '--approve', '--json'])
    expect(result.code, result.stderr).toBe(0)
    // The run's first ending without the call is reminded: it is the run's result that is asked for.
    expect(lastUserText(server.messageRequests[4])).toContain('You ended without calling StructuredOutput')
    expect(offeredSchema(server.messageRequests[3])).toEqual(SCHEMA)
    expect(parsedJson(result.stdout)).toMatchObject({ok: true, structured_output: GOOD})
    const record = readJson(parsedJson(result.stdout).planPath.replace(/\.md$/, '.approval.json'))
    expect(record.outputSchema.schema).toEqual(SCHEMA)
  })
})

describe('corrected after an invalid try', () => {
  it('run --task: a "placeholder" for an integer and a missing field are the tool error the model gets; the corrected value is the result', async () => {
    server.push(reply(toolUse('StructuredOutput', {count: 'placeholder'})), reply(toolUse('StructuredOutput', GOOD)), reply('Counted.'))
    const result = await wave(['run', '--task', 'Count the colors', '--json-schema', SCHEMA_TEXT, '--json'])
    expect(result.code, result.stderr).toBe(0)
    const [invalid] = toolResults(server.messageRequests[1])
    expect(invalid.is_error).toBe(true)
    expect(invalid.text).toContain("(root) must have required property 'color'")
    expect(invalid.text).toContain('/count must be integer')
    expect(invalid.text).toContain('2 tries left')
    expect(toolResults(server.messageRequests[2])[0].is_error ?? false).toBe(false)
    expect(parsedJson(result.stdout)).toMatchObject({ok: true, structured_output: GOOD})
  })

  it('run --task: ending without the call gets one reminder, then the call is taken', async () => {
    server.push(reply('Two blue ones.'), reply(toolUse('StructuredOutput', GOOD)), reply('Counted.'))
    const result = await wave(['run', '--task', 'Count the colors', '--json-schema', SCHEMA_TEXT, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(lastUserText(server.messageRequests[1])).toMatch(/You ended without calling StructuredOutput.*\(3 tries left\)/)
    expect(parsedJson(result.stdout).structured_output).toEqual(GOOD)
  })
})

describe('never satisfied', () => {
  it('run --task: three invalid tries end the session with exit 6 and the last validation error', async () => {
    server.push(
      reply(toolUse('StructuredOutput', {color: 'red', count: 'one'})),
      reply(toolUse('StructuredOutput', {color: 'red', count: 1.5})),
      reply(toolUse('StructuredOutput', {color: 'green', count: 1})),
    )
    const result = await wave(['run', '--task', 'Count the colors', '--json-schema', SCHEMA_TEXT, '--json'])
    expect(result.code, result.stderr).toBe(6)
    expect(result.stderr).toMatch(/The model's result never matched --json-schema in 3 tries: .*\/color must be equal to one of the allowed values/)
    // Ends after the third try: no request after it.
    expect(server.messageRequests).toHaveLength(3)
    expect(parsedJson(result.stdout)).toMatchObject({ok: false, stopReason: 'structured_output'})
    expect(parsedJson(result.stdout)).not.toHaveProperty('structured_output')
  })

  it('run of an approved plan: endings without the call count after the reminder, with invalid calls (exit 6)', async () => {
    const planPath = writePlanFile(sandbox, '# Plan\n\n1. Count the colors.\n')
    expect((await wave(['approve', planPath, '--json-schema', SCHEMA_TEXT])).code).toBe(0)
    server.push(reply('Done.'), reply(toolUse('StructuredOutput', {count: 2})), reply('Done again.'), reply(toolUse('StructuredOutput', {})))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(6)
    expect(lastUserText(server.messageRequests[1])).toContain('You ended without calling StructuredOutput')
    expect(toolResults(server.messageRequests[2])[0]).toMatchObject({is_error: true})
    // The second ending without the call is a failed try: reminded again, one try left.
    expect(lastUserText(server.messageRequests[3])).toMatch(/You ended without calling StructuredOutput.*\(1 try left\)/)
    expect(server.messageRequests).toHaveLength(4)
    expect(result.stderr).toMatch(/never matched --json-schema in 3 tries: the input does not match the schema: \(root\) must have required property 'count'/)
  })
})

describe('a pattern on text the model chooses (issue 48)', () => {
  // The issue's pattern: on JavaScript's backtracking engine this value takes time exponential in its
  // length (bench/json-schema-pattern.ts prints it); on re2js it is one pass.
  const WORDS = {properties: {words: {pattern: String.raw`^(\w+\s?)*$`, type: 'string'}}, required: ['words'], type: 'object'}

  it('a value built to backtrack is a failed try the model is told of, and the session goes on to a value that matches', async () => {
    server.push(
      reply(toolUse('StructuredOutput', {words: `${'a'.repeat(36)}!`})),
      reply(toolUse('StructuredOutput', {words: 'all good words'})),
      reply('Done.'),
    )
    const result = await wave(['run', '--task', 'Give words', '--json-schema', JSON.stringify(WORDS), '--json'])
    expect(result.code, result.stderr).toBe(0)
    const [refused] = toolResults(server.messageRequests[1])
    expect(refused.is_error).toBe(true)
    expect(refused.text).toContain('/words must match pattern')
    // Control: the pattern is in force, and a value it matches passes it.
    expect(parsedJson(result.stdout)).toMatchObject({ok: true, structured_output: {words: 'all good words'}})
  })
})

describe('an invalid schema', () => {
  const invalid: Array<[string, RegExp]> = [
    ['{"type": object}', /--json-schema is not JSON/],
    ['{"type": "string"}', /root must be \{"type": "object"\}, not "string"/],
    ['{"type": "object", "properties": {"count": {"type": "integr"}}}', /--json-schema is not a valid JSON Schema: \/properties\/count\/type/],
    // issue 48: a pattern the linear-time engine refuses (lookahead, a backreference) is refused with the schema
    [
      '{"type": "object", "properties": {"name": {"type": "string", "pattern": "^(?!admin)"}}}',
      /--json-schema: the pattern "\^\(\?!admin\)" cannot run on a linear-time engine/,
    ],
    [
      '{"type": "object", "patternProperties": {"^(a)\\\\1$": {"type": "string"}}}',
      /--json-schema: the pattern "\^\(a\)\\\\1\$" cannot run on a linear-time engine/,
    ],
  ]
  for (const [schema, message] of invalid) {
    it(`${schema}: exit 2 for plan, run --task and approve, with no request made`, async () => {
      const planPath = writePlanFile(sandbox, '# Plan\n\n1. Count.\n')
      for (const args of [
        ['plan', '--task', 'Count'],
        ['run', '--task', 'Count'],
        ['run', planPath, '--approve'],
        ['approve', planPath],
      ]) {
        const result = await wave([...args, '--json-schema', schema])
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(2)
        expect(result.stderr).toMatch(message)
      }

      expect(server.requests).toHaveLength(0)
      expect(server.modelRequests).toHaveLength(0)
      expect(() => readFileSync(planPath.replace(/\.md$/, '.approval.json'))).toThrow()
    })
  }
})

describe('bound by the approval', () => {
  it('approve --json-schema records the schema and its sha256; the run uses it without the flag', async () => {
    const planPath = writePlanFile(sandbox, '# Plan\n\n1. Count the colors.\n')
    expect((await wave(['approve', planPath, '--json-schema', SCHEMA_TEXT])).code).toBe(0)
    const record = readJson(planPath.replace(/\.md$/, '.approval.json'))
    expect(record.outputSchema.schema).toEqual(SCHEMA)
    expect(record.outputSchema.sha256).toMatch(/^[0-9a-f]{64}$/)

    server.push(reply(toolUse('StructuredOutput', GOOD)), reply('Counted.'))
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(offeredSchema(server.messageRequests[0])).toEqual(SCHEMA)
    expect(parsedJson(result.stdout).structured_output).toEqual(GOOD)
  })

  it('a run with a different --json-schema is refused (exit 2, both named) before any request; the same schema, spelled otherwise, runs', async () => {
    const planPath = writePlanFile(sandbox, '# Plan\n\n1. Count the colors.\n')
    expect((await wave(['approve', planPath, '--json-schema', SCHEMA_TEXT])).code).toBe(0)
    const approved = readJson(planPath.replace(/\.md$/, '.approval.json')).outputSchema.sha256 as string
    const other = JSON.stringify({...SCHEMA, required: ['count']})
    const refused = await wave(['run', planPath, '--json-schema', other])
    expect(refused.code, refused.stderr).toBe(2)
    expect(refused.stderr).toContain(`--json-schema (sha256 ${sha256Canonical(JSON.parse(other)).slice(0, 12)}…) contradicts the approval record`)
    expect(refused.stderr).toContain(`which approved the JSON Schema with sha256 ${approved.slice(0, 12)}…`)
    expect(server.requests).toHaveLength(0)

    // Control: the approved schema with its keys in another order and other white space is the same schema.
    const same = JSON.stringify({type: 'object', required: ['count', 'color'], properties: SCHEMA.properties, additionalProperties: false}, null, 3)
    server.push(reply(toolUse('StructuredOutput', GOOD)), reply('Counted.'))
    const ran = await wave(['run', planPath, '--json-schema', same, '--json'])
    expect(ran.code, ran.stderr).toBe(0)
    expect(parsedJson(ran.stdout).structured_output).toEqual(GOOD)
  })

  it('a record whose schema does not match its sha256 is malformed (exit 3)', async () => {
    const planPath = writePlanFile(sandbox, '# Plan\n\n1. Count the colors.\n')
    expect((await wave(['approve', planPath, '--json-schema', SCHEMA_TEXT])).code).toBe(0)
    const file = planPath.replace(/\.md$/, '.approval.json')
    const record = readJson(file)
    record.outputSchema.schema.required = []
    writeFileSync(file, JSON.stringify(record))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(3)
    expect(result.stderr).toContain('outputSchema.sha256')
    expect(server.requests).toHaveLength(0)
  })
})

/** The sha256 wave binds: of the schema's JSON with its keys sorted (base/json-schema.ts). */
function sha256Canonical(value: unknown): string {
  const canonical = (v: unknown): string =>
    Array.isArray(v)
      ? `[${v.map(canonical).join(',')}]`
      : v !== null && typeof v === 'object'
        ? `{${Object.keys(v)
            .sort()
            .map((key) => `${JSON.stringify(key)}:${canonical((v as Record<string, unknown>)[key])}`)
            .join(',')}}`
        : JSON.stringify(v)
  return sha256(canonical(value))
}
