/**
 * Issue 48: agents spent three times the budget. Under `--max-budget-usd 0.12`, twelve Explore agents
 * called in one turn, each never stopping, made 72 requests where the cap buys 26, and exit 5 came only
 * after all finished: each agent's share was of the whole budget, and the session's total was checked
 * after a turn. Now one counter holds the session and its agents, checked before every request against
 * the spend so far and that request's worst case, and an agent's share is of what is left. Counted at the
 * scripted server, every response costing the same: no more requests than the cap buys, plus at most one.
 * The control: the same script without the cap makes far more requests than the cap buys.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {type RecordedRequest, reply, type StaticTurn, systemText, text, toolUse} from '../support/messages-server.js'
import {type ScriptedSession, useScriptedSession, waveIn} from '../support/session.js'

let session: ScriptedSession
useScriptedSession((ready) => (session = ready))
const wave = waveIn(() => session)

// Every response costs the same at claude-sonnet-5-5's prices ($3 in, $15 out per million tokens): $0.0045.
const USAGE = {input_tokens: 1000, output_tokens: 100}
const PER_REQUEST = (1000 * 3 + 100 * 15) / 1_000_000
const CAP = 0.12
const BUYS = Math.floor(CAP / PER_REQUEST)
const AGENTS = 12

const isAgent = (request: RecordedRequest) => /You are an? (Explore|general-purpose) agent/.test(systemText(request))

/** The session calls twelve Explore agents every turn; each agent reads on and never ends. */
function router(request: RecordedRequest): StaticTurn {
  if (isAgent(request)) return {...reply(text('still looking'), toolUse('Read', {file_path: 'README.md'})), usage: USAGE}
  const calls = Array.from({length: AGENTS}, (_, n) => toolUse('Agent', {description: `look ${n}`, prompt: `look ${n}`, subagent_type: 'Explore'}))
  return {...reply(...calls), usage: USAGE}
}

/** Agents bounded by a few turns, so the control ends. */
function userSettings(): void {
  mkdirSync(path.join(session.sandbox.home, '.wave'), {recursive: true})
  writeFileSync(path.join(session.sandbox.home, '.wave', 'settings.json'), JSON.stringify({agents: {maxTurns: 3}}))
}

describe('a budget over a turn of agents', {timeout: 120_000}, () => {
  it(`twelve agents under --max-budget-usd ${CAP}: no more requests than the cap buys (${BUYS}) plus one; exit 5 naming the flag`, async () => {
    userSettings()
    session.server.push(...Array.from({length: 400}, () => router))
    const result = await wave(['plan', '--task', 'Look everywhere', '--max-budget-usd', String(CAP), '--json'])
    expect(result.code, result.stderr).toBe(5)
    const made = session.server.messageRequests.length
    console.log(`agents-budget: ${made} requests under a cap that buys ${BUYS}`)
    expect(made).toBeLessThanOrEqual(BUYS + 1)
    const body = JSON.parse(result.stdout)
    expect(body.stopReason).toBe('budget')
    expect(body.costUsd).toBeLessThanOrEqual(CAP + PER_REQUEST)
    expect(result.stderr).toContain(`--max-budget-usd ${CAP}`)
    // Agents did run: the cap is spent on them, not refused to them.
    expect(session.server.messageRequests.filter((request) => isAgent(request)).length).toBeGreaterThan(1)
  })

  it('control: without the cap, the same script makes more requests than the cap buys', async () => {
    userSettings()
    session.server.push(...Array.from({length: 400}, () => router))
    const result = await wave(['plan', '--task', 'Look everywhere', '--max-turns', '2', '--json'])
    expect(result.code, result.stderr).toBe(5)
    // The session's two turns, each starting twelve agents of three turns each.
    expect(session.server.messageRequests.length).toBe(2 + 2 * AGENTS * 3)
    expect(session.server.messageRequests.length).toBeGreaterThan(BUYS + 1)
  })
})
