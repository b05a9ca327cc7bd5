/**
 * What `wave plans <name>` shows of one plan: its status, the approval record in force, its revisions,
 * and the report of its last run (planned versus actual).
 */
import {type ApprovalRecord, approvalPathFor, previousRecord} from './approval.js'
import {failureReason, type PlanRun, type PlanState, planStatus, readPlanState} from './lifecycle.js'
import {isRegularFile, planNameOf} from './store.js'
import {readRevisions} from './revisions.js'

export interface PlanOverview {
  name: string
  path: string
  status: PlanState['status']
  /** Whether the plan file exists: a planning session that failed before writing it leaves only the state. */
  planFile: boolean
  /** Why a failed plan failed; null otherwise. */
  reason: string | null
  task: string | null
  /** The approval record beside the plan, when there is a valid one. */
  record: ApprovalRecord | null
  /** Every revision kept, oldest first, without their text (`wave plans diff` shows that). */
  revisions: Array<{revision: number; sha256: string; at: string; feedback: string | null}>
  /** The newest run, with its report when it got that far. */
  lastRun: PlanRun | null
}

export async function planOverview(planPath: string): Promise<PlanOverview> {
  const state = await readPlanState(planPath)
  const record = previousRecord(approvalPathFor(planPath)) ?? null
  const runs = state?.runs ?? []
  const status = planStatus(state, record?.decision ? {at: record.decidedAt ?? '', decision: record.decision} : undefined)
  const lastRun = runs.length > 0 ? runs.reduce((newest, run) => (run.startedAt > newest.startedAt ? run : newest)) : null
  return {
    lastRun,
    name: planNameOf(planPath),
    path: planPath,
    planFile: isRegularFile(planPath),
    reason: failureReason(state, status),
    record,
    revisions: readRevisions(planPath).map(({text: _text, ...revision}) => revision),
    status,
    task: record?.task ?? state?.task ?? null,
  }
}
