/**
 * Deferred tools and ToolSearch: which tools are sent with `defer_loading`, what ToolSearch's definition
 * lists, what a query finds, and that it loads only what the policy offers in the mode.
 */
import {describe, expect, it} from 'vitest'

import {parseRules, type PermissionMode, type PolicyContext} from '../../../src/policy/policy.js'
import {searchDeferred} from '../../../src/tools/deferred/tool-search.js'
import {dispatch} from '../../../src/tools/dispatch.js'
import {builtinRegistry, builtinTools, ToolRegistry} from '../../../src/tools/registry.js'
import {useWorkspaces} from './context.js'

const workspace = useWorkspaces()
const refuse = async (): Promise<string> => {
  throw new Error('no session control here')
}

function policyOf(mode: PermissionMode, root = '/work', deny: string[] = []): PolicyContext {
  return {
    canEnterPlanMode: mode !== 'plan',
    headless: true,
    mode,
    planBash: {kind: 'read-only', offered: true},
    planFile: mode === 'plan' ? '/plans/p.md' : undefined,
    rules: parseRules([], deny),
    workspaceRoot: root,
  }
}

async function search(mode: PermissionMode, input: Record<string, unknown>) {
  const root = await workspace()
  return dispatch(
    {id: 'call-1', input, name: 'ToolSearch'},
    {policy: policyOf(mode, root), registry: builtinRegistry(), session: {enterPlanMode: refuse, exitPlanMode: refuse}, signal: new AbortController().signal},
  )
}

describe('deferred tools in a request', () => {
  it('sends the rarely used tools last with defer_loading, after ToolSearch, which names each of them', () => {
    const tools = builtinRegistry().apiTools(policyOf('plan'))
    const names = tools.map((tool) => tool.name)
    expect(names).toEqual([
      'Read',
      'Glob',
      'Grep',
      'Write',
      'Edit',
      'Bash',
      'ExitPlanMode',
      'Agent',
      'ToolSearch',
      'LS',
      'TaskOutput',
      'TaskStop',
      'TodoWrite',
      'AskUserQuestion',
    ])
    const deferred = tools.filter((tool) => tool.defer_loading).map((tool) => tool.name)
    expect(deferred).toEqual(['LS', 'TaskOutput', 'TaskStop', 'TodoWrite', 'AskUserQuestion'])
    const search = tools.find((tool) => tool.name === 'ToolSearch')!
    expect(search.defer_loading).toBeUndefined()
    // One line each, and nothing plan mode does not offer (EnterPlanMode, WebFetch).
    expect(search.description.split('\n').slice(1)).toEqual(deferred)
    expect(search.description).not.toMatch(/EnterPlanMode|WebFetch/)
    // Byte-identical on every turn: the prefix holds.
    expect(JSON.stringify(builtinRegistry().apiTools(policyOf('plan')))).toBe(JSON.stringify(tools))
  })

  it('defers EnterPlanMode in a run that may plan, and ExitPlanMode never', () => {
    const tools = builtinRegistry().apiTools(policyOf('acceptEdits'))
    expect(tools.filter((tool) => tool.defer_loading).map((tool) => tool.name)).toContain('EnterPlanMode')
    expect(tools.find((tool) => tool.name === 'ToolSearch')!.description.split('\n')).toContain('EnterPlanMode')
    expect(
      builtinRegistry()
        .apiTools(policyOf('plan'))
        .find((tool) => tool.name === 'ExitPlanMode')!.defer_loading,
    ).toBeUndefined()
  })

  it('sends no ToolSearch without a deferred tool, and every tool eagerly where a rule denies ToolSearch', () => {
    const eagerOnly = new ToolRegistry(builtinTools().filter((tool) => ['Read', 'Write', 'ToolSearch'].includes(tool.name)))
    expect(eagerOnly.apiTools(policyOf('acceptEdits')).map((tool) => tool.name)).toEqual(['Read', 'Write'])
    const denied = builtinRegistry().apiTools(policyOf('plan', '/work', ['ToolSearch']))
    expect(denied.map((tool) => tool.name)).toContain('TodoWrite')
    expect(denied.some((tool) => tool.defer_loading || tool.name === 'ToolSearch')).toBe(false)
  })
})

describe('ToolSearch', () => {
  const tools = [
    {description: 'List a directory.', name: 'LS'},
    {description: 'Keep a to-do list.', name: 'TodoWrite'},
    {description: "Read a background command's output.", name: 'TaskOutput'},
    {description: 'End a background command.', name: 'TaskStop'},
  ]

  it('selects by name, in the order asked, and matches keywords against names and descriptions, best first', () => {
    expect(searchDeferred('select:TaskStop,ls,Nope', tools, 5).map((tool) => tool.name)).toEqual(['TaskStop', 'LS'])
    expect(searchDeferred('background task', tools, 5).map((tool) => tool.name)).toEqual(['TaskOutput', 'TaskStop'])
    expect(searchDeferred('todo', tools, 5).map((tool) => tool.name)).toEqual(['TodoWrite'])
    expect(searchDeferred('background +end', tools, 5).map((tool) => tool.name)).toEqual(['TaskStop'])
    expect(searchDeferred('background', tools, 1).map((tool) => tool.name)).toEqual(['TaskOutput'])
    expect(searchDeferred('weather', tools, 5)).toEqual([])
  })

  it('loads what it finds as references, and in plan mode never a tool plan mode does not offer', async () => {
    const found = await search('plan', {query: 'select:TodoWrite'})
    expect(found).toMatchObject({isError: false, references: ['TodoWrite']})
    for (const query of ['select:EnterPlanMode', 'select:WebFetch', 'select:Write', 'EnterPlanMode', 'WebFetch']) {
      const none = await search('plan', {query})
      expect(none.references, query).toBeUndefined()
      expect(none.content, query).toMatch(/^No deferred tool matches .* Deferred tools here: LS, TaskOutput, TaskStop, TodoWrite, AskUserQuestion\.$/)
    }

    // Control: the same query in a run that may plan finds it.
    expect(await search('acceptEdits', {query: 'select:EnterPlanMode'})).toMatchObject({references: ['EnterPlanMode']})
  })

  it('tells the model how to load a deferred tool whose input it got wrong, and runs one it calls right', async () => {
    const root = await workspace({'a.txt': 'alpha\n'})
    const env = {
      policy: policyOf('plan', root),
      registry: builtinRegistry(),
      session: {enterPlanMode: refuse, exitPlanMode: refuse},
      signal: new AbortController().signal,
    }
    const wrong = await dispatch({id: 'c1', input: {todos: 'write tests'}, name: 'TodoWrite'}, env)
    expect(wrong.isError).toBe(true)
    expect(wrong.content).toMatch(/^Invalid input for TodoWrite: [\s\S]*call ToolSearch with query "select:TodoWrite", then retry this call\.$/)
    const listed = await dispatch({id: 'c2', input: {path: '.'}, name: 'LS'}, env)
    expect(listed).toMatchObject({content: 'a.txt', isError: false})
    // Control: an eager tool's invalid input gets no such hint.
    expect((await dispatch({id: 'c3', input: {file_path: 3}, name: 'Read'}, env)).content).not.toContain('ToolSearch')
  })
})
