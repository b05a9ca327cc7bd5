/**
 * Making one request of the model: the turn's parameters with their cache breakpoints, the stream with
 * its stall detection, and the retries of a stream cut after the response began (the SDK retries the
 * rest). A refused request becomes the WaveError the user sees (model/table.ts, apiFailure); one refused as
 * too long becomes PromptTooLong, which the loop answers by compacting.
 */
import type Anthropic from '@anthropic-ai/sdk'
import type {ContentBlockParam, Message, MessageParam, TextBlockParam, ThinkingConfigParam} from '@anthropic-ai/sdk/resources/messages'

import {errorLine, ExitCode, WaveError} from '../base/errors.js'
import {scrubSecrets} from '../base/secrets.js'
import {acceptedConversation} from './conversation.js'
import {apiFailure, apiSettings, integerFromEnv, promptTooLong, retryObserver} from '../model/table.js'
import type {Effort} from '../model/reasoning.js'

export type StreamParams = Parameters<Anthropic['messages']['stream']>[0]

/** What a request carries besides its body: the `anthropic-beta` values its window needs (catalog.ts). */
interface RequestExtras {
  betas?: string[]
}

/** Sends one request and returns the complete message; throws WaveError, PromptTooLong, or the interrupt. */
export type TurnRequest = (params: StreamParams, extras?: RequestExtras) => Promise<Message>

/** How often wave re-sends a request whose stream was cut after the response began (the SDK does not). */
const STREAM_RETRIES = 3
/** The first backoff of those retries, doubled each time; `WAVE_RETRY_BASE_MS` sets it (tests use a few ms). */
const STREAM_RETRY_BASE_MS = 500

export interface RequestOptions {
  client: Anthropic
  model: string
  signal: AbortSignal
  /** Each retry, the SDK's and wave's own, as it is made. */
  onRetry?(retry: {attempt: number; reason: string}): void
  /** The response to a request has begun (its headers arrived): the server has the request. */
  onResponseBegun?(): void
  /**
   * `--fallback-model`: the model to ask instead once `model` is overloaded or unavailable after every
   * retry (the SDK's and wave's). The session then stays on it; `onFallback` is told once.
   */
  fallbackModel?: string
  onFallback?(change: {from: string; to: string; reason: string}): void
}

/** The API refused the prompt as too long: the loop compacts and asks again, else `failure` is the error. */
export class PromptTooLong extends Error {
  constructor(
    readonly counted: {tokens?: number; limit?: number},
    readonly failure: WaveError,
  ) {
    super(failure.message)
  }
}

/** A session's way to make a request, bound once to its client, model and signal. */
export function turnRequest(options: RequestOptions): TurnRequest {
  let fallenBack: string | undefined
  return async (params, extras) => {
    if (fallenBack) return requestTurn({...options, model: fallenBack}, {...params, model: fallenBack}, extras)
    try {
      return await requestTurn(options, params, extras)
    } catch (error) {
      const fallback = options.fallbackModel
      if (!fallback || fallback === params.model || !(error instanceof WaveError) || !isUnavailable(error.cause)) throw error
      fallenBack = fallback
      options.onFallback?.({from: String(params.model), reason: error.message, to: fallback})
      return requestTurn({...options, model: fallback}, {...params, model: fallback}, extras)
    }
  }
}

/** Overloaded (529, or its error event) or unavailable (503, a model the endpoint does not serve): what a fallback model is for. */
function isUnavailable(error: unknown): boolean {
  const e = error as {status?: number; type?: string | null; error?: {error?: {type?: string}}} | undefined
  const type = e?.type ?? e?.error?.error?.type
  return e?.status === 529 || e?.status === 503 || e?.status === 404 || type === 'overloaded_error' || type === 'not_found_error'
}

/** How the model is asked to think and how hard to work (reasoning.ts); absent fields are not sent. */
export interface ThinkingParams {
  thinking?: ThinkingConfigParam
  effort?: Effort
}

/**
 * A system prompt laid out for the prompt cache, which keys each entry on everything before it (tools,
 * then system, then messages): `shared` first, the part every session of its kind in the repository
 * sends alike (instructions, tool guidance, AGENTS.md / CLAUDE.md), so a plan's unit jobs and the next
 * plan read it from one another's cache; then `session`, what this session alone has (the date, the git
 * status, plan mode's reminder). Neither changes between a session's turns.
 */
export interface SystemPrompt {
  shared: string
  session: string
}

/** The system prompt as the model reads it: the shared part, then the session's, a blank line between. */
export function systemPromptText(system: string | SystemPrompt): string {
  return typeof system === 'string' ? system : [system.shared, system.session].filter(Boolean).join('\n\n')
}

/**
 * What a turn sends: the conversation as the API accepts it (conversation.ts), and the session's
 * thinking and effort, with the four cache breakpoints the API allows: the last tool, the end of the
 * shared system prompt, and the newest turn and the one before it (conversation.ts's withCacheBreakpoints).
 * The session's own system block has none: the newest turn's breakpoint caches it with the conversation.
 */
export function turnParams(
  input: {model: string; maxTokens: number; system: string | SystemPrompt; tools: object[]; messages: MessageParam[]} & ThinkingParams,
): StreamParams {
  return {
    max_tokens: input.maxTokens,
    messages: withCacheBreakpoints(acceptedConversation(input.messages)),
    model: input.model,
    ...(input.effort ? {output_config: {effort: input.effort}} : {}),
    system: systemBlocks(input.system),
    ...(input.thinking ? {thinking: input.thinking} : {}),
    tools: cacheLastTool(input.tools) as StreamParams['tools'],
  }
}

/** Counted prompts: a turn's request is estimated before it is sent and calibrated after, one count. */
const counted = new WeakMap<StreamParams, number>()

/** The characters of what a request sends as its prompt: system, tools and messages. */
export function charsOf(params: StreamParams): number {
  let chars = counted.get(params)
  if (chars === undefined) {
    chars = JSON.stringify(params.system ?? '').length + JSON.stringify(params.tools ?? []).length + JSON.stringify(params.messages).length
    counted.set(params, chars)
  }

  return chars
}

async function requestTurn(options: RequestOptions, params: StreamParams, extras: RequestExtras = {}): Promise<Message> {
  const {timeoutMs} = apiSettings()
  // A header, as the SDK's beta API sends it: the same on every client (Bedrock's moves it into the body).
  const headers = extras.betas?.length ? {'anthropic-beta': extras.betas.join(',')} : undefined
  const retryBase = integerFromEnv('WAVE_RETRY_BASE_MS', STREAM_RETRY_BASE_MS, 0, 60_000)
  const reportRetry = (retry: {attempt: number; reason: string}) => options.onRetry?.(retry)
  for (let attempt = 0; ; attempt++) {
    // Set once the response has begun (its headers arrived): from then on the SDK retries nothing.
    let began = false
    let stalled = false
    let requestId: string | null | undefined
    // One controller per attempt: the session's abort stops it, and so does a stream gone silent.
    const attemptAbort = new AbortController()
    const forward = () => attemptAbort.abort(options.signal.reason)
    options.signal.addEventListener('abort', forward, {once: true})
    let idle: NodeJS.Timeout | undefined
    const watch = () => {
      clearTimeout(idle)
      idle = setTimeout(() => {
        stalled = true
        attemptAbort.abort()
      }, timeoutMs)
    }

    try {
      if (options.signal.aborted) throw interrupted(options.signal)
      const stream = options.client.messages.stream(params, {headers, middleware: [retryObserver(reportRetry)], signal: attemptAbort.signal})
      stream.on('connect', () => {
        options.onResponseBegun?.()
        began = true
        requestId = stream.request_id
        watch()
      })
      stream.on('streamEvent', watch)
      return await stream.finalMessage()
    } catch (error) {
      if (options.signal.aborted) throw interrupted(options.signal)
      // The SDK retries failed requests; a stream cut or stalled after the response began is ours to
      // retry. No tool has run for this turn yet (tools run on the complete message only), and nothing
      // of the partial message was kept, so re-sending the same request is safe.
      const failure = stalled ? new Error(`the response stream stalled: no event for ${timeoutMs} ms`) : error
      if (began && attempt < STREAM_RETRIES && isTransientStreamFailure(failure)) {
        reportRetry({attempt: attempt + 1, reason: `stream cut: ${scrubSecrets(errorLine(failure))}`})
        await sleep(retryBase * 2 ** attempt, options.signal)
        continue
      }

      const wave = apiFailure(failure, {baseURL: options.client.baseURL, model: options.model, requestId})
      // The API's own error, for the fallback's decision (turnRequest): the line stays wave's.
      wave.cause ??= failure
      const tooLong = promptTooLong(failure)
      throw tooLong ? new PromptTooLong(tooLong, wave) : wave
    } finally {
      clearTimeout(idle)
      options.signal.removeEventListener('abort', forward)
    }
  }
}

/** Error types an API stream reports that no retry will cure. */
const PERMANENT_STREAM_ERRORS = new Set(['authentication_error', 'invalid_request_error', 'not_found_error', 'permission_error', 'request_too_large'])

/** A failure after the response began: a cut connection, a stall, or a transient error event (overloaded). */
function isTransientStreamFailure(error: unknown): boolean {
  const e = error as {status?: number; type?: string | null}
  if (typeof e?.status === 'number') return false
  return !PERMANENT_STREAM_ERRORS.has(e?.type ?? '')
}

/** The abort's reason when it is a WaveError (the command's signal handler sets one), else a plain line. */
export function interrupted(signal: AbortSignal): WaveError {
  return signal.reason instanceof WaveError ? signal.reason : new WaveError('The session was interrupted.', ExitCode.interrupted)
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const wake = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', wake)
      resolve()
    }

    const timer = setTimeout(wake, ms)
    signal.addEventListener('abort', wake, {once: true})
  })
}

/**
 * The system blocks: the shared part under its own breakpoint, the session's part after it. The shared
 * block ends with the blank line that separates the two, so the blocks read in order are the one text.
 */
function systemBlocks(system: string | SystemPrompt): TextBlockParam[] {
  const cached = {cache_control: {type: 'ephemeral' as const}}
  if (typeof system === 'string') return [{...cached, text: system, type: 'text'}]
  if (!system.session) return [{...cached, text: system.shared, type: 'text'}]
  if (!system.shared) return [{text: system.session, type: 'text'}]
  return [
    {...cached, text: `${system.shared}\n\n`, type: 'text'},
    {text: system.session, type: 'text'},
  ]
}

/**
 * Marks the newest turn as a cache breakpoint, and the turn before it: the previous request's
 * breakpoint, so this request reads its entry however many blocks the turn between added (the API
 * looks back only 20 blocks from a breakpoint for an entry). On a copy: stored history stays unmarked.
 */
function withCacheBreakpoints(messages: MessageParam[]): MessageParam[] {
  if (messages.length === 0) return messages
  const marked = [...messages]
  marked[marked.length - 1] = markLastBlock(marked.at(-1)!)
  let previous = marked.length - 2
  while (previous >= 0 && marked[previous].role !== 'user') previous--
  if (previous >= 0) marked[previous] = markLastBlock(marked[previous])
  return marked
}

function markLastBlock(message: MessageParam): MessageParam {
  const blocks: ContentBlockParam[] = typeof message.content === 'string' ? [{text: message.content, type: 'text'} as TextBlockParam] : [...message.content]
  const tail = blocks.at(-1)
  if (tail) blocks[blocks.length - 1] = {...tail, cache_control: {type: 'ephemeral'}} as ContentBlockParam
  return {...message, content: blocks} as MessageParam
}

/**
 * The breakpoint on the last tool the prompt holds: deferred tools (`defer_loading`, after it) are not in
 * the prompt until the conversation loads them, so the cached tools end before them.
 */
function cacheLastTool<T extends object>(tools: T[]): T[] {
  let at = tools.length - 1
  while (at >= 0 && (tools[at] as {defer_loading?: boolean}).defer_loading === true) at--
  if (at < 0) return tools
  return tools.map((tool, index) => (index === at ? {...tool, cache_control: {type: 'ephemeral'}} : tool))
}
