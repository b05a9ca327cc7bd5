import {describe, expect, it} from 'vitest'

import {compileOutputSchema} from '../../../src/base/json-schema.js'
import {STRUCTURED_OUTPUT_TRIES, StructuredResult, structuredOutputTool} from '../../../src/tools/structured-output.js'
import {ToolRegistry} from '../../../src/tools/registry.js'
import {dispatch} from '../../../src/tools/dispatch.js'
import {parseRules} from '../../../src/policy/policy.js'

const SCHEMA = {properties: {count: {type: 'integer'}}, required: ['count'], type: 'object'}

async function structured(): Promise<StructuredResult> {
  return new StructuredResult(await compileOutputSchema(SCHEMA, 'the test'))
}

describe('StructuredResult', () => {
  it('takes a matching value, telling its listeners; refuses the rest with what is wrong and the tries left', async () => {
    const result = await structured()
    const heard: unknown[] = []
    result.listen((value) => heard.push(value))
    expect(() => result.give({count: 'placeholder'})).toThrow(/\/count must be integer\. Call StructuredOutput again with a corrected input \(2 tries left\)/)
    expect(result.failures).toBe(1)
    expect(result.given).toBe(false)
    expect(result.give({count: 2})).toMatch(/^Accepted/)
    expect(result.value).toEqual({count: 2})
    expect(heard).toEqual([{count: 2}])
    expect(result.exhausted).toBe(false)
  })

  it(`is exhausted after ${STRUCTURED_OUTPUT_TRIES} failed tries, and begins afresh for the next conversation`, async () => {
    const result = await structured()
    for (let i = 0; i < STRUCTURED_OUTPUT_TRIES; i++) expect(() => result.give({})).toThrow(/must have required property 'count'/)
    expect(result.exhausted).toBe(true)
    expect(result.lastProblem).toBe("the input does not match the schema: (root) must have required property 'count'")
    result.begin()
    expect(result.exhausted).toBe(false)
    expect(result.left).toBe(STRUCTURED_OUTPUT_TRIES)
  })

  it('is offered with the schema as its input_schema, and its input goes to the schema alone through dispatch', async () => {
    const result = await structured()
    const registry = new ToolRegistry([structuredOutputTool(result)])
    const policy = {headless: true, mode: 'acceptEdits' as const, rules: parseRules(), structuredOutput: true, workspaceRoot: '/'}
    expect(registry.apiTools(policy)).toEqual([expect.objectContaining({input_schema: SCHEMA, name: 'StructuredOutput'})])
    const env = {policy, registry, session: {} as never, signal: new AbortController().signal}
    // Keys the schema does not name are the schema's business: here they pass, and are kept.
    expect(await dispatch({id: 'a', input: {count: 1, note: 'x'}, name: 'StructuredOutput'}, env)).toMatchObject({isError: false})
    expect(result.value).toEqual({count: 1, note: 'x'})
    expect(await dispatch({id: 'b', input: {count: 1.5}, name: 'StructuredOutput'}, env)).toMatchObject({isError: true})
  })
})
