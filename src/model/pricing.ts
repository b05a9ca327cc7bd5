/**
 * What a session's tokens cost: a price table per model (USD per million tokens), matching the model's
 * snapshots and provider spellings too (table.ts, lookupByModel), and overridable (settings' `prices`)
 * for new models, negotiated rates or other endpoints. A model without a price reports its cost as
 * `null`, never a guess; a budget (--max-budget-usd) is still kept for it, at the highest price of its
 * family (budgetPriceOf), so that it stops early rather than late.
 */
import {z} from 'zod'

import {lookupByModel} from './table.js'

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

/** USD per million tokens. `cacheWrite` is the 5-minute write: the only cache wave asks for. */
const tokenPricesSchema = z.lazy(() =>
  z.object({
    cacheRead: z.number().nonnegative(),
    cacheWrite: z.number().nonnegative(),
    input: z.number().nonnegative(),
    output: z.number().nonnegative(),
  }),
)

const modelPriceSchema = z.lazy(() =>
  tokenPricesSchema.unwrap().extend({
    /** Rates for a request whose prompt (input, cache reads and writes) is over `above` tokens, on all its tokens. */
    longPrompt: tokenPricesSchema.unwrap().extend({above: z.number().int().positive()}).optional(),
  }),
)

/** Settings' `prices`: model ID → prices, e.g. `{"claude-sonnet-5-5": {"input": 2, ...}}`; its snapshots match too. */
export const priceTableSchema = z.lazy(() => z.record(z.string().min(1), modelPriceSchema))

type TokenPrices = z.infer<typeof tokenPricesSchema>
export type ModelPrice = z.infer<typeof modelPriceSchema>
export type PriceTable = z.infer<typeof priceTableSchema>

const rates = (input: number, cacheWrite: number, cacheRead: number, output: number): TokenPrices => ({cacheRead, cacheWrite, input, output})

/**
 * Anthropic's list prices (platform.claude.com/docs/en/about-claude/pricing, and what Claude Code's cost
 * report charges), by model ID (snapshots included). Every model of the SDK's `Model` union is here
 * (test/unit/model/pricing.test.ts checks it against the SDK's types).
 *
 * Checked against Claude Code 2.1.197's own table: it prices any ID holding `claude-fable-5` or
 * `claude-mythos-5` (so 5-1 and 5-2 too) at $10 in / $50 out / $12.50 cache write / $1 cache read. It
 * has no price for `claude-mythos-preview` (it would charge its fallback); the $25/$125 here is the one
 * published when the preview shipped (Fable 5's $10 was announced as "less than half" of it), so it
 * errs high for `--max-budget-usd`.
 */
export const PRICES: PriceTable = {
  'claude-3-5-haiku': rates(0.8, 1, 0.08, 4),
  'claude-3-7-sonnet': rates(3, 3.75, 0.3, 15),
  'claude-3-haiku': rates(0.25, 0.3, 0.03, 1.25),
  'claude-fable-5': rates(10, 12.5, 1, 50),
  'claude-fable-5-1': rates(10, 12.5, 1, 50),
  'claude-fable-5-2': rates(10, 12.5, 1, 50),
  'claude-haiku-4-5': rates(1, 1.25, 0.1, 5),
  // Haiku 5.5 is priced by prompt length: past 100k tokens every token of the request costs 5x.
  'claude-haiku-5-5': {...rates(0.1, 0.125, 0.01, 0.5), longPrompt: {above: 100_000, ...rates(0.5, 0.625, 0.05, 2.5)}},
  'claude-mythos-5': rates(10, 12.5, 1, 50),
  'claude-mythos-5-1': rates(10, 12.5, 1, 50),
  'claude-mythos-5-2': rates(10, 12.5, 1, 50),
  'claude-mythos-preview': rates(25, 31.25, 2.5, 125),
  'claude-opus-4': rates(15, 18.75, 1.5, 75),
  'claude-opus-4-0': rates(15, 18.75, 1.5, 75),
  'claude-opus-4-1': rates(15, 18.75, 1.5, 75),
  'claude-opus-4-5': rates(5, 6.25, 0.5, 25),
  'claude-opus-4-6': rates(5, 6.25, 0.5, 25),
  'claude-opus-4-7': rates(5, 6.25, 0.5, 25),
  'claude-opus-4-8': rates(5, 6.25, 0.5, 25),
  'claude-opus-5': rates(5, 6.25, 0.5, 25),
  'claude-opus-5-5': rates(4, 5, 0.2, 20),
  'claude-sonnet-4': rates(3, 3.75, 0.3, 15),
  'claude-sonnet-4-0': rates(3, 3.75, 0.3, 15),
  'claude-sonnet-4-5': rates(3, 3.75, 0.3, 15),
  'claude-sonnet-4-6': rates(3, 3.75, 0.3, 15),
  'claude-sonnet-5': rates(3, 3.75, 0.3, 15),
  'claude-sonnet-5-5': rates(3, 3.75, 0.3, 15),
}

/** The prices of a model: the overrides' match first, then the built-in table's. */
export function priceOf(model: string, overrides: PriceTable = {}): ModelPrice | undefined {
  return lookupByModel(overrides, model) ?? lookupByModel(PRICES, model)
}

/** The model lines prices are grouped by, as model IDs spell them (`claude-sonnet-5-5`, `claude-3-7-sonnet`). */
const FAMILIES = ['haiku', 'sonnet', 'opus', 'fable', 'mythos'] as const

/** The family a model ID names, if any (`us.anthropic.claude-opus-9-v1:0` → opus). */
export function familyOf(model: string): (typeof FAMILIES)[number] | undefined {
  const id = model.toLowerCase()
  return FAMILIES.find((family) => new RegExp(`claude-(?:[\\d.-]+-)?${family}(?:$|[^a-z])`).test(id))
}

/**
 * The prices a budget is kept at: the model's own, else each rate at its highest among the known models
 * of its family (of all known models, for a model of no known family), with a note saying so. A budget
 * so kept may stop a session early, never late.
 */
export function budgetPriceOf(model: string, overrides: PriceTable = {}): {price: ModelPrice; note?: string} {
  const own = priceOf(model, overrides)
  if (own) return {price: own}
  const family = familyOf(model)
  const table = {...PRICES, ...overrides}
  const candidates = Object.entries(table).filter(([id]) => family === undefined || familyOf(id) === family)
  const pool = candidates.length > 0 ? candidates : Object.entries(table)
  const highest = (pick: (price: ModelPrice) => number[]) => Math.max(...pool.flatMap(([, price]) => pick(price)))
  const price: ModelPrice = {
    cacheRead: highest((p) => [p.cacheRead, p.longPrompt?.cacheRead ?? 0]),
    cacheWrite: highest((p) => [p.cacheWrite, p.longPrompt?.cacheWrite ?? 0]),
    input: highest((p) => [p.input, p.longPrompt?.input ?? 0]),
    output: highest((p) => [p.output, p.longPrompt?.output ?? 0]),
  }
  const of = family && candidates.length > 0 ? `the ${family} family` : 'all known models'
  return {
    note: `No price is known for ${model}: --max-budget-usd counts its tokens at the highest price of ${of} ($${price.input} in, $${price.output} out per million tokens). Set its price in the settings' "prices" for exact costs.`,
    price,
  }
}

/** What one response's usage cost in USD, or null when the model has no known price. */
export function costOf(model: string, usage: TokenUsage, overrides?: PriceTable): number | null {
  const price = priceOf(model, overrides)
  if (!price) return null
  return costAt(price, usage)
}

/** What one response's usage costs at these prices, in USD. */
export function costAt(price: ModelPrice, usage: TokenUsage): number {
  const prompt = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens
  const applied = price.longPrompt && prompt > price.longPrompt.above ? price.longPrompt : price
  const micro =
    usage.input_tokens * applied.input +
    usage.output_tokens * applied.output +
    usage.cache_creation_input_tokens * applied.cacheWrite +
    usage.cache_read_input_tokens * applied.cacheRead
  return micro / 1_000_000
}

/** A cost for people and JSON: whole micro-dollars, so sums print as 0.0123 rather than 0.012300000000000002. */
export const roundUsd = (usd: number): number => Math.round(usd * 1_000_000) / 1_000_000

/** An amount as people read it: cents from a dollar up, else four decimals. */
export const formatUsd = (usd: number): string => `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)}`
