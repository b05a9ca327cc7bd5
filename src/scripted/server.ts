/**
 * A local HTTP server speaking the Anthropic Messages API (`POST /v1/messages`, JSON or SSE), scripted
 * turn by turn, so tests exercise the real `@anthropic-ai/sdk` against canned model behaviour. It ships
 * in src/ because `wave demo` serves its scripted model with it; tests import it through
 * test/support/messages-server.ts, and bench/lib/server.js compiles this file. It imports nothing but
 * node's own modules, which the benchmarks rely on.
 *
 *   const server = await startMessagesServer([
 *     reply(text('Looking around.'), toolUse('Read', {file_path: 'README.md'})),
 *     (req) => reply(text(`saw ${toolResults(req).length} result(s)`)),
 *   ])
 *   // ANTHROPIC_BASE_URL=server.url ...
 *   await server.close()
 *
 * Each request to `POST /v1/messages` consumes one script entry (a turn), faults included. When the
 * script is exhausted the server answers 500 with an `api_error` saying "script exhausted" (and
 * `x-should-retry: false`, so the SDK does not retry it), so a test fails loudly instead of hanging.
 *
 * Model behaviour at the limits: `cutToolUse(...)` streams a tool call whose input stops mid-JSON (the
 * reply then stops at `max_tokens`), `{...reply('...'), stop_reason: 'refusal'}` refuses, and
 * `server.limitPrompt(bytes)` makes the server answer 400 "prompt is too long" to every request whose
 * body is larger, without consuming a turn, as the API does when a conversation outgrows the window.
 * Behaviour of real models: `thinking('...')` (signed; `{cut: true}` stops before its signature, at
 * max_tokens), `redactedThinking()`, thinking between tool calls, `text('')` and `text(' \n')` blocks,
 * several tool calls in one reply.
 *
 * The server is strict, always: before a request consumes a turn it is checked against the Messages
 * API's rules (checkRequest, below), and a request the real API would refuse is answered with the API's
 * 400 `invalid_request_error`, its message in the API's words, consuming no turn (outcome 'invalid').
 * So every test is also a conformance test of what wave sends. `GET /v1/models/{id}` answers from the
 * server's model catalogue (MODELS, or the `models` option), 404 for a model it does not know; those
 * look-ups are kept apart, in `modelRequests`, so counts of `requests` stay about the conversation.
 */
import {createHash, createHmac, randomBytes} from 'node:crypto'
import {createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import {performance} from 'node:perf_hooks'

// ---------------------------------------------------------------------------------------------- types

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal'

export interface TextBlock {
  type: 'text'
  text: string
}

export interface ToolUseBlock {
  type: 'tool_use'
  /** Generated (`toolu_01…`) when missing. */
  id?: string
  name: string
  input: unknown
  /** SSE: the input JSON as streamed instead of the whole of `input` (a call cut at max_tokens streams a prefix). */
  partialJson?: string
}

/** A thinking block: signed by the server unless `signature` is given; `cut` streams no signature (max_tokens). */
export interface ThinkingBlock {
  type: 'thinking'
  thinking: string
  signature?: string
  cut?: boolean
}

/** A redacted thinking block: opaque `data` the server issues and later recognises. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking'
  data?: string
}

export type Block = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock

export interface Usage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
}

export interface Reply {
  content: Block[]
  /** Default: `max_tokens` when a tool_use is cut (`cutToolUse`), `tool_use` when any block is a tool_use, else `end_turn`. */
  stop_reason?: StopReason
  /** E.g. `{type: 'refusal', category: 'cyber', explanation: null}` with `stop_reason: 'refusal'`. */
  stop_details?: {type: 'refusal'; category: string | null; explanation: string | null}
  /** Overrides the computed usage, field by field. */
  usage?: Partial<Usage>
  /** Default: echoes the request's `model`. */
  model?: string
  /** Default: generated `msg_01…`. */
  id?: string
  /** Wait this long before answering. */
  stallMs?: number
  /** SSE only: write the first n events, then destroy the socket (n = 0: headers only). JSON: reset the connection. */
  cutAfterEvents?: number
  /** SSE only: after n events, send an `event: error` (as the API does when overloaded mid-stream) and end. */
  streamError?: {afterEvents: number; type?: string; message?: string}
  /** SSE only: pause between events (default 0). */
  eventDelayMs?: number
  /** Extra response headers. */
  headers?: Record<string, string>
  /** SSE only: once the headers are out (the client's response has begun), wait for this before the events. */
  holdAfterHeaders?: () => Promise<unknown>
}

/** Answer with an HTTP error status and an Anthropic error body. */
export interface ErrorFault {
  status: number
  /** Default type from the status (429 rate_limit_error, 529 overloaded_error, 500 api_error, ...). */
  error?: {type?: string; message?: string}
  /** Extra response headers, e.g. `{'retry-after-ms': '10'}` or `{'x-should-retry': 'false'}`. */
  headers?: Record<string, string>
  stallMs?: number
}

/** Wait, then (if the client is still there) answer 500 `api_error` "stalled". Use for client timeouts. */
export interface StallFault {
  stallMs: number
}

export type StaticTurn = Reply | ErrorFault | StallFault
export type TurnFn = (request: RecordedRequest) => StaticTurn | Promise<StaticTurn>
export type Turn = StaticTurn | TurnFn

export interface RecordedRequest {
  /** 0-based position among all requests this server received. */
  index: number
  method: string
  /** Request path without the query string, e.g. `/v1/messages`. */
  path: string
  /** Parsed JSON body (undefined when the body was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: a request body is whatever JSON the client sent; tests read it freely
  body: any
  /** The body exactly as received. */
  rawBody: string
  /** As received, lower-cased names (includes `x-api-key` and `authorization` when sent). */
  headers: IncomingHttpHeaders
  /** `performance.now()` when the request body had been read. */
  receivedAt: number
  /** Whether the request asked for SSE (`stream: true`). */
  stream: boolean
  /**
   * What the server did: 'reply', 'error', 'cut', 'stream-error', 'stall', 'exhausted', 'bad-request',
   * 'invalid' (refused by the API's rules: see `error`), 'not-found', 'too-long', 'model' (a model look-up).
   */
  outcome?: string
  /** HTTP status answered (undefined when the connection was cut before headers). */
  status?: number
  /** The message of the 400 the server answered (outcome 'invalid', 'too-long', 'bad-request'). */
  error?: string
}

export interface MessagesServer {
  /** `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL` / `baseURL`. */
  readonly url: string
  readonly port: number
  /**
   * Every request received, in order (including ones answered with faults, refused as invalid, or
   * "script exhausted"), but the model look-ups (`GET /v1/models...`), which are in `modelRequests`.
   */
  readonly requests: RecordedRequest[]
  /** Only the `POST /v1/messages` requests. */
  readonly messageRequests: RecordedRequest[]
  /** The `GET /v1/models` and `GET /v1/models/{id}` requests, in order. */
  readonly modelRequests: RecordedRequest[]
  /** Requests refused by the API's rules (outcome 'invalid'), with their `error`. */
  readonly invalidRequests: RecordedRequest[]
  /** Turns not yet consumed. */
  readonly remaining: number
  /** Append turns to the script. */
  push(...turns: Turn[]): void
  /**
   * From now on, answer a request whose body is over `bytes` with 400 invalid_request_error "prompt is too
   * long: N tokens > M maximum" (a token being 4 bytes), consuming no turn; `undefined` lifts the limit.
   */
  limitPrompt(bytes: number | undefined): void
  close(): Promise<void>
}

// ---------------------------------------------------------------------------------------------- builders

export function text(t: string): TextBlock {
  return {type: 'text', text: t}
}

export function toolUse(name: string, input: unknown = {}, id?: string): ToolUseBlock {
  return id === undefined ? {type: 'tool_use', name, input} : {type: 'tool_use', id, name, input}
}

/**
 * A tool call cut at the output limit: its input streams only the first `keep` characters of its JSON
 * (default: half). A reply holding one stops at `max_tokens`, as the API's does.
 */
export function cutToolUse(name: string, input: unknown, keep?: number, id?: string): ToolUseBlock {
  const json = JSON.stringify(input)
  return {...toolUse(name, input, id), partialJson: json.slice(0, keep ?? Math.floor(json.length / 2))}
}

/** Thinking, signed when the reply is built; `{cut: true}`: stopped before its signature (the reply stops at max_tokens). */
export function thinking(t: string, options: {cut?: boolean; signature?: string} = {}): ThinkingBlock {
  return {type: 'thinking', thinking: t, ...options}
}

/** Redacted thinking (opaque data generated and signed by the server unless given). */
export function redactedThinking(data?: string): RedactedThinkingBlock {
  return data === undefined ? {type: 'redacted_thinking'} : {type: 'redacted_thinking', data}
}

/** `reply(text('hi'), toolUse('Read', {...}))`; strings are taken as text blocks. */
export function reply(...blocks: Array<Block | string>): Reply {
  return {content: blocks.map((b) => (typeof b === 'string' ? text(b) : b))}
}

/** An error fault, e.g. `fault(529)` or `fault(429, {headers: {'retry-after-ms': '10'}})`. */
export function fault(status: number, extra: Omit<ErrorFault, 'status'> = {}): ErrorFault {
  return {status, ...extra}
}

// ---------------------------------------------------------------------------------------------- request helpers

export interface ToolResult {
  tool_use_id: string
  content: unknown
  is_error?: boolean
  /** The tool result's text (string content, or its text blocks joined). */
  text: string
}

/** The tool_result blocks in the last user message of a recorded request. */
export function toolResults(request: RecordedRequest): ToolResult[] {
  const messages: unknown[] = Array.isArray(request.body?.messages) ? request.body.messages : []
  const last = [...messages].reverse().find((m) => isObject(m) && m.role === 'user')
  if (!isObject(last) || !Array.isArray(last.content)) return []
  return last.content
    .filter((b: unknown) => isObject(b) && b.type === 'tool_result')
    .map((b: Record<string, unknown>) => ({
      tool_use_id: String(b.tool_use_id),
      content: b.content,
      ...(b.is_error === undefined ? {} : {is_error: Boolean(b.is_error)}),
      text: contentText(b.content),
    }))
}

/** The API key a request carried: `x-api-key`, or the token of `Authorization: Bearer …` (what SDK 1.x sends). */
export function apiKeyOf(request: RecordedRequest): string | undefined {
  const key = request.headers['x-api-key']
  if (typeof key === 'string' && key) return key
  const auth = request.headers.authorization
  const m = typeof auth === 'string' ? /^Bearer\s+(.+)$/i.exec(auth) : null
  return m ? m[1] : undefined
}

/** The system prompt of a recorded request as one string (string or text blocks joined). */
export function systemText(request: RecordedRequest): string {
  return contentText(request.body?.system)
}

/** Names of the tools offered in a recorded request. */
export function toolNames(request: RecordedRequest): string[] {
  const tools: unknown[] = Array.isArray(request.body?.tools) ? request.body.tools : []
  return tools.filter(isObject).map((t) => String(t.name))
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .filter((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => (b as {text: string}).text)
    .join('\n')
}

// biome-ignore lint/suspicious/noExplicitAny: a request body is whatever JSON the client sent; tests read it freely
function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null
}

// ---------------------------------------------------------------------------------------------- models

export type Effort = 'low' | 'medium' | 'high' | 'xhigh' | 'max'

/** A model the server serves: its limits and what its requests may ask for. */
export interface ServedModel {
  id: string
  display_name?: string
  /** The largest window: beyond 200k tokens only with the `context-1m-2025-08-07` beta. */
  max_input_tokens: number
  /** The largest `max_tokens`. */
  max_tokens: number
  /** The `thinking.type` values accepted besides `disabled`. */
  thinking: Array<'adaptive' | 'enabled'>
  /** Effort levels accepted in `output_config.effort` (none: effort is not supported). */
  effort: Effort[]
}

/** The 1M-token window beta, and the window without it. */
export const CONTEXT_1M_BETA = 'context-1m-2025-08-07'
export const STANDARD_WINDOW = 200_000

const ALL_EFFORTS: Effort[] = ['low', 'medium', 'high', 'xhigh', 'max']

/**
 * The models the scripted server knows (a few, as the API would describe them); any other model ID is
 * accepted on `POST /v1/messages` without limits (tests name models freely) and is a 404 on `GET /v1/models/{id}`.
 */
export const MODELS: readonly ServedModel[] = [
  {effort: ALL_EFFORTS, id: 'claude-sonnet-5-5', max_input_tokens: 1_000_000, max_tokens: 128_000, thinking: ['adaptive', 'enabled']},
  {effort: ALL_EFFORTS, id: 'claude-opus-5-5', max_input_tokens: 1_000_000, max_tokens: 128_000, thinking: ['adaptive', 'enabled']},
  {effort: ['low', 'medium', 'high'], id: 'claude-opus-4-5', max_input_tokens: 200_000, max_tokens: 64_000, thinking: ['enabled']},
  {effort: [], id: 'claude-haiku-4-5', max_input_tokens: 200_000, max_tokens: 64_000, thinking: ['enabled']},
]

/** The API's description of a model (`GET /v1/models/{id}`), as SDK 1.x types it (ModelInfo). */
export function modelInfo(model: ServedModel): Record<string, unknown> {
  const supported = (yes: boolean) => ({supported: yes})
  return {
    capabilities: {
      batch: supported(true),
      citations: supported(true),
      code_execution: supported(false),
      context_management: {clear_thinking_20251015: null, clear_tool_uses_20250919: null, compact_20260112: null, supported: false},
      effort: {
        high: supported(model.effort.includes('high')),
        low: supported(model.effort.includes('low')),
        max: supported(model.effort.includes('max')),
        medium: supported(model.effort.includes('medium')),
        supported: model.effort.length > 0,
        xhigh: supported(model.effort.includes('xhigh')),
      },
      image_input: supported(true),
      pdf_input: supported(true),
      server_tools: {code_execution: supported(false), supported: false, web_search: supported(false)},
      structured_outputs: supported(true),
      thinking: {
        supported: model.thinking.length > 0,
        types: {
          adaptive: supported(model.thinking.includes('adaptive')),
          between_tools: supported(false),
          disabled: supported(true),
          enabled: supported(model.thinking.includes('enabled')),
        },
      },
    },
    created_at: '2026-01-01T00:00:00Z',
    deprecated_at: null,
    display_name: model.display_name ?? model.id,
    id: model.id,
    lifecycle: 'active',
    line: /-(haiku|sonnet|opus|fable|mythos)-/.exec(model.id)?.[1] ?? null,
    max_input_tokens: model.max_input_tokens,
    max_tokens: model.max_tokens,
    retires_at: null,
    type: 'model',
  }
}

// ---------------------------------------------------------------------------------------------- signatures

/**
 * Thinking signatures and redacted data are self-verifying (an HMAC under a key of this module), so a
 * block sent back is recognised as one this server issued, unchanged, even by another server instance
 * in the same or a later process (a resumed session talks to a new server).
 */
const SIGNING_KEY = 'wave scripted messages server: thinking signatures'

function mac(kind: string, payload: string): string {
  return createHmac('sha256', SIGNING_KEY).update(`${kind}\0${payload}`).digest('base64')
}

/** The signature the server gives a thinking block with this text. */
export function signThinking(thinkingText: string): string {
  return `Er${mac('thinking', thinkingText)}`
}

function newRedactedData(): string {
  const payload = randomBytes(24).toString('base64')
  return `${payload}.${mac('redacted', payload)}`
}

function validThinking(block: Record<string, unknown>): boolean {
  return typeof block.signature === 'string' && typeof block.thinking === 'string' && block.signature === signThinking(block.thinking)
}

function validRedacted(block: Record<string, unknown>): boolean {
  if (typeof block.data !== 'string') return false
  const at = block.data.lastIndexOf('.')
  return at > 0 && block.data.slice(at + 1) === mac('redacted', block.data.slice(0, at))
}

/** A stable key for a thinking or redacted block, to compare what was issued with what came back. */
function thinkingKey(block: Record<string, unknown>): string {
  return block.type === 'redacted_thinking'
    ? `r:${String(block.data)}`
    : `t:${createHash('sha256').update(String(block.thinking)).digest('base64')}:${String(block.signature)}`
}

// ---------------------------------------------------------------------------------------------- conformance

export interface CheckContext {
  /** The served model named by the request, if the server knows it. */
  model?: ServedModel
  /** The request's `anthropic-beta` values. */
  betas: string[]
  /** Thinking blocks (keys) the server issued with each tool_use id: a turn mid-tool-loop must send them back. */
  issuedThinking?: ReadonlyMap<string, string[]>
}

const THINKING_DOC = 'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking'

/**
 * The first rule of the Messages API a request breaks, in the API's words, or undefined when the real
 * API would take it: roles alternating from a user turn; no empty message but a final assistant one;
 * text blocks non-empty and not whitespace only; each tool_use answered by its tool_result in the very
 * next user message, results first; ids unique; thinking blocks signed and unchanged when thinking is
 * on (and a turn mid-tool-loop keeping the thinking it was issued with); at most 4 cache_control
 * breakpoints, a 1h TTL never after a 5m one; max_tokens within the model's limit; thinking and effort
 * the model takes, a budget of at least 1024 below max_tokens.
 */
export function checkRequest(body: Record<string, unknown>, context: CheckContext): string | undefined {
  const model = context.model
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required'
  const maxTokens = body.max_tokens
  if (maxTokens === undefined) return 'max_tokens: Field required'
  if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1) return 'max_tokens: Input should be a valid integer greater than or equal to 1'
  if (model && (maxTokens as number) > model.max_tokens) {
    return `max_tokens: ${maxTokens} > ${model.max_tokens}, which is the maximum allowed number of output tokens for ${model.id}`
  }

  const thinkingProblem = checkThinkingConfig(body, maxTokens as number, model)
  if (thinkingProblem) return thinkingProblem
  const thinkingOn = isObject(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive')

  const cacheProblem = checkCacheControl(body)
  if (cacheProblem) return cacheProblem

  if (Array.isArray(body.tools)) {
    const names = body.tools.filter(isObject).map((t) => t.name)
    if (new Set(names).size !== names.length) return 'tools: Tool names must be unique.'
  }

  if (body.system !== undefined) {
    const problem = checkTextContent(body.system, 'system')
    if (problem) return problem
  }

  const messages = body.messages
  if (!Array.isArray(messages)) return 'messages: Field required'
  if (messages.length === 0) return 'messages: at least one message is required'
  const seenToolUse = new Set<string>()
  for (const [i, message] of messages.entries()) {
    const at = `messages.${i}`
    if (!isObject(message)) return `${at}: Input should be a valid dictionary`
    if (message.role !== 'user' && message.role !== 'assistant') return `${at}.role: Input should be 'user' or 'assistant'`
    if (i === 0 && message.role !== 'user') return 'messages: first message must use the "user" role'
    if (i > 0 && messages[i - 1].role === message.role) {
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`
    }

    const content = message.content
    const isFinalAssistant = i === messages.length - 1 && message.role === 'assistant'
    if (typeof content !== 'string' && !Array.isArray(content)) return `${at}.content: Field required`
    if ((typeof content === 'string' ? content.length === 0 : content.length === 0) && !isFinalAssistant) {
      return `${at}: all messages must have non-empty content except for the optional final assistant message`
    }

    const problem = checkTextContent(content, `${at}.content`)
    if (problem) return problem
    if (!Array.isArray(content)) continue

    for (const [j, block] of content.entries()) {
      if (!isObject(block)) return `${at}.content.${j}: Input should be a valid dictionary`
      const where = `${at}.content.${j}`
      if (block.type === 'tool_use') {
        if (message.role !== 'assistant') return `${where}: tool_use blocks may only appear in assistant messages`
        if (typeof block.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(block.id)) return `${where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`
        if (seenToolUse.has(block.id)) return `${where}: \`tool_use\` ids must be unique`
        seenToolUse.add(block.id)
      }

      if ((block.type === 'thinking' || block.type === 'redacted_thinking') && message.role !== 'assistant') {
        return `${where}: thinking blocks may only appear in assistant messages`
      }

      if (block.type === 'thinking' && thinkingOn) {
        if (block.signature === undefined) return `${where}.thinking.signature: Field required`
        if (!validThinking(block)) return `${where}: Invalid \`signature\` in \`thinking\` block`
      }

      if (block.type === 'redacted_thinking' && thinkingOn && !validRedacted(block)) {
        return `${where}: Invalid \`data\` in \`redacted_thinking\` block`
      }
    }

    const problemWithTools = message.role === 'assistant' ? checkToolResultsAfter(messages, i) : checkToolResultsBefore(messages, i)
    if (problemWithTools) return problemWithTools
  }

  if (thinkingOn) {
    const problem = checkThinkingKept(messages, context.issuedThinking)
    if (problem) return problem
  }

  const window = model ? (context.betas.includes(CONTEXT_1M_BETA) ? model.max_input_tokens : Math.min(model.max_input_tokens, STANDARD_WINDOW)) : undefined
  if (window !== undefined) {
    const tokens = Math.ceil(JSON.stringify({messages: body.messages, system: body.system, tools: body.tools}).length / 4)
    if (tokens > window) return `prompt is too long: ${tokens} tokens > ${window} maximum`
  }

  return undefined
}

function checkThinkingConfig(body: Record<string, unknown>, maxTokens: number, model: ServedModel | undefined): string | undefined {
  const config = body.thinking
  if (config !== undefined) {
    if (!isObject(config)) return 'thinking: Input should be a valid dictionary'
    const type = config.type
    if (type !== 'enabled' && type !== 'adaptive' && type !== 'disabled' && type !== 'between_tools') {
      return "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive', 'between_tools'"
    }

    if (type === 'enabled') {
      if (!Number.isInteger(config.budget_tokens)) return 'thinking.enabled.budget_tokens: Field required'
      if ((config.budget_tokens as number) < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'
      if ((config.budget_tokens as number) >= maxTokens)
        return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. ${THINKING_DOC}#max-tokens-and-context-window-size`
    }

    if (model && (type === 'enabled' || type === 'adaptive') && !model.thinking.includes(type)) {
      return `thinking.type: "${type}" is not supported by this model (${model.id}).`
    }

    if ((type === 'enabled' || type === 'adaptive') && body.temperature !== undefined && body.temperature !== 1) {
      return '`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.'
    }
  }

  const outputConfig = body.output_config
  if (isObject(outputConfig) && outputConfig.effort !== undefined && outputConfig.effort !== null) {
    const effort = outputConfig.effort as Effort
    if (!ALL_EFFORTS.includes(effort)) return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    if (model && !model.effort.includes(effort)) {
      return model.effort.length === 0
        ? `output_config.effort: This model (${model.id}) does not support the effort parameter.`
        : `output_config.effort: "${effort}" is not supported by this model (${model.id}); supported: ${model.effort.join(', ')}.`
    }
  }

  return undefined
}

/** Text blocks in a content (or system) array, or a string content: never empty, never whitespace only. */
function checkTextContent(content: unknown, at: string): string | undefined {
  // An empty string is an empty message, which the caller judges (allowed for a final assistant turn).
  const blocks = typeof content === 'string' ? (content ? [{text: content, type: 'text'}] : []) : Array.isArray(content) ? content : []
  const where = at.startsWith('system') ? 'system' : 'messages'
  for (const block of blocks) {
    if (!isObject(block)) continue
    if (block.type === 'text') {
      if (typeof block.text !== 'string' || block.text.length === 0) return `${where}: text content blocks must be non-empty`
      if (block.text.trim() === '') return `${where}: text content blocks must contain non-whitespace text`
    }

    if (block.type === 'tool_result' && Array.isArray(block.content)) {
      const problem = checkTextContent(block.content, at)
      if (problem) return problem
    }
  }

  return undefined
}

/** An assistant message's tool_use ids must all be answered by tool_result blocks, first, in the next message. */
function checkToolResultsAfter(messages: unknown[], i: number): string | undefined {
  const message = messages[i] as Record<string, unknown>
  const ids = Array.isArray(message.content) ? message.content.filter((b) => isObject(b) && b.type === 'tool_use').map((b) => String(b.id)) : []
  if (ids.length === 0 || i === messages.length - 1) return undefined
  const next = messages[i + 1] as Record<string, unknown>
  const nextContent = Array.isArray(next.content) ? next.content : []
  // Results first: only the leading run of tool_result blocks counts as "immediately after".
  const leading: string[] = []
  for (const block of nextContent) {
    if (!isObject(block) || block.type !== 'tool_result') break
    leading.push(String(block.tool_use_id))
  }

  const missing = ids.filter((id) => !leading.includes(id))
  if (missing.length === 0) return undefined
  return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
}

/** A user message's tool_result blocks must each answer a tool_use of the message before, once. */
function checkToolResultsBefore(messages: unknown[], i: number): string | undefined {
  const message = messages[i] as Record<string, unknown>
  if (!Array.isArray(message.content)) return undefined
  const previous = i > 0 ? (messages[i - 1] as Record<string, unknown>) : undefined
  const ids = new Set(
    previous && Array.isArray(previous.content) ? previous.content.filter((b) => isObject(b) && b.type === 'tool_use').map((b) => String(b.id)) : [],
  )
  const answered = new Set<string>()
  for (const [j, block] of message.content.entries()) {
    if (!isObject(block) || block.type !== 'tool_result') continue
    const id = String(block.tool_use_id)
    if (!ids.has(id)) {
      return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
    }

    if (answered.has(id)) return `messages.${i}.content.${j}: each \`tool_use\` id may be answered by only one \`tool_result\` block: ${id}`
    answered.add(id)
  }

  return undefined
}

/**
 * With thinking on, the last assistant turn of an ongoing tool loop (the final user message holds tool
 * results) is sent back with the thinking it was issued with, unchanged and in order, first.
 */
function checkThinkingKept(messages: unknown[], issued: ReadonlyMap<string, string[]> | undefined): string | undefined {
  if (!issued || messages.length < 2) return undefined
  const last = messages.at(-1) as Record<string, unknown>
  if (last.role !== 'user' || !Array.isArray(last.content) || !last.content.some((b) => isObject(b) && b.type === 'tool_result')) return undefined
  const index = messages.length - 2
  const turn = messages[index] as Record<string, unknown>
  if (!Array.isArray(turn.content)) return undefined
  const blocks = turn.content.filter(isObject)
  const toolUse = blocks.find((b) => b.type === 'tool_use')
  const expected = toolUse ? issued.get(String(toolUse.id)) : undefined
  if (!expected || expected.length === 0) return undefined
  const first = blocks[0]
  if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
    return `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. ${THINKING_DOC}`
  }

  const sent = blocks.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking').map(thinkingKey)
  if (sent.length !== expected.length || sent.some((key, k) => key !== expected[k])) {
    return `messages.${index}.content: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`
  }

  return undefined
}

/** At most 4 blocks with cache_control (tools, then system, then messages), and a 1h TTL never after a 5m one. */
function checkCacheControl(body: Record<string, unknown>): string | undefined {
  const marks: unknown[] = []
  const collect = (blocks: unknown) => {
    if (!Array.isArray(blocks)) return
    for (const block of blocks) {
      if (!isObject(block)) continue
      if (block.cache_control !== undefined && block.cache_control !== null) marks.push(block.cache_control)
      if (block.type === 'tool_result') collect(block.content)
    }
  }

  collect(body.tools)
  collect(body.system)
  if (Array.isArray(body.messages)) for (const message of body.messages) if (isObject(message)) collect(message.content)
  if (marks.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${marks.length}.`
  let seenShort = false
  for (const mark of marks) {
    if (!isObject(mark) || mark.type !== 'ephemeral') return "cache_control.type: Input should be 'ephemeral'"
    const ttl = mark.ttl ?? '5m'
    if (ttl !== '5m' && ttl !== '1h') return "cache_control.ttl: Input should be '5m' or '1h'"
    if (ttl === '1h' && seenShort) {
      return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`."
    }

    if (ttl === '5m') seenShort = true
  }

  return undefined
}

// ---------------------------------------------------------------------------------------------- server

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  408: 'timeout_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'api_error',
  529: 'overloaded_error',
}

function isErrorFault(t: StaticTurn): t is ErrorFault {
  return typeof (t as ErrorFault).status === 'number'
}

function isReply(t: StaticTurn): t is Reply {
  return Array.isArray((t as Reply).content)
}

export interface ServerOptions {
  /** The models the server knows, in place of MODELS (their limits are enforced; others are accepted as named). */
  models?: readonly ServedModel[]
}

export async function startMessagesServer(script: Turn[] = [], options: ServerOptions = {}): Promise<MessagesServer> {
  const queue: Turn[] = [...script]
  const requests: RecordedRequest[] = []
  const modelRequests: RecordedRequest[] = []
  const models = new Map((options.models ?? MODELS).map((m) => [m.id, m]))
  /** The thinking blocks (keys) issued in the same message as each tool_use id. */
  const issuedThinking = new Map<string, string[]>()
  const sockets = new Set<Socket>()
  let seq = 0
  let closed = false
  let promptLimit: number | undefined
  const wakers = new Set<() => void>()
  /** A sleep that close() cuts short, so a stalled turn never keeps the process alive. */
  const stall = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        wakers.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      wakers.add(wake)
    })

  const nextId = (prefix: string) => `${prefix}${(++seq).toString(36).toUpperCase().padStart(22, '0')}`

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      // A bug in a turn function or here: answer 500 so the test sees it, never hang.
      if (!res.headersSent && !res.destroyed) {
        const detail = err instanceof Error ? (err.stack ?? err.message) : String(err)
        sendError(res, 500, 'api_error', `messages-server: turn failed: ${detail}`, {'x-should-retry': 'false'})
      } else {
        res.destroy()
      }
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  function sendError(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}) {
    const requestId = nextId('req_01')
    const body = JSON.stringify({type: 'error', error: {type, message}, request_id: requestId})
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'request-id': requestId,
      ...headers,
    })
    res.end(body)
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const rawBody = Buffer.concat(chunks).toString('utf8')
    // biome-ignore lint/suspicious/noExplicitAny: a request body is whatever JSON the client sent; tests read it freely
    let body: any
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined
    } catch {
      body = undefined
    }
    const path = (req.url ?? '/').split('?')[0]
    const isModelLookup = (req.method ?? 'GET') === 'GET' && /^\/v1\/models(?:\/|$)/.test(path)
    const record: RecordedRequest = {
      index: isModelLookup ? modelRequests.length : requests.length,
      method: req.method ?? 'GET',
      path,
      body,
      rawBody,
      headers: req.headers,
      receivedAt: performance.now(),
      stream: isObject(body) && body.stream === true,
    }
    ;(isModelLookup ? modelRequests : requests).push(record)
    const done = (outcome: string, status?: number) => {
      record.outcome = outcome
      record.status = status
    }

    if (isModelLookup) {
      const id = decodeURIComponent(path.slice('/v1/models/'.length))
      if (path === '/v1/models' || path === '/v1/models/') {
        const data = [...models.values()].map(modelInfo)
        const json = JSON.stringify({data, first_id: data[0]?.id ?? null, has_more: false, last_id: data.at(-1)?.id ?? null})
        done('model', 200)
        res.writeHead(200, {'content-length': Buffer.byteLength(json), 'content-type': 'application/json', 'request-id': nextId('req_01')})
        res.end(json)
        return
      }

      const model = models.get(id)
      if (!model) {
        done('not-found', 404)
        sendError(res, 404, 'not_found_error', `model: ${id}`)
        return
      }

      const json = JSON.stringify(modelInfo(model))
      done('model', 200)
      res.writeHead(200, {'content-length': Buffer.byteLength(json), 'content-type': 'application/json', 'request-id': nextId('req_01')})
      res.end(json)
      return
    }

    if (record.method !== 'POST' || path !== '/v1/messages') {
      done('not-found', 404)
      sendError(res, 404, 'not_found_error', `messages-server: no route for ${record.method} ${path}`)
      return
    }
    if (!isObject(body)) {
      done('bad-request', 400)
      record.error = 'messages-server: request body is not a JSON object'
      sendError(res, 400, 'invalid_request_error', record.error)
      return
    }

    // The API's rules, before anything else: a refused request consumes no turn, as it reaches no model.
    const betas = String(req.headers['anthropic-beta'] ?? '')
      .split(',')
      .map((b) => b.trim())
      .filter(Boolean)
    const invalid = checkRequest(body, {betas, issuedThinking, model: models.get(String(body.model))})
    if (invalid) {
      done('invalid', 400)
      record.error = invalid
      sendError(res, 400, 'invalid_request_error', invalid)
      return
    }

    if (promptLimit !== undefined && rawBody.length > promptLimit) {
      done('too-long', 400)
      const tokens = Math.ceil(rawBody.length / 4)
      record.error = `prompt is too long: ${tokens} tokens > ${Math.floor(promptLimit / 4)} maximum`
      sendError(res, 400, 'invalid_request_error', record.error)
      return
    }

    const entry = queue.shift()
    if (entry === undefined) {
      done('exhausted', 500)
      sendError(res, 500, 'api_error', `messages-server: script exhausted (request #${record.index + 1} had no scripted turn)`, {'x-should-retry': 'false'})
      return
    }
    const turn = typeof entry === 'function' ? await entry(record) : entry

    if (turn.stallMs && turn.stallMs > 0) {
      await stall(turn.stallMs)
      if (closed || res.destroyed || req.socket.destroyed) {
        done('stall')
        return
      }
    }

    if (isErrorFault(turn)) {
      const status = turn.status
      done('error', status)
      sendError(res, status, turn.error?.type ?? ERROR_TYPES[status] ?? 'api_error', turn.error?.message ?? `messages-server: scripted ${status}`, turn.headers)
      return
    }

    if (!isReply(turn)) {
      done('stall', 500)
      sendError(res, 500, 'api_error', 'messages-server: stalled turn (no reply scripted)')
      return
    }

    const message = buildMessage(turn, record)
    const extraHeaders = turn.headers ?? {}

    if (!record.stream) {
      if (turn.cutAfterEvents !== undefined) {
        done('cut')
        res.destroy()
        return
      }
      // JSON carries the whole input of a cut call: only a stream can show where it was cut.
      const json = JSON.stringify({...message, content: message.content.map(({cut, partialJson, ...block}: Record<string, unknown>) => block)})
      const requestId = nextId('req_01')
      done('reply', 200)
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(json),
        'request-id': requestId,
        ...extraHeaders,
      })
      res.end(json)
      return
    }

    // ---- SSE
    const events = sseEvents(message)
    const requestId = nextId('req_01')
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'request-id': requestId,
      ...extraHeaders,
    })
    res.flushHeaders()
    await turn.holdAfterHeaders?.()
    const cutAt = turn.cutAfterEvents
    const errorAt = turn.streamError?.afterEvents
    for (let i = 0; i <= events.length; i++) {
      if (cutAt !== undefined && i === cutAt) {
        done('cut', 200)
        res.socket?.destroy()
        res.destroy()
        return
      }
      if (errorAt !== undefined && i === errorAt) {
        done('stream-error', 200)
        const type = turn.streamError?.type ?? 'overloaded_error'
        const err = {type: 'error', error: {type, message: turn.streamError?.message ?? 'Overloaded'}}
        res.end(`event: error\ndata: ${JSON.stringify(err)}\n\n`)
        return
      }
      if (i === events.length) break
      if (res.destroyed || closed) {
        done('cut', 200)
        return
      }
      const ev = events[i]
      // Wait until each event is handed to the OS, so a cut that follows cannot drop it.
      await new Promise<void>((resolve) => res.write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`, () => resolve()))
      if (turn.eventDelayMs) await stall(turn.eventDelayMs)
    }
    done('reply', 200)
    res.end()
  }

  function buildMessage(turn: Reply, record: RecordedRequest): ApiMessage {
    const content: ApiMessage['content'] = turn.content.map((b) => {
      switch (b.type) {
        case 'tool_use': {
          return {
            type: 'tool_use' as const,
            id: b.id ?? nextId('toolu_01'),
            name: b.name,
            input: b.input ?? {},
            ...(b.partialJson === undefined ? {} : {partialJson: b.partialJson}),
          }
        }

        case 'thinking': {
          // A block cut at max_tokens ends before its signature arrives.
          const signature = b.cut ? '' : (b.signature ?? signThinking(b.thinking))
          return {type: 'thinking' as const, thinking: b.thinking, signature, ...(b.cut ? {cut: true} : {})}
        }

        case 'redacted_thinking': {
          return {type: 'redacted_thinking' as const, data: b.data ?? newRedactedData()}
        }

        default: {
          return {type: 'text' as const, text: b.text}
        }
      }
    })
    // A turn mid-tool-loop must come back with its thinking: remember what each call was issued with.
    const issued = content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking').map((b) => thinkingKey(b))
    for (const block of content) if (block.type === 'tool_use') issuedThinking.set(block.id, issued)
    const cut = turn.content.some((b) => (b.type === 'tool_use' && b.partialJson !== undefined) || (b.type === 'thinking' && b.cut))
    const stop_reason: StopReason = turn.stop_reason ?? (cut ? 'max_tokens' : content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
    const usage: Usage = {
      input_tokens: Math.max(1, Math.ceil(record.rawBody.length / 4)),
      output_tokens: Math.max(1, Math.ceil(JSON.stringify(content).length / 4)),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      ...turn.usage,
    }
    return {
      id: turn.id ?? nextId('msg_01'),
      type: 'message' as const,
      role: 'assistant' as const,
      model: turn.model ?? (typeof record.body.model === 'string' ? record.body.model : 'claude-test'),
      content,
      stop_reason,
      stop_sequence: null,
      stop_details: turn.stop_details ?? null,
      container: null,
      usage,
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    modelRequests,
    get messageRequests() {
      return requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages')
    },
    get invalidRequests() {
      return requests.filter((r) => r.outcome === 'invalid')
    },
    get remaining() {
      return queue.length
    },
    push(...turns: Turn[]) {
      queue.push(...turns)
    },
    limitPrompt(bytes: number | undefined) {
      promptLimit = bytes
    },
    close() {
      if (closed) return Promise.resolve()
      closed = true
      for (const wake of [...wakers]) wake()
      return new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const s of sockets) s.destroy()
      })
    },
  }
}

// ---------------------------------------------------------------------------------------------- SSE

export type ApiMessage = {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: Array<
    | {type: 'text'; text: string}
    | {type: 'tool_use'; id: string; name: string; input: unknown; partialJson?: string}
    | {type: 'thinking'; thinking: string; signature: string; cut?: boolean}
    | {type: 'redacted_thinking'; data: string}
  >
  stop_reason: StopReason
  stop_sequence: null
  usage: Usage
  [k: string]: unknown
}

/** Split a string into `n` roughly equal pieces (at least one, never splitting a surrogate pair). */
function chunks(s: string, n: number): string[] {
  const chars = Array.from(s)
  if (chars.length === 0) return []
  const size = Math.max(1, Math.ceil(chars.length / n))
  const out: string[] = []
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''))
  return out
}

/** The event sequence the API streams for a message (exported for tests that want to count events). */
export function sseEvents(message: ApiMessage): Array<{type: string; [k: string]: unknown}> {
  const events: Array<{type: string; [k: string]: unknown}> = []
  events.push({
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {...message.usage, output_tokens: 0},
    },
  })
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({type: 'content_block_start', index, content_block: {type: 'text', text: ''}})
      for (const piece of chunks(block.text, 2)) {
        events.push({type: 'content_block_delta', index, delta: {type: 'text_delta', text: piece}})
      }
    } else if (block.type === 'thinking') {
      events.push({type: 'content_block_start', index, content_block: {type: 'thinking', thinking: '', signature: ''}})
      for (const piece of chunks(block.thinking, 2)) {
        events.push({type: 'content_block_delta', index, delta: {type: 'thinking_delta', thinking: piece}})
      }
      if (!block.cut) events.push({type: 'content_block_delta', index, delta: {type: 'signature_delta', signature: block.signature}})
    } else if (block.type === 'redacted_thinking') {
      events.push({type: 'content_block_start', index, content_block: {type: 'redacted_thinking', data: block.data}})
    } else {
      events.push({
        type: 'content_block_start',
        index,
        content_block: {type: 'tool_use', id: block.id, name: block.name, input: {}},
      })
      events.push({type: 'content_block_delta', index, delta: {type: 'input_json_delta', partial_json: ''}})
      for (const piece of chunks(block.partialJson ?? JSON.stringify(block.input ?? {}), 3)) {
        events.push({type: 'content_block_delta', index, delta: {type: 'input_json_delta', partial_json: piece}})
      }
    }
    events.push({type: 'content_block_stop', index})
  })
  events.push({
    type: 'message_delta',
    delta: {stop_reason: message.stop_reason, stop_sequence: null, stop_details: message.stop_details ?? null, container: null},
    usage: {
      output_tokens: message.usage.output_tokens,
      input_tokens: message.usage.input_tokens,
      cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
      cache_read_input_tokens: message.usage.cache_read_input_tokens,
    },
  })
  events.push({type: 'message_stop'})
  return events
}

/** The session's plan path, as the plan-mode system prompt gives it (either variant of the reminder). */
export function planPathIn(request: RecordedRequest): string {
  const match = /plan (?:at|file already exists at) (\/\S+?)(?: using|\. You)/.exec(systemText(request))
  if (!match) throw new Error('no plan path in the system prompt')
  return match[1]
}
