/**
 * What each kind of session is: its permission mode, plan mode's state and its system prompt. The
 * drivers (plan.ts, run.ts, task.ts) and `wave prompt` (preview.ts) build sessions from here, so the
 * prompt a user reviews is the one a session sends.
 */
import type {ExecutionMode} from '../policy/modes.js'
import type {PermissionMode, Rules} from '../policy/policy.js'
import {type PlanFile, PlanMode, type PlanModeOptions} from './plan-mode.js'
import {runPrompt} from './prompts/run.js'
import {taskPrompt} from './prompts/task.js'

export interface SessionProfile {
  /** The permission mode while plan mode is not active. */
  mode: PermissionMode
  /** Plan mode's state: active from the start (plan, revise), enterable (run --task), or neither (run). */
  planMode: PlanMode
  /** The system prompt while plan mode is not active, given the rules in force. */
  system(rules: Rules): string
  /** The approved checks the model may run exactly as written (a run's record's `verify`): the policy's `approvedChecks`. */
  checks?: readonly string[]
}

/** `wave plan` and `--revise`: plan mode on one plan file from the start; its prompt is plan mode's own. */
export function planningProfile(plan: PlanFile, workspace: string): SessionProfile {
  return {mode: 'plan', planMode: new PlanMode({plan, workspace}), system: () => ''}
}

/** `wave run plan.md`: the approval's mode and checks (`verify`, the model may run them as written); plan mode can never be entered. */
export function runProfile(mode: ExecutionMode, workspace: string, verify: ReadonlyArray<{command: string}> = []): SessionProfile {
  const checks = verify.map(({command}) => command)
  return {checks, mode, planMode: new PlanMode({workspace}), system: (rules) => runPrompt({allow: rules.allow.map((rule) => rule.source), checks, mode})}
}

/** `wave run --task`: the chosen mode, with plan mode one EnterPlanMode call away (`planMode.enter`). */
export function taskProfile(mode: ExecutionMode, planMode: PlanModeOptions): SessionProfile {
  return {mode, planMode: new PlanMode(planMode), system: (rules) => taskPrompt({allow: rules.allow.map((rule) => rule.source), mode})}
}
