/**
 * How a session asks the model to think and how much it may write, as Claude Code runs the same models:
 * adaptive thinking and effort `high` where the model takes them, `max_tokens` 64,000 within the model's
 * output limit. `--thinking`, `--effort` and `--max-output-tokens` (or the settings) choose otherwise;
 * what a model cannot take is left out with a note, never sent to be refused.
 */
import type {ThinkingConfigParam} from '@anthropic-ai/sdk/resources/messages'

import {usageError} from '../base/errors.js'
import type {ModelProfile} from './catalog.js'
import type {Effort} from './table.js'

export {EFFORTS, type Effort} from './table.js'

/** `--thinking`: adaptive (the model decides), off, or a budget of thinking tokens. */
export type ThinkingSetting = 'adaptive' | 'off' | number

/** The smallest thinking budget the API takes. */
export const MIN_THINKING_BUDGET = 1024
const DEFAULT_MAX_TOKENS = 64_000
const DEFAULT_EFFORT: Effort = 'high'

/** What was asked for: flags over settings; absent means the default. */
export interface ReasoningChoice {
  effort?: Effort
  thinking?: ThinkingSetting
  maxOutputTokens?: number
}

/** What the requests of a session carry. */
export interface Reasoning {
  maxTokens: number
  thinking?: ThinkingConfigParam
  effort?: Effort
  /** Why something asked for is not sent (the model does not take it). */
  notes: string[]
}

/** What a model takes; undefined fields: unknown (a model wave knows nothing of). */
interface ModelCapabilities {
  maxOutput?: number
  /** The thinking types it takes; undefined when unknown. */
  thinking?: Array<'adaptive' | 'enabled'>
  /** The effort levels it takes; undefined when unknown. */
  efforts?: Effort[]
}

/** What a session knows the model can do (catalog.ts): the API's description, cached or fresh, else the table's; nothing for a model neither knows. */
export function capabilitiesOfProfile(profile: ModelProfile): ModelCapabilities {
  if (profile.source === 'unknown') return {}
  return {efforts: profile.efforts, maxOutput: profile.maxOutput, thinking: profile.thinking}
}

/**
 * The request settings for `model` given what was chosen; a budget not below max_tokens is a usage
 * error, unless `clampBudget` (a session under way that learnt a lower output limit from the API: the
 * budget is lowered below it, with a note, rather than the session failing mid-way).
 */
export function reasoningFor(model: string, choice: ReasoningChoice, capabilities: ModelCapabilities, clampBudget = false): Reasoning {
  const notes: string[] = []
  const maxTokens = Math.min(choice.maxOutputTokens ?? DEFAULT_MAX_TOKENS, capabilities.maxOutput ?? Number.POSITIVE_INFINITY)
  if (choice.maxOutputTokens !== undefined && maxTokens < choice.maxOutputTokens) {
    notes.push(`--max-output-tokens ${choice.maxOutputTokens} is above ${model}'s output limit: ${maxTokens} is asked for.`)
  }

  // Asked for explicitly, a setting is sent to a model whose capabilities are unknown; a default is not.
  const takes = <T>(list: T[] | undefined, value: T, explicit: boolean) => (list === undefined ? explicit : list.includes(value))
  let thinking: ThinkingConfigParam | undefined
  const setting = choice.thinking ?? 'adaptive'
  if (setting === 'adaptive') {
    if (takes(capabilities.thinking, 'adaptive', choice.thinking !== undefined)) thinking = {type: 'adaptive'}
    else if (choice.thinking !== undefined) notes.push(`${model} takes no adaptive thinking: it is not asked to think.`)
  } else if (setting === 'off') {
    // Said explicitly to a model that thinks, so that one thinking by default does not.
    if (capabilities.thinking === undefined || capabilities.thinking.length > 0) thinking = {type: 'disabled'}
  } else if (takes(capabilities.thinking, 'enabled', true)) {
    let budget = setting
    if (budget >= maxTokens && clampBudget && maxTokens > MIN_THINKING_BUDGET) {
      budget = maxTokens - 1
      notes.push(`--thinking ${setting} is not below ${model}'s output limit (${maxTokens}): a budget of ${budget} is asked for.`)
    }

    if (budget >= maxTokens)
      throw usageError(`--thinking ${setting}: a thinking budget must be below max_tokens (${maxTokens}).`, 'Lower the budget, or raise --max-output-tokens.')
    thinking = {budget_tokens: budget, type: 'enabled'}
  } else {
    notes.push(`${model} takes no thinking budget: it is not asked to think.`)
  }

  let effort: Effort | undefined
  const wanted = choice.effort ?? DEFAULT_EFFORT
  if (takes(capabilities.efforts, wanted, choice.effort !== undefined)) effort = wanted
  else if (choice.effort !== undefined) notes.push(`${model} takes no effort ${choice.effort}: none is sent.`)
  return {effort, maxTokens, notes, thinking}
}

/** What the plan state records of a session's reasoning: the effective effort, thinking and max_tokens. */
export function stateReasoning(reasoning: Reasoning): {effort?: string; thinking?: string | number; maxOutputTokens: number} {
  const {thinking} = reasoning
  const recorded =
    thinking === undefined ? undefined : thinking.type === 'enabled' ? thinking.budget_tokens : thinking.type === 'disabled' ? 'off' : thinking.type
  return {effort: reasoning.effort, maxOutputTokens: reasoning.maxTokens, thinking: recorded}
}

/** `--thinking` as given: adaptive, off, or a whole number of tokens (at least 1024). */
export function parseThinking(input: string): ThinkingSetting {
  if (input === 'adaptive' || input === 'off') return input
  const budget = Number(input)
  if (!Number.isInteger(budget) || budget < MIN_THINKING_BUDGET) {
    throw new Error(`Expected adaptive, off, or a thinking budget of at least ${MIN_THINKING_BUDGET} tokens, but received: ${input}`)
  }

  return budget
}
