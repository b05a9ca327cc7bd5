/**
 * Deferred tools in a real session against the scripted server (which refuses a tool_reference to a tool
 * that is not deferred in the request, and counts a deferred definition only where it is loaded): the
 * rarely used tools are sent with defer_loading behind ToolSearch, loading one leaves the cached prefix
 * as it was, and a search finds only what the mode offers.
 */
import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

type SentTool = {name: string; description: string; defer_loading?: boolean}
const toolsOf = (request: RecordedRequest) => request.body.tools as SentTool[]
const tokensOf = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4)
const cached = (request: RecordedRequest) => request.usage!.cache_read_input_tokens + request.usage!.cache_creation_input_tokens

describe('deferred tools', () => {
  it('are loaded by ToolSearch in a plan session and then work, each request still writing only its newest turn', async () => {
    const todos = [{activeForm: 'Reading the code', content: 'Read the code', status: 'in_progress'}]
    server.push(
      reply(toolUse('ToolSearch', {query: 'select:TodoWrite'})),
      reply(toolUse('TodoWrite', {todos})),
      reply(toolUse('ToolSearch', {query: 'select:EnterPlanMode,Write,WebFetch'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n\nRename greet.\n', file_path: planPathIn(request)})),
      (request) => reply('Ready.', toolUse('ExitPlanMode', {plan_path: planPathIn(request)})),
    )
    const result = await wave(['plan', '--task', 'Rename greet to welcome'])
    expect(result.code, result.stderr).toBe(0)
    const requests = server.messageRequests
    expect(requests).toHaveLength(5)
    expect(server.invalidRequests).toEqual([])

    // The first request: the deferred tools last, with defer_loading; ToolSearch names each of them.
    const tools = toolsOf(requests[0])
    const deferred = tools.filter((tool) => tool.defer_loading).map((tool) => tool.name)
    expect(deferred).toEqual(['LS', 'TaskOutput', 'TaskStop', 'TodoWrite', 'AskUserQuestion'].filter((name) => tools.some((tool) => tool.name === name)))
    expect(deferred).toEqual(expect.arrayContaining(['LS', 'TodoWrite', 'AskUserQuestion']))
    const search = tools.find((tool) => tool.name === 'ToolSearch')!
    expect(search.defer_loading).toBeUndefined()
    expect(search.description.split('\n').slice(1)).toEqual(deferred)
    expect(tools.findIndex((tool) => tool.defer_loading)).toBe(tools.indexOf(search) + 1)
    // The tools never change within the session.
    for (const request of requests) expect(request.body.tools).toEqual(requests[0].body.tools)

    // ToolSearch's result is a reference to TodoWrite, and TodoWrite then works.
    expect(toolResults(requests[1])[0].content).toEqual([{tool_name: 'TodoWrite', type: 'tool_reference'}])
    expect(toolResults(requests[2])[0]).toMatchObject({text: expect.stringContaining('To-do list updated (step 1 of 1: Reading the code)')})
    expect(toolResults(requests[2])[0].is_error).toBeUndefined()
    // In plan mode a search never loads a tool plan mode does not offer.
    expect(toolResults(requests[3])[0].text).toMatch(/^No deferred tool matches "select:EnterPlanMode,Write,WebFetch"\. Deferred tools here: LS, /)

    // Loading it wrote only that turn: each request reads all the one before it cached.
    for (const [i, request] of requests.entries()) {
      expect(request.usage!.input_tokens, `request ${i}`).toBeLessThan(10)
      if (i === 0) continue
      expect(request.usage!.cache_read_input_tokens, `request ${i}`).toBe(cached(requests[i - 1]))
    }

    // The reference counts TodoWrite's definition, which the prefix did not hold.
    const todoWrite = tools.find((tool) => tool.name === 'TodoWrite')!
    expect(requests[1].usage!.cache_creation_input_tokens).toBeGreaterThan(tokensOf(todoWrite) - 20)
    expect(requests[0].usage!.cache_creation_input_tokens).toBeLessThan(
      tokensOf(requests[0].body.tools) + tokensOf(requests[0].body.system) - tokensOf(todoWrite),
    )
  })

  it('in a run that may plan, the same search loads EnterPlanMode (the control)', async () => {
    server.push(reply(toolUse('ToolSearch', {query: 'select:EnterPlanMode,Write,WebFetch'})), reply('Nothing to do.'))
    const result = await wave(['run', '--task', 'Look around'])
    expect(result.code, result.stderr).toBe(0)
    expect(server.invalidRequests).toEqual([])
    expect(toolResults(server.messageRequests[1])[0].content).toEqual([{tool_name: 'EnterPlanMode', type: 'tool_reference'}])
  })

  it('are sent whole, with no ToolSearch, at an endpoint that is not Anthropic’s own (a gateway may not pass tool_reference on), unless ENABLE_TOOL_SEARCH=true', async () => {
    // The scripted server's URL is a gateway's to wave: with ENABLE_TOOL_SEARCH unset, as Claude Code does, no tool search.
    server.push(reply(toolUse('TodoWrite', {todos: [{activeForm: 'Looking', content: 'Look', status: 'in_progress'}]})), reply('Nothing to do.'))
    const whole = await wave(['run', '--task', 'Look around'], {ENABLE_TOOL_SEARCH: undefined})
    expect(whole.code, whole.stderr).toBe(0)
    const sent = toolsOf(server.messageRequests[0])
    expect(sent.map((tool) => tool.name)).not.toContain('ToolSearch')
    expect(sent.filter((tool) => tool.defer_loading)).toEqual([])
    expect(sent.map((tool) => tool.name)).toContain('TodoWrite')
    expect(toolResults(server.messageRequests[1])[0].is_error ?? false).toBe(false)
    // wave tools says the same: nothing is deferred there.
    const listed = await wave(['tools', '--json'], {ENABLE_TOOL_SEARCH: undefined})
    expect(JSON.parse(listed.stdout).tools.filter((tool: {deferred: boolean}) => tool.deferred)).toEqual([])
    const off = await wave(['tools', '--json'], {ENABLE_TOOL_SEARCH: 'false'})
    expect(JSON.parse(off.stdout).tools.map((tool: {name: string}) => tool.name)).not.toContain('ToolSearch')

    // Control: the same endpoint with ENABLE_TOOL_SEARCH=true (a proxy known to pass them on) defers them.
    const on = await wave(['tools', '--json'], {ENABLE_TOOL_SEARCH: 'true'})
    expect(JSON.parse(on.stdout).tools.find((tool: {name: string}) => tool.name === 'TodoWrite')).toMatchObject({deferred: true})
  })
})
