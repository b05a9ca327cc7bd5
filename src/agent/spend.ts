/**
 * A session's spending against its cap, in one counter for the main loop and every agent it starts, and
 * checked before each request rather than after a turn: a request is sent only when what it can cost at
 * most (its prompt, and its `max_tokens` at the output price) fits in what is left, counting what the
 * requests in flight may still cost. A request that does not fit is sent with a smaller `max_tokens` that
 * does, and not at all when what is left buys less than `MIN_OUTPUT_TOKENS`: so a session, agents and all,
 * ends within one request of its cap, where checking after each turn let twelve agents in one turn spend
 * three times it (issue 48). The session's first request is always sent (with at least that many output
 * tokens): a cap below one request's worst case ends the session after it, with what it cost, rather than
 * before anything was asked.
 */
import type {BudgetCap} from '../model/budget.js'
import {costAt, type ModelPrice} from '../model/pricing.js'

/** The fewest output tokens worth asking for: below this, what is left of the budget ends the session. */
export const MIN_OUTPUT_TOKENS = 1024

/** A request let through: settled with what it cost once its response came (or with nothing, when it failed). */
export interface Admission {
  /** The `max_tokens` to send: the one asked for, or less so that the worst case fits. */
  maxTokens: number
  settle(costUsd: number): void
}

export class SessionSpend {
  private spent: number
  private inFlight = 0
  private admitted = 0

  constructor(
    readonly cap: BudgetCap | undefined,
    spentBefore = 0,
  ) {
    this.spent = spentBefore
  }

  /** What the session has spent, as the budget counts it (agents included). */
  spentUsd(): number {
    return this.spent
  }

  /** What is left to spend: the cap less what was spent and what the requests in flight may cost. Infinity without a cap. */
  left(): number {
    return this.cap === undefined ? Number.POSITIVE_INFINITY : this.cap.usd - this.spent - this.inFlight
  }

  /**
   * Lets a request through when its worst case fits in `limit` (what is left here, or less: an agent's
   * share), with `max_tokens` lowered so that it does; undefined when even `floor` output tokens do not fit.
   */
  admit(request: {promptTokens: number; maxTokens: number; floor: number}, price: ModelPrice, limit = this.left()): Admission | undefined {
    const left = Math.min(limit, this.left())
    const prompt = worstPrompt(price, request.promptTokens)
    let maxTokens = request.maxTokens
    if (Number.isFinite(left)) {
      const perToken = costAt(price, {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 0, output_tokens: 1})
      const affordable = perToken > 0 ? Math.floor((left - prompt) / perToken) : maxTokens
      maxTokens = Math.min(maxTokens, affordable)
      if (maxTokens < request.floor) {
        if (this.admitted > 0 || this.spent > 0) return undefined
        maxTokens = Math.min(request.maxTokens, request.floor)
      }
    }

    this.admitted++

    const worst = prompt + costAt(price, {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 0, output_tokens: maxTokens})
    this.inFlight += worst
    let settled = false
    return {
      maxTokens,
      settle: (costUsd) => {
        if (settled) return
        settled = true
        this.inFlight -= worst
        this.spent += costUsd
      },
    }
  }

  /** Adds what was spent outside a request this counter admitted. */
  add(costUsd: number): void {
    this.spent += costUsd
  }
}

/** A prompt's cost at its dearest: every token written to the cache, or every token uncached, whichever costs more. */
function worstPrompt(price: ModelPrice, tokens: number): number {
  const none = {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 0, output_tokens: 0}
  return Math.max(costAt(price, {...none, input_tokens: tokens}), costAt(price, {...none, cache_creation_input_tokens: tokens}))
}
