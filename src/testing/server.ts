/**
 * A local HTTP server speaking the Anthropic Messages API (`POST /v1/messages`, JSON or SSE), scripted
 * turn by turn, so tests exercise the real `@anthropic-ai/sdk` against canned model behaviour. It ships
 * in src/ because `wave demo` serves its scripted model with it; tests import it through
 * test/support/messages-server.ts, and bench/lib/server.js bundles it on the fly. This module is the HTTP
 * server and the way in: it re-exports the rest of src/scripted/ (the script and its builders in
 * script.ts, the recorded requests in recorded.ts, the strictness checks in conformance.ts, the served
 * models in models.ts, the SSE stream in sse.ts). The tree imports nothing of wave but src/base/.
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
 * API's rules (checkRequest, in conformance.ts), and a request the real API would refuse is answered with the API's
 * 400 `invalid_request_error`, its message in the API's words, consuming no turn (outcome 'invalid').
 * So every test is also a conformance test of what wave sends. `GET /v1/models/{id}` answers from the
 * server's model catalogue (MODELS, or the `models` option), 404 for a model it does not know; those
 * look-ups are kept apart, in `modelRequests`, so counts of `requests` stay about the conversation.
 *
 * Usage is what the API would bill: the server keeps one prompt cache across all its requests (cache.ts:
 * the prefix order, breakpoints, the 20-block lookback, each model's minimum, the TTLs), so a reply's
 * `cache_read_input_tokens`, `cache_creation_input_tokens` and `input_tokens` show what a sequence of
 * requests, in one session or several against one server, reads, writes and leaves uncached; each
 * answered request keeps its usage in `usage`.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'

import {PromptCache} from './cache.js'
import {type CodedProblem, checkRequest, checkToolReferences} from './conformance.js'
import {buildMessage} from './message.js'
import {answerModelLookup, MODELS, type ServedModel} from './models.js'
import {type Federation, TokenDesk} from './oauth.js'
import {isObject, type RecordedRequest, recordRequest} from './recorded.js'
import {ERROR_TYPES, sendError, sendJson} from './responses.js'
import {isErrorFault, isReply, type StaticTurn, type Turn} from './script.js'
import {streamMessage} from './sse.js'

export {type CacheUsage, LOOKBACK_BLOCKS, minimumCacheable} from './cache.js'
export {type CheckContext, checkRequest, checkToolReferences} from './conformance.js'
export type {ApiMessage} from './message.js'
export {CONTEXT_1M_BETA, type Effort, MODELS, modelInfo, STANDARD_WINDOW, type ServedModel} from './models.js'
export {apiKeyOf, planPathIn, type RecordedRequest, systemText, type ToolResult, toolNames, toolResults} from './recorded.js'
export {
  type Block,
  cutToolUse,
  type ErrorFault,
  fault,
  type RedactedThinkingBlock,
  type Reply,
  redactedThinking,
  reply,
  type StallFault,
  type StaticTurn,
  type StopReason,
  type TextBlock,
  type ThinkingBlock,
  type ToolUseBlock,
  type Turn,
  type TurnFn,
  text,
  thinking,
  toolUse,
  type Usage,
} from './script.js'
export {signThinking} from './signatures.js'
export type {Federation} from './oauth.js'
export {sseEvents} from './sse.js'

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

interface ServerOptions {
  /** The models the server knows, in place of MODELS (their limits are enforced; others are accepted as named). */
  models?: readonly ServedModel[]
  /** The prompt cache's clock, in ms (Date.now): a test moves it to see an entry's TTL run out. */
  now?: () => number
  /** Workload identity federation (oauth.ts): `/v1/oauth/token` exchanges this identity token, and messages take only the bearer issued. */
  federation?: Federation
}

export async function startMessagesServer(script: Turn[] = [], options: ServerOptions = {}): Promise<MessagesServer> {
  const queue: Turn[] = [...script]
  const requests: RecordedRequest[] = []
  const modelRequests: RecordedRequest[] = []
  const models = new Map((options.models ?? MODELS).map((m) => [m.id, m]))
  /** The thinking blocks (keys) issued in the same message as each tool_use id. */
  const issuedThinking = new Map<string, string[]>()
  /** One prompt cache for every request this server answers, as the API keeps one per organization. */
  const promptCache = new PromptCache(options.now)
  const sockets = new Set<Socket>()
  let seq = 0
  let closed = false
  let promptLimit: number | undefined
  const desk = new TokenDesk(options.federation)
  const stalls = new Stalls()
  const stall = (ms: number) => stalls.sleep(ms)

  const nextId = (prefix: string) => `${prefix}${(++seq).toString(36).toUpperCase().padStart(22, '0')}`
  const fail = (res: ServerResponse, status: number, type: string, message: string, headers?: Record<string, string>) =>
    sendError(res, status, type, message, nextId('req_01'), headers)

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => answerBug(res, err, fail))
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const {isModelLookup, path, rawBody} = await readRequest(req)
    const record = recordRequest(req, rawBody, isModelLookup ? modelRequests.length : requests.length)
    ;(isModelLookup ? modelRequests : requests).push(record)
    const done = (outcome: string, status?: number) => {
      record.outcome = outcome
      record.status = status
    }
    const refuse = (outcome: string, problem: string | CodedProblem) => refuseRequest(res, record, nextId('req_01'), outcome, problem)

    if (isModelLookup) return answerLookup(res, path, models, {done, fail, nextId})

    if (desk.intercept(req, res, record, path, {done, fail, nextId})) return
    if (record.method !== 'POST' || path !== '/v1/messages') return noRoute(res, record, path, {done, fail, nextId})
    const body = record.body
    if (!isObject(body)) return refuse('bad-request', 'messages-server: request body is not a JSON object')

    // The API's rules, before anything else: a refused request consumes no turn, as it reaches no model.
    const invalid = checkRequest(body, {betas: betasOf(req), issuedThinking, model: models.get(String(body.model))}) ?? checkToolReferences(body)
    if (invalid) return refuse('invalid', invalid)
    const tooLong = promptTooLong(rawBody, promptLimit)
    if (tooLong) return refuse('too-long', tooLong)

    const entry = queue.shift()
    if (entry === undefined) {
      done('exhausted', 500)
      fail(res, 500, 'api_error', `messages-server: script exhausted (request #${record.index + 1} had no scripted turn)`, {'x-should-retry': 'false'})
      return
    }
    const turn = typeof entry === 'function' ? await entry(record) : entry

    await answerTurn(req, res, record, turn, {body, closed: () => closed, done, fail, issuedThinking, nextId, promptCache, stall})
  }

  const port = await listenOnLoopback(server)

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
      stalls.wakeAll()
      return new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const s of sockets) s.destroy()
      })
    },
  }
}

/** What answering one request needs of the server: its clock-free helpers and the state the turns share. */
interface Answering {
  done(outcome: string, status?: number): void
  fail(res: ServerResponse, status: number, type: string, message: string, headers?: Record<string, string>): void
  nextId(prefix: string): string
}

/** The request's body and path, and whether it asks for the served models rather than a message. */
async function readRequest(req: IncomingMessage): Promise<{isModelLookup: boolean; path: string; rawBody: string}> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const rawBody = Buffer.concat(chunks).toString('utf8')
  const path = (req.url ?? '/').split('?')[0]
  const isModelLookup = (req.method ?? 'GET') === 'GET' && /^\/v1\/models(?:\/|$)/.test(path)
  return {isModelLookup, path, rawBody}
}

function noRoute(res: ServerResponse, record: RecordedRequest, path: string, {done, fail}: Answering): void {
  done('not-found', 404)
  fail(res, 404, 'not_found_error', `messages-server: no route for ${record.method} ${path}`)
}

/** `GET /v1/models[/{id}]`: the served models, or 404 naming the one asked for. */
function answerLookup(res: ServerResponse, path: string, models: Map<string, ServedModel>, {done, fail, nextId}: Answering): void {
  const answer = answerModelLookup(path, models)
  if (answer) {
    done('model', 200)
    sendJson(res, 200, JSON.stringify(answer), nextId('req_01'))
  } else {
    done('not-found', 404)
    fail(res, 404, 'not_found_error', `model: ${decodeURIComponent(path.slice('/v1/models/'.length))}`)
  }
}

/** A scripted turn answered: after its stall, as an error, a stream or JSON, the prompt's cache entries written as the response begins. */
async function answerTurn(
  req: IncomingMessage,
  res: ServerResponse,
  record: RecordedRequest,
  turn: StaticTurn,
  context: Answering & {
    body: Record<string, unknown>
    closed(): boolean
    issuedThinking: Map<string, string[]>
    promptCache: PromptCache
    stall(ms: number): Promise<void>
  },
): Promise<void> {
  const {body, done, fail, issuedThinking, nextId, promptCache, stall} = context
  if (turn.stallMs && turn.stallMs > 0) {
    await stall(turn.stallMs)
    if (context.closed() || res.destroyed || req.socket.destroyed) {
      done('stall')
      return
    }
  }

  if (isErrorFault(turn)) {
    const status = turn.status
    done('error', status)
    fail(res, status, turn.error?.type ?? ERROR_TYPES[status] ?? 'api_error', turn.error?.message ?? `messages-server: scripted ${status}`, turn.headers)
    return
  }

  if (!isReply(turn)) {
    done('stall', 500)
    fail(res, 500, 'api_error', 'messages-server: stalled turn (no reply scripted)')
    return
  }

  // The response begins: the API writes the prompt's cache entries now (and reads what it found).
  const message = buildMessage(turn, record, nextId, issuedThinking, promptCache.account(body))
  record.usage = message.usage
  if (record.stream) {
    await streamMessage(res, message, turn, nextId('req_01'), {closed: context.closed, done, stall})
    return
  }
  if (turn.cutAfterEvents !== undefined) {
    done('cut')
    res.destroy()
    return
  }
  // JSON carries the whole input of a cut call: only a stream can show where it was cut.
  const json = JSON.stringify({...message, content: message.content.map(({cut, partialJson, ...block}: Record<string, unknown>) => block)})
  done('reply', 200)
  sendJson(res, 200, json, nextId('req_01'), turn.headers)
}

/** Sleeps that close() cuts short, so a stalled turn never keeps the process alive. */
class Stalls {
  private readonly wakers = new Set<() => void>()

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer)
        this.wakers.delete(wake)
        resolve()
      }
      const timer = setTimeout(wake, ms)
      this.wakers.add(wake)
    })
  }

  wakeAll(): void {
    for (const wake of [...this.wakers]) wake()
  }
}

/** A bug in a turn function or in the server: answered 500 so the test sees it, never a hang. */
function answerBug(res: ServerResponse, err: unknown, fail: Answering['fail']): void {
  if (!res.headersSent && !res.destroyed) {
    const detail = err instanceof Error ? (err.stack ?? err.message) : String(err)
    fail(res, 500, 'api_error', `messages-server: turn failed: ${detail}`, {'x-should-retry': 'false'})
  } else {
    res.destroy()
  }
}

const betasOf = (req: IncomingMessage) =>
  String(req.headers['anthropic-beta'] ?? '')
    .split(',')
    .map((b) => b.trim())
    .filter(Boolean)

/** The API's "prompt is too long" for a body over the limit a test set (a token being 4 bytes), else undefined. */
function promptTooLong(rawBody: string, limit: number | undefined): string | undefined {
  if (limit === undefined || rawBody.length <= limit) return undefined
  return `prompt is too long: ${Math.ceil(rawBody.length / 4)} tokens > ${Math.floor(limit / 4)} maximum`
}

async function listenOnLoopback(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject)
      resolve()
    })
  })
  return (server.address() as AddressInfo).port
}

/** A request the server refuses (400 invalid_request_error), recorded with its outcome; a coded problem's code in `error.details`. */
function refuseRequest(res: ServerResponse, record: RecordedRequest, requestId: string, outcome: string, problem: string | CodedProblem): void {
  const {errorCode, message} = typeof problem === 'string' ? {errorCode: undefined, message: problem} : problem
  record.outcome = outcome
  record.status = 400
  record.error = message
  sendError(res, 400, 'invalid_request_error', message, requestId, {}, errorCode ? {error_code: errorCode} : undefined)
}
