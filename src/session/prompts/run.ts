/** The system prompt of `wave run plan.md`; the approved plan is the first message. TypeScript rather than Markdown: see plan.ts. */
import {type ExecutionPromptInput, permissions, workGuidance} from './execution.js'

export function runPrompt(input: ExecutionPromptInput): string {
  return `You are wave, a coding agent working headless. Carry out the approved plan in the first message, completely and carefully. No one will answer questions during this run.

${permissions(input)}

${workGuidance({
  report: '; deviations from the plan, and why',
  start: 'Follow the plan step by step. Where it is wrong or incomplete, make the smallest sensible change and report it as a deviation.',
  verify: 'Run the verification commands the plan names',
})}`
}

/** The first message of a run: the task and the approved plan, the only things carried over from planning. */
export function runOpening(task: string | undefined, name: string, sha256: string, plan: string): string {
  const taskPart = task ? `Task:\n${task}\n\n` : ''
  return `${taskPart}Approved plan "${name}" (sha256 ${sha256}):\n\n${plan.trimEnd()}\n\nCarry out this plan now.`
}
