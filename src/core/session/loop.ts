import type Anthropic from '@anthropic-ai/sdk'
import type {ContentBlockParam, Message, MessageParam, TextBlockParam, ToolResultBlockParam, ToolUseBlock} from '@anthropic-ai/sdk/resources/messages'

import type {ToolRegistry} from '../../plugins/registry.js'
import type {SessionControl} from '../../plugins/tool.js'
import {errorLine, ExitCode, WaveError} from '../errors.js'
import type {PolicyContext} from '../policy/policy.js'
import type {SandboxSettings} from '../policy/sandbox.js'
import {clearOldToolResults, type Compacted, type SummaryRequest, summarizeOlderTurns} from './compaction.js'
import {dispatch, type ToolCallOutcome} from './dispatch.js'
import {apiFailure, apiSettings, FALLBACK_CONTEXT_WINDOW, integerFromEnv, modelLimits, promptTooLong, retryObserver} from './model.js'
import {scrubSecrets} from '../secrets.js'
import {costOf, emptyUsage, formatUsd, type PriceTable, priceOf, roundUsd, type TokenUsage} from './pricing.js'

export {emptyUsage, type TokenUsage} from './pricing.js'

export type AgentEvent =
  | {type: 'request'; turn: number; mode: string}
  | {type: 'text'; text: string}
  | {type: 'tool_call'; id: string; name: string; input: unknown}
  | {type: 'tool_result'; id: string; name: string; isError: boolean; denied: boolean; content: string}
  /** After every response: the session's usage and cost so far (`costUsd` null for a model without a price). */
  | {type: 'usage'; turn: number; usage: TokenUsage; costUsd: number | null}
  | {type: 'retry'; attempt: number; reason: string}
  /** A response stopped at `max_tokens` (the limit it had), and what the loop does about it. */
  | {type: 'output_limit'; turn: number; maxTokens: number; action: OutputLimitAction}
  /** An approved check wave runs when the model ends its turn: when it starts, and (with `exitCode`) when it ended. */
  | {type: 'check'; command: string; exitCode?: number | null; durationMs?: number}
  | CompactionEvent

export type OutputLimitAction =
  /** Tool calls were cut: the same request again with the model's whole output limit (nothing of the cut one ran). */
  | 'raise'
  /** Still cut at the limit: none of the turn's calls ran, each answered with an error asking for smaller pieces. */
  | 'smaller_pieces'
  /** A final answer was cut: the model is asked to continue it, once. */
  | 'continue'

/** The conversation was compacted to fit the model's window (see compaction.ts). Token counts are estimates. */
export interface CompactionEvent {
  type: 'compaction'
  turn: number
  /** The API refused the prompt as too long, or the conversation neared the window. */
  trigger: 'prompt_too_long' | 'near_window'
  clearedToolResults: number
  summarizedMessages: number
  tokensBefore: number
  tokensAfter: number
}

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
  /** The conversation so far; the loop appends to it (and a compaction replaces it, in place). */
  messages: MessageParam[]
  session: SessionControl
  signal: AbortSignal
  onEvent?: (event: AgentEvent) => void
  /** Called with each message appended, for the transcript. */
  onMessage?: (message: MessageParam) => Promise<void> | void
  /** Awaited before tool calls run: what the session must read of the workspace before any tool can change it. */
  beforeTools?: () => Promise<unknown>
  /**
   * Called with the whole conversation after a compaction replaced it (and the compaction's event): the
   * transcript's new starting point, from which a resumed session would go on.
   */
  onCompacted?: (messages: MessageParam[], compaction: CompactionEvent) => Promise<void> | void
  /** Checked after each round of tool calls: a control tool may end the session (ExitPlanMode). */
  stopRequested?: () => boolean
  /**
   * Around each allowed command (an execute-class call): `before` reads what `after` compares with, and
   * `after` may return a note appended to the call's result (what the command changed outside the scope).
   */
  commandWatch?: CommandWatch
  /**
   * When the model ends its turn without tool calls: a message to send for another turn (the approved
   * checks failed), or undefined to end the session.
   */
  onEndTurn?: () => Promise<string | undefined>
  /** The model's context window in tokens (settings); default: the known window of the model, else 200k. */
  contextWindow?: number
  /** Prices over the built-in table (pricing.ts), by model ID prefix (settings). */
  prices?: PriceTable
  /** Stop with exit 5 once the session has spent more than this many USD (--max-budget-usd). */
  maxBudgetUsd?: number
  /** The OS sandbox of the tools' commands (the approval record's, or --sandbox); absent: on, no network. */
  sandbox?: SandboxSettings
  /**
   * What the session's earlier part spent (a resumed run): turns, usage and cost go on from these, so
   * `maxTurns` and `maxBudgetUsd` bound the whole session. `priorCostUsd` null: the earlier cost is unknown.
   */
  priorTurns?: number
  priorUsage?: TokenUsage
  priorCostUsd?: number | null
}

export interface CommandWatch {
  before(): Promise<unknown>
  after(before: unknown): Promise<string | undefined>
}

/** How a session ended: the API's stop reasons, and wave's own. */
export type StopReason =
  | 'end_turn'
  | 'stop_sequence'
  | 'stop_requested'
  | 'max_tokens'
  | 'max_turns'
  | 'budget'
  | 'refusal'
  | 'pause_turn'
  | 'model_context_window_exceeded'
  | 'api_error'
  | 'interrupted'

export interface AgentResult {
  stopReason: StopReason
  turns: number
  usage: TokenUsage
  /** What the session cost, or null when the model has no known price. */
  costUsd: number | null
  /** How many times the conversation was compacted. */
  compactions: number
  finalText: string
  /** Real paths written by write tools. */
  changed: Set<string>
  denials: number
}

/** What every WaveError from runAgent carries in `details`: what the session did before it stopped. */
export type AgentFailureDetails = {
  stopReason: StopReason
  turns: number
  usage: TokenUsage
  costUsd: number | null
  /** Real paths written by write tools. */
  filesChanged: string[]
}

/** How often wave re-sends a request whose stream was cut after the response began (the SDK does not). */
const STREAM_RETRIES = 3
/** The first backoff of those retries, doubled each time; `WAVE_RETRY_BASE_MS` sets it (tests use a few ms). */
const STREAM_RETRY_BASE_MS = 500
const DEFAULT_MAX_TOKENS = 16_000
/** Compact before a request whose prompt would fill this much of the window (less the output it may take). */
const COMPACT_AT = 0.9
/** After clearing tool results, summarise as well unless the prompt is down to this much of the window. */
const COMPACT_TO = 0.6
/** How much the prompt must grow after a compaction before the window's nearness compacts again. */
const REGROWTH = 0.05
/** Compactions tried for one request the API refuses as too long, before giving up. */
const COMPACTIONS_PER_REQUEST = 2
const SUMMARY_MAX_TOKENS = 8000
/** Tokens kept free of the window when raising max_tokens: the estimate of a prompt is not exact. */
const WINDOW_MARGIN = 2000

const CONTINUE_PROMPT = 'Your answer was cut off at the output limit. Continue it exactly where it stopped, without repeating anything.'

/**
 * The agent loop: one streamed request per turn, every tool call through the shared wrapper, every
 * denial or failure returned as an error result. Ends on a turn with no tool calls, at the turn or
 * budget limit (exit 5), on a refusal or an answer that stays cut (exit 6), or when a control tool asks
 * it to stop. Every WaveError it throws carries `details` (AgentFailureDetails).
 */
export async function runAgent(options: AgentOptions): Promise<AgentResult> {
  const {messages, registry} = options
  const tally = new Tally(options.model, options.prices, options.priorUsage, options.priorCostUsd)
  const limits = modelLimits(options.model)
  const context = new ContextMeter(options.contextWindow ?? limits?.contextWindow ?? FALLBACK_CONTEXT_WINDOW)
  const baseMaxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS
  const changed = new Set<string>()
  let denials = 0
  let turns = options.priorTurns ?? 0
  let compactions = 0
  let finalText = ''
  /** The text the next turn goes on with (a paused turn, an answer being continued). */
  let carried = ''
  let continued = false
  let nextMaxTokens: number | undefined
  let compactFirst = false
  /** The estimated prompt after the last compaction. */
  let compactedTo = 0
  let policy: PolicyContext

  const details = (stopReason: StopReason): AgentFailureDetails => ({
    costUsd: tally.reportedCost(),
    filesChanged: [...changed],
    stopReason,
    turns,
    usage: {...tally.usage},
  })
  const fail = (message: string, exitCode: WaveError['exitCode'], hint: string, stopReason: StopReason) =>
    new WaveError(message, exitCode, hint, details(stopReason))

  const append = async (message: MessageParam) => {
    messages.push(message)
    await options.onMessage?.(message)
  }

  const checkBudget = () => {
    const spent = tally.costUsd
    if (options.maxBudgetUsd === undefined || spent === null || spent <= options.maxBudgetUsd) return
    throw fail(
      `Stopped at the budget: ${formatUsd(spent)} spent, more than --max-budget-usd ${options.maxBudgetUsd}, before the agent finished.`,
      ExitCode.limit,
      `${formatUsd(spent)} spent so far; raise --max-budget-usd to let it go on.`,
      'budget',
    )
  }

  /** One request and its accounting: usage, cost, and the calibration of the next prompt's estimate. */
  const send = async (params: StreamParams): Promise<Message> => {
    const response = await requestTurn(options, params)
    tally.add(response.usage)
    context.calibrate(charsOf(params), response.usage)
    options.onEvent?.({costUsd: tally.reportedCost(), turn: turns, type: 'usage', usage: {...tally.usage}})
    return response
  }

  const turnParams = async (maxTokens: number): Promise<StreamParams> => ({
    max_tokens: maxTokens,
    messages: withCacheBreakpoint(messages),
    model: options.model,
    system: [{cache_control: {type: 'ephemeral'}, text: await options.system(), type: 'text'}],
    tools: cacheLastTool(registry.apiTools(policy)),
  })

  const summarize = async (request: SummaryRequest): Promise<string> => {
    const params = {max_tokens: Math.min(SUMMARY_MAX_TOKENS, limits?.maxOutput ?? SUMMARY_MAX_TOKENS), messages: [{content: request.prompt, role: 'user' as const}], model: options.model, system: request.system}
    const response = await send(params).catch((error: unknown) => {
      throw error instanceof PromptTooLong ? error.failure : error
    })
    return textOf(response).trim()
  }

  /** Compacts the conversation in place; false when nothing could be cleared or summarised. */
  const compact = async (trigger: CompactionEvent['trigger'], params: StreamParams, counted: {tokens?: number; limit?: number} = {}, summaryOnly = false) => {
    const overhead = charsOf({...params, messages: []})
    const promptChars = () => overhead + JSON.stringify(messages).length
    // The API's own count is the truth: it calibrates the estimates, and its limit is the window.
    if (counted.tokens) context.calibrateTokens(promptChars(), counted.tokens)
    if (counted.limit) context.window = Math.min(context.window, counted.limit)
    const tokensBefore = counted.tokens ?? context.estimate(promptChars())
    const replace = (step: Compacted) => messages.splice(0, messages.length, ...step.messages)

    let cleared = 0
    if (!summaryOnly) {
      const step = clearOldToolResults(messages)
      cleared = step.cleared
      if (cleared > 0) replace(step)
    }

    let summarized = 0
    if (cleared === 0 || context.estimate(promptChars()) > context.window * COMPACT_TO) {
      const maxChars = Math.floor((context.window * 0.5) / context.tokensPerChar)
      const step = await summarizeOlderTurns(messages, {changedFiles: [...changed], maxChars, summarize})
      if (step) {
        replace(step)
        summarized = step.summarized
      }
    }

    if (cleared === 0 && summarized === 0) return false
    compactions++
    const tokensAfter = context.estimate(promptChars())
    compactedTo = tokensAfter
    const event: CompactionEvent = {clearedToolResults: cleared, summarizedMessages: summarized, tokensAfter, tokensBefore, trigger, turn: turns, type: 'compaction'}
    options.onEvent?.(event)
    await options.onCompacted?.(messages, event)
    checkBudget()
    return true
  }

  /**
   * The largest `max_tokens` worth asking for after `response`: the model's output limit, within what
   * the window leaves (older models refuse a prompt and max_tokens that together exceed it); 0 when the
   * model's limit is unknown.
   */
  const largestMaxTokens = (response: Message): number => {
    if (!limits) return 0
    const {cache_creation_input_tokens: written, cache_read_input_tokens: read, input_tokens: input, output_tokens: output} = response.usage
    const used = (input ?? 0) + (read ?? 0) + (written ?? 0) + (output ?? 0)
    return Math.min(limits.maxOutput, context.window - used - WINDOW_MARGIN)
  }

  /** The turn's request: compacted first when it nears the window, and again when the API finds it too long. */
  const ask = async (maxTokens: number): Promise<Message> => {
    let params = await turnParams(maxTokens)
    // Near the window, and grown since the last compaction (else every turn would summarise again).
    const estimate = context.estimate(charsOf(params))
    if (compactFirst || (context.nearWindow(estimate, baseMaxTokens) && estimate > compactedTo + context.window * REGROWTH)) {
      compactFirst = false
      if (await compact('near_window', params)) params = await turnParams(maxTokens)
    }

    for (let compacted = 0; ; compacted++) {
      try {
        return await send(params)
      } catch (error) {
        if (!(error instanceof PromptTooLong)) throw error
        // A second refusal after clearing means clearing was not enough: summarise.
        if (compacted < COMPACTIONS_PER_REQUEST && (await compact('prompt_too_long', params, error.counted, compacted > 0))) {
          params = await turnParams(maxTokens)
          continue
        }

        const {failure} = error
        throw new WaveError(failure.message, failure.exitCode, "The conversation does not fit the model's context window, even compacted: split the task into smaller ones.")
      }
    }
  }

  try {
    if (options.maxBudgetUsd !== undefined && !priceOf(options.model, options.prices)) {
      throw fail(
        `--max-budget-usd needs the price of ${options.model}, and wave knows none.`,
        ExitCode.usage,
        'Add the model to the settings\' "prices" (USD per million tokens: input, output, cacheWrite, cacheRead).',
        'budget',
      )
    }

    // A resumed session may have spent its budget before: no request then.
    checkBudget()
    while (true) {
      if (options.signal.aborted) throw interrupted(options.signal)
      if (turns >= options.maxTurns) {
        throw fail(`Stopped at the turn limit (${options.maxTurns} turns) before the agent finished.`, ExitCode.limit, 'Raise --max-turns to let it go on.', 'max_turns')
      }

      turns++
      policy = options.policy()
      options.onEvent?.({mode: policy.mode, turn: turns, type: 'request'})
      let maxTokens = nextMaxTokens ?? baseMaxTokens
      nextMaxTokens = undefined
      let response = await ask(maxTokens)

      // The SDK parses a cut tool call's input leniently, so a Write cut at the limit would write half a
      // file: a cut turn's calls never run. Asking the same again with the model's whole output limit
      // usually lets the call complete (nothing of the cut response ran or was kept); at the limit
      // already, the calls are answered with an error that asks for smaller pieces, below.
      const raised = largestMaxTokens(response)
      if (stoppedAt(response, 'max_tokens') && callsOf(response).length > 0 && raised > maxTokens) {
        checkBudget()
        options.onEvent?.({action: 'raise', maxTokens, turn: turns, type: 'output_limit'})
        maxTokens = raised
        response = await ask(maxTokens)
      }

      await append({content: response.content as ContentBlockParam[], role: 'assistant'})
      checkBudget()
      const text = textOf(response)
      if (text.trim()) {
        finalText = (carried + text).trim()
        options.onEvent?.({text: text.trim(), type: 'text'})
      }

      if (response.stop_reason === 'refusal') {
        const category = response.stop_details?.category
        throw fail(
          `The model refused to go on (stop_reason refusal${category ? `, category ${category}` : ''}).`,
          ExitCode.refused,
          'None of the refused turn\'s tool calls ran. Rephrase the task, or try another model (--model).',
          'refusal',
        )
      }

      const calls = callsOf(response)
      const cut = stoppedAt(response, 'max_tokens') || stoppedAt(response, 'model_context_window_exceeded')
      // A response cut because the window is full: the next request compacts first.
      if (stoppedAt(response, 'model_context_window_exceeded')) compactFirst = true
      if (cut && calls.length > 0) {
        options.onEvent?.({action: 'smaller_pieces', maxTokens, turn: turns, type: 'output_limit'})
        const results = calls.map((call, index) => cutCallResult(call, index === calls.length - 1, maxTokens))
        for (const [index, call] of calls.entries()) {
          options.onEvent?.({id: call.id, input: call.input, name: call.name, type: 'tool_call'})
          options.onEvent?.({content: results[index].content as string, denied: false, id: call.id, isError: true, name: call.name, type: 'tool_result'})
        }

        carried = ''
        await append({content: results, role: 'user'})
        continue
      }

      if (cut) {
        // A final answer cut at the limit gets one continuation, with the model's whole output limit.
        if (continued) {
          throw fail(
            `The model's answer stayed cut at the output limit (stop_reason ${response.stop_reason}, max_tokens ${maxTokens}) after a continuation.`,
            ExitCode.refused,
            'Ask for a shorter answer, or choose a model with a larger output limit (--model).',
            'max_tokens',
          )
        }

        continued = true
        carried += text
        nextMaxTokens = Math.max(maxTokens, largestMaxTokens(response))
        options.onEvent?.({action: 'continue', maxTokens, turn: turns, type: 'output_limit'})
        await append({content: CONTINUE_PROMPT, role: 'user'})
        continue
      }

      continued = false
      // A paused turn (a long server-side step) goes on when sent back as it is.
      if (response.stop_reason === 'pause_turn' && calls.length === 0) {
        carried += text
        continue
      }

      carried = ''
      if (calls.length === 0) {
        // The approved checks run now; failing ones come back as the next user message.
        const more = await options.onEndTurn?.()
        if (more) {
          await append({content: more, role: 'user'})
          continue
        }

        const stopReason = response.stop_reason === 'stop_sequence' ? 'stop_sequence' : 'end_turn'
        return {changed, compactions, costUsd: tally.reportedCost(), denials, finalText, stopReason, turns, usage: {...tally.usage}}
      }

      await options.beforeTools?.()
      const results: ToolResultBlockParam[] = []
      for (const call of calls) {
        options.onEvent?.({id: call.id, input: call.input, name: call.name, type: 'tool_call'})
        // Calls run one after another: a later call may depend on an earlier write.
        const watched = options.commandWatch && registry.get(call.name)?.access === 'execute' && !options.signal.aborted ? options.commandWatch : undefined
        const watch = await watched?.before()
        const outcome: ToolCallOutcome = options.signal.aborted
          ? {content: 'The session was interrupted before this call ran.', isError: true}
          : await dispatch({id: call.id, input: call.input, name: call.name}, {
              policy: options.policy(),
              registry,
              sandbox: options.sandbox,
              session: options.session,
              signal: options.signal,
            })
        const note = watched && outcome.decision?.decision === 'allow' ? await watched.after(watch) : undefined
        if (note) outcome.content = `${outcome.content}\n\n${note}`
        const denied = outcome.decision?.decision === 'deny'
        if (denied) denials++
        if (outcome.changed) changed.add(outcome.changed)
        const clean = scrubSecrets(outcome.content)
        options.onEvent?.({content: clean, denied, id: call.id, isError: outcome.isError, name: call.name, type: 'tool_result'})
        results.push({content: clean, is_error: outcome.isError || undefined, tool_use_id: call.id, type: 'tool_result'})
      }

      await append({content: results, role: 'user'})
      if (options.stopRequested?.()) {
        return {changed, compactions, costUsd: tally.reportedCost(), denials, finalText, stopReason: 'stop_requested', turns, usage: {...tally.usage}}
      }
    }
  } catch (error) {
    const failure = error instanceof PromptTooLong ? error.failure : error
    if (!(failure instanceof WaveError) || failure.details?.stopReason !== undefined) throw failure
    const stopped = failure.exitCode === ExitCode.interrupted || failure.exitCode === ExitCode.terminated
    throw failure.withDetails(details(stopped ? 'interrupted' : 'api_error'))
  }
}

/** What a cut turn's call gets instead of running: the cut one is told why and how to go on. */
function cutCallResult(call: ToolUseBlock, isLast: boolean, maxTokens: number): ToolResultBlockParam {
  const content = isLast
    ? `This call was cut off at the output limit (max_tokens ${maxTokens}) before its input was complete, so it was not run. Write large content in smaller pieces: for a long file, Write a first part, then add the rest with Edit.`
    : 'Not run: this turn was cut off at the output limit (max_tokens), so none of its calls ran. Make the call again if it is still needed.'
  return {content, is_error: true, tool_use_id: call.id, type: 'tool_result'}
}

const callsOf = (response: Message): ToolUseBlock[] => response.content.filter((block) => block.type === 'tool_use')

/** The response's text as written (a continued answer goes on mid-sentence, so nothing is trimmed). */
const textOf = (response: Message): string =>
  response.content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n')

const stoppedAt = (response: Message, reason: string): boolean => (response.stop_reason as string | null) === reason

/** The session's usage and cost, added up response by response (a price may depend on each prompt's size). */
class Tally {
  readonly usage: TokenUsage
  costUsd: number | null

  constructor(
    private readonly model: string,
    private readonly prices?: PriceTable,
    prior: TokenUsage = emptyUsage(),
    priorCostUsd: number | null = 0,
  ) {
    this.usage = {...emptyUsage(), ...prior}
    this.costUsd = priorCostUsd
  }

  add(turn: Message['usage']): void {
    const usage: TokenUsage = {
      cache_creation_input_tokens: turn.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: turn.cache_read_input_tokens ?? 0,
      input_tokens: turn.input_tokens ?? 0,
      output_tokens: turn.output_tokens ?? 0,
    }
    for (const key of Object.keys(usage) as Array<keyof TokenUsage>) this.usage[key] += usage[key]
    const cost = costOf(this.model, usage, this.prices)
    this.costUsd = cost === null || this.costUsd === null ? null : this.costUsd + cost
  }

  reportedCost(): number | null {
    return this.costUsd === null ? null : roundUsd(this.costUsd)
  }
}

/**
 * How full the window is, estimated from the size of a request: the API's count of the last prompt
 * (input, cache reads and writes) over that request's characters calibrates the next estimate.
 */
class ContextMeter {
  tokensPerChar = 0.25

  constructor(public window: number) {}

  calibrate(chars: number, usage: Message['usage']): void {
    this.calibrateTokens(chars, (usage.input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0))
  }

  calibrateTokens(chars: number, tokens: number): void {
    if (chars > 0 && tokens > 0) this.tokensPerChar = tokens / chars
  }

  estimate(chars: number): number {
    return Math.round(chars * this.tokensPerChar)
  }

  /** Whether a prompt leaves too little of the window for the answer (whose share is capped, for small windows). */
  nearWindow(tokens: number, maxTokens: number): boolean {
    return tokens > (this.window - Math.min(maxTokens, this.window / 4)) * COMPACT_AT
  }
}

/** Counted prompts: a turn's request is estimated before it is sent and calibrated after, one count. */
const counted = new WeakMap<StreamParams, number>()

/** The characters of what a request sends as its prompt: system, tools and messages. */
function charsOf(params: StreamParams): number {
  let chars = counted.get(params)
  if (chars === undefined) {
    chars = JSON.stringify(params.system ?? '').length + JSON.stringify(params.tools ?? []).length + JSON.stringify(params.messages).length
    counted.set(params, chars)
  }

  return chars
}

type StreamParams = Parameters<Anthropic['messages']['stream']>[0]

/** The API refused the prompt as too long: the loop compacts and asks again, else `failure` is the error. */
class PromptTooLong extends Error {
  constructor(
    readonly counted: {tokens?: number; limit?: number},
    readonly failure: WaveError,
  ) {
    super(failure.message)
  }
}

async function requestTurn(options: AgentOptions, params: StreamParams): Promise<Message> {
  const {timeoutMs} = apiSettings()
  const retryBase = integerFromEnv('WAVE_RETRY_BASE_MS', STREAM_RETRY_BASE_MS, 0, 60_000)
  const reportRetry = ({attempt, reason}: {attempt: number; reason: string}) => options.onEvent?.({attempt, reason, type: 'retry'})
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
      const stream = options.client.messages.stream(params, {middleware: [retryObserver(reportRetry)], signal: attemptAbort.signal})
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
        reportRetry({attempt: attempt + 1, reason: `stream cut: ${scrubSecrets(errorLine(failure))}`})
        await sleep(retryBase * 2 ** attempt, options.signal)
        continue
      }

      const wave = apiFailure(failure, {baseURL: options.client.baseURL, model: options.model, requestId})
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
