import {describe, expect, it} from 'vitest'
import {z} from 'zod'

import {expandVars, mcpToolName, resultText} from '../../../../src/tools/sources/mcp.js'
import {checkPluginTool} from '../../../../src/tools/sources/hook.js'
import {defineTool} from '../../../../src/tools/tool.js'

const input = z.object({file_path: z.string(), pattern: z.string().optional()})
const run = async () => 'ok'
const valid = {access: 'read', description: 'Counts.', input, name: 'Count', run}
const taken = new Set(['Read', 'Write'])

describe('checkPluginTool', () => {
  it('accepts a valid tool, marking where it came from', () => {
    const tool = checkPluginTool('wave-plugin-x', {...valid, pathField: 'file_path', globFields: ['pattern']}, taken)
    expect(tool).toMatchObject({access: 'read', name: 'Count', origin: 'plugin', pathField: 'file_path', source: 'wave-plugin-x'})
  })

  it('accepts a tool whose input defineTool builds on first use, checking the schema built', () => {
    let built = 0
    const lazy = defineTool({
      ...valid,
      access: 'read',
      input: () => {
        built++
        return input
      },
      resultCap: 100,
    })
    expect(built).toBe(0)
    expect(checkPluginTool('p', {...lazy, pathField: 'file_path'}, taken)).toMatchObject({input, name: 'Count', pathField: 'file_path'})
    expect(built).toBe(1)
    // Control: what it builds is checked as a given input is.
    const notZod = defineTool({...valid, access: 'read', input: () => ({file_path: 'a string'}) as unknown as typeof input, resultCap: 100})
    expect(checkPluginTool('p', notZod, taken)).toMatch(/^Plugin "p": tool "Count" rejected: .*zod/)
    // A builder that throws is that tool rejected, naming why; not the session's end.
    const throwing = defineTool({
      ...valid,
      access: 'read',
      input: (): typeof input => {
        throw new Error('no schema today')
      },
      resultCap: 100,
    })
    expect(checkPluginTool('p', throwing, taken)).toBe('Plugin "p": tool "Count" rejected: reading it failed (no schema today).')
  })

  it('does not let a plugin claim to be built in', () => {
    expect(checkPluginTool('p', {...valid, origin: 'builtin'}, taken)).toMatchObject({origin: 'plugin'})
  })

  it.each<[string, unknown, string]>([
    ['not an object', 'Count', 'Plugin "p": tool (unnamed) rejected: a tool must be an object.'],
    [
      'an unknown access class',
      {...valid, access: 'root'},
      'Plugin "p": tool "Count" rejected: no valid access class (got "root"); expected one of read, write, execute, network.',
    ],
    [
      'no access class',
      {...valid, access: undefined},
      'Plugin "p": tool "Count" rejected: no valid access class (none given); expected one of read, write, execute, network.',
    ],
    [
      'the control class',
      {...valid, access: 'control'},
      'Plugin "p": tool "Count" rejected: no valid access class (got "control"); expected one of read, write, execute, network.',
    ],
    ['a taken name', {...valid, name: 'Read'}, 'Plugin "p": tool "Read" rejected: the name Read is already taken.'],
    ['an MCP-style name', {...valid, name: 'mcp__x__y'}, 'Plugin "p": tool "mcp__x__y" rejected: names starting with mcp__ are reserved for MCP tools.'],
    ['a name the API refuses', {...valid, name: 'count words'}, 'Plugin "p": tool "count words" rejected: name must start with a letter'],
    ['no description', {...valid, description: ' '}, 'Plugin "p": tool "Count" rejected: description must not be empty.'],
    ['a JSON Schema input', {...valid, input: {type: 'object'}}, 'Plugin "p": tool "Count" rejected: input must be a zod object schema'],
    ['no run', {...valid, run: undefined}, 'Plugin "p": tool "Count" rejected: run must be a function.'],
    ['a pathField not in the input', {...valid, pathField: 'path'}, 'Plugin "p": tool "Count" rejected: pathField path is not a field of its input.'],
    [
      'a globField not in the input',
      {...valid, globFields: ['glob']},
      'Plugin "p": tool "Count" rejected: globFields names glob, which is not a field of its input.',
    ],
    [
      'an input with no JSON Schema',
      {...valid, input: z.object({when: z.date()})},
      'Plugin "p": tool "Count" rejected: its input cannot be shown to the model as JSON Schema',
    ],
  ])('rejects %s', (_name, candidate, message) => {
    const result = checkPluginTool('p', candidate, taken)
    expect(typeof result).toBe('string')
    expect(result as string).toContain(message)
  })

  it('keeps `this` for a tool written as an object with methods', async () => {
    const tool = checkPluginTool(
      'p',
      {
        ...valid,
        prefix: 'n=',
        async run() {
          return `${(this as {prefix: string}).prefix}1`
        },
      },
      taken,
    )
    expect(typeof tool).not.toBe('string')
    expect(await (tool as Exclude<typeof tool, string>).run({file_path: 'a'}, {} as never)).toBe('n=1')
  })
})

describe('MCP helpers', () => {
  it.each([
    ['docs', 'search', 'mcp__docs__search'],
    ['docs', 'search.v2', 'mcp__docs__search_v2'],
    ['my-server', 'get file', 'mcp__my-server__get_file'],
  ])('names %s/%s %s', (server, tool, expected) => {
    expect(mcpToolName(server, tool)).toBe(expected)
  })

  it.each([
    ['${TOKEN}', 'secret'],
    ['Bearer ${TOKEN}', 'Bearer secret'],
    ['${MISSING:-fallback}', 'fallback'],
    ['${MISSING}', ''],
    ['$TOKEN', '$TOKEN'],
  ])('expands %s', (value, expected) => {
    expect(expandVars(value, {TOKEN: 'secret'})).toBe(expected)
  })

  it('turns a tool result into text', () => {
    expect(
      resultText({
        content: [
          {text: 'a', type: 'text'},
          {data: 'AAAA', mimeType: 'image/png', type: 'image'},
          {resource: {text: 'r', uri: 'x://r'}, type: 'resource'},
          {type: 'resource_link', uri: 'x://l'},
        ],
      }),
    ).toBe('a\n[image image/png (3 bytes) not shown]\nr\n[resource link x://l]')
    expect(resultText({content: [], structuredContent: {n: 1}})).toBe('{\n  "n": 1\n}')
  })
})
