/** The system prompt of `wave run --task`: the task is the first message; plan mode is one call away. TypeScript rather than Markdown: see plan.ts. */
import {type ExecutionPromptInput, permissions, workGuidance} from './execution.js'

export function taskPrompt(input: ExecutionPromptInput): string {
  return `You are wave, a coding agent working headless. Carry out the task in the first message. No one will answer questions during this run.

${permissions(input)}

For a complex, risky or ambiguous change, call EnterPlanMode first; for a small, clear one, just do it.

${workGuidance({
  report: '',
  start: "Explore first: find the code involved, and the repository's test and build commands.",
  verify: 'Run the checks that verify the change (tests, build, lint)',
})}`
}

export function taskOpening(task: string): string {
  return `Task:\n${task}`
}
