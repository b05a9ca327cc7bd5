/**
 * Issue 48: plan-mode Bash cannot read the plans directory wherever it is. A self-hosted runner points
 * WAVE_HOME at its temp directory, outside $HOME and /tmp (which the throwaway sandbox makes private
 * anyway); so may a user's `plansDirectory`. Another plan kept there is refused to plan mode's Read, and
 * must be to its Bash too. The control: the same `cat` of the same text in a folder beside them reads it,
 * so what keeps the plans out is the guard, not the command.
 */
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {homedir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {planPathIn, type RecordedRequest, reply, text, toolResults, toolUse} from '../support/messages-server.js'
import {type ScriptedSession, useScriptedSession, waveIn} from '../support/session.js'

let session: ScriptedSession
useScriptedSession((ready) => (session = ready))
const wave = waveIn(() => session)

const SECRET = 'the other plan: rotate the production keys'
const PLAN = '# Plan\n\n## Scope\n- `src/util.ts`\n\n## Verification\n- `true`\n'
const finish = (request: RecordedRequest) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)}), toolUse('ExitPlanMode', {}))

// Outside the child's $HOME and outside /tmp: the test process's own home directory (the children's HOME is a temp one).
let outside: string
beforeEach(() => {
  outside = mkdtempSync(path.join(homedir(), '.wave-e2e-'))
})
afterEach(() => rmSync(outside, {force: true, recursive: true}))

/** A plan with its approval in `dir`, and the same text in a folder beside it (the control's). */
function otherPlanIn(dir: string): {plan: string; beside: string} {
  mkdirSync(dir, {recursive: true})
  const plan = path.join(dir, 'other-plan.md')
  writeFileSync(plan, `# Plan\n\n${SECRET}\n`)
  writeFileSync(path.join(dir, 'other-plan.approval.json'), '{}')
  const besideDir = path.join(outside, 'beside')
  mkdirSync(besideDir, {recursive: true})
  const beside = path.join(besideDir, 'copy.md')
  writeFileSync(beside, `# Plan\n\n${SECRET}\n`)
  return {beside, plan}
}

async function planReading(files: string[], env: Record<string, string>): Promise<string[]> {
  session.server.push(reply(...files.map((file) => toolUse('Bash', {command: `cat ${file}; ls ${path.dirname(file)}`}))), finish, reply(text('Planned.')))
  const result = await wave(['plan', '--task', 'Look around', '--json'], env)
  expect(result.code, result.stderr).toBe(0)
  return toolResults(session.server.messageRequests[1]).map((answer) => answer.text)
}

describe('plan-mode Bash and the plans directory', {timeout: 60_000}, () => {
  it('WAVE_HOME outside $HOME and /tmp: another plan is not readable, nor listed; the same text beside it is (control)', async () => {
    const home = path.join(outside, 'runner-temp', 'wave')
    const {beside, plan} = otherPlanIn(path.join(home, 'plans'))
    const [hidden, control] = await planReading([plan, beside], {WAVE_HOME: home})
    expect(hidden).not.toContain(SECRET)
    expect(hidden).not.toContain('other-plan.approval.json')
    expect(hidden).toMatch(/No such file or directory/)
    expect(control).toContain(SECRET)
  })

  it("a user's plansDirectory outside wave's home: another plan there is not readable; the same text beside it is (control)", async () => {
    const plans = path.join(outside, 'team-plans')
    const {beside, plan} = otherPlanIn(plans)
    mkdirSync(path.join(session.sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(session.sandbox.home, '.wave', 'settings.json'), JSON.stringify({plansDirectory: plans}))
    const [hidden, control] = await planReading([plan, beside], {})
    expect(hidden).not.toContain(SECRET)
    expect(control).toContain(SECRET)
  })
})
