/**
 * What a test scripts: the model's replies, block by block, and the faults the API can answer with, plus
 * the builders that write them (`reply(text('hi'), toolUse('Read', {...}))`). Each request to
 * `POST /v1/messages` consumes one turn of the script.
 */
import type {RecordedRequest, Usage} from './recorded.js'

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

export type {Usage} from './recorded.js'

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

export function isErrorFault(t: StaticTurn): t is ErrorFault {
  return typeof (t as ErrorFault).status === 'number'
}

export function isReply(t: StaticTurn): t is Reply {
  return Array.isArray((t as Reply).content)
}
