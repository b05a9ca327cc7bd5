/**
 * The `hooks` key of settings, as Claude Code writes it: events → matcher groups → commands. Read
 * here from wave's settings files and a repository's `.claude/settings.json`; what a session does with
 * them is src/tools/hooks/. An event or hook type wave does not run is reported, never dropped in silence.
 */
import {createHash} from 'node:crypto'

import {z} from 'zod'

/** The events wave fires, with Claude Code's names (SubagentStop: when an agent of the Agent tool ends its turn). */
const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop', 'SubagentStop', 'SessionStart', 'SessionEnd', 'PreCompact'] as const
export type HookEventName = (typeof HOOK_EVENTS)[number]

/** Claude Code's default: a hook may take a minute. */
const DEFAULT_HOOK_TIMEOUT_SECONDS = 60

const hookCommandSchema = z.lazy(() =>
  z.looseObject({
    type: z.string(),
    command: z.string().optional(),
    /** Seconds, as Claude Code reads it. */
    timeout: z.number().positive().optional(),
  }),
)

const matcherGroupSchema = z.lazy(() =>
  z.looseObject({
    matcher: z.string().optional(),
    hooks: z.array(hookCommandSchema),
  }),
)

/** Loose where Claude Code's format is wider than what wave runs: the rest is reported by `configuredHooks`, not refused. */
export const hooksSchema = z.lazy(() => z.record(z.string(), z.array(matcherGroupSchema)))
type HooksSetting = z.infer<typeof hooksSchema>

/** One hook command in force: where it came from, and when it runs. */
export interface ConfiguredHook {
  event: HookEventName
  /** The group's matcher (tool names for PreToolUse/PostToolUse, the agent's type for SubagentStop; absent, '' or '*' match all). */
  matcher?: string
  command: string
  /** Seconds. */
  timeout: number
  /** user: run as the user's own command; project: run in the sandbox, and only when project settings are trusted. */
  scope: 'project' | 'user'
  /** The settings file that set it. */
  file: string
}

/** The hooks a settings file sets, flattened, and what of it wave will not run (to be warned about, naming the file). */
export function configuredHooks(
  setting: HooksSetting | undefined,
  scope: ConfiguredHook['scope'],
  file: string,
): {hooks: ConfiguredHook[]; unsupported: string[]} {
  const hooks: ConfiguredHook[] = []
  const unsupported: string[] = []
  for (const [event, groups] of Object.entries(setting ?? {})) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      unsupported.push(`${file}: hooks for ${event} are not run: wave fires ${HOOK_EVENTS.join(', ')}`)
      continue
    }

    for (const group of groups) {
      for (const hook of group.hooks) {
        if (hook.type !== 'command' || !hook.command?.trim()) {
          unsupported.push(
            `${file}: a ${event} hook of type "${hook.type}"${hook.command ? '' : ' without a command'} is not run: wave runs hooks of type "command"`,
          )
          continue
        }

        const matcher = group.matcher
        if (matcher && matcher !== '*' && !validPattern(matcher)) {
          unsupported.push(`${file}: the ${event} hook "${hook.command}" is not run: its matcher "${matcher}" is not a regular expression wave can read`)
          continue
        }

        hooks.push({
          command: hook.command,
          event: event as HookEventName,
          file,
          matcher: matcher || undefined,
          scope,
          timeout: hook.timeout ?? DEFAULT_HOOK_TIMEOUT_SECONDS,
        })
      }
    }
  }

  return {hooks, unsupported}
}

function validPattern(pattern: string): boolean {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}

/**
 * What an approval binds of the hooks in effect: each one's event, matcher, command, timeout and scope,
 * in order. Not the files' names: the same hooks from another checkout are the same hooks.
 */
export function hooksDigest(hooks: readonly ConfiguredHook[]): string {
  const canonical = hooks.map(({command, event, matcher, scope, timeout}) => [event, matcher ?? '', command, timeout, scope])
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex')
}

/** One line naming a hook, for messages, `wave approve` and `wave doctor`: `PreToolUse(Bash) "./check.sh" (project, .wave/settings.json)`. */
export function describeHook(hook: ConfiguredHook): string {
  const matcher = hook.matcher ? `(${hook.matcher})` : ''
  return `${hook.event}${matcher} "${hook.command}" (${hook.scope}, ${hook.file})`
}

/** Whether a hook's matcher takes `subject` (a tool's name, SessionStart's source, PreCompact's trigger, an agent's type), as Claude Code matches. */
export function hookMatches(hook: ConfiguredHook, subject: string | undefined): boolean {
  if (!hook.matcher || hook.matcher === '*' || subject === undefined) return true
  return new RegExp(`^(?:${hook.matcher})$`).test(subject)
}
