/**
 * The one way a decision on a plan is recorded, whoever decides: `wave approve` (and its --reject,
 * --request-changes), `run --approve` and `run --task --approve`, and the forge review's approval and
 * request for changes (its rejection is the comment's alone). The record is
 * written (approval.ts), the plan's state learns of it (lifecycle.ts), and the bytes decided on are
 * kept as a revision (revisions.ts), so `wave plans diff` can say what changed since, however the plan
 * was approved.
 */
import {type ApprovalRecord, approvalPathFor, type DecisionInput, writeDecision} from './approval.js'
import {assertNotOverriding} from './gates.js'
import {recordRevision} from './revisions.js'

export interface PlanDecision extends DecisionInput {
  /**
   * Whether this decision may overturn a newest rejection or request for changes: a person deciding
   * (`wave approve`, the forge) may; an inline approval (`run --approve`) only with --force.
   */
  overrides?: boolean
}

/** Records the decision: refused (exit 3) where it would overturn one it may not; the record's path and content. */
export async function approvePlan(input: PlanDecision): Promise<{path: string; record: ApprovalRecord}> {
  const {overrides = true, ...decision} = input
  if (!overrides) assertNotOverriding(decision.out ?? approvalPathFor(decision.planPath), decision.planPath)
  const written = await writeDecision(decision)
  // The revision decided on is kept once the decision is written (a refused --out leaves nothing behind).
  recordRevision(decision.planPath, decision.planBytes)
  return written
}
