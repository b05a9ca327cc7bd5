import type {ExecutionMode} from '../../policy/policy.js'
import type {SandboxChoice} from '../../base/process/sandbox.js'
import type {SessionOptions} from '../../session/context.js'
import type {SessionStart} from '../plan.js'

export interface InlineApproval {
  mode: ExecutionMode
  allow: string[]
  approver: string
  sandbox: SandboxChoice
}

export interface RunOptions extends SessionOptions {
  /** The plan's path, or its name as `wave plans` lists it. */
  planPath: string
  approvalPath?: string
  /** `--approve`: write an approved record first, so there is always an audit trail. */
  approve?: InlineApproval
  /** `--force`: with `approve`, approve even over a newest decision of rejected or changes_requested. */
  force?: boolean
  /** `--resume`: continue the plan's newest run, which did not succeed, from its transcript. */
  resume?: boolean
  allowStale: boolean
  /** `--allow-hook-drift`: run even when the hooks in effect differ from those approved (warned). */
  allowHookDrift?: boolean
  /** `--verify-retries`: how many more turns the model gets when the approved checks fail (default 2). */
  verifyRetries?: number
  /** `--unit`: run this unit of the plan only, held to its paths (strict) and checks; it writes its result and patch. */
  unit?: string
  /** `--result-out` and `--patch-out`: where a unit's result and patch go (default beside the plan). */
  resultOut?: string
  patchOut?: string
  onStart?(info: SessionStart): void
}
