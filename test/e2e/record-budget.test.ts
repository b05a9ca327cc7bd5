/**
 * The approval record's `maxBudgetUsd` binds a plain `wave run plan.md` (issue #33), end to end through
 * bin/run.js and the scripted server: without the flag the record's cap stops the run (exit 5, the
 * budget ending of the design's table); `--max-budget-usd` above it is refused before any request (exit
 * 2, naming both); below it, it is the tighter bound. A record with a cap the run stays under runs (control).
 */
import {readFileSync, writeFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {type Sandbox, writePlanFile} from '../support/cli.js'
import {type MessagesServer, reply, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

const PLAN = '# Plan: add a farewell\n\n1. Create src/farewell.ts exporting farewell(name).\n'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

/** A plan approved with `wave approve`, then given `maxBudgetUsd` in its record, as another tool (or the forge flow) writes it. */
async function approvedWithBudget(maxBudgetUsd: number): Promise<{planPath: string; recordPath: string}> {
  const planPath = writePlanFile(sandbox, PLAN)
  const approved = await wave(['approve', planPath])
  expect(approved.code, approved.stderr).toBe(0)
  const recordPath = approved.stdout.trim()
  const record = JSON.parse(readFileSync(recordPath, 'utf8'))
  writeFileSync(recordPath, JSON.stringify({...record, maxBudgetUsd}, null, 2))
  return {planPath, recordPath}
}

/** A turn that costs a good fraction of a dollar (300,000 input tokens), asking for more work. */
const costlyTurn = () => ({
  ...reply(toolUse('Write', {content: 'export const farewell = (name: string) => `bye ${name}`\n', file_path: 'src/farewell.ts'})),
  usage: {input_tokens: 300_000, output_tokens: 10},
})

describe("the approval record's budget", {timeout: 60_000}, () => {
  it('stops a run without --max-budget-usd at the record’s cap: exit 5, the spend and the cap named', async () => {
    const {planPath} = await approvedWithBudget(0.01)
    server.push(costlyTurn(), reply('Done.'))
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(5)
    expect(result.stderr).toMatch(/Stopped at the budget: \$\d+\.\d{4} spent, more than --max-budget-usd 0\.01,/)
    expect(JSON.parse(result.stdout)).toMatchObject({stopReason: 'budget'})
    // One response, then the cap: the second scripted turn was never asked for.
    expect(server.messageRequests).toHaveLength(1)
  })

  it('refuses --max-budget-usd above it before any request (exit 2, naming both); takes one below it as the tighter bound', async () => {
    const {planPath, recordPath} = await approvedWithBudget(0.01)
    const above = await wave(['run', planPath, '--max-budget-usd', '5'])
    expect(above.code).toBe(2)
    expect(above.stderr).toContain(`--max-budget-usd 5 is above the budget of 0.01 USD in the approval record ${recordPath}`)
    expect(above.stderr.trim().split('\n')[0]).not.toMatch(/^\s+at /)
    expect(server.messageRequests).toHaveLength(0)

    server.push(costlyTurn(), reply('Done.'))
    const below = await wave(['run', planPath, '--max-budget-usd', '0.005'])
    expect(below.code, below.stderr).toBe(5)
    expect(below.stderr).toMatch(/more than --max-budget-usd 0\.005,/)
  })

  it('control: a run that stays under the record’s cap finishes', async () => {
    const {planPath} = await approvedWithBudget(50)
    server.push(costlyTurn(), reply('Done.'))
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(`${sandbox.repo}/src/farewell.ts`, 'utf8')).toContain('bye')
  })
})
