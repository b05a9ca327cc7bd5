import {describe, expect, it} from 'vitest'

import {modelLimits} from '../../../src/core/session/model.js'
import {costOf, priceOf, priceTableSchema, type TokenUsage} from '../../../src/core/session/pricing.js'

const usage = (input: number, output: number, cacheWrite = 0, cacheRead = 0): TokenUsage => ({
  cache_creation_input_tokens: cacheWrite,
  cache_read_input_tokens: cacheRead,
  input_tokens: input,
  output_tokens: output,
})

describe('prices by model', () => {
  it.each([
    ['claude-sonnet-5-5', 2],
    ['claude-sonnet-5-5-20260901', 2],
    ['claude-sonnet-5-5[1m]', 2],
    ['claude-sonnet-5', 2],
    ['claude-sonnet-4-5', 3],
    ['claude-sonnet-4-20250514', 3],
    ['claude-opus-5-5', 4],
    ['claude-opus-4-1-20250805', 15],
    ['claude-opus-4-0', 15],
    ['claude-haiku-4-5-latest', 1],
    ['claude-opus-4-5@20251101', 5],
    ['us.anthropic.claude-haiku-4-5-20251001-v1:0', 1],
    ['claude-fable-5-1', 10],
  ])('%s: the most specific known prefix ($%d input)', (model, input) => {
    expect(priceOf(model)?.input).toBe(input)
  })

  it.each(['claude-sonnet-6', 'gpt-5', 'claude-opus-4-10', 'my-proxy-model'])('%s: no price (no guess from the family)', (model) => {
    expect(priceOf(model)).toBeUndefined()
    expect(costOf(model, usage(1000, 1000))).toBeNull()
  })

  it('costs input, output, cache writes and reads at their own rates', () => {
    // Sonnet 5.5: $2 in, $10 out, $2.50 cache write, $0.10 cache read per million.
    expect(costOf('claude-sonnet-5-5', usage(1_000_000, 100_000, 200_000, 2_000_000))).toBeCloseTo(2 + 1 + 0.5 + 0.2, 9)
  })

  it('prices Haiku 5.5 by the prompt: past 100k tokens, every token of the request at the higher rate', () => {
    expect(costOf('claude-haiku-5-5', usage(50_000, 10_000, 0, 40_000))).toBeCloseTo((50_000 * 0.1 + 10_000 * 0.5 + 40_000 * 0.01) / 1e6, 12)
    expect(costOf('claude-haiku-5-5', usage(50_000, 10_000, 0, 60_000))).toBeCloseTo((50_000 * 0.5 + 10_000 * 2.5 + 60_000 * 0.05) / 1e6, 12)
  })

  it('takes overrides first (settings), for known models and new ones', () => {
    const prices = priceTableSchema.parse({'claude-sonnet-5-5': {cacheRead: 0, cacheWrite: 0, input: 1, output: 1}, 'my-proxy-model': {cacheRead: 0, cacheWrite: 0, input: 3, output: 4}})
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
