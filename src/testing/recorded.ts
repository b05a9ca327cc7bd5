/**
 * The requests the server received, as tests read them: each recorded with its body, headers, arrival
 * time and what the server did with it, and the helpers that pick a request apart (its tool results, API
 * key, system prompt, offered tools, the plan path plan mode gives).
 */
import type {IncomingHttpHeaders, IncomingMessage} from 'node:http'
import {performance} from 'node:perf_hooks'

/** A reply's usage, as the API reports it. */
export interface Usage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  /** What the cache writes were, by TTL (the server's prompt cache fills it: cache.ts). */
  cache_creation?: {ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number}
}

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
  /** The usage the server answered a reply with: its prompt cache's reads and writes (cache.ts). */
  usage?: Usage
}

/** A request as received (the body parsed when it is JSON), before the server decides what to do with it. */
export function recordRequest(req: IncomingMessage, rawBody: string, index: number): RecordedRequest {
  // biome-ignore lint/suspicious/noExplicitAny: a request body is whatever JSON the client sent; tests read it freely
  let body: any
  try {
    body = rawBody ? JSON.parse(rawBody) : undefined
  } catch {
    body = undefined
  }
  return {
    index,
    method: req.method ?? 'GET',
    path: (req.url ?? '/').split('?')[0],
    body,
    rawBody,
    headers: req.headers,
    receivedAt: performance.now(),
    stream: isObject(body) && body.stream === true,
  }
}

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

/** The system prompt of a recorded request as one string (a string, or its text blocks in order). */
export function systemText(request: RecordedRequest): string {
  const system = request.body?.system
  // A system prompt in several blocks reads as their texts in order (wave's carry their own separators).
  if (Array.isArray(system))
    return system
      .filter((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string')
      .map((b) => b.text)
      .join('')
  return contentText(system)
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
export function isObject(v: unknown): v is Record<string, any> {
  return typeof v === 'object' && v !== null
}

/** The session's plan path, as the plan-mode system prompt gives it (either variant of the reminder). */
export function planPathIn(request: RecordedRequest): string {
  const match = /plan (?:at|file already exists at) (\/\S+?)(?: using|\. You)/.exec(systemText(request))
  if (!match) throw new Error('no plan path in the system prompt')
  return match[1]
}
