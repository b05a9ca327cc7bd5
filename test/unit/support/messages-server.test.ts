import Anthropic from '@anthropic-ai/sdk'
import {afterEach, describe, expect, it} from 'vitest'

import {
  apiKeyOf,
  fault,
  reply,
  type MessagesServer,
  redactedThinking,
  signThinking,
  sseEvents,
  startMessagesServer,
  text,
  thinking,
  toolResults,
  toolUse,
} from '../../support/messages-server.js'

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
    expect([req.headers['x-api-key'], req.headers.authorization]).toContain(req.headers['x-api-key'] === undefined ? 'Bearer test-key' : 'test-key')
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
      (req) =>
        reply(
          text(
            `got ${toolResults(req)
              .map((r) => `${r.tool_use_id}=${r.text}`)
              .join(',')}`,
          ),
        ),
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
    server = await startMessagesServer([{content: [text('trunc')], stop_reason: 'max_tokens', usage: {input_tokens: 7, output_tokens: 3}}])
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
    const err = await client(server)
      .messages.create(base)
      .catch((e: unknown) => e)
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
    const err = await client(server)
      .messages.stream(base)
      .finalMessage()
      .catch((e: unknown) => e)
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

/** The API's 400 for a request, as the SDK raises it: status, error type and message. */
async function refusal(promise: Promise<unknown>): Promise<{status?: number; type?: string; message: string}> {
  const error = (await promise.then(
    () => {
      throw new Error('the request was accepted')
    },
    (e: unknown) => e,
  )) as InstanceType<typeof Anthropic.APIError>
  expect(error).toBeInstanceOf(Anthropic.BadRequestError)
  const body = error.error as {type: string; error: {type: string; message: string}}
  expect(body.type).toBe('error')
  return {message: body.error.message, status: error.status, type: body.error.type}
}

const user = (content: Anthropic.MessageParam['content']): Anthropic.MessageParam => ({content, role: 'user'})
const assistant = (content: Anthropic.MessageParam['content']): Anthropic.MessageParam => ({content, role: 'assistant'})

describe('messages server: the API rules, strictly', () => {
  it('answers 400 invalid_request_error for a whitespace-only or empty text block, consuming no turn', async () => {
    server = await startMessagesServer([reply(text('ok'))])
    const c = client(server)
    const whitespace = await refusal(
      c.messages.create({
        ...base,
        messages: [
          user('hi'),
          assistant([
            {text: ' \n', type: 'text'},
            {id: 'toolu_1', input: {}, name: 'LS', type: 'tool_use'},
          ]),
          user([{content: 'x', tool_use_id: 'toolu_1', type: 'tool_result'}]),
        ],
      }),
    )
    expect(whitespace).toEqual({message: 'messages: text content blocks must contain non-whitespace text', status: 400, type: 'invalid_request_error'})
    const empty = await refusal(c.messages.create({...base, messages: [user([{text: '', type: 'text'}])]}))
    expect(empty.message).toBe('messages: text content blocks must be non-empty')
    expect(server.remaining).toBe(1)
    expect(server.invalidRequests.map((r) => r.error)).toEqual([whitespace.message, empty.message])
    // A conforming request still gets the turn.
    expect((await c.messages.create(base)).content).toEqual([{text: 'ok', type: 'text'}])
  })

  it('requires alternating roles from a user turn, and content in all but a final assistant turn', async () => {
    server = await startMessagesServer([reply(text('continued'))])
    const c = client(server)
    expect((await refusal(c.messages.create({...base, messages: [user('a'), user('b')]}))).message).toMatch(/roles must alternate/)
    expect((await refusal(c.messages.create({...base, messages: [assistant('a')]}))).message).toMatch(/first message must use the "user" role/)
    expect((await refusal(c.messages.create({...base, messages: [user('a'), assistant([]), user('b')]}))).message).toMatch(
      /all messages must have non-empty content except for the optional final assistant message/,
    )
    expect((await refusal(c.messages.create({...base, messages: []}))).message).toMatch(/at least one message/)
    // A final assistant turn may be empty (a prefill).
    await c.messages.create({...base, messages: [user('a'), assistant([])]})
  })

  it('requires every tool_use answered first in the very next user message, ids unique, no stray results', async () => {
    server = await startMessagesServer([reply(text('fine'))])
    const c = client(server)
    const call = (id: string) => ({id, input: {}, name: 'LS', type: 'tool_use' as const})
    const result = (id: string) => ({content: 'r', tool_use_id: id, type: 'tool_result' as const})
    const missing = await refusal(c.messages.create({...base, messages: [user('a'), assistant([call('toolu_a'), call('toolu_b')]), user([result('toolu_a')])]}))
    expect(missing.message).toMatch(/^messages\.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b\./)
    const textFirst = await refusal(
      c.messages.create({...base, messages: [user('a'), assistant([call('toolu_a')]), user([{text: 'first', type: 'text'}, result('toolu_a')])]}),
    )
    expect(textFirst.message).toMatch(/toolu_a/)
    const stray = await refusal(
      c.messages.create({...base, messages: [user('a'), assistant([call('toolu_a')]), user([result('toolu_a'), result('toolu_zz')])]}),
    )
    expect(stray.message).toMatch(/unexpected `tool_use_id` found in `tool_result` blocks: toolu_zz/)
    const duplicate = await refusal(
      c.messages.create({
        ...base,
        messages: [user('a'), assistant([call('toolu_a')]), user([result('toolu_a')]), assistant([call('toolu_a')]), user([result('toolu_a')])],
      }),
    )
    expect(duplicate.message).toMatch(/`tool_use` ids must be unique/)
    // Results first, then text: accepted.
    await c.messages.create({
      ...base,
      messages: [user('a'), assistant([call('toolu_a'), call('toolu_b')]), user([result('toolu_b'), result('toolu_a'), {text: 'and', type: 'text'}])],
    })
    expect(server.messageRequests.map((r) => r.outcome)).toEqual(['invalid', 'invalid', 'invalid', 'invalid', 'reply'])
  })

  it('allows at most 4 cache_control breakpoints, a 1h TTL never after a 5m one', async () => {
    server = await startMessagesServer([reply(text('cached'))])
    const c = client(server)
    const marked = (t: string, ttl?: '5m' | '1h') => ({cache_control: {type: 'ephemeral' as const, ...(ttl ? {ttl} : {})}, text: t, type: 'text' as const})
    const five = await refusal(c.messages.create({...base, messages: [user([marked('a'), marked('b'), marked('c'), marked('d'), marked('e')])]}))
    expect(five.message).toBe('A maximum of 4 blocks with cache_control may be provided. Found 5.')
    const order = await refusal(c.messages.create({...base, messages: [user([marked('a', '1h')])], system: [marked('s', '5m')]}))
    expect(order.message).toMatch(/ttl='1h' cache_control block must not come after a ttl='5m'/)
    await c.messages.create({...base, messages: [user([marked('a', '5m')])], system: [marked('s', '1h')]})
  })

  it('holds max_tokens to the model limit and a thinking budget below max_tokens', async () => {
    server = await startMessagesServer([reply(text('thought'))])
    const c = client(server)
    const model = 'claude-opus-4-5'
    const tooMany = await refusal(c.messages.stream({...base, max_tokens: 64_001, model}).finalMessage())
    expect(tooMany.message).toBe('max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-opus-4-5')
    const budget = await refusal(c.messages.create({...base, max_tokens: 4000, model, thinking: {budget_tokens: 4000, type: 'enabled'}}))
    expect(budget.message).toMatch(/^`max_tokens` must be greater than `thinking.budget_tokens`/)
    const small = await refusal(c.messages.create({...base, max_tokens: 4000, model, thinking: {budget_tokens: 1000, type: 'enabled'}}))
    expect(small.message).toMatch(/budget_tokens: Input should be greater than or equal to 1024/)
    // What the model does not take: adaptive thinking, xhigh effort.
    expect((await refusal(c.messages.create({...base, model, thinking: {type: 'adaptive'}}))).message).toMatch(/"adaptive" is not supported/)
    expect((await refusal(c.messages.create({...base, model, output_config: {effort: 'xhigh'}}))).message).toMatch(/"xhigh" is not supported/)
    // A model the server does not know is taken as named, without limits.
    await c.messages.stream({...base, max_tokens: 500_000, thinking: {budget_tokens: 2000, type: 'enabled'}}).finalMessage()
    expect(server.messageRequests.at(-1)?.outcome).toBe('reply')
  })

  it('plans for 200k tokens unless the 1M beta is sent', async () => {
    server = await startMessagesServer([reply(text('long'))])
    const c = client(server)
    const big = {...base, messages: [user('x'.repeat(900_000))], model: 'claude-sonnet-5-5'}
    expect((await refusal(c.messages.create(big))).message).toMatch(/^prompt is too long: \d+ tokens > 200000 maximum$/)
    const msg = await c.messages.create(big, {headers: {'anthropic-beta': 'context-1m-2025-08-07'}})
    expect(msg.content).toEqual([{text: 'long', type: 'text'}])
  })
})

describe('messages server: what real models do', () => {
  it('streams signed thinking, redacted thinking and interleaved thinking between parallel tool calls', async () => {
    server = await startMessagesServer([
      reply(
        thinking('Let me look at both files.'),
        redactedThinking(),
        toolUse('Read', {file_path: 'a'}),
        thinking('And b too.'),
        toolUse('Read', {file_path: 'b'}),
      ),
      (req) => reply(text(`read ${toolResults(req).length}`)),
    ])
    const c = client(server)
    const request = {...base, model: 'claude-sonnet-5-5', thinking: {type: 'adaptive' as const}}
    const first = await c.messages.stream(request).finalMessage()
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use', 'thinking', 'tool_use'])
    const [think] = first.content
    if (think.type !== 'thinking') throw new Error('unreachable')
    expect(think.thinking).toBe('Let me look at both files.')
    expect(think.signature).toBe(signThinking('Let me look at both files.'))
    expect(first.stop_reason).toBe('tool_use')
    const ids = first.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []))
    const results = ids.map((id) => ({content: 'body', tool_use_id: id, type: 'tool_result' as const}))

    // Sent back unchanged: accepted.
    const second = await c.messages.create({...request, messages: [...request.messages, assistant(first.content), user(results)]})
    expect(second.content).toEqual([{text: 'read 2', type: 'text'}])
    server.push(reply(text('never')))

    // Changed, dropped or unsigned: refused.
    const edited = first.content.map((b) => (b.type === 'thinking' ? {...b, thinking: `${b.thinking}!`} : b))
    expect((await refusal(c.messages.create({...request, messages: [...request.messages, assistant(edited), user(results)]}))).message).toMatch(
      /^messages\.1\.content\.0: Invalid `signature` in `thinking` block$/,
    )
    const dropped = first.content.filter((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking')
    expect((await refusal(c.messages.create({...request, messages: [...request.messages, assistant(dropped), user(results)]}))).message).toMatch(
      /must start with a thinking block/,
    )
    const oneDropped = first.content.filter((b) => b.type !== 'redacted_thinking')
    expect((await refusal(c.messages.create({...request, messages: [...request.messages, assistant(oneDropped), user(results)]}))).message).toMatch(
      /cannot be modified/,
    )
    const forged = first.content.map((b) => (b.type === 'redacted_thinking' ? {...b, data: 'AAAA.BBBB'} : b))
    expect((await refusal(c.messages.create({...request, messages: [...request.messages, assistant(forged), user(results)]}))).message).toMatch(
      /Invalid `data` in `redacted_thinking` block/,
    )
    // With thinking off, the API ignores thinking blocks sent back.
    const off = await c.messages.create({...base, messages: [...request.messages, assistant(edited), user(results)], model: 'claude-sonnet-5-5'})
    expect(off.content).toEqual([{text: 'never', type: 'text'}])
  })

  it('cuts a thinking block at max_tokens before its signature, which the API then refuses', async () => {
    server = await startMessagesServer([reply(thinking('I was thinking ab', {cut: true}))])
    const c = client(server)
    const request = {...base, model: 'claude-sonnet-5-5', thinking: {type: 'adaptive' as const}}
    const msg = await c.messages.stream(request).finalMessage()
    expect(msg.stop_reason).toBe('max_tokens')
    expect(msg.content).toEqual([{signature: '', thinking: 'I was thinking ab', type: 'thinking'}])
    const sentBack = await refusal(c.messages.create({...request, messages: [...request.messages, assistant(msg.content), user('go on')]}))
    expect(sentBack.message).toBe('messages.1.content.0: Invalid `signature` in `thinking` block')
  })

  it('answers empty and whitespace-only text blocks, in JSON and SSE, as real models do', async () => {
    server = await startMessagesServer([reply(text(''), toolUse('LS', {path: '.'})), reply(text('\n\n'), toolUse('LS', {path: '.'}))])
    const c = client(server)
    const json = await c.messages.create(base)
    expect(json.content[0]).toEqual({text: '', type: 'text'})
    const sse = await c.messages.stream(base).finalMessage()
    expect(sse.content[0]).toEqual({text: '\n\n', type: 'text'})
    expect(sse.stop_reason).toBe('tool_use')
  })

  it('answers thinking in JSON too', async () => {
    server = await startMessagesServer([reply(thinking('plain json'), redactedThinking('opaque'), text('done'))])
    const msg = await client(server).messages.create(base)
    expect(msg.content).toEqual([
      {signature: signThinking('plain json'), thinking: 'plain json', type: 'thinking'},
      {data: 'opaque', type: 'redacted_thinking'},
      {text: 'done', type: 'text'},
    ])
  })
})

describe('messages server: models', () => {
  it('describes a model it serves with models.retrieve, 404 for one it does not, apart from the conversation requests', async () => {
    server = await startMessagesServer([], {
      models: [{effort: ['low', 'high'], id: 'claude-tiny', max_input_tokens: 50_000, max_tokens: 4096, thinking: ['enabled']}],
    })
    const c = client(server)
    const info = await c.models.retrieve('claude-tiny')
    expect(info).toMatchObject({id: 'claude-tiny', max_input_tokens: 50_000, max_tokens: 4096, type: 'model'})
    expect(info.capabilities?.thinking.types).toMatchObject({adaptive: {supported: false}, enabled: {supported: true}})
    expect(info.capabilities?.effort).toMatchObject({high: {supported: true}, max: {supported: false}, supported: true})
    const missing = await c.models.retrieve('claude-nope').catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(Anthropic.NotFoundError)
    expect((missing as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({error: {message: 'model: claude-nope', type: 'not_found_error'}})
    expect(server.modelRequests.map((r) => [r.path, r.status])).toEqual([
      ['/v1/models/claude-tiny', 200],
      ['/v1/models/claude-nope', 404],
    ])
    expect(server.requests).toEqual([])
    // Its limits hold on POST /v1/messages.
    expect((await refusal(c.messages.create({...base, max_tokens: 5000, model: 'claude-tiny'}))).message).toMatch(/5000 > 4096/)
  })

  it("serves the default catalogue, wave's default model included", async () => {
    server = await startMessagesServer()
    const info = await client(server).models.retrieve('claude-sonnet-5-5')
    expect(info.max_tokens).toBe(128_000)
    expect(info.capabilities?.thinking.types.adaptive.supported).toBe(true)
  })
})

describe('messages server: the module tree', () => {
  it('lists its catalogue on GET /v1/models', async () => {
    server = await startMessagesServer()
    const ids: string[] = []
    for await (const model of client(server).models.list()) ids.push(model.id)
    expect(ids).toEqual(['claude-sonnet-5-5', 'claude-opus-5-5', 'claude-opus-4-5', 'claude-haiku-4-5'])
    expect(server.modelRequests.map((r) => [r.path, r.status])).toEqual([['/v1/models', 200]])
  })

  it('bundles on the fly for the benchmarks (bench/lib/server.js) with the same exports, and serves a turn', async () => {
    // @ts-expect-error: bench/lib is plain JavaScript, type-checked by tsconfig.bench.json
    const {messagesServerModule} = await import('../../../bench/lib/server.js')
    const bundled = await messagesServerModule()
    const own = await import('../../support/messages-server.js')
    expect(Object.keys(bundled).sort()).toEqual(Object.keys(own).sort())
    server = await bundled.startMessagesServer([bundled.reply('from the bundle')])
    const message = await client(server as MessagesServer).messages.create(base)
    expect(message.content).toMatchObject([{text: 'from the bundle', type: 'text'}])
  })
})
