/**
 * The gates a plan passes before it runs, each refusing with the design's exit code: approved and for
 * these bytes (approval.ts, assertApproved), an inline approval that does not overturn a person's
 * rejection, an approval not yet spent by a successful run, a plan made against the commit checked out,
 * and one run of a plan at a time (the lock). The drivers (app/run.ts) ask; the rules are here.
 */
import {rm} from 'node:fs/promises'

import {ExitCode, WaveError} from '../base/errors.js'
import {type ApprovalRecord, approvalPathFor, previousRecord} from './approval.js'
import type {PlanState} from './lifecycle.js'
import {createExclusive, liveLockOwner, planNameOf, planSidecars} from './store.js'

/**
 * `run --approve` approves inline, for trusted pipelines; it does not silently overturn a person's
 * rejection or request for changes. `--force` does, and the record's history keeps both decisions.
 */
export function assertNotOverriding(recordPath: string, planPath: string): void {
  const previous = previousRecord(recordPath)
  if (!previous || previous.decision === 'approved') return
  const by = previous.approver ? ` by ${previous.approver}` : ''
  const what = previous.decision === 'rejected' ? 'was rejected' : 'has changes requested'
  const feedback = previous.feedback ? `: ${previous.feedback.split('\n')[0]}` : ''
  throw new WaveError(
    `The plan ${planNameOf(planPath)} ${what}${by}${feedback}; --approve does not override that decision.`,
    ExitCode.notApproved,
    `Revise it (wave plan --revise ${planNameOf(planPath)}) and approve it again, or pass --force to approve it over the decision (recorded).`,
  )
}

/**
 * A plan that ran successfully is spent: it runs again only after a new approval. The record says so
 * when the run could mark it (`spentAt`, which travels with the record); the state beside the plan
 * says so too, for a record the run could not write: a successful run of these bytes that started
 * after the record's decision.
 */
export function assertUnspent(record: ApprovalRecord, recordPath: string, planPath: string, state: PlanState | undefined): void {
  const decidedAt = Date.parse(record.decidedAt ?? '')
  const ran =
    record.spentAt ??
    state?.runs.find((run) => run.exitCode === ExitCode.ok && run.approvalSha256 === record.plan.sha256 && Date.parse(run.startedAt) > decidedAt)?.endedAt
  if (ran === undefined) return
  const name = planNameOf(planPath)
  throw new WaveError(
    `The plan ${name} already ran under this approval${ran ? ` (finished ${ran})` : ''}: an approved plan runs once.`,
    ExitCode.notApproved,
    `Approve it again to run it again: wave approve ${name}${recordPath === approvalPathFor(planPath) ? '' : ` --out ${recordPath}`}`,
  )
}

interface Freshness {
  /** The commit the plan was made against (the record's, else the state's), if known. */
  planned: string | null | undefined
  /** The commit checked out now. */
  current: string | null | undefined
  /** The workspace the run is in, and the one the plan was made in (for the hint). */
  workspace: string
  plannedWorkspace?: string
  /** HEAD was moved by the run being resumed (a commit it made): not staleness. */
  movedByRun?: boolean
  /** `--allow-stale`. */
  allowStale?: boolean
}

/** A plan made against another commit than the one checked out is stale (exit 4), unless `--allow-stale`. */
export function assertFresh(given: Freshness): void {
  const {current, planned, workspace} = given
  if (!planned || current === planned || given.movedByRun || given.allowStale) return
  const where = given.plannedWorkspace && given.plannedWorkspace !== workspace ? ` (--cwd ${given.plannedWorkspace})` : ''
  throw new WaveError(
    `The plan is stale: it was made against commit ${planned.slice(0, 12)}, and the workspace ${workspace} is at ${current?.slice(0, 12) ?? 'no commit'}.`,
    ExitCode.mismatch,
    `Run it in a checkout at that commit with --cwd${where}, make a new plan, or pass --allow-stale to run it here anyway.`,
  )
}

/** One run of a plan at a time: a lock file created exclusively, holding the owner's pid. Resolves to its release. */
export async function lockPlan(planPath: string): Promise<() => Promise<void>> {
  const lock = planSidecars(planPath).lock
  for (let attempt = 0; attempt < 2; attempt++) {
    // Created with its owner's pid in one step: a racing run never reads an empty lock as a dead one.
    if (await createExclusive(lock, String(process.pid))) return () => rm(lock, {force: true})
    const owner = await liveLockOwner(planPath)
    if (owner) {
      throw new WaveError(
        `The plan ${planNameOf(planPath)} is already running (pid ${owner}).`,
        ExitCode.runtime,
        `Wait for it to finish, or remove ${lock} if that process is gone.`,
      )
    }

    await rm(lock, {force: true}) // left by a process that died
  }

  throw new WaveError(`Could not lock the plan ${planPath} for this run.`, ExitCode.runtime)
}
