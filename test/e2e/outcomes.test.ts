/**
 * Issue #13 end to end: outcomes a CI job can trust. A refusal exits 6 (not "ended without a plan"), a
 * refused key exits 2 naming the variable and is not retried, a turn cut at max_tokens writes nothing,
 * and a slow model shows a life sign at once. The in-process tier (test/unit/agent/loop.test.ts)
 * covers the loop's cases one by one; these check that the command reports them.
 */
import {existsSync, readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {cutToolUse, fault, type MessagesServer, planPathIn, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const errorLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('Error:'))

describe('outcomes', () => {
  it('wave plan: a refusal exits 6 naming it, with the plan so far kept for --revise', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. First step.\n', file_path: planPathIn(request)})), {
      ...reply("I can't help with this."),
      stop_details: {category: 'cyber', explanation: null, type: 'refusal'},
      stop_reason: 'refusal',
    })
    const result = await wave(['plan', '--task', 'Something refused', '--json'])

    expect(result.code).toBe(6)
    const [line] = errorLines(result.stderr)
    expect(line).toMatch(/refused.*stop_reason refusal, category cyber/)
    expect(line).not.toMatch(/ended without a plan/)
    const json = JSON.parse(result.stdout)
    expect(json).toMatchObject({error: {exitCode: 6}, ok: false})
    const planPath = planPathIn(server.messageRequests[0])
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\n1. First step.\n')
    expect(server.messageRequests).toHaveLength(2)
  })

  it('a refused key (401) exits 2 naming ANTHROPIC_API_KEY, after one request, even when the endpoint invites a retry', async () => {
    server.push(
      ...Array.from({length: 5}, () => fault(401, {error: {message: 'invalid x-api-key'}, headers: {'retry-after-ms': '5', 'x-should-retry': 'true'}})),
    )
    const result = await wave(['plan', '--task', 'Anything'])

    expect(result.code).toBe(2)
    expect(errorLines(result.stderr)).toHaveLength(1)
    expect(result.stderr).toMatch(/Hint: .*ANTHROPIC_API_KEY/)
    expect(result.stderr).not.toMatch(/retrying/)
    expect(server.messageRequests).toHaveLength(1)
  })

  it('a Write cut at max_tokens writes nothing: wave asks again with the whole output limit', async () => {
    const content = `# Plan\n\n${'1. A step worth writing down.\n'.repeat(30)}`
    server.push(
      (request) => reply(cutToolUse('Write', {content, file_path: planPathIn(request)})),
      (request) => {
        expect(existsSync(planPathIn(request))).toBe(false)
        return reply(toolUse('Write', {content, file_path: planPathIn(request)}))
      },
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Plan it', '--model', 'claude-sonnet-5-5'])

    expect(result.stderr).not.toContain('Error')
    expect(result.code).toBe(0)
    const [first, second] = server.messageRequests
    expect(second.body.max_tokens).toBeGreaterThan(first.body.max_tokens)
    expect(second.body.messages).toEqual(first.body.messages)
    expect(readFileSync(result.stdout.trim(), 'utf8')).toBe(content)
    expect(toolResults(server.messageRequests[2])).toHaveLength(1)
  })

  it('a slow model: the header at once, then a "waiting for the model" line for each stretch of silence', async () => {
    server.push({...reply('Thinking done.'), stallMs: 1200})
    const result = await wave(['plan', '--task', 'Take your time'], {WAVE_HEARTBEAT_MS: '300'})

    // The session ends without a plan (the model wrote none); what matters is what came before.
    const header = result.stderr.split('\n').findIndex((line) => /^wave plan [a-z]+(-[a-z]+)+ · plan mode/.test(line))
    const waiting = result.stderr.split('\n').findIndex((line) => /waiting for the model \(\d+ s\)/.test(line))
    expect(header, result.stderr).toBeGreaterThanOrEqual(0)
    expect(waiting, result.stderr).toBeGreaterThan(header)
    expect(result.stderr.match(/waiting for the model/g)!.length).toBeGreaterThanOrEqual(2)
  })
})
