import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {progressLine, WaitingSign} from '../../../src/output/progress.js'

describe('the life sign while the model works', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })

  afterEach(() => {
    vi.useRealTimers()
  })

  function sign(live: boolean, heartbeatMs = 30_000) {
    const lines: string[] = []
    const draws: Array<number | undefined> = []
    const waiting = new WaitingSign({draw: (seconds) => draws.push(seconds), line: (text) => lines.push(text), live}, heartbeatMs)
    return {draws, lines, waiting}
  }

  it('in a log: a line after every 30 s of silence, with the time waited', () => {
    const {lines, waiting} = sign(false)
    waiting.begin()
    vi.advanceTimersByTime(29_000)
    expect(lines).toEqual([])
    vi.advanceTimersByTime(1000)
    expect(lines).toEqual(['waiting for the model (30 s)'])
    vi.advanceTimersByTime(30_000)
    expect(lines).toEqual(['waiting for the model (30 s)', 'waiting for the model (60 s)'])
  })

  it('in a log: another progress line restarts the silence; the answer ends the waiting', () => {
    const {lines, waiting} = sign(false)
    waiting.begin()
    vi.advanceTimersByTime(20_000)
    waiting.spoke()
    vi.advanceTimersByTime(20_000)
    expect(lines).toEqual([])
    vi.advanceTimersByTime(10_000)
    expect(lines).toEqual(['waiting for the model (50 s)'])
    waiting.end()
    vi.advanceTimersByTime(120_000)
    expect(lines).toHaveLength(1)
  })

  it('at a terminal: a spinner redrawn with the seconds waited, taken away when the model answers', () => {
    const {draws, lines, waiting} = sign(true)
    waiting.begin()
    vi.advanceTimersByTime(2500)
    expect(draws[0]).toBe(0)
    expect(draws.at(-1)).toBe(2)
    expect(draws.length).toBeGreaterThan(20)
    waiting.end()
    expect(draws.at(-1)).toBeUndefined()
    const drawn = draws.length
    vi.advanceTimersByTime(5000)
    expect(draws).toHaveLength(drawn)
    expect(lines).toEqual([])
  })
})

describe("progress lines for the loop's events", () => {
  it('names a compaction, a cut output and the cost', () => {
    expect(
      progressLine({
        clearedToolInputs: 0,
        clearedToolResults: 3,
        summarizedMessages: 0,
        tokensAfter: 90_000,
        tokensBefore: 210_000,
        trigger: 'prompt_too_long',
        turn: 9,
        type: 'compaction',
      }),
    ).toBe('⇲ compacted (the prompt was too long): 3 old tool results cleared; ~210000 → ~90000 tokens')
    expect(progressLine({action: 'raise', maxTokens: 16_000, turn: 2, type: 'output_limit'})).toMatch(/max_tokens \(16000\).*asking again/)
    const usage = {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 10, output_tokens: 5}
    expect(progressLine({costUsd: 0.0123, turn: 1, type: 'usage', usage})).toBe('tokens: 10 in, 5 out, 0 cache read, 0 cache write; $0.0123')
    expect(progressLine({costUsd: null, turn: 1, type: 'usage', usage})).toBe('tokens: 10 in, 5 out, 0 cache read, 0 cache write')
  })
})
