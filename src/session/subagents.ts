/**
 * The agents one session starts (the Agent tool, src/tools/agent.ts): each a fresh conversation run by
 * its own loop, with its own system prompt, tools and policy, its final message the call's result. At
 * most `maxConcurrent` run at once (the turn executor starts a turn's Agent calls together); each is
 * bounded by a turn cap, a share of the session's budget and a wall-clock limit, and one that reaches a
 * bound returns what it found so far, marked as cut, never an error that ends the session. What each
 * response of an agent spends is counted in the session's usage and budget as it comes (`charge`).
 */
import type Anthropic from '@anthropic-ai/sdk'
import type {Message, MessageParam} from '@anthropic-ai/sdk/resources/messages'

import {errorLine, WaveError} from '../base/errors.js'
import type {AgentLimits} from '../config/settings.js'
import {emptyUsage, type PriceTable, type TokenUsage} from '../model/pricing.js'
import type {BudgetCap} from '../model/budget.js'
import type {PolicyContext} from '../policy/policy.js'
import type {SandboxSettings} from '../base/process/sandbox.js'
import type {BackgroundTasks} from '../tools/background.js'
import type {SessionHooks} from '../tools/hooks/session-hooks.js'
import type {ToolRegistry} from '../tools/registry.js'
import {type AgentLauncher, type AgentRequest, type SessionControl, ToolError} from '../tools/tool.js'
import {turnExecutor} from '../tools/turn.js'
import {type AgentEvent, AgentLoop, type RequestShape} from '../agent/loop.js'
import type {AgentOutcome} from '../agent/outcome.js'
import {turnRequest} from '../agent/request.js'
import type {SessionSpend} from '../agent/spend.js'

/** One type of agent as a session offers it: its prompt, tools and policy. */
export interface SubagentKind {
  system: string
  registry: ToolRegistry
  /** The policy its calls are decided by (`nested`: no control tools). */
  policy(): PolicyContext
  sandbox?: SandboxSettings
  /** Background commands, for agents that may start them (general-purpose); absent: none. */
  tasks?: BackgroundTasks
}

/** What one agent left for the transcript: its conversation, nested under the call that started it. */
export interface AgentRecord {
  toolUseId: string
  description: string
  subagentType: string
  messages: MessageParam[]
  turns: number
  usage: TokenUsage
  costUsd: number | null
  cut?: string
}

interface SubagentsOptions {
  client: Anthropic
  model: string
  /** The session's request shape (limits, reasoning), asked before every turn. */
  shape(): RequestShape
  prices?: PriceTable
  /** The session's budget: each agent may spend `limits.budgetShare` of what is left of it when it starts. */
  budget?: BudgetCap
  /** The session's one counter of spending (agent/spend.ts): every request of every agent is checked against it. */
  spend?(): SessionSpend | undefined
  limits: AgentLimits
  /** The types offered in plan mode or out of it, by name. */
  kinds(planMode: boolean): Record<string, SubagentKind>
  /** Adds one response's usage to the session's (its usage, cost and budget). */
  charge(usage: Message['usage']): void
  onEvent(event: AgentEvent): void
  /** Records an agent's conversation once it ended. */
  record?(agent: AgentRecord): Promise<void>
  /**
   * The session's hooks: an agent's calls fire PreToolUse and PostToolUse as the session's do (a guard
   * holds inside an agent too), and its end SubagentStop, which may send it back as Stop does the session.
   */
  hooks?: SessionHooks
}

/** Control tools an agent has none of: every call to one is refused by the policy before this is asked. */
const NO_CONTROL: SessionControl = {
  enterPlanMode: () => Promise.reject(new ToolError('Agents cannot enter plan mode.')),
  exitPlanMode: () => Promise.reject(new ToolError('Agents have no plan to finish.')),
}

export class Subagents implements AgentLauncher {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly options: SubagentsOptions) {}

  types(planMode: boolean): string[] {
    return Object.keys(this.options.kinds(planMode))
  }

  async launch(request: AgentRequest, signal: AbortSignal): Promise<string> {
    const kind = this.options.kinds(request.planMode)[request.subagentType]
    if (!kind) throw new ToolError(`Unknown subagent_type ${JSON.stringify(request.subagentType)}.`)
    await this.slot(signal)
    try {
      return await this.run(kind, request, signal)
    } finally {
      this.release()
    }
  }

  private async slot(signal: AbortSignal): Promise<void> {
    if (this.running < this.options.limits.maxConcurrent) {
      this.running++
      return
    }

    await new Promise<void>((resolve) => this.waiting.push(resolve))
    if (signal.aborted) {
      this.release()
      throw new ToolError('The session was interrupted before the agent started.')
    }
  }

  private release(): void {
    const next = this.waiting.shift()
    // The slot passes straight to the next agent waiting: the count stays.
    if (next) next()
    else this.running--
  }

  private async run(kind: SubagentKind, request: AgentRequest, signal: AbortSignal): Promise<string> {
    const {budget, hooks, limits, onEvent} = this.options
    const clock = new AbortController()
    const timer = setTimeout(() => clock.abort(), limits.timeoutMs)
    const agentSignal = AbortSignal.any([signal, clock.signal])
    const messages: MessageParam[] = [{content: request.prompt, role: 'user'}]
    let said = ''
    onEvent({description: request.description, id: request.id, subagentType: request.subagentType, type: 'agent_start'})
    const loop = new AgentLoop({
      execute: turnExecutor(
        {hooks, policy: kind.policy, registry: kind.registry, sandbox: kind.sandbox, session: NO_CONTROL, signal: agentSignal, tasks: kind.tasks},
        {started: (call) => onEvent({agent: request.id, id: call.id, input: call.input, name: call.name, type: 'agent_call'})},
      ),
      hooks: hooks && {
        preCompact: (trigger) => hooks.preCompact(trigger),
        stop: (active, lastMessage) => hooks.subagentStop({id: request.id, lastMessage, messages, type: request.subagentType}, active),
      },
      budget: budget && {source: budget.source, usd: shareOfWhatIsLeft(budget, this.options.spend?.(), limits.budgetShare)},
      spend: this.options.spend?.(),
      maxTurns: limits.maxTurns,
      messages,
      model: this.options.model,
      offer: () => {
        const policy = kind.policy()
        return {mode: policy.mode, tools: kind.registry.apiTools(policy)}
      },
      onEvent: (event) => {
        if (event.type === 'text') said = event.text
      },
      onResponseUsage: (usage) => this.options.charge(usage),
      prices: this.options.prices,
      request: turnRequest({client: this.options.client, model: this.options.model, signal: agentSignal}),
      shape: this.options.shape,
      signal: agentSignal,
      // A hook that answered `continue: false` stops the agent too, as it stops the session.
      stopRequested: () => hooks?.halted !== undefined,
      system: () => kind.system,
    })

    let outcome: Pick<AgentOutcome, 'turns' | 'usage' | 'costUsd'> & {stopReason?: string; finalText?: string}
    let cut: string | undefined
    try {
      outcome = await loop.run()
      cut = cutBy(outcome as AgentOutcome, limits)
    } catch (error) {
      // The session itself was interrupted: that ends it, not the agent alone.
      if (signal.aborted) throw error
      const details = error instanceof WaveError ? error.details : undefined
      outcome = {costUsd: details?.costUsd ?? null, turns: details?.turns ?? 0, usage: details?.usage ?? emptyUsage()}
      cut = clock.signal.aborted ? `it reached its time limit of ${Math.round(limits.timeoutMs / 1000)} s` : `the model API failed: ${errorLine(error)}`
    } finally {
      clearTimeout(timer)
    }

    const found = (outcome.finalText || said).trim()
    onEvent({costUsd: outcome.costUsd, cut, description: request.description, id: request.id, turns: outcome.turns, type: 'agent_end', usage: outcome.usage})
    await this.options.record?.({
      costUsd: outcome.costUsd,
      cut,
      description: request.description,
      messages,
      subagentType: request.subagentType,
      toolUseId: request.id,
      turns: outcome.turns,
      usage: outcome.usage,
    })
    if (!cut) return found || '(The agent ended without a final message.)'
    return `[Agent cut short: ${cut}. What it found so far follows.]\n\n${found || '(It had reported nothing yet.)'}`
  }
}

/**
 * An agent's share of the budget: of what is left when it starts, not of the whole cap, so that a turn of
 * twelve agents cannot each take a quarter of it (issue 48).
 */
function shareOfWhatIsLeft(budget: BudgetCap, spend: SessionSpend | undefined, share: number): number {
  const left = Math.max(0, Math.min(budget.usd, spend?.left() ?? budget.usd))
  return left * share
}

/** Which bound ended an agent's loop, in words, or undefined when it finished. */
function cutBy(outcome: AgentOutcome, limits: AgentLimits): string | undefined {
  switch (outcome.stopReason) {
    case 'max_turns': {
      return `it reached its turn cap of ${limits.maxTurns} turns`
    }

    case 'budget': {
      return `it reached its share of the budget (${outcome.maxBudgetUsd} USD)`
    }

    case 'max_tokens': {
      return 'its answer stayed cut at the output limit'
    }

    case 'refusal': {
      return 'the model refused'
    }

    default: {
      return undefined
    }
  }
}
