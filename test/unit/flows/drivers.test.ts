/**
 * The session drivers in process (plan, run, task), against the scripted Messages server started here:
 * what each returns (an outcome, or the ending it stopped at, never a throw for either), the exit code
 * ENDINGS gives a stopped one, and what each leaves on disk (the plan, its state, its approval record,
 * its revisions). The e2e tier runs the same through bin/run.js; this one needs no build and no child.
 */
import {appendFileSync, existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {failureOf, type Stopped} from '../../../src/agent/outcome.js'
import type {SessionHost} from '../../../src/session/context.js'
import {makePlan, type PlanOutcome} from '../../../src/flows/plan.js'
import {executePlan, type InlineApproval, type RunOutcome} from '../../../src/flows/run.js'
import {runTask} from '../../../src/flows/task.js'
import {ExitCode, WaveError} from '../../../src/base/errors.js'
import {approvalPathFor, approvalRecordSchema, lastDecidedSha256} from '../../../src/plans/approval.js'
import {approvePlan} from '../../../src/plans/decision.js'
import {adoptPlan, listPlans, readPlanState} from '../../../src/plans/lifecycle.js'
import {readRevisions, revisionDiff} from '../../../src/plans/revisions.js'
import {type Sandbox, sha256, writePlanFile} from '../../support/cli.js'
import {CONTRACT_PLAN, FAREWELL, PLAN, planTurns, runTurns} from '../../support/forge-fixture.js'
import {type MessagesServer, planPathIn, reply, toolUse} from '../../support/messages-server.js'
import {useInProcessSession} from '../../support/session.js'

let server: MessagesServer
let sandbox: Sandbox
let warnings: string[]

useInProcessSession((session) => {
  ;({sandbox, server} = session)
  warnings = []
})

const host = (): SessionHost => ({signal: new AbortController().signal, warn: (message) => warnings.push(message)})
const inline: InlineApproval = {allow: [], approver: 'ci-bot', mode: 'acceptEdits', sandbox: {enabled: true, network: false}}

function planned(outcome: PlanOutcome | Stopped): PlanOutcome {
  if (outcome.kind === 'stopped') throw new Error(`stopped: ${failureOf(outcome).message}`)
  return outcome
}

function ran(outcome: RunOutcome | Stopped): RunOutcome {
  if (outcome.kind === 'stopped') throw new Error(`stopped: ${failureOf(outcome).message}`)
  return outcome
}

/** alice's decision on PLAN at `planPath`, as `wave approve` records it. */
const decidedByAlice = (planPath: string, decision: Pick<Parameters<typeof approvePlan>[1], 'decision' | 'feedback'>) =>
  approvePlan(planPath, {approver: 'alice', planBytes: Buffer.from(PLAN), ...decision}, {allow: [], mode: 'acceptEdits'})

async function refusal(work: Promise<unknown>): Promise<WaveError> {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  if (!(error instanceof WaveError)) throw new Error(`expected a WaveError, got ${String(error)}`)
  return error
}

describe('plan', () => {
  it('writes the plan, its draft state and its first revision', async () => {
    server.push(...planTurns(CONTRACT_PLAN))
    const outcome = planned(await makePlan({allow: [], cwd: sandbox.repo, host: host(), task: 'Add a farewell'}))
    expect(readFileSync(outcome.planPath, 'utf8')).toBe(CONTRACT_PLAN)
    expect(outcome.contract.verify).toEqual(['test -f src/farewell.ts'])
    expect((await readPlanState(outcome.planPath))?.status).toBe('draft')
    expect(readRevisions(outcome.planPath).map((revision) => revision.sha256)).toEqual([sha256(CONTRACT_PLAN)])
    // Plan mode's own turn limit when none is given (DEFAULT_MAX_TURNS): the session had room to finish.
    expect(server.messageRequests).toHaveLength(2)
  })

  it('returns the ending it stopped at (exit 5 by ENDINGS), its state failed with the same line', async () => {
    server.push(reply(toolUse('Read', {file_path: 'README.md'})), reply(toolUse('Read', {file_path: 'src/app.ts'})))
    const outcome = await makePlan({allow: [], cwd: sandbox.repo, host: host(), maxTurns: 1, task: 'Add a farewell'})
    expect(outcome.kind).toBe('stopped')
    const failure = failureOf(outcome as Stopped)
    expect(failure.exitCode).toBe(ExitCode.limit)
    expect(failure.message).toBe('Stopped at the turn limit (1 turns) before the agent finished.')
    expect(failure.hint).toBe(
      `To go on with the exploration kept: wave plan --resume ${path.basename(failure.details.planPath!, '.md')} --max-turns <more than 1> (the limit counts the turns before).`,
    )
    expect(failure.details).toMatchObject({stopReason: 'max_turns', turns: 1})
    const planPath = failure.details.planPath!
    expect((await readPlanState(planPath))?.failure).toBe(failure.message)
    expect((await listPlans()).map((plan) => plan.status)).toEqual(['failed'])
  })
})

describe('run --approve', () => {
  it('records the approval and the revision it approved: plans diff compares an edit with it', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    // Control: a plan no one decided on has no revision to compare with.
    expect(await revisionDiff({current: Buffer.from(PLAN), decidedSha256: lastDecidedSha256(approvalPathFor(planPath)), planPath})).toBeUndefined()

    server.push(...runTurns())
    const outcome = ran(await executePlan({allowStale: false, approve: inline, cwd: sandbox.repo, host: host(), planPath}))
    expect(outcome.filesChanged).toEqual(['src/farewell.ts'])
    expect(readFileSync(path.join(sandbox.repo, 'src/farewell.ts'), 'utf8')).toBe(FAREWELL)
    const record = approvalRecordSchema.parse(JSON.parse(readFileSync(approvalPathFor(planPath), 'utf8')))
    expect(record).toMatchObject({approver: 'ci-bot', decision: 'approved', plan: {sha256: sha256(PLAN)}})
    expect(record.spentAt).toBeDefined()
    expect(readRevisions(planPath).map((revision) => revision.sha256)).toEqual([sha256(PLAN)])

    appendFileSync(planPath, '2. Say goodbye in the README.\n')
    const current = readFileSync(planPath)
    const diff = await revisionDiff({current, decidedSha256: lastDecidedSha256(approvalPathFor(planPath)), planPath})
    expect(diff?.from.label).toBe('revision 1 (last decided on)')
    expect(diff?.patch).toContain('+2. Say goodbye in the README.')
    expect((await listPlans())[0].status).toBe('ran')
  })

  it('runs an approved plan once: a second run of the same approval is refused before any request (exit 3)', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    server.push(...runTurns())
    ran(await executePlan({allowStale: false, approve: inline, cwd: sandbox.repo, host: host(), planPath}))
    const requests = server.messageRequests.length
    const error = await refusal(executePlan({allowStale: false, cwd: sandbox.repo, host: host(), planPath}))
    expect(error.exitCode).toBe(ExitCode.notApproved)
    expect(error.message).toContain('an approved plan runs once')
    expect(server.messageRequests).toHaveLength(requests)
  })

  it('does not overturn a rejection (exit 3, nothing written) unless forced, and the forced approval keeps both decisions', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    await decidedByAlice(planPath, {decision: 'rejected', feedback: 'Not now'})
    const before = readFileSync(approvalPathFor(planPath), 'utf8')
    const error = await refusal(executePlan({allowStale: false, approve: inline, cwd: sandbox.repo, host: host(), planPath}))
    expect(error.exitCode).toBe(ExitCode.notApproved)
    expect(error.message).toBe('The plan brave-otter was rejected by alice: Not now; --approve does not override that decision.')
    expect(readFileSync(approvalPathFor(planPath), 'utf8')).toBe(before)
    expect(server.messageRequests).toHaveLength(0)

    server.push(...runTurns())
    ran(await executePlan({allowStale: false, approve: inline, cwd: sandbox.repo, force: true, host: host(), planPath}))
    const record = approvalRecordSchema.parse(JSON.parse(readFileSync(approvalPathFor(planPath), 'utf8')))
    expect(record.history.map((entry) => [entry.decision, entry.approver])).toEqual([
      ['rejected', 'alice'],
      ['approved', 'ci-bot'],
    ])
  })

  it('refuses a stale plan (exit 4) unless --allow-stale', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    // Planned against a commit this repository is no longer at: the approval takes it from the plan's state.
    await adoptPlan(planPath, {
      model: 'claude-sonnet-4-5',
      repository: {branch: 'main', head: 'f'.repeat(40), root: sandbox.repo},
      task: 'Add a farewell',
      workspace: sandbox.repo,
    })
    await decidedByAlice(planPath, {decision: 'approved'})
    const error = await refusal(executePlan({allowStale: false, cwd: sandbox.repo, host: host(), planPath}))
    expect(error.exitCode).toBe(ExitCode.mismatch)
    expect(error.message).toMatch(/^The plan is stale: it was made against commit ffffffffffff/)
    server.push(...runTurns())
    ran(await executePlan({allowStale: true, cwd: sandbox.repo, host: host(), planPath}))
  })

  it('returns a run stopped at its turn limit with how to resume it, recorded as failed with exit 5', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    server.push(...runTurns())
    const outcome = await executePlan({allowStale: false, approve: inline, cwd: sandbox.repo, host: host(), maxTurns: 1, planPath})
    expect(outcome.kind).toBe('stopped')
    const failure = failureOf(outcome as Stopped)
    expect(failure.exitCode).toBe(ExitCode.limit)
    // A plan in the plans directory is named by its name, which works from any directory.
    expect(failure.hint).toBe(
      `To go on with its changes and conversation kept: wave run ${path.basename(planPath, '.md')} --resume --max-turns <more than 1> (the limit counts the turns before).`,
    )
    expect(failure.details).toMatchObject({filesChanged: ['src/farewell.ts'], planPath, stopReason: 'max_turns'})
    expect(failure.details.report?.changed).toEqual(['src/farewell.ts'])
    const state = await readPlanState(planPath)
    expect(state?.runs.map((run) => run.exitCode)).toEqual([ExitCode.limit])
    expect(state?.status).toBe('failed')
  })
})

describe('run --task', () => {
  /** `wave run --task "Add a farewell"`, with what else a test gives it. */
  const task = (more: Partial<Parameters<typeof runTask>[0]> = {}) =>
    runTask({allow: [], cwd: sandbox.repo, host: host(), mode: 'acceptEdits', sandbox: {enabled: true, network: false}, task: 'Add a farewell', ...more})

  it('completes a task without a plan', async () => {
    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Added it.'))
    const outcome = await task()
    expect(outcome).toMatchObject({filesChanged: ['src/farewell.ts'], finalText: 'Added it.', kind: 'completed'})
  })

  it('returns a refusal as the ending it is (exit 6), with what the task changed', async () => {
    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), {
      content: [],
      stop_details: {category: 'cyber', explanation: null, type: 'refusal'},
      stop_reason: 'refusal',
    })
    const outcome = await task()
    expect(outcome.kind).toBe('stopped')
    const failure = failureOf(outcome as Stopped)
    expect(failure.exitCode).toBe(ExitCode.refused)
    expect(failure.message).toBe('The model refused to go on (stop_reason refusal, category cyber).')
    expect(failure.details).toMatchObject({filesChanged: ['src/farewell.ts'], planPath: null, stopReason: 'refusal'})
    expect(existsSync(path.join(sandbox.repo, 'src/farewell.ts'))).toBe(true)
  })

  it('--approve with --max-budget-usd: the run is held to what planning left, and its ending says so (exit 5)', async () => {
    server.push(
      reply(toolUse('EnterPlanMode', {})),
      (request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})),
      reply(toolUse('ExitPlanMode', {})),
      // The run's first turn: 300,000 input tokens, far past what is left of half a dollar.
      {...reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), usage: {input_tokens: 300_000, output_tokens: 10}},
      reply('never asked for'),
    )
    const outcome = await task({approve: inline, budget: {source: {kind: 'flag'}, usd: 0.5}})
    expect(outcome.kind).toBe('stopped')
    const failure = failureOf(outcome as Stopped)
    expect(failure.exitCode).toBe(ExitCode.limit)
    const left = (failure.details.budget as {maxBudgetUsd: number}).maxBudgetUsd
    expect(left).toBeGreaterThan(0.4)
    expect(left).toBeLessThan(0.5)
    expect(failure.message).toMatch(new RegExp(`more than the ${String(left).replace('.', '\\.')} USD planning left of --max-budget-usd 0\\.5, before`))
    // The run of a task's plan goes on as any run: by the plan's name, the cap (the flag's, now) raised.
    expect(failure.hint).toMatch(/^To go on with its changes and conversation kept: wave run [a-z-]+ --resume --max-budget-usd <more than 0\.\d+>/)
    expect(failure.details.budget).toMatchObject({source: {kind: 'flag', leftOf: 0.5}})
    expect(server.messageRequests).toHaveLength(4)
  })
})
