/**
 * A session's hooks (Claude Code's format, config/hooks.ts), fired where Claude Code fires them: the
 * dispatcher asks PreToolUse after the policy allowed a call (a hook can only narrow: its "allow" grants
 * nothing the policy refused, its `updatedInput` is checked again as the model's input was) and
 * PostToolUse after it ran, for the session's calls and its agents'; the loop asks Stop and PreCompact,
 * an agent's loop SubagentStop; the session asks SessionStart, UserPromptSubmit and SessionEnd. A user's hook runs as the user's own
 * command; a project's (trusted, or it is not here) runs in the sandbox, through the one sandbox choice.
 * Every run is an event (`hook` in stream-json); a failure names the hook on stderr and in what the
 * model is told, never passed over in silence.
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {scrubSecrets} from '../../base/secrets.js'
import {runCommand, spawnFor} from '../../base/process/runner.js'
import {DEFAULT_SANDBOX, type SandboxSettings} from '../../base/process/sandbox.js'
import {hookSandbox} from './containment.js'
import {type ConfiguredHook, type HookEventName, hookMatches} from '../../config/hooks.js'
import {type HookAnswer, hookName, type HookRun, oneLine, readHookRun} from './answer.js'

/** One hook run, as progress and stream-json show it. */
export interface HookEvent {
  type: 'hook'
  event: HookEventName
  command: string
  scope: ConfiguredHook['scope']
  /** ok: went on; blocked: exit 2 or a blocking answer; error: failed (could not start, timed out, unreadable JSON) or another exit. */
  outcome: 'blocked' | 'error' | 'ok'
  exitCode: number | null
  durationMs: number
  /** What it said or why it failed, when anything. */
  message?: string
}

interface HookContext {
  /** The workspace root: the hooks' working directory and CLAUDE_PROJECT_DIR. */
  workspace: string
  sessionId: string
  /** The session's transcript file now (it moves when a task makes its plan): `transcript_path`. */
  transcriptPath(): string
  /** The permission mode now (Claude Code's `permission_mode`). */
  mode(): string
  /** The session's sandbox: a project hook runs in it (always enabled for them), with its network, environment and /tmp size. */
  sandbox?: SandboxSettings
  signal: AbortSignal
  warn(message: string): void
  onEvent?(event: HookEvent): void
  /** Around each firing of an event's hooks: what they write is theirs, not the model's (a run's enforcement.ts). */
  around?<T>(run: () => Promise<T>): Promise<T>
}

/** What a gate (PreToolUse, UserPromptSubmit) answered: blocked with a reason, or go on with notes for the model. */
interface GateAnswer {
  blocked?: string
  /** Context the hooks add (additionalContext, UserPromptSubmit's stdout) and errors that did not block. */
  notes: string[]
}

/** PreToolUse's answer: a gate's, and the input a hook gave in place of the model's (`updatedInput`), with the hook's name. */
interface PreToolUseAnswer extends GateAnswer {
  updated?: {by: string; input: Record<string, unknown>}
}

export class SessionHooks {
  /** Set when a hook answered `continue: false`: the session stops after the current step, with this reason. */
  halted?: string

  constructor(
    readonly hooks: readonly ConfiguredHook[],
    private readonly context: HookContext,
  ) {}

  /** Whether any hook is configured for `event`. */
  has(event: HookEventName): boolean {
    return this.hooks.some((hook) => hook.event === event)
  }

  /**
   * Before an allowed call runs. Fails closed: a guard that could not answer does not let the call through.
   * A hook's `updatedInput` is handed back for the dispatcher to check as it checked the model's (two
   * hooks rewriting one call differently block it: wave does not pick one).
   */
  async preToolUse(call: {id: string; name: string; input: unknown}): Promise<PreToolUseAnswer> {
    const runs = await this.fire('PreToolUse', call.name, {tool_input: call.input, tool_name: call.name, tool_use_id: call.id})
    const answer: PreToolUseAnswer = this.gate(runs, 'this call was not run', (answer) => {
      const specific = answer.hookSpecificOutput
      const why = specific?.permissionDecisionReason ?? answer.reason
      if (specific?.permissionDecision === 'deny') return `denied this call${why ? `: ${why}` : '.'}`
      // Headless, as the policy's own ASK: no one is there to confirm.
      if (specific?.permissionDecision === 'ask')
        return `asks for confirmation of this call${why ? ` (${why})` : ''}, and no one can confirm it in a headless run: treated as a denial.`
      if (answer.decision === 'block') return `blocked this call${why ? `: ${why}` : '.'}`
      return undefined
    })
    if (answer.blocked) return answer
    const rewrites = runs.flatMap((run) =>
      run.kind === 'ok' && run.answer?.hookSpecificOutput?.updatedInput ? [{by: hookName(run.hook), input: run.answer.hookSpecificOutput.updatedInput}] : [],
    )
    if (new Set(rewrites.map((rewrite) => JSON.stringify(rewrite.input))).size > 1) {
      return {
        blocked: `${rewrites.map((rewrite) => rewrite.by).join(' and ')} rewrote this call's input differently; this call was not run.`,
        notes: answer.notes,
      }
    }

    if (rewrites.length > 0) answer.updated = {by: rewrites.map((rewrite) => rewrite.by).join(' and '), input: rewrites[0].input}
    return answer
  }

  /** After a call ran: what its hooks tell the model (exit 2's stderr, a block's reason, additionalContext), appended to the result. */
  async postToolUse(call: {id: string; name: string; input: unknown; response: unknown}): Promise<string[]> {
    const runs = await this.fire('PostToolUse', call.name, {tool_input: call.input, tool_name: call.name, tool_response: call.response, tool_use_id: call.id})
    const notes: string[] = []
    for (const run of runs) {
      if (run.kind === 'block') notes.push(`${hookName(run.hook)} reported: ${run.stderr || '(no message)'}`)
      else if (run.kind === 'ok' && run.answer) {
        if (run.answer.decision === 'block') notes.push(`${hookName(run.hook)} reported: ${run.answer.reason ?? '(no reason)'}`)
        const context = run.answer.hookSpecificOutput?.additionalContext
        if (context) notes.push(context)
      } else notes.push(...this.errorNotes([run]))
    }

    return notes
  }

  /** The session's prompt (its first user message), before the model sees it. Fails closed, as PreToolUse. */
  async userPromptSubmit(prompt: string): Promise<GateAnswer> {
    const runs = await this.fire('UserPromptSubmit', undefined, {prompt})
    const answer = this.gate(runs, 'the prompt was not sent', (json) =>
      json.decision === 'block' ? `blocked the prompt${json.reason ? `: ${json.reason}` : '.'}` : undefined,
    )
    // Plain stdout of exit 0 is context, as in Claude Code.
    for (const run of runs) if (run.kind === 'ok' && run.text) answer.notes.push(run.text)
    return answer
  }

  /** When a session starts or resumes: the context its hooks add (stdout, additionalContext). */
  async sessionStart(source: 'resume' | 'startup'): Promise<string[]> {
    const runs = await this.fire('SessionStart', source, {source})
    const context: string[] = []
    for (const run of runs) {
      if (run.kind === 'ok') context.push(...[run.text, run.answer?.hookSpecificOutput?.additionalContext ?? ''].filter(Boolean))
    }

    return context
  }

  /**
   * The model ended its turn: a message that sends it back (exit 2's stderr, `decision: "block"`'s
   * reason), or undefined to let it stop. `active`: it is already going on because of a Stop hook.
   */
  async stop(active: boolean, lastMessage: string): Promise<string | undefined> {
    return sentBack(await this.fire('Stop', undefined, {last_assistant_message: lastMessage, stop_hook_active: active}))
  }

  /**
   * An agent (the Agent tool) ended its turn: as Stop, for its own conversation. Its hooks match its type
   * (`Explore`, `general-purpose`) and get its conversation so far in a file of their own
   * (`agent_transcript_path`, JSON lines as the plan's transcript holds messages, kept until the session ends).
   */
  async subagentStop(agent: {id: string; type: string; messages: readonly unknown[]; lastMessage: string}, active: boolean): Promise<string | undefined> {
    if (!this.has('SubagentStop')) return undefined
    const file = this.scratchFile(`agent-${agent.id.replaceAll(/[^\w-]/g, '_')}.jsonl`)
    writeFileSync(file, agent.messages.map((message) => scrubSecrets(JSON.stringify({message})) + '\n').join(''), {mode: 0o600})
    const runs = await this.fire('SubagentStop', agent.type, {
      agent_id: agent.id,
      agent_transcript_path: file,
      agent_type: agent.type,
      last_assistant_message: agent.lastMessage,
      stop_hook_active: active,
    })
    return sentBack(runs)
  }

  /** Removes what the session's hooks were given on disk (agents' transcripts). */
  close(): void {
    if (this.scratch) rmSync(this.scratch, {force: true, recursive: true})
    this.scratch = undefined
  }

  private scratch?: string

  /** A file in the session's own directory for its hooks, outside the workspace, made on first use. */
  private scratchFile(name: string): string {
    this.scratch ??= mkdtempSync(path.join(tmpdir(), 'wave-hooks-'))
    return path.join(this.scratch, name)
  }

  /** Before the conversation is compacted. wave compacts anyway: the window is full. */
  async preCompact(trigger: 'auto' | 'manual'): Promise<void> {
    await this.fire('PreCompact', trigger, {custom_instructions: '', trigger})
  }

  async sessionEnd(reason: string): Promise<void> {
    await this.fire('SessionEnd', undefined, {reason})
  }

  /** The matching hooks of `event`, run together (each command once, as Claude Code dedupes them), reported as they end. */
  private async fire(event: HookEventName, subject: string | undefined, fields: Record<string, unknown>): Promise<HookRun[]> {
    const seen = new Set<string>()
    const hooks = this.hooks.filter((hook) => {
      const key = `${hook.scope}\0${hook.command}`
      if (hook.event !== event || !hookMatches(hook, subject) || seen.has(key)) return false
      seen.add(key)
      return true
    })
    if (hooks.length === 0) return []
    const {context} = this
    const input = JSON.stringify({
      cwd: context.workspace,
      hook_event_name: event,
      permission_mode: context.mode(),
      session_id: context.sessionId,
      transcript_path: context.transcriptPath(),
      ...fields,
    })
    const runAll = () => Promise.all(hooks.map((hook) => this.runOne(hook, input)))
    return context.around ? context.around(runAll) : runAll()
  }

  private async runOne(hook: ConfiguredHook, input: string): Promise<HookRun> {
    const {context} = this
    const started = Date.now()
    const run = await this.execute(hook, input)
    const event: HookEvent = {
      command: hook.command,
      durationMs: Date.now() - started,
      event: hook.event,
      exitCode: run.exitCode,
      outcome: run.kind === 'ok' ? (blocks(run.answer) ? 'blocked' : 'ok') : run.kind === 'block' ? 'blocked' : 'error',
      scope: hook.scope,
      type: 'hook',
    }
    const message =
      run.kind === 'failed' ? run.problem : run.kind === 'ok' ? (run.answer?.reason ?? run.answer?.hookSpecificOutput?.permissionDecisionReason) : run.stderr
    if (message) event.message = oneLine(message)
    context.onEvent?.(event)
    if (run.kind === 'failed') context.warn(`${hookName(hook)} (${hook.file}) ${run.problem}`)
    if (run.kind === 'nonzero') context.warn(`${hookName(hook)} (${hook.file}) exited with ${run.exitCode}${run.stderr ? `: ${oneLine(run.stderr)}` : ''}`)
    if (run.kind === 'ok' && run.answer?.systemMessage) context.warn(`${hookName(hook)}: ${run.answer.systemMessage}`)
    if (run.kind === 'ok' && run.answer?.continue === false) {
      this.halted ??= run.answer.stopReason ?? `${hookName(hook)} stopped the session.`
      context.warn(`${hookName(hook)} stopped the session${run.answer.stopReason ? `: ${run.answer.stopReason}` : ''}`)
    }

    return run
  }

  private async execute(hook: ConfiguredHook, input: string): Promise<HookRun> {
    const {context} = this
    // A repository's hook, or a user's that runs the workspace's files, is contained as the model's
    // commands are (throwaway in plan mode); a user's own command runs as the user's (containment.ts).
    const sandbox = hookSandbox(hook, context.sandbox ?? DEFAULT_SANDBOX, context.workspace, context.mode())
    const spawn = spawnFor(hook.command, {root: context.workspace}, sandbox)
    if ('problem' in spawn) {
      const whose =
        hook.scope === 'user' ? "it runs the workspace's files, so it runs only in the sandbox" : "it is a project's hook, which runs only in the sandbox"
      return {exitCode: null, hook, kind: 'failed', problem: `could not start: ${whose}: ${spawn.problem}`}
    }

    spawn.plan.env.CLAUDE_PROJECT_DIR = context.workspace
    try {
      const result = await runCommand(spawn.plan, context.workspace, hook.timeout * 1000, context.signal, {input})
      return readHookRun(hook, result)
    } catch (error) {
      return {exitCode: null, hook, kind: 'failed', problem: `could not start: ${(error as Error).message}`}
    }
  }

  /** A gate's answer: the first block or failure wins (failures block: a guard that could not answer is not a yes). */
  private gate(runs: HookRun[], notRun: string, refusal: (answer: HookAnswer) => string | undefined): GateAnswer {
    const notes: string[] = []
    for (const run of runs) {
      if (run.kind === 'failed') return {blocked: `${hookName(run.hook)} (${run.hook.file}) ${run.problem}; ${notRun}.`, notes}
      if (run.kind === 'block') return {blocked: `${hookName(run.hook)} blocked it: ${run.stderr || '(no message)'}`, notes}
      if (run.kind === 'ok' && run.answer) {
        const refused = refusal(run.answer)
        if (refused) return {blocked: `${hookName(run.hook)} ${refused}`, notes}
        if (run.answer.continue === false)
          return {blocked: `${hookName(run.hook)} stopped the session${run.answer.stopReason ? `: ${run.answer.stopReason}` : '.'}`, notes}
        const context = run.answer.hookSpecificOutput?.additionalContext
        if (context) notes.push(context)
      }

      if (run.kind === 'nonzero') notes.push(...this.errorNotes([run]))
    }

    return {notes}
  }

  private errorNotes(runs: HookRun[]): string[] {
    return runs.flatMap((run) => {
      if (run.kind === 'failed') return [`(wave: ${hookName(run.hook)} ${run.problem}.)`]
      if (run.kind === 'nonzero') return [`(wave: ${hookName(run.hook)} exited with ${run.exitCode}${run.stderr ? `: ${oneLine(run.stderr)}` : ''}.)`]
      return []
    })
  }
}

/** What Stop or SubagentStop hooks send the model back with (exit 2's stderr, a block's reason), or undefined to let it stop. */
function sentBack(runs: HookRun[]): string | undefined {
  const reasons: string[] = []
  for (const run of runs) {
    if (run.kind === 'block' && run.stderr) reasons.push(run.stderr)
    if (run.kind === 'ok' && run.answer?.decision === 'block') reasons.push(run.answer.reason ?? `${hookName(run.hook)} asks you to go on.`)
  }

  return reasons.length > 0 ? reasons.join('\n\n') : undefined
}

function blocks(answer: HookAnswer | undefined): boolean {
  const decision = answer?.hookSpecificOutput?.permissionDecision
  return answer?.decision === 'block' || decision === 'deny' || decision === 'ask' || answer?.continue === false
}
