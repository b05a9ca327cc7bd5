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
 */
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

export type Block = TextBlock | ToolUseBlock

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
  /** What the server did: 'reply', 'error', 'cut', 'stream-error', 'stall', 'exhausted', 'bad-request', 'not-found', 'too-long'. */
  outcome?: string
  /** HTTP status answered (undefined when the connection was cut before headers). */
  status?: number
}

export interface MessagesServer {
  /** `http://127.0.0.1:PORT`, for `ANTHROPIC_BASE_URL` / `baseURL`. */
  readonly url: string
  readonly port: number
  /** Every request received, in order (including ones answered with faults or "script exhausted"). */
  readonly requests: RecordedRequest[]
  /** Only the `POST /v1/messages` requests. */
  readonly messageRequests: RecordedRequest[]
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

export async function startMessagesServer(script: Turn[] = []): Promise<MessagesServer> {
  const queue: Turn[] = [...script]
  const requests: RecordedRequest[] = []
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
    const record: RecordedRequest = {
      index: requests.length,
      method: req.method ?? 'GET',
      path,
      body,
      rawBody,
      headers: req.headers,
      receivedAt: performance.now(),
      stream: isObject(body) && body.stream === true,
    }
    requests.push(record)
    const done = (outcome: string, status?: number) => {
      record.outcome = outcome
      record.status = status
    }

    if (record.method !== 'POST' || path !== '/v1/messages') {
      done('not-found', 404)
      sendError(res, 404, 'not_found_error', `messages-server: no route for ${record.method} ${path}`)
      return
    }
    if (!isObject(body)) {
      done('bad-request', 400)
      sendError(res, 400, 'invalid_request_error', 'messages-server: request body is not a JSON object')
      return
    }

    if (promptLimit !== undefined && rawBody.length > promptLimit) {
      done('too-long', 400)
      const tokens = Math.ceil(rawBody.length / 4)
      sendError(res, 400, 'invalid_request_error', `prompt is too long: ${tokens} tokens > ${Math.floor(promptLimit / 4)} maximum`)
      return
    }

    const entry = queue.shift()
    if (entry === undefined) {
      done('exhausted', 500)
      sendError(
        res,
        500,
        'api_error',
        `messages-server: script exhausted (request #${record.index + 1} had no scripted turn)`,
        {'x-should-retry': 'false'},
      )
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
      sendError(
        res,
        status,
        turn.error?.type ?? ERROR_TYPES[status] ?? 'api_error',
        turn.error?.message ?? `messages-server: scripted ${status}`,
        turn.headers,
      )
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
      const json = JSON.stringify({...message, content: message.content.map(({partialJson, ...block}: Record<string, unknown>) => block)})
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

  function buildMessage(turn: Reply, record: RecordedRequest) {
    const content = turn.content.map((b) =>
      b.type === 'tool_use'
        ? {
            type: 'tool_use' as const,
            id: b.id ?? nextId('toolu_01'),
            name: b.name,
            input: b.input ?? {},
            ...(b.partialJson === undefined ? {} : {partialJson: b.partialJson}),
          }
        : {type: 'text' as const, text: b.text},
    )
    const cut = turn.content.some((b) => b.type === 'tool_use' && b.partialJson !== undefined)
    const stop_reason: StopReason =
      turn.stop_reason ?? (cut ? 'max_tokens' : content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
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
    get messageRequests() {
      return requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages')
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
  content: Array<{type: 'text'; text: string} | {type: 'tool_use'; id: string; name: string; input: unknown; partialJson?: string}>
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
