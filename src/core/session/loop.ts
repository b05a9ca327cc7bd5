import type Anthropic from '@anthropic-ai/sdk'
import type {ContentBlockParam, Message, MessageParam, TextBlockParam, ToolResultBlockParam} from '@anthropic-ai/sdk/resources/messages'

import type {ToolRegistry} from '../../plugins/registry.js'
import type {SessionControl} from '../../plugins/tool.js'
import {dispatch, type ToolCallOutcome} from './dispatch.js'
import {ExitCode, WaveError} from '../errors.js'
import {apiSettings, describeApiError, integerFromEnv, scrubSecrets} from './model.js'
import type {PolicyContext} from '../policy/policy.js'

export interface TokenUsage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
}

export const emptyUsage = (): TokenUsage => ({
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  input_tokens: 0,
  output_tokens: 0,
})

export type AgentEvent =
  | {type: 'request'; turn: number; mode: string}
  | {type: 'text'; text: string}
  | {type: 'tool_call'; id: string; name: string; input: unknown}
  | {type: 'tool_result'; id: string; name: string; isError: boolean; denied: boolean; content: string}
  | {type: 'usage'; turn: number; usage: TokenUsage}
  | {type: 'retry'; attempt: number; reason: string}

export interface AgentOptions {
  client: Anthropic
  model: string
  maxTurns: number
  maxTokens?: number
  registry: ToolRegistry
  /** The policy in force; read every turn, since a control tool may change the mode. */
  policy: () => PolicyContext
  /** The system prompt, recomputed every turn (the plan-mode reminder depends on the plan file). */
  system: () => Promise<string> | string
  /** The conversation so far; the loop appends to it. */
  messages: MessageParam[]
  session: SessionControl
  signal: AbortSignal
  onEvent?: (event: AgentEvent) => void
  /** Called with each message appended, for the transcript. */
  onMessage?: (message: MessageParam) => Promise<void> | void
  /** Checked after each round of tool calls: a control tool may end the session (ExitPlanMode). */
  stopRequested?: () => boolean
}

export type StopReason = 'end_turn' | 'max_tokens' | 'max_turns' | 'refusal' | 'stop_requested' | 'stop_sequence' | 'pause_turn'

export interface AgentResult {
  stopReason: StopReason
  turns: number
  usage: TokenUsage
  finalText: string
  /** Real paths written by write tools. */
  changed: Set<string>
  denials: number
}

/** How often wave re-sends a request whose stream was cut after the response began (the SDK does not). */
const STREAM_RETRIES = 3
/** The first backoff of those retries, doubled each time; `WAVE_RETRY_BASE_MS` sets it (tests use a few ms). */
const STREAM_RETRY_BASE_MS = 500
const DEFAULT_MAX_TOKENS = 16_000

/**
 * The agent loop: one streamed request per turn, every tool call through the shared wrapper, every
 * denial or failure returned as an error result. Ends on a turn with no tool calls, at the turn limit
 * (a WaveError with exit 5), or when a control tool asks it to stop.
 */
export async function runAgent(options: AgentOptions): Promise<AgentResult> {
  const {messages, registry} = options
  const usage = emptyUsage()
  const changed = new Set<string>()
  let denials = 0
  let turns = 0
  let finalText = ''

  const append = async (message: MessageParam) => {
    messages.push(message)
    await options.onMessage?.(message)
  }

  while (true) {
    if (options.signal.aborted) throw interrupted(options.signal)
    if (turns >= options.maxTurns) {
      throw new WaveError(`Stopped at the turn limit (${options.maxTurns} turns) before the agent finished.`, ExitCode.limit, 'Raise --max-turns to let it go on.')
    }

    turns++
    const policy = options.policy()
    options.onEvent?.({mode: policy.mode, turn: turns, type: 'request'})
    const response = await requestTurn(options, {
      max_tokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
      messages: withCacheBreakpoint(messages),
      model: options.model,
      system: [{cache_control: {type: 'ephemeral'}, text: await options.system(), type: 'text'}],
      tools: cacheLastTool(registry.apiTools(policy)),
    })
    addUsage(usage, response.usage)
    options.onEvent?.({turn: turns, type: 'usage', usage: {...usage}})

    const content = response.content as ContentBlockParam[]
    await append({content, role: 'assistant'})
    const text = response.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n').trim()
    if (text) {
      finalText = text
      options.onEvent?.({text, type: 'text'})
    }

    const calls = response.content.filter((block) => block.type === 'tool_use')
    if (calls.length === 0) {
      return {changed, denials, finalText, stopReason: (response.stop_reason ?? 'end_turn') as StopReason, turns, usage}
    }

    const results: ToolResultBlockParam[] = []
    for (const call of calls) {
      options.onEvent?.({id: call.id, input: call.input, name: call.name, type: 'tool_call'})
      // Calls run one after another: a later call may depend on an earlier write.
      const outcome: ToolCallOutcome = options.signal.aborted
        ? {content: 'The session was interrupted before this call ran.', isError: true}
        : await dispatch({id: call.id, input: call.input, name: call.name}, {
            policy: options.policy(),
            registry,
            session: options.session,
            signal: options.signal,
          })
      const denied = outcome.decision?.decision === 'deny'
      if (denied) denials++
      if (outcome.changed) changed.add(outcome.changed)
      const clean = scrubSecrets(outcome.content)
      options.onEvent?.({content: clean, denied, id: call.id, isError: outcome.isError, name: call.name, type: 'tool_result'})
      results.push({content: clean, is_error: outcome.isError || undefined, tool_use_id: call.id, type: 'tool_result'})
    }

    await append({content: results, role: 'user'})
    if (options.stopRequested?.()) return {changed, denials, finalText, stopReason: 'stop_requested', turns, usage}
  }
}

type StreamParams = Parameters<Anthropic['messages']['stream']>[0]

async function requestTurn(options: AgentOptions, params: StreamParams): Promise<Message> {
  const {maxRetries, timeoutMs} = apiSettings()
  const retryBase = integerFromEnv('WAVE_RETRY_BASE_MS', STREAM_RETRY_BASE_MS, 0, 60_000)
  const client = withRetryEvents(options, maxRetries)
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
      const stream = client.messages.stream(params, {signal: attemptAbort.signal})
      stream.on('connect', () => {
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
        options.onEvent?.({attempt: attempt + 1, reason: `stream cut: ${scrubSecrets(firstLine(failure))}`, type: 'retry'})
        await sleep(retryBase * 2 ** attempt, options.signal)
        continue
      }

      throw new WaveError(describeApiError(failure, requestId), ExitCode.runtime)
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

function firstLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]
}

/**
 * The client, reporting the SDK's own retries (a 429, a 529, a connection refused) as retry events, so
 * that a CI log shows why a turn takes long. Only the status and the attempt are reported, never the
 * URL (which may hold credentials).
 */
function withRetryEvents(options: AgentOptions, maxRetries: number): Anthropic {
  const onEvent = options.onEvent
  if (!onEvent || typeof options.client.withOptions !== 'function') return options.client
  const known = reportingClients.get(options)
  if (known) return known
  const info = (message: string) => {
    const remaining = /(\d+) attempts? remaining/.exec(message)
    if (!remaining) return
    const status = /with status (\d+)/.exec(message)
    const connection = /connection (timed out|failed)/.exec(message)
    const reason = status ? `status ${status[1]} from the API` : connection ? `connection ${connection[1]}` : 'request failed'
    onEvent({attempt: maxRetries - Number(remaining[1]) + 1, reason, type: 'retry'})
  }

  const ignore = () => {}
  const client = options.client.withOptions({logger: {debug: ignore, error: ignore, info, warn: ignore}, logLevel: 'info'})
  reportingClients.set(options, client)
  return client
}

/** One reporting client per session (per runAgent call), made on its first turn. */
const reportingClients = new WeakMap<AgentOptions, Anthropic>()

/** The abort's reason when it is a WaveError (the command's signal handler sets one), else a plain line. */
function interrupted(signal: AbortSignal): WaveError {
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

function addUsage(total: TokenUsage, turn: Message['usage']): void {
  total.input_tokens += turn.input_tokens ?? 0
  total.output_tokens += turn.output_tokens ?? 0
  total.cache_creation_input_tokens += turn.cache_creation_input_tokens ?? 0
  total.cache_read_input_tokens += turn.cache_read_input_tokens ?? 0
}

/** Marks the newest turn as a cache breakpoint, on a copy: stored history stays unmarked. */
function withCacheBreakpoint(messages: MessageParam[]): MessageParam[] {
  if (messages.length === 0) return messages
  const last = messages.at(-1)!
  const blocks: ContentBlockParam[] = typeof last.content === 'string' ? [{text: last.content, type: 'text'} as TextBlockParam] : [...last.content]
  const tail = blocks.at(-1)
  if (tail) blocks[blocks.length - 1] = {...tail, cache_control: {type: 'ephemeral'}} as ContentBlockParam
  return [...messages.slice(0, -1), {...last, content: blocks} as MessageParam]
}

function cacheLastTool<T extends object>(tools: T[]): T[] {
  if (tools.length === 0) return tools
  return [...tools.slice(0, -1), {...tools.at(-1)!, cache_control: {type: 'ephemeral'}}]
}
