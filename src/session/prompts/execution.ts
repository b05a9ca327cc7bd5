/**
 * What the sessions that change the workspace share (a run of an approved plan, `wave run --task`): the
 * permissions in force, and how to work and finish. TypeScript rather than Markdown: see plan.ts.
 */
import {type ExecutionMode, MODE_DESCRIPTIONS} from '../../policy/modes.js'

export interface ExecutionPromptInput {
  mode: ExecutionMode
  /** The allow rules in force, as written. */
  allow: string[]
  /** The approved checks, which Bash runs exactly as written whatever the rules (policy.ts, approvedChecks). */
  checks?: readonly string[]
}

export function permissions({allow, checks = [], mode}: ExecutionPromptInput): string {
  const rules = allow.length > 0 ? `Allow rules: ${allow.join(', ')}.` : 'No extra allow rules.'
  const approved = checks.length > 0 && mode !== 'bypassPermissions' ? ` Bash runs the approved checks exactly as written: ${checks.join('; ')}.` : ''
  return `Permission mode ${mode}: ${MODE_DESCRIPTIONS[mode].prompt} ${rules}${approved} A refused call returns "Permission denied" and why: do not retry it unchanged; find an allowed way, or report what was blocked.`
}

/**
 * How to work and how to finish. `start` is how the work begins (the plan's steps, or exploring), `verify`
 * which checks to run, `report` what the closing summary adds.
 */
export function workGuidance({report, start, verify}: {start: string; verify: string; report: string}): string {
  return `How to work:
- ${start}
- Make independent calls together in one turn; prefer Edit to rewriting whole files.
- Keep changes minimal and in the repository's style.
- ${verify} where a rule allows them, and fix what fails.

When done, reply with a summary: the files changed; the checks run, with their results, and any that could not run and why (never claim a check that did not run)${report}.`
}
