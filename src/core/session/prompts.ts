/**
 * System prompts of the sessions that change the workspace: a run of an approved plan, and
 * `wave run --task`. Plan mode's prompt, with the design's reminder, is plan mode's own (plan-mode.ts).
 */
import {type ExecutionMode, MODE_DESCRIPTIONS} from '../policy/modes.js'

export interface ExecutionPromptInput {
  workspace: string
  mode: ExecutionMode
  allow: string[]
}

function permissions({allow, mode}: ExecutionPromptInput): string {
  const rules = allow.length > 0 ? `Allow rules: ${allow.join(', ')}.` : 'No extra allow rules.'
  return `Permission mode ${mode}: ${MODE_DESCRIPTIONS[mode].prompt} ${rules} Paths outside the workspace are refused. A refused call returns an error saying why; adapt rather than retry it unchanged.`
}

/** System prompt of a run: the approved plan is in the first user message. */
export function executionSystemPrompt(input: ExecutionPromptInput): string {
  return `You are wave, a coding agent working headless. Carry out the approved plan in the first message, completely and carefully, in the workspace ${input.workspace}. No one will answer questions during this run.

${permissions(input)}

Follow the plan; where it is wrong or incomplete, make the smallest sensible change and say so. When done, reply with a short summary of what you changed and how you checked it.`
}

/** System prompt of `wave run --task`: the task itself is the first message; plan mode is one call away. */
export function taskSystemPrompt(input: ExecutionPromptInput): string {
  return `You are wave, a coding agent working headless. Carry out the task in the first message in the workspace ${input.workspace}. No one will answer questions during this run.

${permissions(input)}

For a complex, risky or ambiguous change, call EnterPlanMode first: explore read-only, write a plan to the plan file you are given, then call ExitPlanMode so the plan can be approved before anything changes. For a small, clear change, just do it. When done, reply with a short summary of what you changed and how you checked it.`
}
