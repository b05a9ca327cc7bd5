/**
 * What a session has spent: usage and cost added up response by response (a price may depend on each
 * prompt's size), and whether that is past the session's budget (the lowest cap given, which carries
 * where it was set, so that the ending names it: model/budget.ts).
 */
import type {Message} from '@anthropic-ai/sdk/resources/messages'

import type {BudgetCap, BudgetSource} from '../model/budget.js'
import {budgetPriceOf, costAt, costOf, emptyUsage, type ModelPrice, type PriceTable, roundUsd, type TokenUsage} from '../model/pricing.js'

export class Tally {
  readonly usage: TokenUsage
  private cost: number | null
  /** What the budget counts: the cost, or for a model without a price, at its family's highest (budgetPriceOf). */
  private budgetSpent: number
  private readonly budgetPrice: ModelPrice

  constructor(
    private readonly model: string,
    private readonly prices?: PriceTable,
    private readonly budget?: BudgetCap,
    prior: {usage?: TokenUsage; costUsd?: number | null} = {},
  ) {
    this.usage = {...emptyUsage(), ...prior.usage}
    this.cost = prior.costUsd === undefined ? 0 : prior.costUsd
    this.budgetPrice = budgetPriceOf(model, prices).price
    this.budgetSpent = this.cost ?? costAt(this.budgetPrice, this.usage)
  }

  /** Adds one response's usage; returns what it cost as the budget counts it. */
  add(turn: Message['usage']): number {
    const usage: TokenUsage = {
      cache_creation_input_tokens: turn.cache_creation_input_tokens ?? 0,
      cache_read_input_tokens: turn.cache_read_input_tokens ?? 0,
      input_tokens: turn.input_tokens ?? 0,
      output_tokens: turn.output_tokens ?? 0,
    }
    for (const key of Object.keys(usage) as Array<keyof TokenUsage>) this.usage[key] += usage[key]
    const cost = costOf(this.model, usage, this.prices)
    this.cost = cost === null || this.cost === null ? null : this.cost + cost
    const counted = cost ?? costAt(this.budgetPrice, usage)
    this.budgetSpent += counted
    return counted
  }

  /** What the budget has counted so far. */
  budgetSpentUsd(): number {
    return this.budgetSpent
  }

  /** The price the budget counts tokens at: the model's, or its family's highest (budgetPriceOf). */
  get price(): ModelPrice {
    return this.budgetPrice
  }

  /** What is left of this tally's own cap (an agent's share), or Infinity without one. */
  leftOfCap(): number {
    return this.budget === undefined ? Number.POSITIVE_INFINITY : this.budget.usd - this.budgetSpent
  }

  /**
   * The budget ending where the next request did not fit what was left (spend.ts): past the cap already,
   * or short of it by less than the request's worst case. Names the cap, and where it was set.
   */
  budgetEnding(cap: BudgetCap | undefined = this.budget): {stopReason: 'budget'; spentUsd: number; maxBudgetUsd: number; source: BudgetSource} {
    const over = this.overBudget()
    if (over || cap === undefined) return over!
    return {maxBudgetUsd: cap.usd, source: cap.source, spentUsd: this.budgetSpent, stopReason: 'budget'}
  }

  /** The cost so far as reported (rounded to a millionth of a dollar), or null without a price. */
  costUsd(): number | null {
    return this.cost === null ? null : roundUsd(this.cost)
  }

  /** The budget ending once more than the budget is spent, else undefined. */
  overBudget(): {stopReason: 'budget'; spentUsd: number; maxBudgetUsd: number; source: BudgetSource} | undefined {
    const spent = this.budgetSpent
    if (this.budget === undefined || spent <= this.budget.usd) return undefined
    return {maxBudgetUsd: this.budget.usd, source: this.budget.source, spentUsd: spent, stopReason: 'budget'}
  }
}
