import Anthropic from '@anthropic-ai/sdk'
import {afterEach, describe, expect, it} from 'vitest'

import {
  apiKeyOf,
  fault,
  reply,
  type MessagesServer,
  sseEvents,
  startMessagesServer,
  text,
  toolResults,
  toolUse,
} from './messages-server.js'

let server: MessagesServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
})

function client(s: MessagesServer, maxRetries = 0) {
  return new Anthropic({baseURL: s.url, apiKey: 'test-key', maxRetries})
}

const base = {model: 'claude-test-model', max_tokens: 1024, messages: [{role: 'user' as const, content: 'hello'}]}

describe('messages server', () => {
  it('answers a JSON messages.create with a full message', async () => {
    server = await startMessagesServer([reply(text('Hi there.'))])
    const msg = await client(server).messages.create(base)
    expect(msg.type).toBe('message')
    expect(msg.role).toBe('assistant')
    expect(msg.model).toBe('claude-test-model')
    expect(msg.id).toMatch(/^msg_01/)
    expect(msg.content).toEqual([{type: 'text', text: 'Hi there.'}])
    expect(msg.stop_reason).toBe('end_turn')
    expect(msg.usage.input_tokens).toBeGreaterThan(0)
    expect(msg.usage.output_tokens).toBeGreaterThan(0)

    expect(server.requests).toHaveLength(1)
    const [req] = server.requests
    expect(req.body.messages).toEqual(base.messages)
    expect(req.stream).toBe(false)
    // SDK 1.x sends the key as `Authorization: Bearer`; the server records headers as received
    expect(apiKeyOf(req)).toBe('test-key')
    expect([req.headers['x-api-key'], req.headers.authorization]).toContain(
      req.headers['x-api-key'] === undefined ? 'Bearer test-key' : 'test-key',
    )
    expect(typeof req.receivedAt).toBe('number')
    expect(server.remaining).toBe(0)
  })

  it('streams text and tool_use that the SDK assembles, input parsed', async () => {
    const input = {file_path: 'src/app.ts', nested: {list: [1, 2, 3], s: 'ünïcödé "quoted"'}}
    server = await startMessagesServer([reply(text('Let me read the file first.'), toolUse('Read', input))])
    const stream = client(server).messages.stream(base)
    const deltas: string[] = []
    stream.on('text', (d) => deltas.push(d))
    const msg = await stream.finalMessage()

    expect(deltas.length).toBeGreaterThan(1)
    expect(deltas.join('')).toBe('Let me read the file first.')
    expect(msg.stop_reason).toBe('tool_use')
    expect(msg.content).toHaveLength(2)
    expect(msg.content[0]).toEqual({type: 'text', text: 'Let me read the file first.'})
    const tool = msg.content[1]
    expect(tool.type).toBe('tool_use')
    if (tool.type !== 'tool_use') throw new Error('unreachable')
    expect(tool.id).toMatch(/^toolu_01/)
    expect(tool.name).toBe('Read')
    expect(tool.input).toEqual(input)
    expect(msg.usage.output_tokens).toBeGreaterThan(0)
    expect(server.requests[0].stream).toBe(true)
  })

  it('lets a function turn react to the request (tool results)', async () => {
    server = await startMessagesServer([
      reply(toolUse('Read', {file_path: 'a'}, 'toolu_01fixed')),
      (req) => reply(text(`got ${toolResults(req).map((r) => `${r.tool_use_id}=${r.text}`).join(',')}`)),
    ])
    const c = client(server)
    const first = await c.messages.stream(base).finalMessage()
    const second = await c.messages
      .stream({
        ...base,
        messages: [
          ...base.messages,
          {role: 'assistant', content: first.content},
          {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_01fixed', content: 'file body'}]},
        ],
      })
      .finalMessage()
    expect(second.content).toEqual([{type: 'text', text: 'got toolu_01fixed=file body'}])
  })

  it('overrides usage and stop_reason', async () => {
    server = await startMessagesServer([
      {content: [text('trunc')], stop_reason: 'max_tokens', usage: {input_tokens: 7, output_tokens: 3}},
    ])
    const msg = await client(server).messages.stream(base).finalMessage()
    expect(msg.stop_reason).toBe('max_tokens')
    expect(msg.usage.input_tokens).toBe(7)
    expect(msg.usage.output_tokens).toBe(3)
  })

  it('answers 529 with an Anthropic error body, then succeeds on the SDK retry', async () => {
    server = await startMessagesServer([fault(529, {headers: {'retry-after-ms': '5'}}), reply(text('ok'))])
    const msg = await client(server, 2).messages.create(base)
    expect(msg.content).toEqual([{type: 'text', text: 'ok'}])
    expect(server.requests).toHaveLength(2)
    expect(server.requests.map((r) => r.status)).toEqual([529, 200])
  })

  it('surfaces a 429 as an SDK RateLimitError with the request id', async () => {
    server = await startMessagesServer([fault(429, {error: {message: 'slow down'}})])
    const err = await client(server).messages.create(base).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.RateLimitError)
    const apiErr = err as InstanceType<typeof Anthropic.RateLimitError>
    expect(apiErr.status).toBe(429)
    expect(apiErr.requestID).toMatch(/^req_01/)
    expect(apiErr.error).toMatchObject({type: 'error', error: {type: 'rate_limit_error', message: 'slow down'}})
  })

  it('fails loudly when the script is exhausted', async () => {
    server = await startMessagesServer([reply(text('only one'))])
    const c = client(server, 2)
    await c.messages.create(base)
    const err = await c.messages.create(base).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.InternalServerError)
    expect(String((err as Error).message)).toMatch(/script exhausted/)
    // x-should-retry: false, so the SDK did not retry
    expect(server.requests).toHaveLength(2)
    expect(server.requests[1].outcome).toBe('exhausted')
  })

  it('rejects when the stream is cut mid-message', async () => {
    server = await startMessagesServer([{...reply(text('a long answer'), toolUse('LS', {path: '.'})), cutAfterEvents: 3}])
    const stream = client(server).messages.stream(base)
    const seen: string[] = []
    stream.on('streamEvent', (e) => seen.push(e.type))
    const err = await stream.finalMessage().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.AnthropicError)
    expect(String((err as Error).message)).toMatch(/terminated/)
    expect(seen).toEqual(['message_start', 'content_block_start', 'content_block_delta'])
    expect(server.requests[0].outcome).toBe('cut')
  })

  it('sends an SSE error event mid-stream', async () => {
    server = await startMessagesServer([{...reply(text('partial')), streamError: {afterEvents: 2}}])
    const err = await client(server).messages.stream(base).finalMessage().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.APIError)
    expect(String((err as Error).message)).toMatch(/overloaded_error|Overloaded/)
  })

  it('stalls, and a client timeout then retry consumes the next turn', async () => {
    server = await startMessagesServer([{stallMs: 2000}, reply(text('after stall'))])
    const c = new Anthropic({baseURL: server.url, apiKey: 'test-key', maxRetries: 1, timeout: 200})
    const msg = await c.messages.create(base)
    expect(msg.content).toEqual([{type: 'text', text: 'after stall'}])
    expect(server.requests).toHaveLength(2)
  })

  it('push() appends turns; ids are generated and unique', async () => {
    server = await startMessagesServer()
    server.push(reply(toolUse('A', {}), toolUse('B', {x: 1})))
    const msg = await client(server).messages.stream(base).finalMessage()
    const ids = msg.content.map((b) => (b.type === 'tool_use' ? b.id : ''))
    expect(new Set(ids).size).toBe(2)
    expect(msg.content.map((b) => (b.type === 'tool_use' ? b.input : null))).toEqual([{}, {x: 1}])
  })

  it('emits message_delta with usage and the documented event order', () => {
    const events = sseEvents({
      id: 'msg_01x',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{type: 'text', text: 'hello world'}],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {input_tokens: 1, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0},
    })
    expect(events.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(events.at(-2)).toMatchObject({usage: {output_tokens: 2}, delta: {stop_reason: 'end_turn'}})
  })
})
