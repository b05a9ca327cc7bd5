import path from 'node:path'

import {ExitCode, usageError, WaveError} from '../../base/errors.js'
import {assertSandboxForCommands} from '../../base/process/runner.js'
import type {RepositoryHead} from '../../base/workspace/snapshot.js'
import {type ApprovalRecord, approvalPathFor, assertApproved, checkApprovedHooks, readApproval} from '../../plans/approval.js'
import {approvePlan} from '../../plans/decision.js'
import {assertFresh, assertUnspent} from '../../plans/gates.js'
import {type PlanRun, type PlanState, readPlanState} from '../../plans/lifecycle.js'
import {liveLockOwner, planNameOf} from '../../plans/store.js'
import {assertUnitUnspent, type ApprovedUnit, runsOf, unitOf, unitRecord} from '../../plans/unit-result.js'
import type {SessionContext} from '../../session/context.js'
import {newestRun, resumableRun} from '../../session/resume.js'
import type {RunOptions} from './options.js'

/** The plan as read before the session opened: its bytes (what the approval binds), its state, its text. */
export interface PlanRead {
  bytes: Buffer
  state: PlanState | undefined
  text: string
}

/** What the gates let through: the approval the run works under and where the run starts from. */
export interface Prepared {
  /** The run `--resume` continues. */
  resumed?: PlanRun
  recordPath: string
  text: string
  record: ApprovalRecord
  state: PlanState | undefined
  current: RepositoryHead | null
  /** The filtering proxy's socket directory, when the record allows named hosts. */
  proxy?: string
  /** A unit's run: the unit, the approval as decided (`record` is it narrowed to the unit), the plan's base commit. */
  units?: {unit: ApprovedUnit; decided: ApprovalRecord; base: string}
}

/**
 * Every gate a run passes before its first model request: approved for these bytes, the record's model,
 * budget, schema and sandbox usable here, not spent (or the unfinished run going on), a unit's commit to
 * patch against, not stale.
 */
export async function passGates(session: SessionContext, options: RunOptions, plan: PlanRead): Promise<Prepared> {
  const {planPath} = options
  const {bytes, state, text} = plan
  const {workspace} = session
  const recordPath = options.approvalPath ? path.resolve(options.approvalPath) : approvalPathFor(planPath)
  let record = await approvalFor(session, options, plan, recordPath)

  assertApproved(record, recordPath, options.planPath, bytes)
  // A unit's job runs under the approval narrowed to the unit: its paths (strict), its checks, its budget.
  const unit = options.unit === undefined ? undefined : unitOf(record, options.unit, planPath)
  const decided = record
  if (unit) record = unitRecord(record, unit)
  checkApprovedHooks(record, session.settings.hooks, recordPath, {allow: options.allowHookDrift, warn: options.host.warn})
  session.useApproved(record.model, recordPath)
  session.assertWithinApprovedBudget(record.maxBudgetUsd, recordPath)
  await session.useApprovedSchema(record.outputSchema, recordPath)
  assertSandboxForCommands(record)
  // A resumed run is not a second run of a spent plan: it is the unfinished one, going on. A unit's runs are its own.
  const ownRuns = unit ? runsOf(state, unit.name) : state
  const resumed = options.resume ? resumableRun({lockOwner: await liveLockOwner(planPath), planPath, record, state: ownRuns}) : undefined
  if (!resumed) {
    if (unit) assertUnitUnspent(decided, planPath, state, unit.name)
    else assertUnspent(record, recordPath, planPath, state)
  }

  const current = await session.snapshot!.head()
  // A unit's change is handed on as a patch against the plan's base commit: that needs the repository.
  const base = unit ? (decided.repository?.head ?? state?.repository?.head ?? current?.head ?? undefined) : undefined
  if (unit && (!current || !base)) {
    throw usageError(
      `A unit runs in a git repository with a commit to patch against: ${workspace} has none.`,
      "Run it in a clone of the repository at the plan's commit.",
    )
  }
  assertFresh({
    allowStale: options.allowStale,
    current: current?.head,
    // The run being resumed may have moved HEAD itself (a commit it made): that is not staleness.
    movedByRun: Boolean(resumed?.head) && current?.head === resumed?.head,
    planned: record.repository?.head ?? state?.repository?.head ?? null,
    plannedWorkspace: state?.workspace,
    workspace,
  })
  const units = unit ? {base: base!, decided, unit} : undefined
  return {current, record, recordPath, resumed, state, text, units}
}

/** The approval the run works under: written now for `--approve`, else the record beside the plan. */
async function approvalFor(session: SessionContext, options: RunOptions, plan: PlanRead, recordPath: string): Promise<ApprovalRecord> {
  if (!options.approve) return readApproval(recordPath, options.planPath)
  // No record is written for a run that cannot start for want of a key, or of the sandbox.
  session.assertCredentials()
  assertSandboxForCommands(options.approve)
  // The approver is the one running: the plan's own contract binds (as `wave approve` without
  // --scope/--verify), and the cap, the model settings and the hooks they run with are what is approved.
  const {approver, ...terms} = options.approve
  const decider = {approver, decision: 'approved', mayOverturn: options.force === true, planBytes: plan.bytes} as const
  const decided = await approvePlan(options.planPath, decider, {
    ...terms,
    maxBudgetUsd: options.budget?.usd,
    model: {
      effort: options.effort,
      fallbackModel: options.fallbackModel,
      maxOutputTokens: options.maxOutputTokens,
      model: options.model,
      thinking: options.thinking,
    },
    outputSchema: options.outputSchema,
    out: recordPath,
    runsIn: {hooks: session.settings.hooks, workspace: session.workspace},
  })
  return decided.record
}

/**
 * Where `wave run <plan>` works: `--cwd`, else the top of the git repository holding the current
 * directory. Outside any repository there is no such top, and a guess could run the plan in the wrong
 * place: a usage error naming --cwd and, as a hint only, the workspace the plan was made in.
 */
export function runPlaceHint(state: PlanState | undefined): string {
  const planned = state?.workspace ? ` (the plan was made in ${state.workspace})` : ''
  return `Run it from the repository the plan is for, or name the workspace with --cwd${planned}.`
}

/** Between choosing the run to resume and locking the plan, another run may have started and ended. */
export async function assertStillNewest(planPath: string, resumed: PlanRun, unit: string | undefined): Promise<void> {
  const state = await readPlanState(planPath)
  if (newestRun(unit === undefined ? state : runsOf(state, unit))?.startedAt === resumed.startedAt) return
  throw new WaveError(
    `The plan ${planNameOf(planPath)} ran again while this resume was starting: the run it would resume is no longer the newest.`,
    ExitCode.runtime,
  )
}
