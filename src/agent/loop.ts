/**
 * The agent loop: one streamed request per turn, the turn's tool calls run through the session's call
 * executor, every denial or failure answered as an error result. It returns an outcome for every way a
 * session ends (outcome.ts) and throws only for API failures and interrupts, each carrying what the
 * session did in `details`. What it leans on lives beside it: making a request (request.ts), compacting
 * the conversation (compaction.ts), and adding up usage, cost and budget (tally.ts).
 */
import type {ContentBlockParam, Message, MessageParam, ToolResultBlockParam, ToolUseBlock} from '@anthropic-ai/sdk/resources/messages'

import type {NoteEvent} from '../tools/notes.js'
import type {HookEvent} from '../tools/hooks/session-hooks.js'
import type {CallExecutor} from '../tools/turn.js'
import {ExitCode, type FailureDetails, WaveError} from '../base/errors.js'
import {type CompactionEvent, Compactor, ContextMeter, type SummaryRequest} from './compaction.js'
import {FALLBACK_CONTEXT_WINDOW, modelLimits} from '../model/table.js'
import type {AgentOutcome, Ending, SessionTotals} from './outcome.js'
import type {PriceTable, TokenUsage} from '../model/pricing.js'
import {sendableBlocks} from './conversation.js'
import {charsOf, interrupted, PromptTooLong, type StreamParams, type SystemPrompt, type ThinkingParams, type TurnRequest, turnParams} from './request.js'
import {Tally} from './tally.js'
import {MIN_OUTPUT_TOKENS, SessionSpend} from './spend.js'
import type {BudgetCap} from '../model/budget.js'

export type {CompactionEvent} from './compaction.js'
export type {AgentOutcome, StopReason} from './outcome.js'
export {emptyUsage, type TokenUsage} from '../model/pricing.js'

export type AgentEvent =
  | {type: 'request'; turn: number; mode: string}
  | {type: 'text'; text: string}
  /** The model's thinking, where it is shown (never on stdout, never in a plan). */
  | {type: 'thinking'; text: string}
  | {type: 'tool_call'; id: string; name: string; input: unknown}
  /** `changed`: the file a write tool changed, its real path (a run's contract checks where it lies). */
  | {type: 'tool_result'; id: string; name: string; isError: boolean; denied: boolean; content: string; changed?: string}
  /** After every response: the session's usage and cost so far (`costUsd` null for a model without a price). */
  | {type: 'usage'; turn: number; usage: TokenUsage; costUsd: number | null; stopReason?: string | null}
  | {type: 'retry'; attempt: number; reason: string}
  /** An agent (the Agent tool) started, nested under the call `id`. */
  | {type: 'agent_start'; id: string; description: string; subagentType: string}
  /** A call an agent made, nested under the Agent call `agent`. */
  | {type: 'agent_call'; agent: string; id: string; name: string; input: unknown}
  /** An agent ended: what it spent (counted in the session's usage and budget), and the bound that cut it, if one did. */
  | {type: 'agent_end'; id: string; description: string; turns: number; usage: TokenUsage; costUsd: number | null; cut?: string}
  /** `--fallback-model` taken: `from` stayed overloaded or unavailable after its retries; the session goes on with `to`. */
  | {type: 'fallback'; from: string; to: string; reason: string}
  /** The model gave the session's result through StructuredOutput, matching `--json-schema` (the result's `structured_output`). */
  | {type: 'structured_output'; value: unknown}
  /** A response stopped at `max_tokens` (the limit it had), and what the loop does about it. */
  | {type: 'output_limit'; turn: number; maxTokens: number; action: OutputLimitAction}
  /** An approved check wave runs when the model ends its turn: when it starts, and (with `exitCode`) when it ended. */
  | {type: 'check'; command: string; exitCode?: number | null; durationMs?: number}
  | CompactionEvent
  /** A hook ran (settings' `hooks`): its event, command, outcome and exit code. */
  | HookEvent
  /** The model's to-do list changed (TodoWrite), or it asked questions no one can answer (AskUserQuestion). */
  | NoteEvent

type OutputLimitAction =
  /** Tool calls were cut: the same request again with the model's whole output limit (nothing of the cut one ran). */
  | 'raise'
  /** Still cut at the limit: none of the turn's calls ran, each answered with an error asking for smaller pieces. */
  | 'smaller_pieces'
  /** A final answer was cut: the model is asked to continue it, once. */
  | 'continue'

/**
 * Runs a turn's tool calls (each reported as an event by the executor) and returns their results in
 * call order: src/tools/turn.ts, bound once per session (the registry, the policy, the sandbox, plan
 * mode's control).
 */
export type {CallExecutor, CallResult} from '../tools/turn.js'

/**
 * What the session does when the model ends a turn without tool calls: a message to go on with, an
 * ending of its own (`no_result`), or nothing (the session ends).
 */
export type FollowUp = string | Extract<Ending, {stopReason: 'no_result' | 'structured_output'}> | undefined

export interface LoopOptions {
  model: string
  maxTurns: number
  maxTokens?: number
  /** Thinking and effort, sent with every turn's request (reasoning.ts). */
  reasoning?: ThinkingParams
  /**
   * What shapes each request, asked before every turn: what is known of the model by then (catalog.ts:
   * the table's or a cached answer at first, the API's once it has come) and the reasoning it takes.
   * Absent: `maxTokens`, `reasoning` and `contextWindow` above, with the table's limits.
   */
  shape?(): RequestShape
  /** Asked when the model ends its turn without tool calls, with the text of that turn. */
  followUp?(turn: {text: string}): Promise<FollowUp> | FollowUp
  /** Makes one request (bound to the session's client, model and signal). */
  request: TurnRequest
  /** Runs the turn's calls. */
  execute: CallExecutor
  /** The tools offered this turn, as the API takes them, and the mode they are offered in (a control tool may change it). */
  offer(): {mode: string; tools: object[]}
  /** The system prompt, asked every turn (EnterPlanMode changes it): the part sessions share and the session's own (request.ts). */
  system(): Promise<string | SystemPrompt> | string | SystemPrompt
  /** The conversation so far; the loop appends to it (and a compaction replaces it, in place). */
  messages: MessageParam[]
  signal: AbortSignal
  onEvent?(event: AgentEvent): void
  /** Called with each message appended, for the transcript. */
  onMessage?(message: MessageParam): Promise<void> | void
  /** Awaited before tool calls run: what the session must read of the workspace before any tool can change it. */
  beforeTools?(): Promise<unknown>
  /** The whole conversation after a compaction replaced it: the transcript's new starting point. */
  onCompacted?(messages: MessageParam[], compaction: CompactionEvent): Promise<void> | void
  /**
   * Checked after each round of tool calls: a control tool may end the session (ExitPlanMode: true), or
   * its calls may have ended it another way (StructuredOutput out of tries: that ending).
   */
  stopRequested?(): boolean | Extract<Ending, {stopReason: 'structured_output'}>
  /**
   * When the model ends its turn without tool calls: a message to send for another turn (the approved
   * checks failed, enforcement.ts), or undefined to end the session.
   */
  onEndTurn?(): Promise<string | undefined>
  /** The session's hooks the loop fires (tools/hooks/): Stop when the model would end, PreCompact before a compaction. */
  hooks?: LoopHooks
  /** The model's context window in tokens (settings); default: the known window of the model, else 200k. */
  contextWindow?: number
  /** Prices over the built-in table (pricing.ts), by model ID prefix (settings). */
  prices?: PriceTable
  /** End with the budget outcome once the session has spent more than this cap (which names where it was set). */
  budget?: BudgetCap
  /**
   * What the session's earlier part spent (a resumed run): turns, usage and cost go on from these, so
   * `maxTurns` and `budget` bound the whole session. `costUsd` null: the earlier cost is unknown.
   */
  prior?: Partial<SessionTotals>
  /** Each response's usage as it comes (an agent's, added to the session's that started it). */
  onResponseUsage?(usage: Message['usage']): void
  /** The session's one counter of spending, shared with its agents (spend.ts); absent, the loop keeps its own over `budget`. */
  spend?: SessionSpend
}

/** A request the budget had no room for (spend.ts): the loop ends with the budget ending. */
class NoRoomInBudget extends Error {}

interface LoopHooks {
  /** A message sending the model back to work, or undefined to let it stop; `active`: it goes on because of a Stop hook already. */
  stop(active: boolean, lastMessage: string): Promise<string | undefined>
  preCompact(trigger: 'auto' | 'manual'): Promise<void>
}

/** What a turn's request is made of besides the conversation: its limits, reasoning and betas. */
export interface RequestShape extends ThinkingParams {
  maxTokens: number
  /** The window to plan for (compaction), in tokens. */
  contextWindow: number
  /** The model's largest max_tokens; undefined: unknown, so max_tokens is never raised. */
  maxOutput?: number
  /** `anthropic-beta` values every request carries (the 1M-context window). */
  betas: string[]
}

const DEFAULT_MAX_TOKENS = 16_000
/** Compactions tried for one request the API refuses as too long, before giving up. */
const COMPACTIONS_PER_REQUEST = 2
const SUMMARY_MAX_TOKENS = 8000
/** Tokens kept free of the window when raising max_tokens: the estimate of a prompt is not exact. */
const WINDOW_MARGIN = 2000

const CONTINUE_PROMPT = 'Your answer was cut off at the output limit. Continue it exactly where it stopped, without repeating anything.'
const CONTINUE_AFTER_WINDOW =
  "Your answer was cut off because the conversation filled the model's context window (not the output limit); older parts have been compacted. Continue it exactly where it stopped, without repeating anything."

export class AgentLoop {
  private readonly messages: MessageParam[]
  private readonly tally: Tally
  /** What the whole session spends, main loop and agents, checked before every request. */
  readonly spend: SessionSpend
  private readonly compactor: Compactor
  private readonly fixedShape: RequestShape
  /** The shape of the turn being made: read once per turn, so a turn and its retries agree. */
  private shape: RequestShape
  private readonly changed = new Set<string>()
  private denials = 0
  private turns: number
  private finalText = ''
  /** The text the next turn goes on with (a paused turn, an answer being continued). */
  private carried = ''
  private continued = false
  private nextMaxTokens: number | undefined
  /** The model goes on because a Stop hook sent it back (Claude Code's `stop_hook_active`). */
  private stopHookActive = false

  constructor(private readonly options: LoopOptions) {
    const {model, prior} = options
    this.messages = options.messages
    this.tally = new Tally(model, options.prices, options.budget, prior)
    this.spend = options.spend ?? new SessionSpend(options.budget, this.tally.budgetSpentUsd())
    const limits = modelLimits(model)
    this.fixedShape = {
      ...options.reasoning,
      betas: [],
      contextWindow: options.contextWindow ?? limits?.contextWindow ?? FALLBACK_CONTEXT_WINDOW,
      maxOutput: limits?.maxOutput,
      maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS,
    }
    this.shape = this.nextShape()
    this.turns = prior?.turns ?? 0
    const meter = new ContextMeter(this.shape.contextWindow)
    this.compactor = new Compactor(this.messages, meter, {changedFiles: () => [...this.changed], summarize: (request) => this.summarize(request)})
  }

  /** Runs turns until the session ends; each WaveError thrown carries what the session did in `details`. */
  async run(): Promise<AgentOutcome> {
    try {
      return await this.turnsUntilEnd()
    } catch (error) {
      const failure = error instanceof PromptTooLong ? error.failure : error
      if (!(failure instanceof WaveError) || failure.details?.stopReason !== undefined) throw failure
      const stopped = failure.exitCode === ExitCode.interrupted || failure.exitCode === ExitCode.terminated
      throw failure.withDetails({...this.totals(), filesChanged: [...this.changed], stopReason: stopped ? 'interrupted' : 'api_error'})
    }
  }

  private async turnsUntilEnd(): Promise<AgentOutcome> {
    const {options} = this
    // A resumed session may have spent its budget before: no request then.
    const spent = this.tally.overBudget()
    if (spent) return this.end(spent)
    while (true) {
      if (options.signal.aborted) throw interrupted(options.signal)
      if (this.turns >= options.maxTurns) return this.end({maxTurns: options.maxTurns, stopReason: 'max_turns'})

      this.turns++
      this.reshape()
      let maxTokens = this.nextMaxTokens ?? this.shape.maxTokens
      this.nextMaxTokens = undefined
      // The tools on offer this turn: a control tool of the turn before may have changed the mode.
      const {mode, tools} = options.offer()
      // The turn is announced once the budget admits its request: a turn the budget refused never happened.
      let announced = false
      const announce = () => {
        if (!announced) this.emit({mode, turn: this.turns, type: 'request'})
        announced = true
      }
      let response = await this.ask(maxTokens, tools, announce)
      if (!response) {
        this.turns--
        return this.end(this.budgetEnding())
      }

      // The SDK parses a cut tool call's input leniently, so a Write cut at the limit would write half a
      // file: a cut turn's calls never run. Asking the same again with the model's whole output limit
      // usually lets the call complete (nothing of the cut response ran or was kept); at the limit
      // already, the calls are answered with an error that asks for smaller pieces, below.
      const raised = this.largestMaxTokens(response)
      if (stoppedAt(response, 'max_tokens') && callsOf(response).length > 0 && raised > maxTokens) {
        const over = this.tally.overBudget()
        if (over) return this.end(over)
        this.emit({action: 'raise', maxTokens, turn: this.turns, type: 'output_limit'})
        maxTokens = raised
        response = await this.ask(maxTokens, tools)
        if (!response) return this.end(this.budgetEnding())
      }

      // Sent back as the API accepts it: no empty text block, no thinking cut before its signature.
      const content = sendableBlocks(response.content as ContentBlockParam[])
      if (content.length > 0) await this.append({content, role: 'assistant'})
      const over = this.tally.overBudget()
      if (over) return this.end(over)
      for (const block of response.content) if (block.type === 'thinking' && block.thinking.trim()) this.emit({text: block.thinking, type: 'thinking'})
      const text = textOf(response)
      if (text.trim()) {
        this.finalText = (this.carried + text).trim()
        this.emit({text: text.trim(), type: 'text'})
      }

      if (response.stop_reason === 'refusal') return this.end({category: response.stop_details?.category, stopReason: 'refusal'})

      const calls = callsOf(response)
      const cut = stoppedAt(response, 'max_tokens') || stoppedAt(response, 'model_context_window_exceeded')
      if (stoppedAt(response, 'model_context_window_exceeded')) this.compactor.compactFirst = true
      if (cut && calls.length > 0) {
        await this.answerCutCalls(calls, maxTokens, stoppedAt(response, 'model_context_window_exceeded'))
        continue
      }

      if (cut) {
        // A final answer cut at the limit gets one continuation, with the model's whole output limit.
        if (this.continued) return this.end({cutBy: response.stop_reason ?? 'max_tokens', maxTokens, stopReason: 'max_tokens'})
        this.continued = true
        this.carried += text
        this.nextMaxTokens = Math.max(maxTokens, this.largestMaxTokens(response))
        this.emit({action: 'continue', maxTokens, turn: this.turns, type: 'output_limit'})
        await this.append({content: stoppedAt(response, 'model_context_window_exceeded') ? CONTINUE_AFTER_WINDOW : CONTINUE_PROMPT, role: 'user'})
        continue
      }

      this.continued = false
      // A paused turn (a long server-side step) goes on when sent back as it is.
      if (response.stop_reason === 'pause_turn' && calls.length === 0) {
        this.carried += text
        continue
      }

      this.carried = ''
      if (calls.length === 0) {
        const ended = await this.endOfTurn(text, response)
        if (ended) return ended
        continue
      }

      await this.runCalls(calls)
      const stop = options.stopRequested?.()
      if (stop) return this.end(stop === true ? {stopReason: 'stop_requested'} : stop)
      // Agents the calls started spent from this session's budget.
      const afterCalls = this.tally.overBudget()
      if (afterCalls) return this.end(afterCalls)
    }
  }

  /**
   * A turn without calls ends the session, unless something asks for more work, which becomes the next
   * user message (undefined returned: the loop goes on): the follow-up (a result still due), then the
   * Stop hooks, then the approved checks (a hook may ask for more work the checks should see).
   */
  private async endOfTurn(text: string, response: Message): Promise<AgentOutcome | undefined> {
    const {options} = this
    const next = await options.followUp?.({text})
    if (typeof next === 'string') {
      await this.append({content: next, role: 'user'})
      return undefined
    }

    if (next) return this.end(next)
    const again = await options.hooks?.stop(this.stopHookActive, text)
    this.stopHookActive = again !== undefined
    if (again) {
      await this.append({content: again, role: 'user'})
      return undefined
    }

    // The approved checks run now; failing ones come back as the next user message.
    const more = await options.onEndTurn?.()
    if (more) {
      await this.append({content: more, role: 'user'})
      return undefined
    }

    return this.end({stopReason: response.stop_reason === 'stop_sequence' ? 'stop_sequence' : 'end_turn'})
  }

  /** The turn's calls run (once the workspace's starting state is taken), their results the next user message. */
  private async runCalls(calls: ToolUseBlock[]): Promise<void> {
    await this.options.beforeTools?.()
    const results = await this.options.execute(calls)
    const blocks: ToolResultBlockParam[] = calls.map((call, index) => {
      const result = results[index]
      if (result.denied) this.denials++
      if (result.changed) this.changed.add(result.changed)
      // ToolSearch's result is the tools it loaded, as references the API expands into their definitions.
      const content = result.references ? result.references.map((name) => ({tool_name: name, type: 'tool_reference' as const})) : result.content
      return {content, is_error: result.isError || undefined, tool_use_id: call.id, type: 'tool_result'}
    })
    await this.append({content: blocks, role: 'user'})
  }

  /**
   * The turn's request, compacted first when it nears the window, and again when the API finds it too
   * long. Undefined when a compaction's summary spent the rest of the budget.
   */
  private async ask(maxTokens: number, tools: object[], admitted?: () => void): Promise<Message | undefined> {
    try {
      return await this.askWithin(maxTokens, tools, admitted)
    } catch (error) {
      if (error instanceof NoRoomInBudget) return undefined
      throw error
    }
  }

  private async askWithin(maxTokens: number, tools: object[], admitted?: () => void): Promise<Message | undefined> {
    const {effort, thinking} = this.shape
    const params = async () =>
      turnParams({effort, maxTokens, messages: this.messages, model: this.options.model, system: await this.options.system(), thinking, tools})
    let request = await params()
    if (this.compactor.due(charsOf(request), this.shape.maxTokens) && (await this.compact('near_window', request))) {
      if (this.tally.overBudget()) return undefined
      request = await params()
    }

    for (let compacted = 0; ; compacted++) {
      try {
        return await this.send(request, admitted)
      } catch (error) {
        if (!(error instanceof PromptTooLong)) throw error
        // A second refusal after clearing means clearing was not enough: summarise.
        if (compacted < COMPACTIONS_PER_REQUEST && (await this.compact('prompt_too_long', request, error.counted, compacted > 0))) {
          if (this.tally.overBudget()) return undefined
          request = await params()
          continue
        }

        const {failure} = error
        throw new WaveError(
          failure.message,
          failure.exitCode,
          "The conversation does not fit the model's context window, even compacted: split the task into smaller ones.",
        )
      }
    }
  }

  /** One request and its accounting: usage, cost, and the calibration of the next prompt's estimate. */
  private async send(asked: StreamParams, admitted?: () => void): Promise<Message> {
    const admission = this.admit(asked)
    if (!admission) throw new NoRoomInBudget()
    admitted?.()
    const params = admission.maxTokens === asked.max_tokens ? asked : {...asked, max_tokens: admission.maxTokens}
    let response: Message
    try {
      response = await this.options.request(params, {betas: this.shape.betas})
    } catch (error) {
      admission.settle(0)
      throw error
    }

    admission.settle(this.tally.add(response.usage))
    this.options.onResponseUsage?.(response.usage)
    this.compactor.meter.calibrate(charsOf(asked), response.usage)
    this.emit({costUsd: this.tally.costUsd(), stopReason: response.stop_reason, turn: this.turns, type: 'usage', usage: {...this.tally.usage}})
    return response
  }

  /**
   * The session's counter lets the request through when its worst case fits what is left of the budget
   * (and of this loop's own cap, an agent's share), with max_tokens lowered to fit; undefined when even
   * MIN_OUTPUT_TOKENS do not (a thinking budget needs its own tokens on top).
   */
  private admit(params: StreamParams) {
    const thinking = params.thinking?.type === 'enabled' ? params.thinking.budget_tokens : 0
    const floor = Math.min(params.max_tokens, thinking + MIN_OUTPUT_TOKENS)
    const promptTokens = this.compactor.meter.estimate(charsOf(params))
    return this.spend.admit({floor, maxTokens: params.max_tokens, promptTokens}, this.tally.price, this.tally.leftOfCap())
  }

  /** The budget ending: the loop's own cap when it is what left no room, else the session's (an agent's session). */
  private budgetEnding() {
    const own = this.options.budget
    const session = this.spend.cap
    const binding = own && (!session || this.tally.leftOfCap() <= this.spend.left()) ? own : (session ?? own)
    return this.tally.budgetEnding(binding)
  }

  /**
   * What an agent started by this session spent on one response: counted in this session's usage, cost
   * and budget, and reported as its usage so far.
   */
  charge(usage: Message['usage']): void {
    this.tally.add(usage)
    this.emit({costUsd: this.tally.costUsd(), turn: this.turns, type: 'usage', usage: {...this.tally.usage}})
  }

  private async compact(
    trigger: CompactionEvent['trigger'],
    params: StreamParams,
    counted: {tokens?: number; limit?: number} = {},
    summaryOnly = false,
  ): Promise<boolean> {
    await this.options.hooks?.preCompact('auto')
    const step = await this.compactor.compact(trigger, charsOf({...params, messages: []}), counted, summaryOnly)
    if (!step) return false
    const event: CompactionEvent = {...step, turn: this.turns, type: 'compaction'}
    this.emit(event)
    await this.options.onCompacted?.(this.messages, event)
    return true
  }

  /** The summary request of a compaction: no tools, the model's answer only. */
  private async summarize(request: SummaryRequest): Promise<string> {
    const maxTokens = Math.min(SUMMARY_MAX_TOKENS, this.shape.maxOutput ?? SUMMARY_MAX_TOKENS)
    const params = {max_tokens: maxTokens, messages: [{content: request.prompt, role: 'user' as const}], model: this.options.model, system: request.system}
    const response = await this.send(params).catch((error: unknown) => {
      throw error instanceof PromptTooLong ? error.failure : error
    })
    return textOf(response).trim()
  }

  /** A turn cut with tool calls: none runs, each answered with an error (the cut one told how to go on). */
  private async answerCutCalls(calls: ToolUseBlock[], maxTokens: number, windowFull: boolean): Promise<void> {
    this.emit({action: 'smaller_pieces', maxTokens, turn: this.turns, type: 'output_limit'})
    const results = calls.map((call, index) => cutCallResult(call, index === calls.length - 1, maxTokens, windowFull))
    for (const [index, call] of calls.entries()) {
      this.emit({id: call.id, input: call.input, name: call.name, type: 'tool_call'})
      this.emit({content: results[index].content as string, denied: false, id: call.id, isError: true, name: call.name, type: 'tool_result'})
    }

    this.carried = ''
    await this.append({content: results, role: 'user'})
  }

  /**
   * The largest `max_tokens` worth asking for after `response`: the model's output limit, within what
   * the window leaves (older models refuse a prompt and max_tokens that together exceed it); 0 when the
   * model's limit is unknown.
   */
  private largestMaxTokens(response: Message): number {
    const {maxOutput} = this.shape
    if (maxOutput === undefined) return 0
    const {cache_creation_input_tokens: written, cache_read_input_tokens: read, input_tokens: input, output_tokens: output} = response.usage
    const used = (input ?? 0) + (read ?? 0) + (written ?? 0) + (output ?? 0)
    return Math.min(maxOutput, this.compactor.meter.window - used - WINDOW_MARGIN)
  }

  private nextShape(): RequestShape {
    return this.options.shape?.() ?? this.fixedShape
  }

  /** The shape for this turn; a window learnt since (the API's answer) replaces the one planned for. */
  private reshape(): void {
    const before = this.shape
    this.shape = this.nextShape()
    if (this.shape.contextWindow !== before.contextWindow) this.compactor.meter.window = this.shape.contextWindow
  }

  private async append(message: MessageParam): Promise<void> {
    this.messages.push(message)
    await this.options.onMessage?.(message)
  }

  private emit(event: AgentEvent): void {
    this.options.onEvent?.(event)
  }

  private totals(): SessionTotals {
    return {costUsd: this.tally.costUsd(), turns: this.turns, usage: {...this.tally.usage}}
  }

  private end(ending: Ending): AgentOutcome {
    return {...ending, ...this.totals(), changed: this.changed, compactions: this.compactor.compactions, denials: this.denials, finalText: this.finalText}
  }
}

/** What a session that ended reports if its ending is a failure (outcome.ts, stoppedBy). */
export function outcomeDetails(outcome: AgentOutcome): FailureDetails {
  return {costUsd: outcome.costUsd, filesChanged: [...outcome.changed], stopReason: outcome.stopReason, turns: outcome.turns, usage: outcome.usage}
}

/**
 * What a cut turn's call gets instead of running: the cut one is told why and how to go on. A turn cut
 * because the window is full is not the output limit's doing: smaller pieces would not help, the
 * compaction before the next request does.
 */
function cutCallResult(call: ToolUseBlock, isLast: boolean, maxTokens: number, windowFull: boolean): ToolResultBlockParam {
  const content = windowFull
    ? isLast
      ? "This call was cut off because the conversation filled the model's context window (not the output limit), so it was not run. Older parts of the conversation are being compacted: make the call again."
      : "Not run: this turn was cut off because the conversation filled the model's context window, so none of its calls ran. Make the call again if it is still needed."
    : isLast
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
