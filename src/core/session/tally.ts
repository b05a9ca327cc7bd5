/**
 * What a session has spent: usage and cost added up response by response (a price may depend on each
 * prompt's size), and whether that is past the session's budget.
 */
import type {Message} from '@anthropic-ai/sdk/resources/messages'

import {ExitCode, WaveError} from '../errors.js'
import {costOf, emptyUsage, type PriceTable, priceOf, roundUsd, type TokenUsage} from './pricing.js'

export class Tally {
  readonly usage: TokenUsage
  private cost: number | null

  constructor(
    private readonly model: string,
    private readonly prices?: PriceTable,
    private readonly maxBudgetUsd?: number,
    prior: {usage?: TokenUsage; costUsd?: number | null} = {},
  ) {
    this.usage = {...emptyUsage(), ...prior.usage}
    this.cost = prior.costUsd === undefined ? 0 : prior.costUsd
  }

  /** A budget needs a price: refused before any request (exit 2) when the model has none. */
  assertPriced(): void {
    if (this.maxBudgetUsd === undefined || priceOf(this.model, this.prices)) return
    throw new WaveError(
      `--max-budget-usd needs the price of ${this.model}, and wave knows none.`,
      ExitCode.usage,
      'Add the model to the settings\' "prices" (USD per million tokens: input, output, cacheWrite, cacheRead).',
      {stopReason: 'budget'},
    )
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
    this.cost = cost === null || this.cost === null ? null : this.cost + cost
  }

  /** The cost so far as reported (rounded to a millionth of a dollar), or null without a price. */
  costUsd(): number | null {
    return this.cost === null ? null : roundUsd(this.cost)
  }

  /** The budget ending once more than the budget is spent, else undefined. */
  overBudget(): {stopReason: 'budget'; spentUsd: number; maxBudgetUsd: number} | undefined {
    const spent = this.cost
    if (this.maxBudgetUsd === undefined || spent === null || spent <= this.maxBudgetUsd) return undefined
    return {maxBudgetUsd: this.maxBudgetUsd, spentUsd: spent, stopReason: 'budget'}
  }
}
