/**
 * The cache breakpoints a turn's request carries (turnParams): four at most, and the turn before the
 * newest marked, so a request reads the previous one's entry however many blocks the turn between
 * added (the API looks back only 20 blocks from a breakpoint). Judged by the scripted server's usage.
 */
import Anthropic from '@anthropic-ai/sdk'
import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'
import {afterEach, describe, expect, it} from 'vitest'

import {type StreamParams, turnParams} from '../../../src/agent/request.js'
import {type MessagesServer, reply, startMessagesServer, text} from '../../support/messages-server.js'

let server: MessagesServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const tools = [{description: 'Reads a file. '.repeat(300), input_schema: {properties: {}, type: 'object'}, name: 'Read'}]
const system = {session: '# Environment\nDate: 2026-12-07', shared: 'You are a careful engineer. '.repeat(100)}
const params = (messages: MessageParam[]) => turnParams({maxTokens: 1024, messages, model: 'claude-sonnet-5-5', system, tools})

async function send(s: MessagesServer, body: StreamParams) {
  s.push(reply(text('ok')))
  const client = new Anthropic({apiKey: 'test-key', baseURL: s.url, maxRetries: 0})
  return (await client.messages.stream(body).finalMessage()).usage
}

const marks = (body: StreamParams) => (JSON.stringify(body).match(/"cache_control"/g) ?? []).length

/** One turn of twelve tool calls and their results: 24 blocks. */
function wideTurn(): MessageParam[] {
  const ids = Array.from({length: 12}, (_, i) => `toolu_${i}`)
  return [
    {content: ids.map((id) => ({id, input: {}, name: 'Read', type: 'tool_use' as const})), role: 'assistant'},
    {content: ids.map((id) => ({content: `contents of file ${id}`, tool_use_id: id, type: 'tool_result' as const})), role: 'user'},
  ]
}

describe('the cache breakpoints of a turn', () => {
  it('mark the turn before the newest, so a turn of 24 blocks still reads what the request before it wrote', async () => {
    server = await startMessagesServer()
    const opening: MessageParam[] = [{content: 'Read every file.', role: 'user'}]
    const first = await send(server, params(opening))
    const second = params([...opening, ...wideTurn()])
    expect(marks(second)).toBe(4)
    const usage = await send(server, second)
    expect(usage.cache_read_input_tokens).toBe(first.cache_creation_input_tokens)

    // Control: without the mark on the turn before, the newest breakpoint is 24 blocks past the entry
    // and finds only the shared system block's.
    await server.close()
    server = await startMessagesServer()
    await send(server, params(opening))
    const unmarked = params([...opening, ...wideTurn()])
    const content = unmarked.messages[0].content as unknown as Array<Record<string, unknown>>
    delete content[0].cache_control
    expect(marks(unmarked)).toBe(3)
    const control = await send(server, unmarked)
    expect(control.cache_read_input_tokens).toBeLessThan(first.cache_creation_input_tokens!)
    expect(control.cache_read_input_tokens).toBeGreaterThan(0)
  })

  it('put the shared system block under its own breakpoint and the session block after it, one text', () => {
    const body = params([{content: 'hi', role: 'user'}])
    const blocks = body.system as Array<{text: string; cache_control?: unknown}>
    expect(blocks).toHaveLength(2)
    expect(blocks[0].cache_control).toEqual({type: 'ephemeral'})
    expect(blocks[1].cache_control).toBeUndefined()
    expect(blocks.map((b) => b.text).join('')).toBe(`${system.shared}\n\n${system.session}`)
  })

  it('mark the last tool the prompt holds: deferred tools after it are not in the prompt', async () => {
    const deferred = {defer_loading: true, description: 'Lists a directory. '.repeat(200), input_schema: {properties: {}, type: 'object'}, name: 'LS'}
    const body = turnParams({maxTokens: 1024, messages: [{content: 'hi', role: 'user'}], model: 'claude-sonnet-5-5', system, tools: [...tools, deferred]})
    const sent = body.tools as Array<{name: string; cache_control?: unknown}>
    expect(sent.map((tool) => Boolean(tool.cache_control))).toEqual([true, false])
    server = await startMessagesServer()
    const first = await send(server, body)
    // Control: the same request without the deferred tool caches the same prefix, and reads it.
    const without = await send(server, params([{content: 'hi', role: 'user'}]))
    expect(without.cache_read_input_tokens).toBeGreaterThan(0)
    expect(without.cache_read_input_tokens).toBe((first.cache_read_input_tokens ?? 0) + (first.cache_creation_input_tokens ?? 0))
  })
})
