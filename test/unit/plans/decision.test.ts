/**
 * approvePlan (plans/decision.ts): a caller says who decided and what they set; the contract, the hooks,
 * the repository and the task are taken here. Judged by the record written beside a plan made in a real
 * repository, with the user's settings in wave's home.
 */
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {ExitCode, WaveError} from '../../../src/base/errors.js'
import {approvalPathFor, approvalRecordSchema, sha256Of} from '../../../src/plans/approval.js'
import {approvePlan} from '../../../src/plans/decision.js'
import {adoptPlan} from '../../../src/plans/lifecycle.js'
import {gitHead, readJson, type Sandbox, writePlanFile} from '../../support/cli.js'
import {CHECK, CONTRACT_PLAN, PLAN} from '../../support/forge-fixture.js'
import {useInProcessSession} from '../../support/session.js'

let sandbox: Sandbox
useInProcessSession((session) => ({sandbox} = session))

/** A plan made in the sandbox's repository, at its HEAD, as `wave plan` leaves it. */
async function planned(content: string): Promise<string> {
  const planPath = writePlanFile(sandbox, content)
  await adoptPlan(planPath, {
    model: 'claude-sonnet-4-5',
    repository: {branch: 'main', dirty: false, head: gitHead(sandbox.repo), root: sandbox.repo},
    task: 'Add a farewell',
    workspace: sandbox.repo,
  })
  return planPath
}

/** A PostToolUse hook in the user's settings file: one every session, and so every run, would run. */
function userHook(command: string): void {
  const home = path.join(sandbox.home, '.wave')
  mkdirSync(home, {recursive: true})
  writeFileSync(path.join(home, 'settings.json'), JSON.stringify({hooks: {PostToolUse: [{hooks: [{command, type: 'command'}], matcher: 'Write'}]}}))
}

const record = (planPath: string) => approvalRecordSchema.parse(readJson(approvalPathFor(planPath)))

/** Two units that can change the same files: a contract no approval can bind. */
const OVERLAPPING = `${PLAN}\n## Scope\n- src/**\n\n## Units\n\n### one\n#### Scope\n- src/**\n\n### two\n#### Scope\n- src/two/**\n`

describe('approvePlan', () => {
  it("binds the contract of the bytes decided on, the hooks of the plan's place, the repository and task of its state", async () => {
    userHook('npx prettier --write')
    const planPath = await planned(CONTRACT_PLAN)
    // The file changed after the approver read it: what they decided on binds, not what it holds now.
    writeFileSync(planPath, PLAN)
    const written = await approvePlan(
      planPath,
      {approver: 'alice', decision: 'approved', planBytes: Buffer.from(CONTRACT_PLAN)},
      {allow: [], mode: 'acceptEdits'},
    )

    expect(written.path).toBe(approvalPathFor(planPath))
    expect(record(planPath)).toMatchObject({
      hooks: {list: [expect.stringContaining('npx prettier --write')]},
      plan: {sha256: sha256Of(Buffer.from(CONTRACT_PLAN))},
      repository: {branch: 'main', dirty: false, head: gitHead(sandbox.repo)},
      scope: {enforce: 'warn', paths: ['src/farewell.ts']},
      task: 'Add a farewell',
      verify: [{command: CHECK}],
    })
    // The record holds its schema's repository, not where the plan's workspace lies on this machine.
    expect(readJson(approvalPathFor(planPath)).repository).not.toHaveProperty('root')
  })

  it("lets the decider's flags replace the plan's contract, and a run's session give its own hooks (the test above: the plan's, the settings')", async () => {
    userHook('npx prettier --write')
    const planPath = await planned(CONTRACT_PLAN)
    const bytes = Buffer.from(CONTRACT_PLAN)
    await approvePlan(
      planPath,
      {approver: 'alice', decision: 'approved', planBytes: bytes},
      {
        allow: [],
        contract: {enforce: 'strict', noVerify: true, scope: ['docs/**']},
        mode: 'acceptEdits',
        runsIn: {hooks: [], workspace: sandbox.repo},
      },
    )
    expect(record(planPath)).toMatchObject({hooks: {list: []}, scope: {enforce: 'strict', paths: ['docs/**']}, verify: []})
  })

  it('binds nothing for a rejection: a plan whose units cannot be bound is sent back; approving it (control) is refused, nothing written', async () => {
    userHook('npx prettier --write')
    const planPath = await planned(OVERLAPPING)
    const bytes = Buffer.from(OVERLAPPING)
    const refused = await approvePlan(planPath, {approver: 'alice', decision: 'approved', planBytes: bytes}, {allow: [], mode: 'acceptEdits'}).catch(
      (error: unknown) => error,
    )
    expect(refused).toBeInstanceOf(WaveError)
    expect((refused as WaveError).exitCode).toBe(ExitCode.usage)
    expect((refused as WaveError).message).toContain('Units one and two can change the same files')
    expect(existsSync(approvalPathFor(planPath))).toBe(false)

    const rejected = await approvePlan(
      planPath,
      {approver: 'alice', decision: 'rejected', feedback: 'Split the units', planBytes: bytes},
      {allow: [], mode: 'acceptEdits'},
    )
    expect(rejected.warnings).toEqual([])
    const kept = record(planPath)
    expect(kept).toMatchObject({decision: 'rejected', feedback: 'Split the units', repository: {head: gitHead(sandbox.repo)}, task: 'Add a farewell'})
    expect(kept.scope).toBeUndefined()
    expect(kept.verify).toBeUndefined()
    expect(kept.units).toBeUndefined()
    expect(kept.hooks).toBeUndefined()
  })
})
