/**
 * The approval record's `maxBudgetUsd` binds a plain `wave run plan.md` (issue #33), end to end through
 * bin/run.js and the scripted server: without the flag the record's cap stops the run (exit 5, the
 * budget ending of the design's table); `--max-budget-usd` above it is refused before any request (exit
 * 2, naming both); below it, it is the tighter bound. A record with a cap the run stays under runs (control).
 * Whichever cap stops a session (the flag, the settings, the approval, a unit's), the line, the hint, the
 * `--json` failure and the job summary name that one, and how to raise it.
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {readJson, runWave, type Sandbox, writePlanFile} from '../support/cli.js'
import {type MessagesServer, reply, startMessagesServer, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {unitsSandbox, unitTurns} from '../support/units.js'

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
    expect(result.stderr).toMatch(/Stopped at the budget: \$\d+\.\d{4} spent, more than the approval's --max-budget-usd 0\.01,/)
    expect(result.stderr).toMatch(
      /Hint: To go on with its changes and conversation kept: approve the plan again with a higher --max-budget-usd \(the approval binds it\), then wave run brave-otter --resume/,
    )
    expect(JSON.parse(result.stdout)).toMatchObject({budget: {maxBudgetUsd: 0.01, source: {kind: 'approval'}}, stopReason: 'budget'})
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
    expect(below.stderr).toContain('wave run brave-otter --resume --max-budget-usd <more than 0.005>')
  })

  it('control: a run that stays under the record’s cap finishes', async () => {
    const {planPath} = await approvedWithBudget(50)
    server.push(costlyTurn(), reply('Done.'))
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(`${sandbox.repo}/src/farewell.ts`, 'utf8')).toContain('bye')
  })
})

/** Whichever cap is lowest stops the session, and is the one named: never the flag for a cap the flag did not set. */
describe('the budget ending names the cap that stopped it', {timeout: 60_000}, () => {
  const stoppedRun = async (args: string[], env?: Record<string, string>) => {
    server.push(costlyTurn(), reply('Done.'))
    const summary = path.join(sandbox.root, 'summary.md')
    const result = await wave([...args, '--json'], {GITHUB_STEP_SUMMARY: summary, ...env})
    expect(result.code, result.stderr).toBe(5)
    expect(server.messageRequests).toHaveLength(1)
    return {failure: JSON.parse(result.stdout), stderr: result.stderr, summary: readFileSync(summary, 'utf8')}
  }

  it('--max-budget-usd: the flag, and raising it', async () => {
    const {failure, stderr, summary} = await stoppedRun(['plan', '--task', 'Add a farewell', '--max-budget-usd', '0.02'])
    expect(stderr).toMatch(/more than --max-budget-usd 0\.02, before the agent finished/)
    expect(stderr).toMatch(/Hint: To go on with the exploration kept: wave plan --resume [a-z-]+ --max-budget-usd <more than 0\.02>/)
    expect(failure).toMatchObject({budget: {maxBudgetUsd: 0.02, source: {kind: 'flag'}}, error: {exitCode: 5}, ok: false, stopReason: 'budget'})
    expect(failure.budget.spentUsd).toBeGreaterThan(0.02)
    expect(summary).toContain('| Session ended | stopped at the budget (--max-budget-usd 0.02) |')
  })

  it("the settings' maxBudgetUsd: the file, not the flag (a higher flag given)", async () => {
    const settings = path.join(sandbox.home, '.wave', 'settings.json')
    mkdirSync(path.dirname(settings), {recursive: true})
    writeFileSync(settings, JSON.stringify({maxBudgetUsd: 0.03}))
    const {failure, stderr, summary} = await stoppedRun(['plan', '--task', 'Add a farewell', '--max-budget-usd', '5'])
    expect(stderr).toContain(`more than maxBudgetUsd 0.03 in ${settings}, before the agent finished`)
    expect(stderr).toMatch(new RegExp(`Hint: To go on with the exploration kept: raise maxBudgetUsd in ${settings}, then wave plan --resume [a-z-]+ `))
    expect(stderr).not.toMatch(/more than --max-budget-usd/)
    expect(failure).toMatchObject({budget: {maxBudgetUsd: 0.03, source: {file: settings, kind: 'settings'}}, error: {exitCode: 5}, stopReason: 'budget'})
    expect(summary).toContain(`stopped at the budget (maxBudgetUsd 0.03 in ${settings})`)
  })

  it("the approval's cap with a lower --max-budget-usd given: the flag's", async () => {
    const {planPath} = await approvedWithBudget(0.04)
    const {failure, stderr} = await stoppedRun(['run', planPath, '--max-budget-usd', '0.03'])
    expect(stderr).toMatch(/more than --max-budget-usd 0\.03,/)
    expect(failure.budget).toMatchObject({maxBudgetUsd: 0.03, source: {kind: 'flag'}})
  })

  it("a unit's --unit-budget-usd: the unit's, under a higher approval cap", async () => {
    const made = await unitsSandbox('--unit-budget-usd', '0.001', '--max-budget-usd', '5')
    const unitServer = await startMessagesServer(unitTurns(3))
    try {
      const result = await runWave(['run', made.planPath, '--unit', 'api', '--json'], {
        cwd: made.sandbox.repo,
        home: made.sandbox.home,
        server: unitServer,
        timeoutMs: 45_000,
      })
      expect(result.code, result.stderr).toBe(5)
      expect(result.stderr).toMatch(/more than unit api's --unit-budget-usd 0\.001, before the agent finished/)
      expect(result.stderr).toMatch(/approve the plan again with a higher --unit-budget-usd/)
      expect(JSON.parse(result.stdout)).toMatchObject({
        budget: {maxBudgetUsd: 0.001, source: {kind: 'unit', unit: 'api'}},
        error: {exitCode: 5},
        stopReason: 'budget',
      })
      expect(readJson(made.planPath.replace(/\.md$/, '.unit-api.json'))).toMatchObject({exitCode: 5, unit: 'api'})
    } finally {
      await unitServer.close()
      made.sandbox.cleanup()
    }
  })
})
