/**
 * A turn's calls through the executor the loop uses (src/tools/turn.ts), with tools that record when
 * they start and end: reads together (bounded), anything else alone and in order, results in call order.
 */
import {describe, expect, it} from 'vitest'
import {z} from 'zod'

import {NO_RULES, type PolicyContext} from '../../../src/policy/policy.js'
import {ToolRegistry} from '../../../src/tools/registry.js'
import {DEFAULT_RESULT_CAP, defineTool, type ToolPlugin} from '../../../src/tools/tool.js'
import {executeTurn, READ_CONCURRENCY, type TurnEnv} from '../../../src/tools/turn.js'

/** Settles when `count` waiters have arrived; rejects loudly if they have not within the deadline (calls that never overlap). */
function barrier(count: number, deadlineMs = 5000) {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return async (label: string) => {
    if (++arrived >= count) open()
    let timer: NodeJS.Timeout | undefined
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${label}: only ${arrived} of ${count} calls were running together`)), deadlineMs)
    })
    await Promise.race([opened, deadline]).finally(() => clearTimeout(timer))
  }
}

function harness(wait: (label: string) => Promise<void> = async () => {}) {
  const log: string[] = []
  let running = 0
  let peak = 0
  const tool = (name: string, access: 'read' | 'write' | 'control') =>
    defineTool({
      access,
      description: name,
      input: z.object({label: z.string()}),
      name,
      resultCap: DEFAULT_RESULT_CAP,
      async run({label}) {
        log.push(`start ${label}`)
        peak = Math.max(peak, ++running)
        try {
          if (access === 'read') await wait(label)
          // Yield a few times, so that a call run beside it could interleave.
          for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
        } finally {
          running--
          log.push(`end ${label}`)
        }

        return `result ${label}`
      },
    }) as ToolPlugin
  const registry = new ToolRegistry([tool('Look', 'read'), tool('Put', 'write')])
  const policy: PolicyContext = {headless: true, mode: 'bypassPermissions', rules: NO_RULES, workspaceRoot: '/nowhere'}
  const refuse = async (): Promise<string> => {
    throw new Error('no session control here')
  }

  const env: TurnEnv = {policy: () => policy, registry, session: {enterPlanMode: refuse, exitPlanMode: refuse}, signal: new AbortController().signal}
  return {env, log, peak: () => peak}
}

const call = (name: string, label: string) => ({id: `id-${label}`, input: {label}, name})

describe('executeTurn', () => {
  it('runs the reads of a turn together and returns their results in call order', async () => {
    const {env, log} = harness(barrier(3))
    const ended: string[] = []
    const outcomes = await executeTurn([call('Look', 'a'), call('Look', 'b'), call('Look', 'c')], env, {ended: (c) => ended.push(c.id)})
    expect(outcomes.map((o) => [o.isError, o.content])).toEqual([
      [false, 'result a'],
      [false, 'result b'],
      [false, 'result c'],
    ])
    // Every read started before any ended: their spans overlap.
    expect(log.slice(0, 3).every((entry) => entry.startsWith('start'))).toBe(true)
    expect(ended.sort()).toEqual(['id-a', 'id-b', 'id-c'])
  })

  it('runs a write alone: the reads before it end first, the reads after it start after it ended', async () => {
    const {env, log} = harness()
    const outcomes = await executeTurn([call('Look', 'a'), call('Look', 'b'), call('Put', 'w'), call('Look', 'c'), call('Look', 'd')], env)
    expect(outcomes.map((o) => o.content)).toEqual(['result a', 'result b', 'result w', 'result c', 'result d'])
    const at = (entry: string) => log.indexOf(entry)
    expect(at('start w')).toBeGreaterThan(Math.max(at('end a'), at('end b')))
    expect(Math.min(at('start c'), at('start d'))).toBeGreaterThan(at('end w'))
    // Control: the reads on each side did overlap each other.
    expect(at('start b')).toBeLessThan(at('end a'))
    expect(at('start d')).toBeLessThan(at('end c'))
  })

  it(`runs at most ${READ_CONCURRENCY} reads at once`, async () => {
    const {env, peak} = harness(barrier(READ_CONCURRENCY))
    const calls = Array.from({length: READ_CONCURRENCY + 4}, (_, index) => call('Look', String(index)))
    const outcomes = await executeTurn(calls, env)
    expect(outcomes.map((o) => o.content)).toEqual(calls.map((c) => `result ${c.input.label}`))
    expect(peak()).toBe(READ_CONCURRENCY)
  })

  it('asks for the policy as each call starts, so a call sees what an earlier one changed', async () => {
    const {env} = harness()
    let mode: PolicyContext['mode'] = 'bypassPermissions'
    const policy = env.policy()
    const switching: TurnEnv = {...env, policy: () => ({...policy, mode})}
    const outcomes = await executeTurn([call('Put', 'first'), call('Put', 'second')], switching, {ended: () => (mode = 'plan')})
    expect(outcomes[0]).toMatchObject({content: 'result first', isError: false})
    expect(outcomes[1].isError).toBe(true)
    expect(outcomes[1].content).toContain('plan mode')
  })

  it('answers the calls not yet started once the session is interrupted, in call order', async () => {
    const {env} = harness()
    const controller = new AbortController()
    const outcomes = await executeTurn(
      [call('Put', 'w'), call('Look', 'a'), call('Look', 'b')],
      {...env, signal: controller.signal},
      {
        ended: () => controller.abort(),
      },
    )
    expect(outcomes.map((o) => o.content)).toEqual([
      'result w',
      'The session was interrupted before this call ran.',
      'The session was interrupted before this call ran.',
    ])
  })
})
