/**
 * What `wave approve` shows of a decision recorded: the record's fields in `--json` (with what the plan
 * asked for and where the record went), the record's path on stdout, and a tally naming the decision,
 * the mode, the sandbox and the contract bound. Taken by its shape: flows/approve.ts makes it.
 */
import {describeSandbox} from '../../base/process/sandbox.js'
import type {ApprovalRecord} from '../../plans/approval.js'
import type {Decision, PlanState} from '../../plans/lifecycle.js'
import {formatCost} from '../progress.js'
import type {CommandResult} from '../sink.js'

interface ApprovalShown {
  planPath: string
  /** Where the record was written. */
  path: string
  record: ApprovalRecord
  decision: Decision
  /** What the plan asked for (ExitPlanMode's allowedPrompts): shown, never granted. */
  asked: PlanState['allowedPrompts']
}

export function approvalResult(outcome: ApprovalShown): CommandResult {
  const {decision, path, planPath, record} = outcome
  return {
    data: {...record, allowedPrompts: outcome.asked, recordPath: path},
    tally: `${decision.replace('_', ' ')}: ${planPath} (mode ${record.mode}, ${describeSandbox(record.sandbox)}; ${contractTally(record)})`,
    text: path,
  }
}

/** The contract in the tally: "scope 3 paths (warn), checks: npm test, npm run lint; 3 units, at most $2.00 each". */
function contractTally(record: ApprovalRecord): string {
  const scope = record.scope ? `scope ${record.scope.paths.length} ${record.scope.paths.length === 1 ? 'path' : 'paths'} (${record.scope.enforce})` : 'no scope'
  const checks = record.verify?.length ? `checks: ${record.verify.map((check) => check.command).join(', ')}` : 'no checks'
  const budget = record.maxBudgetUsd === undefined ? '' : `; at most ${formatCost(record.maxBudgetUsd)}`
  const count = record.units?.length ?? 0
  const each = record.units?.[0]?.budgetUsd === undefined ? '' : `, at most ${formatCost(record.units[0].budgetUsd)} each`
  const units = count === 0 ? '' : `; ${count} ${count === 1 ? 'unit' : 'units'}${each}`
  return `${scope}, ${checks}${budget}${units}`
}
