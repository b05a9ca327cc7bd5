/**
 * The permission modes and what each means, in one table: the run prompts and the review screen say the
 * same thing because they read it from here (docs/reference.md words it for people). What a mode decides per access class is the
 * policy's table (policy.ts); these are its words.
 */
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions'] as const
export type PermissionMode = (typeof PERMISSION_MODES)[number]

/** The modes an approved plan may execute in: plan mode is for planning only. */
export const EXECUTION_MODES = ['default', 'acceptEdits', 'bypassPermissions'] as const
export type ExecutionMode = (typeof EXECUTION_MODES)[number]

const CYCLE: PermissionMode[] = ['default', 'acceptEdits', 'plan']

/** The next mode in the design's cycle default → acceptEdits → plan → default, optionally skipping some. */
export function nextMode(mode: PermissionMode, skip: PermissionMode[] = []): PermissionMode {
  const order = CYCLE.filter((m) => !skip.includes(m))
  const at = order.indexOf(mode)
  return order[(at + 1) % order.length] ?? order[0]
}

interface ModeDescription {
  /** One line for a screen or a table. */
  summary: string
  /** What the model is told it may do, in the system prompt of a session in this mode. */
  prompt: string
}

export const MODE_DESCRIPTIONS: Record<PermissionMode, ModeDescription> = {
  acceptEdits: {
    prompt: 'you may read and write files inside the workspace; shell commands run only where an allow rule matches.',
    summary: 'edits allowed; Bash only where an --allow rule matches',
  },
  bypassPermissions: {
    prompt: 'you may read and write files inside the workspace and run shell commands.',
    summary: 'every tool allowed inside the workspace',
  },
  default: {
    prompt: 'you may read files inside the workspace; writes and commands need an allow rule, since no one can approve them during a headless run.',
    summary: 'read-only; edits and commands only where an --allow rule matches',
  },
  plan: {
    prompt: 'you may read files inside the workspace and write only the plan file; everything else is refused.',
    summary: 'read-only; the plan file is the one writable file',
  },
}
