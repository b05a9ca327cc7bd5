/**
 * The prompt cache as the Messages API keeps it, so that a request's usage says what it would cost:
 * `cache_read_input_tokens`, `cache_creation_input_tokens` and `input_tokens` by the documented rules,
 * with one cache per server, so successive requests and sessions read what earlier ones wrote.
 *
 * The rules (Anthropic's prompt-caching guide):
 * - The prompt is one prefix in the order tools → system → messages; each tool, each system text block
 *   and each content block of a message is a block (a string system or content is one block). A cache
 *   entry is the whole prefix up to and including a block, keyed by model: one character changed
 *   anywhere before a block changes every entry from it on.
 * - Only a block with `cache_control` (a breakpoint; at most four, checked in conformance.ts) or, with a
 *   top-level `cache_control` (automatic caching), the last block, writes an entry. A read happens at a
 *   breakpoint or at most 20 blocks before it (the lookback), at an entry an earlier request wrote; the
 *   longest such prefix is read, and the breakpoints after it write the rest.
 * - A prefix shorter than the model's minimum (below) is processed uncached, without error.
 * - An entry lives 5 minutes (`ttl: '1h'`: an hour) from its last write or read.
 * - usage: `cache_read_input_tokens` the prefix read, `cache_creation_input_tokens` what the request's
 *   breakpoints wrote beyond it (split by TTL in `cache_creation`), `input_tokens` everything after the
 *   last breakpoint that was cached (or all of it): the three add up to the prompt. The prompt ends
 *   with a few tokens that open the assistant's turn, after every block, so never cached: the API too
 *   reports a few `input_tokens` for a request whose last block is a breakpoint.
 *
 * - Tool search: a tool sent with `defer_loading: true` is not part of the prefix; a `tool_reference` to
 *   it (a tool_result's content) stands for its whole definition, there in the messages, so loading a
 *   tool adds its tokens to the newest turn and changes nothing before it.
 *
 * Token counts are an approximation, deterministic and documented: a block is ceil(its JSON, without
 * `cache_control`, in characters / 4) tokens. The real tokenizer differs; the rules do not.
 */
import {createHash} from 'node:crypto'

import {isObject} from './recorded.js'

/** How many blocks before a breakpoint the API looks for an entry an earlier request wrote. */
export const LOOKBACK_BLOCKS = 20
/** The tokens after the last block that open the assistant's turn (the API's template; never cached). */
export const TURN_OPENING_TOKENS = 3
const TTL_MS = {'1h': 60 * 60 * 1000, '5m': 5 * 60 * 1000} as const
type Ttl = keyof typeof TTL_MS

/**
 * The shortest prefix each model family caches, in tokens, as the guide lists them (the first match
 * wins; any other model: 1,024).
 */
const MINIMUMS: ReadonlyArray<[RegExp, number]> = [
  [/opus-4-[56]|haiku-4-5/, 4096],
  [/opus-4-7|haiku-3/, 2048],
  [/(opus|fable|mythos)-5/, 512],
]

export function minimumCacheable(model: string): number {
  return MINIMUMS.find(([family]) => family.test(model))?.[1] ?? 1024
}

export interface CacheUsage {
  input_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  cache_creation: {ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number}
}

interface PromptBlock {
  /** Tokens from the start of the prompt to the end of this block. */
  end: number
  /** The entry's key: the model and every block up to this one. */
  key: string
  /** Its `cache_control` TTL, when it is a breakpoint. */
  ttl?: Ttl
}

/** The server's prompt cache: entries by prefix, each with when it expires. */
export class PromptCache {
  private readonly entries = new Map<string, {expires: number; ttl: Ttl}>()

  constructor(private readonly now: () => number = Date.now) {}

  /** Reads and writes what a request's prefix finds and leaves, and says what it used. */
  account(body: Record<string, unknown>): CacheUsage {
    const blocks = promptBlocks(body)
    const total = blocks.at(-1)?.end ?? 0
    const now = this.now()
    const live = (key: string) => {
      const entry = this.entries.get(key)
      if (entry && entry.expires <= now) this.entries.delete(key)
      return entry && entry.expires > now ? entry : undefined
    }

    const breakpoints = blocks.flatMap((block, index) => (block.ttl ? [index] : []))
    // The longest prefix an earlier request wrote, found at a breakpoint or within the lookback before it.
    let read = -1
    for (const at of breakpoints) {
      for (let index = at; index >= Math.max(0, at - LOOKBACK_BLOCKS) && index > read; index--) {
        if (live(blocks[index].key)) {
          read = index
          break
        }
      }
    }

    if (read >= 0) {
      const entry = live(blocks[read].key)!
      entry.expires = now + TTL_MS[entry.ttl]
    }

    const readTokens = read >= 0 ? blocks[read].end : 0
    const minimum = minimumCacheable(String(body.model ?? ''))
    const creation = {ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0}
    let cachedTo = readTokens
    for (const at of breakpoints) {
      const block = blocks[at]
      if (block.end < minimum) continue
      const ttl = block.ttl!
      if (block.end > cachedTo) {
        creation[ttl === '1h' ? 'ephemeral_1h_input_tokens' : 'ephemeral_5m_input_tokens'] += block.end - cachedTo
        cachedTo = block.end
      }

      const entry = live(block.key)
      const keep = entry?.ttl === '1h' ? '1h' : ttl
      this.entries.set(block.key, {expires: now + TTL_MS[keep], ttl: keep})
    }

    const written = creation.ephemeral_1h_input_tokens + creation.ephemeral_5m_input_tokens
    return {
      cache_creation: creation,
      cache_creation_input_tokens: written,
      cache_read_input_tokens: readTokens,
      input_tokens: total + TURN_OPENING_TOKENS - readTokens - written,
    }
  }
}

/** The request's prompt as the cache sees it: its blocks in order, each with its prefix's key and tokens. */
function promptBlocks(body: Record<string, unknown>): PromptBlock[] {
  const raw: unknown[] = []
  const add = (content: unknown) => {
    if (Array.isArray(content)) raw.push(...content)
    else if (content !== undefined && content !== null) raw.push({text: content, type: 'text'})
  }

  const tools = Array.isArray(body.tools) ? body.tools : []
  // A deferred tool is not in the prompt: its definition counts where a tool_reference loads it (below).
  raw.push(...tools.filter((tool) => !(isObject(tool) && tool.defer_loading === true)))
  const definitions = new Map(tools.filter(isObject).map((tool) => [tool.name, tool]))
  add(body.system)
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) if (isObject(message)) add(message.content)
  }

  const automatic = isObject(body.cache_control) ? ttlOf(body.cache_control) : undefined
  const hash = createHash('sha256').update(String(body.model ?? ''))
  let end = 0
  return raw.map((block, index) => {
    // The key leaves out every cache_control (a tool result's inner blocks' too): moving a breakpoint changes
    // no prefix. A tool_reference stands for the definition it loads, inline.
    const text = JSON.stringify(block, (name, value) => (name === 'cache_control' ? undefined : referenced(value, definitions)))
    const mark = isObject(block) ? block.cache_control : undefined
    hash.update(text)
    end += Math.ceil(text.length / 4)
    const nested = isObject(block) && Array.isArray(block.content) ? block.content.find((inner) => isObject(inner) && isObject(inner.cache_control)) : undefined
    const ttl = isObject(mark) ? ttlOf(mark) : nested ? ttlOf(nested.cache_control) : index === raw.length - 1 ? automatic : undefined
    return {end, key: hash.copy().digest('hex'), ttl}
  })
}

/** A tool_reference as the prompt holds it: the referenced tool's definition in its place (defer_loading and cache_control aside). */
function referenced(value: unknown, definitions: ReadonlyMap<unknown, Record<string, unknown>>): unknown {
  if (!isObject(value) || value.type !== 'tool_reference') return value
  const {cache_control: _mark, defer_loading: _deferred, ...definition} = definitions.get(value.tool_name) ?? {}
  return {definition, type: 'tool_reference'}
}

function ttlOf(mark: unknown): Ttl {
  return isObject(mark) && mark.ttl === '1h' ? '1h' : '5m'
}
