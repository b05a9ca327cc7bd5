/**
 * The scripted server's prompt cache (src/testing/cache.ts), driven through the real SDK: what each
 * request reads, writes and leaves uncached, by the API's rules.
 */
import Anthropic from '@anthropic-ai/sdk'
import type {MessageCreateParamsNonStreaming, MessageParam, Usage} from '@anthropic-ai/sdk/resources/messages'
import {afterEach, describe, expect, it} from 'vitest'

import {LOOKBACK_BLOCKS, type MessagesServer, minimumCacheable, reply, startMessagesServer, text} from '../../support/messages-server.js'

let server: MessagesServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const MODEL = 'claude-sonnet-5-5'
const mark = {cache_control: {type: 'ephemeral' as const}}
/** About 1,100 tokens of text (4 characters a token): a tool or system block over Sonnet's 1,024 alone. */
const page = (n: number) => `page ${n} `.padEnd(4400, '.')
const tools = [{description: page(0), input_schema: {properties: {}, type: 'object' as const}, name: 'Look', ...mark}]
const system = [{text: page(1), type: 'text' as const, ...mark}]

/** A conversation of `turns` user/assistant exchanges, the newest user block marked as a breakpoint. */
function conversation(turns: number, blockChars = 400): MessageParam[] {
  const messages: MessageParam[] = []
  for (let i = 0; i < turns; i++) {
    if (i > 0) messages.push({content: `answer ${i}`, role: 'assistant'})
    messages.push({content: [{text: `question ${i} `.padEnd(blockChars, '?'), type: 'text'}], role: 'user'})
  }
  const last = messages.at(-1)!.content as unknown as Array<Record<string, unknown>>
  last[last.length - 1] = {...last.at(-1), ...mark}
  return messages
}

async function ask(s: MessagesServer, params: Partial<MessageCreateParamsNonStreaming>): Promise<Usage> {
  s.push(reply(text('ok')))
  const client = new Anthropic({apiKey: 'test-key', baseURL: s.url, maxRetries: 0})
  const message = await client.messages.create({max_tokens: 100, messages: conversation(1), model: MODEL, system, tools, ...params})
  return message.usage
}

const prompt = (usage: Usage) => usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0)

describe('the scripted server prompt cache', () => {
  it('writes the prefix up to the last breakpoint, then reads it and writes only what a turn adds', async () => {
    server = await startMessagesServer()
    const first = await ask(server, {messages: conversation(1)})
    expect(first.cache_read_input_tokens).toBe(0)
    expect(first.cache_creation_input_tokens).toBeGreaterThan(2000)
    // After the last breakpoint only the turn's opening is left: a few tokens.
    expect(first.input_tokens).toBeLessThan(10)

    const second = await ask(server, {messages: conversation(2)})
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens)
    expect(second.cache_creation_input_tokens).toBe(prompt(second) - prompt(first))
    expect(second.input_tokens).toBe(first.input_tokens)
    // The same request again writes nothing.
    const again = await ask(server, {messages: conversation(2)})
    expect(again.cache_creation_input_tokens).toBe(0)
    expect(again.cache_read_input_tokens).toBe(prompt(second) - second.input_tokens)
    expect(server.messageRequests.map((r) => r.usage?.cache_read_input_tokens)).toEqual([0, first.cache_creation_input_tokens, again.cache_read_input_tokens])
  })

  it('keeps the prefix order tools → system → messages: a changed system block keeps only the tools', async () => {
    server = await startMessagesServer()
    await ask(server, {})
    const changed = await ask(server, {system: [{text: page(2), type: 'text', ...mark}]})
    const toolsOnly = await ask(server, {messages: [{content: 'hi', role: 'user'}], system: undefined})
    expect(changed.cache_read_input_tokens).toBe(toolsOnly.cache_read_input_tokens)
    expect(changed.cache_read_input_tokens).toBeGreaterThan(900)
    expect(changed.cache_read_input_tokens).toBeLessThan(1200)
    // Control: the unchanged system reads tools and system.
    const same = await ask(server, {})
    expect(same.cache_read_input_tokens).toBeGreaterThan(changed.cache_read_input_tokens! + 900)
  })

  it('reads nothing without a breakpoint, and writes nothing for another model', async () => {
    server = await startMessagesServer()
    const written = await ask(server, {})
    const unmarked = await ask(server, {messages: [{content: 'hello', role: 'user'}], system: page(1), tools: [{...tools[0], cache_control: undefined}]})
    expect(unmarked.cache_read_input_tokens).toBe(0)
    expect(unmarked.cache_creation_input_tokens).toBe(0)
    const other = await ask(server, {model: 'claude-opus-5-5'})
    expect(other.cache_read_input_tokens).toBe(0)
    expect(other.cache_creation_input_tokens).toBe(written.cache_creation_input_tokens)
  })

  it('caches automatically at the last block with a top-level cache_control', async () => {
    server = await startMessagesServer()
    const plain = {messages: [{content: page(3), role: 'user' as const}], system: page(1), tools: [{...tools[0], cache_control: undefined}]}
    const first = await ask(server, {...plain, cache_control: {type: 'ephemeral'}} as Partial<MessageCreateParamsNonStreaming>)
    expect(first.cache_creation_input_tokens).toBeGreaterThan(2500)
    const second = await ask(server, {...plain, cache_control: {type: 'ephemeral'}} as Partial<MessageCreateParamsNonStreaming>)
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens)
  })

  it('caches no prefix shorter than the model family minimum', async () => {
    expect(minimumCacheable('claude-opus-4-5')).toBe(4096)
    expect(minimumCacheable('claude-haiku-4-5')).toBe(4096)
    expect(minimumCacheable('claude-opus-4-7')).toBe(2048)
    expect(minimumCacheable('claude-sonnet-4-5')).toBe(1024)
    expect(minimumCacheable('claude-sonnet-5-5')).toBe(1024)
    expect(minimumCacheable('claude-opus-5-5')).toBe(512)
    server = await startMessagesServer()
    // About 2,300 tokens: under Opus 4.5's 4,096, over Sonnet's 1,024 (the control).
    const short = await ask(server, {model: 'claude-opus-4-5'})
    expect(short.cache_creation_input_tokens).toBe(0)
    expect(short.input_tokens).toBeGreaterThan(2000)
    expect((await ask(server, {model: 'claude-opus-4-5'})).cache_read_input_tokens).toBe(0)
    const long = await ask(server, {})
    expect(long.cache_creation_input_tokens).toBe(prompt(short) - long.input_tokens)
  })

  it(`looks back ${LOOKBACK_BLOCKS} blocks from a breakpoint for an earlier entry, and no further`, async () => {
    server = await startMessagesServer()
    const grown = (turns: number) => conversation(turns, 40)
    // Tools and system cached on their own, then a conversation of 1 turn.
    const first = await ask(server, {messages: grown(1)})
    // 10 more turns are 20 more blocks: the breakpoint still sees the first request's entry.
    const near = await ask(server, {messages: grown(1 + LOOKBACK_BLOCKS / 2)})
    expect(near.cache_read_input_tokens).toBe(first.cache_creation_input_tokens)
    // 11 turns past the entry it wrote, 22 blocks: out of reach, only the system's entry is read.
    const far = await ask(server, {messages: grown(1 + LOOKBACK_BLOCKS / 2 + 11)})
    expect(far.cache_read_input_tokens).toBeLessThan(first.cache_creation_input_tokens!)
    expect(far.cache_read_input_tokens).toBeGreaterThan(1900)
  })

  it('lets an entry expire after 5 minutes, an hour with ttl 1h, and a read renews it', async () => {
    let clock = 0
    server = await startMessagesServer([], {now: () => clock})
    const first = await ask(server, {})
    clock += 4 * 60_000
    expect((await ask(server, {})).cache_read_input_tokens).toBe(first.cache_creation_input_tokens)
    clock += 4 * 60_000 // 8 minutes after the write, 4 after the read
    expect((await ask(server, {})).cache_read_input_tokens).toBe(first.cache_creation_input_tokens)
    clock += 5 * 60_000 + 1
    const expired = await ask(server, {})
    expect(expired.cache_read_input_tokens).toBe(0)
    expect(expired.cache_creation_input_tokens).toBe(first.cache_creation_input_tokens)

    // A new system prompt under a 1h breakpoint: its write is an hour's, the newest turn's five minutes'.
    const hourMark = {cache_control: {ttl: '1h' as const, type: 'ephemeral' as const}}
    const hour = {system: [{text: page(5), type: 'text' as const, ...hourMark}], tools: [{...tools[0], ...hourMark}]}
    const long = await ask(server, hour)
    expect(long.cache_creation?.ephemeral_1h_input_tokens).toBeGreaterThan(900)
    expect(long.cache_creation?.ephemeral_5m_input_tokens).toBeGreaterThan(50)
    clock += 30 * 60_000
    expect((await ask(server, hour)).cache_read_input_tokens).toBeGreaterThan(1900)
  })

  it('refuses a fifth breakpoint, as the API does', async () => {
    server = await startMessagesServer()
    const messages: MessageParam[] = [{content: [1, 2, 3].map((n) => ({text: `part ${n}`, type: 'text' as const, ...mark})), role: 'user'}]
    await expect(ask(server, {messages})).rejects.toThrow(/A maximum of 4 blocks with cache_control may be provided\. Found 5\./)
    // Control: four are accepted.
    await expect(
      ask(server, {messages: [{content: [1, 2].map((n) => ({text: `part ${n}`, type: 'text' as const, ...mark})), role: 'user'}]}),
    ).resolves.toBeDefined()
  })
})

describe('the scripted server and deferred tools (tool search)', () => {
  /** A deferred tool of about 1,100 tokens, and a conversation whose tool_result loads `loads` by reference. */
  const deferred = {defer_loading: true, description: page(7), input_schema: {properties: {}, type: 'object' as const}, name: 'Later'}
  function loading(loads: string): MessageParam[] {
    return [
      {content: 'find a tool', role: 'user'},
      {content: [{id: 'toolu_1', input: {query: `select:${loads}`}, name: 'ToolSearch', type: 'tool_use'}], role: 'assistant'},
      {content: [{content: [{tool_name: loads, type: 'tool_reference'}], tool_use_id: 'toolu_1', type: 'tool_result', ...mark}], role: 'user'},
    ]
  }

  it('leaves a deferred tool out of the prefix, and counts its definition where a tool_reference loads it', async () => {
    server = await startMessagesServer()
    const without = await ask(server, {})
    const withDeferred = await ask(server, {tools: [...tools, deferred]})
    // The same prompt, read whole from what the first request wrote: the deferred tool is not in it.
    expect(prompt(withDeferred)).toBe(prompt(without))
    expect(withDeferred.cache_read_input_tokens).toBe(without.cache_creation_input_tokens)

    const before = await ask(server, {messages: loading('Later').slice(0, 1), tools: [...tools, deferred]})
    const loaded = await ask(server, {messages: loading('Later'), tools: [...tools, deferred]})
    // Loading it adds its definition's tokens to the newest turn, and changes nothing before it.
    expect(prompt(loaded) - prompt(before)).toBeGreaterThan(1100)
    expect(loaded.cache_read_input_tokens).toBe((before.cache_read_input_tokens ?? 0) + (before.cache_creation_input_tokens ?? 0))
    expect(loaded.cache_creation_input_tokens).toBeGreaterThan(1100)
  })

  it('refuses a tool_reference to a tool not in tools or not deferred, and tools that are all deferred', async () => {
    server = await startMessagesServer()
    const unknown = ask(server, {messages: loading('Elsewhere'), tools: [...tools, deferred]})
    await expect(unknown).rejects.toBeInstanceOf(Anthropic.ToolReferenceUnresolvedError)
    await expect(unknown).rejects.toMatchObject({errorCode: 'tool_reference_unresolved', status: 400})
    await expect(ask(server, {messages: loading('Look'), tools: [...tools, deferred]})).rejects.toThrow(
      /Tool reference 'Look' names a tool without `defer_loading`/,
    )
    await expect(ask(server, {tools: [{...tools[0], defer_loading: true}, deferred]})).rejects.toThrow(/All tools have defer_loading set/)
    // Control: a reference to a deferred tool of the request is taken.
    await expect(ask(server, {messages: loading('Later'), tools: [...tools, deferred]})).resolves.toBeDefined()
    expect(server.invalidRequests).toHaveLength(3)
  })
})
