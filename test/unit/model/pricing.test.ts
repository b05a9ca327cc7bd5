import {describe, expect, it} from 'vitest'

import {readFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import path from 'node:path'

import {modelLimits, modelTableEntry} from '../../../src/model/table.js'
import {budgetPriceOf, costOf, familyOf, PRICES, priceOf, priceTableSchema, type TokenUsage} from '../../../src/model/pricing.js'

const usage = (input: number, output: number, cacheWrite = 0, cacheRead = 0): TokenUsage => ({
  cache_creation_input_tokens: cacheWrite,
  cache_read_input_tokens: cacheRead,
  input_tokens: input,
  output_tokens: output,
})

describe('prices by model', () => {
  it.each([
    ['claude-sonnet-5-5', 3],
    ['claude-sonnet-5-5-20260901', 3],
    ['claude-sonnet-5-5[1m]', 3],
    ['claude-sonnet-5', 3],
    ['claude-sonnet-4-5', 3],
    ['claude-sonnet-4-20250514', 3],
    ['claude-opus-5-5', 4],
    ['claude-opus-4-1-20250805', 15],
    ['claude-opus-4-0', 15],
    ['claude-haiku-4-5-latest', 1],
    ['claude-opus-4-5@20251101', 5],
    ['us.anthropic.claude-haiku-4-5-20251001-v1:0', 1],
    ['claude-fable-5-1', 10],
    ['claude-fable-5-2', 10],
    ['claude-mythos-5-2', 10],
    ['claude-mythos-preview', 25],
  ])('%s: the most specific known prefix ($%d input)', (model, input) => {
    expect(priceOf(model)?.input).toBe(input)
  })

  it.each(['claude-sonnet-6', 'gpt-5', 'claude-opus-4-10', 'my-proxy-model'])('%s: no price (no guess from the family)', (model) => {
    expect(priceOf(model)).toBeUndefined()
    expect(costOf(model, usage(1000, 1000))).toBeNull()
  })

  it("costs input, output, cache writes and reads at their own rates, as Claude Code's cost report does", () => {
    // Sonnet 5.5 and 5: $3 in, $15 out, $3.75 cache write, $0.30 cache read per million.
    for (const model of ['claude-sonnet-5-5', 'claude-sonnet-5']) {
      expect(costOf(model, usage(1_000_000, 100_000, 200_000, 2_000_000))).toBeCloseTo(3 + 1.5 + 0.75 + 0.6, 9)
    }

    // Fable and Mythos 5.1: cache reads at $1.
    expect(priceOf('claude-fable-5-1')?.cacheRead).toBe(1)
    expect(priceOf('claude-mythos-5-1')?.cacheRead).toBe(1)
  })

  it('prices Haiku 5.5 by the prompt: past 100k tokens, every token of the request at the higher rate', () => {
    expect(costOf('claude-haiku-5-5', usage(50_000, 10_000, 0, 40_000))).toBeCloseTo((50_000 * 0.1 + 10_000 * 0.5 + 40_000 * 0.01) / 1e6, 12)
    expect(costOf('claude-haiku-5-5', usage(50_000, 10_000, 0, 60_000))).toBeCloseTo((50_000 * 0.5 + 10_000 * 2.5 + 60_000 * 0.05) / 1e6, 12)
  })

  it('takes overrides first (settings), for known models and new ones', () => {
    const prices = priceTableSchema.parse({
      'claude-sonnet-5-5': {cacheRead: 0, cacheWrite: 0, input: 1, output: 1},
      'my-proxy-model': {cacheRead: 0, cacheWrite: 0, input: 3, output: 4},
    })
    expect(priceOf('claude-sonnet-5-5-20260901', prices)?.input).toBe(1)
    expect(costOf('my-proxy-model', usage(1_000_000, 1_000_000), prices)).toBe(7)
    expect(costOf('claude-opus-5-5', usage(1_000_000, 0), prices)).toBe(4)
  })

  it('refuses a malformed price in settings', () => {
    expect(priceTableSchema.safeParse({'claude-x': {input: -1, output: 1}}).success).toBe(false)
  })
})

describe('model limits', () => {
  it('knows the windows and output limits of current models, and nothing of others', () => {
    expect(modelLimits('claude-sonnet-5-5')).toEqual({contextWindow: 1_000_000, maxOutput: 128_000})
    expect(modelLimits('claude-haiku-4-5-20251001')).toEqual({contextWindow: 200_000, maxOutput: 64_000})
    expect(modelLimits('claude-opus-4-1')).toEqual({contextWindow: 200_000, maxOutput: 32_000})
    expect(modelLimits('some-other-model')).toBeUndefined()
  })
})

/** The model IDs of the SDK's `Model` union, read from its type declarations. */
function sdkModels(): string[] {
  const require = createRequire(import.meta.url)
  const types = readFileSync(path.join(path.dirname(require.resolve('@anthropic-ai/sdk')), 'resources/messages/messages.d.ts'), 'utf8')
  const union = /export type Model = ([^;]+);/.exec(types)?.[1] ?? ''
  return [...union.matchAll(/'([^']+)'/g)].map((m) => m[1])
}

describe("the tables cover the SDK's models", () => {
  it("prices, limits and capabilities for every model of the SDK's Model union", () => {
    const models = sdkModels()
    expect(models.length).toBeGreaterThan(10)
    expect(models).toContain('claude-mythos-preview')
    for (const model of models) {
      expect(priceOf(model), model).toBeDefined()
      expect(modelTableEntry(model), model).toBeDefined()
    }
  })

  it('knows which models think adaptively and which effort levels they take', () => {
    expect(modelTableEntry('claude-sonnet-5-5')).toMatchObject({efforts: ['low', 'medium', 'high', 'xhigh', 'max'], thinking: ['adaptive', 'enabled']})
    expect(modelTableEntry('claude-opus-4-5-20251101')).toMatchObject({efforts: ['low', 'medium', 'high'], thinking: ['enabled']})
    expect(modelTableEntry('claude-haiku-4-5')).toMatchObject({efforts: [], thinking: ['enabled']})
  })
})

describe('budget prices', () => {
  it("a known model's own prices, without a note", () => {
    expect(budgetPriceOf('claude-sonnet-5-5')).toEqual({price: PRICES['claude-sonnet-5-5']})
  })

  it("an unknown model of a known family: each rate at the family's highest, with a note", () => {
    expect(familyOf('claude-sonnet-9')).toBe('sonnet')
    expect(familyOf('us.anthropic.claude-opus-9-v1:0')).toBe('opus')
    expect(familyOf('claude-3-7-sonnet-latest')).toBe('sonnet')
    const {note, price} = budgetPriceOf('claude-sonnet-9')
    expect(price).toMatchObject({cacheRead: 0.3, cacheWrite: 3.75, input: 3, output: 15})
    expect(note).toMatch(
      /^No price is known for claude-sonnet-9: --max-budget-usd counts its tokens at the highest price of the sonnet family \(\$3 in, \$15 out/,
    )
    expect(budgetPriceOf('claude-opus-9').price).toMatchObject({input: 15, output: 75})
  })

  it('a model of no known family: the highest of all, never no price', () => {
    const {note, price} = budgetPriceOf('my-proxy-model')
    expect(price.output).toBe(Math.max(...Object.values(PRICES).map((p) => p.output)))
    expect(note).toMatch(/highest price of all known models/)
  })

  it('prices from the settings first', () => {
    const prices = priceTableSchema.parse({'my-proxy-model': {cacheRead: 0, cacheWrite: 0, input: 3, output: 4}})
    expect(budgetPriceOf('my-proxy-model', prices)).toEqual({price: prices['my-proxy-model']})
  })
})
