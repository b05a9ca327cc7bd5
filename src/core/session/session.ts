/**
 * One model session, whatever drives it (a plan, a revision, a run of an approved plan, `run --task`):
 * open the tools, build the policy, wire the transcript, create the client, run the loop, and close
 * what was opened, in `finally`. The drivers (plan.ts, run.ts, task.ts) keep only what differs: the
 * opening message, the plan bookkeeping, the outcome.
 */
import type Anthropic from '@anthropic-ai/sdk'
import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'
import type {Config} from '@oclif/core'

import {openSessionTools, type SessionTools} from '../../plugins/toolset.js'
import {parseRules, type PermissionMode, type PolicyContext, type Rules} from '../policy/policy.js'
import type {EffectiveSettings} from '../settings.js'
import {type AgentEvent, type AgentResult, runAgent} from './loop.js'
import {createClient} from './model.js'
import type {PlanMode} from './plan-mode.js'

/** What the command gives every session it starts: read once, passed in, never kept in module state. */
export interface SessionHost {
  /** The running CLI's oclif config, whose installed plugins contribute tools. */
  config?: Config
  /** Aborted on SIGINT or SIGTERM. */
  signal: AbortSignal
  /** Warnings (a plugin that failed to load, a server that did not start). */
  warn(message: string): void
  /** Every event of the session, for progress and stream output. */
  onEvent?(event: AgentEvent): void
}

export interface SessionSpec {
  host: SessionHost
  /** The workspace root, a real path. */
  workspace: string
  /** The settings in force, read once when the driver started: a session never re-reads them. */
  settings: EffectiveSettings
  model: string
  maxTurns: number
  /** The permission mode while plan mode is not active. */
  mode: PermissionMode
  /** Rules beyond the settings files': `--allow` flags, or an approval record's `allow`. */
  allow: string[]
  /** Plan mode's state: active from the start (plan, revise), enterable (run --task), or neither (run). */
  planMode: PlanMode
  /** The first user message. */
  opening: string
  /** The system prompt while plan mode is not active, given the rules in force. */
  system(rules: Rules): string
  /** Appends a message to the transcript (the opening included). */
  transcript(message: MessageParam): Promise<void>
  /** An open tool set to use, which the caller closes; else one is opened and closed here. */
  tools?: SessionTools
  client?: Anthropic
}

export async function runSession(spec: SessionSpec): Promise<AgentResult> {
  const {host, planMode, settings, workspace} = spec
  // Deny rules come from the settings files only; allow rules add up, and a deny always wins.
  const rules = parseRules([...settings.allow, ...spec.allow], settings.deny)
  const base: PolicyContext = {headless: true, mode: spec.mode, rules, workspaceRoot: workspace}
  const tools = spec.tools ?? (await openSessionTools({config: host.config, settings, warn: host.warn, workspace}))
  try {
    // Built once: the system prompt must not change between turns, or the prompt cache is lost.
    const context = await sessionContext(spec)
    const messages: MessageParam[] = [{content: spec.opening, role: 'user'}]
    await spec.transcript(messages[0])
    return await runAgent({
      client: spec.client ?? (await createClient()),
      maxTurns: spec.maxTurns,
      messages,
      model: spec.model,
      onEvent: host.onEvent,
      onMessage: spec.transcript,
      policy: () => ({...base, ...planMode.policy()}),
      registry: tools.registry,
      session: planMode,
      signal: host.signal,
      stopRequested: () => planMode.finished,
      system: () => (planMode.active ? planMode.prompt(context) : [spec.system(rules), context].filter(Boolean).join('\n\n')),
    })
  } finally {
    if (!spec.tools) await tools.close()
  }
}

/**
 * What every session's system prompt carries besides its mode's own text, in sections joined by blank
 * lines. Plan mode puts it before its reminder, which must end the prompt.
 */
async function sessionContext(_spec: SessionSpec): Promise<string> {
  const sections: string[] = []
  return sections.filter(Boolean).join('\n\n')
}
