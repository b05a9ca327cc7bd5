/**
 * The one way a decision on a plan is recorded, whoever decides: `wave approve` (and its --reject,
 * --request-changes), `run --approve` and `run --task --approve`, and the forge review's approval and
 * request for changes (its rejection is the comment's alone). A caller says who decided and what they
 * set; the rest is read here, once, the same for all: the plan's contract bound from the bytes decided
 * on, the hooks a run of it would run, the repository and the task from the plan's state. The record is
 * written (approval.ts), the plan's state learns of it (lifecycle.ts), and the bytes decided on are
 * kept as a revision (revisions.ts), so `wave plans diff` can say what changed since, however the plan
 * was approved.
 */
import type {SandboxChoice} from '../base/process/sandbox.js'
import type {ConfiguredHook} from '../config/hooks.js'
import {type EffectiveSettings, loadSettings} from '../config/settings.js'
import type {ExecutionMode} from '../policy/modes.js'
import {type ApprovalRecord, approvalPathFor, type DecisionInput, writeDecision} from './approval.js'
import {bindContract, type ContractOverrides, parseContract} from './contract.js'
import {assertNotOverriding} from './gates.js'
import {type Decision, readPlanState} from './lifecycle.js'
import {recordRevision} from './revisions.js'

/** Who decided, and on what. */
interface Decider {
  /** A person's name, the forge user who commented, the one running `run --approve`. */
  approver: string
  decision: Decision
  feedback?: string
  /** The plan as the decider read or was shown it: these bytes are decided on, bound and recorded, whatever the file holds since. */
  planBytes: Uint8Array
  /**
   * Whether this decision may overturn a newest rejection or request for changes: a person deciding
   * (`wave approve`, the forge) may; an inline approval (`run --approve`) only with --force. Default: may.
   */
  mayOverturn?: boolean
}

/** What the decider sets: the approval's terms, and the flags that replace or add to the plan's contract. */
export interface DecisionOverrides {
  mode: ExecutionMode
  allow: string[]
  /** Default: enabled, no network. */
  sandbox?: SandboxChoice
  /** The approver's model settings; absent or empty, none is recorded. */
  model?: DecisionInput['model']
  /** `--json-schema` as the approver gives it: the run's result must match it; absent, none is bound. */
  outputSchema?: DecisionInput['outputSchema']
  /** The dollar cap the approver was shown; absent, none. */
  maxBudgetUsd?: number
  /** --scope, --verify, --no-verify, --scope-enforce, --unit-budget-usd; absent, the plan's own contract binds. */
  contract?: ContractOverrides
  /** Where the record goes; default beside the plan. */
  out?: string
  /**
   * Where the approved run runs, when a session is open there already (`run --approve`): its workspace
   * and the hooks its settings hold, read before the task could write any. Absent: the workspace the
   * plan was made in, and the hooks its settings hold now.
   */
  runsIn?: {workspace: string; hooks: readonly ConfiguredHook[]}
}

export interface RecordedDecision {
  /** Where the record was written. */
  path: string
  record: ApprovalRecord
  /** What the approver should know of the contract bound (a scope entry left out, nothing to hold to); none but for an approval. */
  warnings: string[]
  /** An approval's: the settings files where it runs, as read to bind their hooks and protected paths. */
  settings?: EffectiveSettings
}

/**
 * Records the decision on the plan at `planPath`: refused (exit 3) where it would overturn one it may
 * not, and (exit 2) where an approval's contract cannot be bound; nothing is written then. An approval
 * binds the contract and the hooks; a rejection or a request for changes grants nothing, so binds
 * nothing, and a plan whose contract cannot be bound can still be sent back.
 */
export async function approvePlan(planPath: string, decider: Decider, overrides: DecisionOverrides): Promise<RecordedDecision> {
  const state = await readPlanState(planPath)
  const out = overrides.out ?? approvalPathFor(planPath)
  const approving = decider.decision === 'approved'
  const workspace = overrides.runsIn?.workspace ?? state?.workspace
  const contract = approving ? bindContract(await parseContract(Buffer.from(decider.planBytes).toString('utf8'), {workspace}), overrides.contract) : undefined
  if (decider.mayOverturn === false) assertNotOverriding(out, planPath)
  // The settings where it runs: the hooks a run of it would run, and the protected paths they add.
  const settings = approving ? loadSettings(workspace) : undefined
  const repository = state?.repository ? {branch: state.repository.branch, dirty: state.repository.dirty, head: state.repository.head} : null
  const written = await writeDecision({
    allow: overrides.allow,
    approver: decider.approver,
    decision: decider.decision,
    feedback: decider.feedback,
    // The hooks a run of it would run, shown and bound by their digest (the run warns when they differ).
    hooks: approving ? (overrides.runsIn?.hooks ?? settings?.hooks) : undefined,
    maxBudgetUsd: overrides.maxBudgetUsd,
    mode: overrides.mode,
    model: overrides.model,
    out,
    outputSchema: overrides.outputSchema,
    planBytes: decider.planBytes,
    planPath,
    protectedPaths: settings?.protectedPaths,
    repository,
    sandbox: overrides.sandbox,
    scope: contract?.scope,
    task: state?.task,
    units: contract?.units,
    verify: contract?.verify,
  })
  // The revision decided on is kept once the decision is written (a refused --out leaves nothing behind).
  recordRevision(planPath, decider.planBytes)
  return {...written, settings, warnings: contract?.warnings ?? []}
}
