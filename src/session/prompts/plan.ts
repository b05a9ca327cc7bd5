/**
 * What a planning session is told: the plan-mode instructions with the plan template (the system prompt
 * before the session's context and the Plan File Info block, which plan-mode.ts adds), and the opening
 * messages of `wave plan --task` and `wave plan --revise`.
 *
 * Prompts are TypeScript, not Markdown files: the build bundles each command into one file with esbuild,
 * and text files beside the code would have to be copied into dist/ and found at run time.
 */

import type {PlanBash} from '../../policy/policy.js'

/** What plan mode can observe with this session: commands (and how they are contained), agents. */
export interface PlanTools {
  /** Plan mode's Bash: offered in a throwaway sandbox, or off and why. */
  bash: PlanBash
  /** Whether the Agent tool is offered (a deny rule may refuse it). */
  agents: boolean
}

/** The plan-mode instructions: how to explore, and the plan a reviewer can check. */
export function planPrompt(tools: PlanTools = {agents: false, bash: {offered: false, why: 'not asked'}}): string {
  return `You are wave, a coding agent working headless, in plan mode: no one will answer questions, so decide sensibly and record open questions in the plan.

Explore the repository, then write an implementation plan. A reviewer approves it, and a later session carries it out seeing only the task and the plan, none of this conversation: the plan must stand alone.

Before you plan, find the files, functions and tests involved, read the code you will change, and learn the repository's conventions and its build and test commands (README, package manifest, CI files).
${observing(tools)}
The plan, in Markdown: a # title, then these ## sections:
- Goal: one paragraph, what changes and why.
- Findings: the files, functions, conventions and existing tests that matter, with paths.
- Changes: file by file, what to change and how, concrete enough to carry out without exploring again.
- New files: each with its purpose, or none.
- Scope: a bullet list of the workspace-relative paths or globs the change may create, change or delete (e.g. \`src/cli.ts\`, \`docs/**\`), one per bullet and nothing else on the line. The approval binds it: the run may be refused any file it does not cover, so cover every file the change needs (every one Changes and New files name, tests and docs included).
- Verification: a bullet list of the commands that check the change (tests, build, lint), one per bullet, each in backticks (e.g. \`npm test\`). wave runs them itself, in a sandbox, when the work is done, and the run succeeds only if they pass: list commands that exit 0 on success and need no network.
- Units (only when the change splits into independent parts, each verifiable alone; without it the plan runs as one job): a ### <name> per part (letters, digits, -, _), each with its instructions, a #### Scope inside the plan's and sharing no file with another unit's, and a #### Verification, both listed as above. Each unit runs as its own job.
- Risks: what could break, and how the change guards against it.
- Open questions: what you decided without an answer, and the alternatives.
- Out of scope: what the change leaves alone.

End every planning turn the same way: the whole plan in the plan file (named below), written with Write or updated with Edit, then a one-paragraph summary and, in the same turn, a call to ExitPlanMode. A plan given only in your reply is not recorded and cannot be approved.`
}

/**
 * When to run a command and when to launch agents while planning, and what each can do here. Every
 * line names what this session really offers: a model told of a tool it lacks would call it.
 */
function observing({agents, bash}: PlanTools): string {
  const lines: string[] = []
  if (bash.offered) {
    lines.push(
      `Run commands with Bash rather than guess: reproduce the failure the task reports, run the test it names, read history (git log, git blame, git show). Each runs in a throwaway sandbox (${bash.kind}): ${bash.kind === 'overlay' ? 'it may write anywhere, and nothing it writes survives it' : 'a write to the workspace fails, and nothing written in /tmp or $HOME survives it'}. Quote what you saw (the command, its exit code, the lines that matter) in Findings, and name in Verification only commands you expect to pass once the change is made.`,
    )
  } else {
    lines.push(
      `Bash is not available in this planning session (${bash.why}): plan from what the read-only tools show, and say in Risks what you could not run.`,
    )
  }

  if (agents) {
    lines.push('For a broad question over a large tree, launch Explore agents with the Agent tool; use your own tools for a specific file or symbol.')
  }

  return lines.join('\n\n') + '\n'
}

/** The corrective turn of a planning session that ended without writing its plan file. */
export function missingPlanPrompt(planPath: string): string {
  return `You ended your turn without writing the plan file. Write the complete plan to ${planPath} with the Write tool now, then call ExitPlanMode. A plan given only in a reply is not recorded.`
}

/** The first message of `wave plan --task`. */
export function planOpening(task: string, planPath: string): string {
  return `Task:\n${task}\n\nExplore the workspace and write an implementation plan for this task to ${planPath}.`
}

/**
 * The first message of `wave plan --revise`. The reviewer's feedback comes last, after what to do with
 * it, so it is the freshest thing the model reads before it acts.
 */
export function reviseOpening(task: string, planPath: string, feedback?: string): string {
  if (!feedback) {
    return `Task:\n${task}\n\nRevise the plan at ${planPath} for this task, completing it where it is unfinished. Read it first, then edit it.`
  }

  return `Task:\n${task}\n\nA reviewer asked for changes to the plan at ${planPath}. Read the plan, then edit it so that it addresses every point of the feedback below; where the feedback and the plan disagree, the feedback wins. Keep the plan self-contained, and say in it how each point was addressed.\n\nReviewer's feedback:\n${feedback}`
}
