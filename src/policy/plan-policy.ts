/**
 * Plan mode's policy, composed once. Every session in plan mode takes its `PolicyContext` from here: the
 * planning session (`wave plan`, `--revise`, `run --task` once the model entered plan mode), an Explore
 * agent (plan mode with no plan file), `wave prompt`'s preview (which prints the session's own policy)
 * and what `wave tools` says plan mode offers (offers.ts). What plan mode may do with each access class
 * is a row of policy.ts's table; these are the fields that put a session in that row.
 */
import type {PlanBash, PolicyContext} from './policy.js'

/** What a plan-mode session is given on top of the policy it is in. */
export interface PlanModeGrant {
  /** The session's plan file, the one file it may write; absent (an Explore agent), it writes nothing. */
  planFile?: string
  /** Whether its Bash runs, in a throwaway sandbox, and how; absent, it runs no command. */
  planBash?: PlanBash
}

/** `base` in plan mode: the plan file and Bash it is given, no EnterPlanMode (it is in it), no approved scope. */
export function planModePolicy(base: PolicyContext, grant: PlanModeGrant): PolicyContext {
  return {
    ...base,
    canEnterPlanMode: false,
    mode: 'plan',
    planBash: grant.planBash,
    planFile: grant.planFile,
    // A plan comes before any approval: no approved scope holds it, its plan file is all it writes.
    scope: undefined,
  }
}
