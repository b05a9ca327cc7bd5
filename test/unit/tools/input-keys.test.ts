/**
 * The shared wrapper's validation: an input key a tool does not take is an error naming the keys it
 * takes (never dropped in silence), and a tool name wave does not know is an error, not a denial.
 */
import {describe, expect, it} from 'vitest'
import {z} from 'zod'

import {parseRules} from '../../../src/policy/policy.js'
import {dispatch} from '../../../src/tools/dispatch.js'
import {builtinRegistry, ToolRegistry} from '../../../src/tools/registry.js'
import {DEFAULT_RESULT_CAP, defineTool, type ToolPlugin} from '../../../src/tools/tool.js'
import {useWorkspaces} from './context.js'

const workspace = useWorkspaces()

const refuse = async (): Promise<string> => {
  throw new Error('no session control here')
}

async function call(name: string, input: unknown, registry = builtinRegistry(), mode: 'plan' | 'acceptEdits' | 'bypassPermissions' = 'bypassPermissions') {
  const root = await workspace({'a.txt': 'alpha\n'})
  return dispatch(
    {id: 'call-1', input, name},
    {
      policy: {headless: true, mode, rules: parseRules(), workspaceRoot: root},
      registry,
      session: {enterPlanMode: refuse, exitPlanMode: refuse},
      signal: new AbortController().signal,
    },
  )
}

describe('unknown input keys', () => {
  it('are an error naming the keys the tool accepts, and the call does not run', async () => {
    const outcome = await call('Read', {file_path: 'a.txt', pages: '1-2'})
    expect(outcome.isError).toBe(true)
    expect(outcome.decision).toBeUndefined()
    expect(outcome.content).toMatch(/^Invalid input for Read: .*"pages"/)
    expect(outcome.content).toMatch(/Read accepts: file_path, limit, offset\.$/)
  })

  it('in a nested object (a TodoWrite item) name the item', async () => {
    const outcome = await call('TodoWrite', {todos: [{activeForm: 'Doing', content: 'Do', priority: 'high', status: 'pending'}]})
    expect(outcome.isError).toBe(true)
    expect(outcome.content).toMatch(/Invalid input for TodoWrite: .*"priority".*todos\[0\]/)
  })

  it('a tool whose input is built on first use validates against it: built once, at the first call', async () => {
    let built = 0
    const count = defineTool({
      access: 'read',
      description: 'count',
      input: () => {
        built++
        return z.object({word: z.string()})
      },
      name: 'Count',
      resultCap: DEFAULT_RESULT_CAP,
      run: async ({word}) => `${word.length}`,
    })
    const registry = new ToolRegistry([count as ToolPlugin])
    expect(built).toBe(0)
    expect(await call('Count', {word: 'four'}, registry)).toMatchObject({content: '4', isError: false})
    const refused = await call('Count', {word: 4}, registry)
    expect(refused.isError).toBe(true)
    expect(refused.content).toMatch(/^Invalid input for Count: /)
    expect(built).toBe(1)
  })

  it("Bash takes Claude Code's description and run_in_background", async () => {
    const outcome = await call('Bash', {command: 'true', dangerouslyDisableSandbox: true})
    expect(outcome.content).toMatch(/Bash accepts: command, timeout, description, run_in_background\.$/)
  })

  it('a tool that brings its own JSON Schema (MCP) keeps its keys: its server validates them', async () => {
    const echo = defineTool({
      access: 'read',
      description: 'echo',
      input: z.looseObject({}),
      inputSchema: {properties: {anything: {type: 'string'}}, type: 'object'},
      name: 'mcp__fixture__echo',
      origin: 'mcp',
      resultCap: DEFAULT_RESULT_CAP,
      run: async (input) => JSON.stringify(input),
    })
    const outcome = await call('mcp__fixture__echo', {anything: 'x', extra: 1}, new ToolRegistry([echo as ToolPlugin]))
    expect(outcome).toMatchObject({content: '{"anything":"x","extra":1}', isError: false})
  })
})

describe('unknown tools', () => {
  it('are an error naming the available tools, not a denial', async () => {
    const outcome = await call('NotebookEdit', {notebook_path: 'a.ipynb'})
    expect(outcome.isError).toBe(true)
    expect(outcome.decision).toBeUndefined()
    expect(outcome.content).toMatch(
      /^Unknown tool NotebookEdit: there is no such tool here\. Available tools: Read, Glob, Grep, LS, Write, Edit, Bash, TaskOutput, TaskStop, TodoWrite, AskUserQuestion, Agent, ToolSearch\.$/,
    )
  })

  it('a known tool the mode does not offer is still a denial', async () => {
    const outcome = await call('TaskOutput', {task_id: 'bash_1'}, builtinRegistry(), 'acceptEdits')
    expect(outcome.decision?.decision).toBe('deny')
    expect(outcome.content).toMatch(/^Permission denied: TaskOutput is not available in acceptEdits mode/)
  })
})
