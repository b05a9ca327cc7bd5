/**
 * One tool call, start to end: the shared wrapper every call of every tool goes through (built-in,
 * plugin or MCP). The tools declare (tool.ts); this checks and runs them; turn.ts runs a turn's calls.
 */
import {z} from 'zod'

import {
  decide,
  notOfferedReason,
  offered,
  type PolicyContext,
  type PolicyDecision,
  protectedDecision,
  readDenials,
  ruleNamesHost,
  scopeDecision,
  type ToolIdentity,
} from '../policy/policy.js'
import {DEFAULT_SANDBOX, type SandboxSettings} from '../base/process/sandbox.js'
import {analyseShell, type ShellAnalysis} from '../policy/shell.js'
import {secretValues} from '../base/secrets.js'
import {isInside, PathResolutionError, realPathOf, resolvePath, type ResolvedPath} from '../base/workspace/paths.js'
import type {BackgroundTasks} from './background.js'
import type {SessionHooks} from './hooks/session-hooks.js'
import type {ToolRegistry} from './registry.js'
import type {SessionNotes} from './notes.js'
import {TOOL_SEARCH} from './deferred/tool-search.js'
import {type AgentLauncher, type DeferredCatalog, type SessionControl, type ToolContext, ToolError, type ToolPermissions, type ToolPlugin} from './tool.js'

export interface ToolCallRequest {
  id: string
  name: string
  input: unknown
}

export interface ToolCallOutcome {
  content: string
  isError: boolean
  /** Set when the policy was asked: a denial is `decision: 'deny'`. */
  decision?: PolicyDecision
  /** The real path a write tool changed. */
  changed?: string
  /** The deferred tools the call loaded (ToolSearch): the model is sent a tool_reference to each in place of `content`. */
  references?: string[]
}

export interface DispatchEnv {
  registry: ToolRegistry
  policy: PolicyContext
  signal: AbortSignal
  session: SessionControl
  /** From the approval record (or `--sandbox`); absent means enabled with no network. */
  sandbox?: SandboxSettings
  /** The session's background commands and notes (its tool set's); absent, tools that need them fail. */
  tasks?: BackgroundTasks
  notes?: SessionNotes
  /** The session's agents (the Agent tool); absent inside an agent. */
  agents?: AgentLauncher
  /** The session's hooks: PreToolUse once the policy allowed a call, PostToolUse once it ran. */
  hooks?: SessionHooks
}

/**
 * The shared wrapper every tool call goes through: unknown tool → invalid input → path resolution →
 * policy → re-check at the real path → run → the tool's declared result cap. Nothing here throws:
 * every failure becomes an error result the model can read and act on.
 */
export async function dispatch(call: ToolCallRequest, env: DispatchEnv): Promise<ToolCallOutcome> {
  const {policy, registry} = env
  const tool = registry.get(call.name)
  if (!tool || !offered(policy, tool)) {
    const available = registry
      .offered(policy)
      .map((t) => t.name)
      .join(', ')
    // A name wave does not know is a mistake, not something the policy refused: no denial is counted.
    if (!tool) return failure(`Unknown tool ${call.name}: there is no such tool here. Available tools: ${available}.`)
    return refusal(`${notOfferedReason(policy, tool)} Available tools: ${available}.`)
  }

  const checked = await checkCall(tool, call.input, policy)
  if ('refused' in checked) return withLoadHint(checked.refused, tool, env.registry, policy)
  let {decision, input, target} = checked

  // After the policy: a hook narrows what it allowed (deny, ask, block), and grants nothing it refused.
  // Before the re-check below: a (sandboxed) hook could swap a symlink in. Paths as Claude Code gives them to hooks: absolute.
  const hookInput = (input: Record<string, unknown>, target: ResolvedPath | undefined) =>
    target && tool.pathField ? {...input, [tool.pathField]: target.absolute} : input
  let given = hookInput(input, target)
  const pre = env.hooks?.has('PreToolUse') ? await env.hooks.preToolUse({id: call.id, input: given, name: tool.name}) : undefined
  if (pre?.blocked) return refusal(pre.blocked)
  const rewrite: string[] = []
  if (pre?.updated) {
    // Claude Code runs the tool with the hook's input in place of the model's. wave checks it as the
    // model's was, from the start: a hook rewrites a call, it never turns it into one the policy refuses.
    const {by, input: updated} = pre.updated
    const again = await checkCall(tool, updated, policy)
    if ('refused' in again) {
      return {
        ...again.refused,
        content: `${again.refused.content}\n\n(wave: ${by} rewrote this call's input, and the rewritten call is what was refused; nothing ran.)`,
      }
    }

    ;({decision, input, target} = again)
    given = hookInput(input, target)
    rewrite.push(`(wave: ${by} rewrote this call's input before it ran; it ran with ${capResult(JSON.stringify(given), 600)})`)
  }

  try {
    // Re-check at the real path just before acting: a symlink swapped in since the decision is refused.
    if (target) {
      const changed = await changedSince(target)
      if (changed) return refusal(changed, decision)
      // The approved scope, again at the real path the tool is about to write.
      const scoped = tool.access === 'write' ? (protectedDecision(policy, target) ?? scopeDecision(policy, target)) : undefined
      if (scoped?.decision === 'deny') return refusal(scoped.reason, scoped)
    }

    const references: string[] = []
    const ctx: ToolContext = {
      agents: env.agents,
      deferred: deferredCatalog(env.registry, policy, references),
      approvedCheck: decision.approvedCheck,
      callId: call.id,
      nested: policy.nested,
      permissions: toolPermissions(policy, tool),
      readable: readableFor(policy, tool),
      root: policy.workspaceRoot,
      session: env.session,
      // Plan mode's commands run in a throwaway sandbox, whatever the session's own (plan-mode.ts).
      sandbox: policy.mode === 'plan' ? {...(env.sandbox ?? DEFAULT_SANDBOX), throwaway: true} : env.sandbox,
      signal: env.signal,
      target,
      tasks: env.tasks,
      notes: env.notes,
      planFile: policy.mode === 'plan' ? policy.planFile : undefined,
    }
    const output = await tool.run(input as never, ctx)
    const response = target ? {filePath: target.absolute, output} : {output}
    const post = env.hooks ? await env.hooks.postToolUse({id: call.id, input: given, name: tool.name, response}) : []
    const notes = [...rewrite, ...(pre?.notes ?? []), ...post]
    return {
      changed: tool.access === 'write' && target ? target.real : undefined,
      // A write outside a scope that warns goes ahead; the model is told it was recorded.
      content:
        capResult(output, tool.resultCap) +
        (decision.outOfScope ? `\n\n(wave: ${target?.input ?? 'this file'} is outside the approved scope; recorded as a deviation from the plan.)` : '') +
        (notes.length > 0 ? `\n\n${notes.join('\n\n')}` : ''),
      decision,
      isError: false,
      ...(references.length > 0 ? {references} : {}),
    }
  } catch (error) {
    return {content: describeFailure(tool, error), decision, isError: true}
  }
}

/** What ToolSearch finds and loads: the deferred tools the policy offers now, whose references the call's result carries. */
function deferredCatalog(registry: ToolRegistry, policy: PolicyContext, references: string[]): DeferredCatalog {
  return {
    load: (names) => references.push(...names.filter((name) => !references.includes(name))),
    offered: () => registry.deferredOffered(policy),
  }
}

/**
 * A deferred tool may be called before ToolSearch loaded it: it runs like any call, its input validated,
 * as Claude Code runs it. When that input fails, the model (which may be guessing at a schema it has not
 * seen) is told how to load it, in Claude Code's words.
 */
function withLoadHint(outcome: ToolCallOutcome, tool: ToolPlugin, registry: ToolRegistry, policy: PolicyContext): ToolCallOutcome {
  if (outcome.decision || !registry.deferredOffered(policy).includes(tool)) return outcome
  return {
    ...outcome,
    content: `${outcome.content}\n\nThis tool's schema is sent only once loaded. If you have not loaded it, call ${TOOL_SEARCH} with query "select:${tool.name}", then retry this call.`,
  }
}

/** A call that passed the checks before it may run: its parsed input, resolved path and the policy's decision. */
interface CheckedCall {
  input: Record<string, unknown>
  target?: ResolvedPath
  decision: PolicyDecision
}

/**
 * Everything a call's input must pass before it may run, in order: no credential in it, the tool's
 * schema, its globs, its path resolved, the policy's decision. Asked of the model's input, and again of
 * a PreToolUse hook's `updatedInput`.
 */
async function checkCall(tool: ToolPlugin, raw: unknown, policy: PolicyContext): Promise<CheckedCall | {refused: ToolCallOutcome}> {
  // The key never leaves: not written to a file (Write, Edit, plugin and MCP write tools), not run
  // (Bash), not sent (WebFetch, MCP). Checked on the raw input, which MCP tools receive as it is.
  if (holdsSecret(raw, secretValues())) {
    return {refused: refusal(`the input of ${tool.name} holds wave's API key or another of its credentials, which no tool call may carry.`)}
  }

  const parsed = strictInput(tool).safeParse(raw ?? {})
  if (!parsed.success) return {refused: failure(invalidInput(tool, parsed.error))}

  const input = parsed.data as Record<string, unknown>
  const globProblem = checkGlobs(tool, input)
  if (globProblem) return {refused: refusal(globProblem)}

  let target: ResolvedPath | undefined
  if (tool.pathField) {
    const spelled = input[tool.pathField]
    if (spelled !== undefined && typeof spelled !== 'string') return {refused: failure(`${tool.pathField} must be a string.`)}
    if (spelled === '') return {refused: failure(`${tool.pathField} must not be empty.`)}
    try {
      target = await resolvePath(policy.workspaceRoot, spelled ?? '.')
    } catch (error) {
      // A loop or an unreadable directory: what the path leads to is unknown, so nothing is allowed on it.
      if (error instanceof PathResolutionError) return {refused: refusal(error.message)}
      throw error
    }
  }

  // Rules match a command as the shell grammar reads it: parsed here, before any rule is asked.
  let shell: ShellAnalysis | undefined
  if (tool.access === 'execute' && typeof input.command === 'string') shell = await analyseShell(input.command)

  const decision = decide(policy, {input, shell, target, tool})
  if (decision.decision !== 'allow') return {refused: {content: `Permission denied: ${decision.reason}`, decision, isError: true}}
  return {decision, input, target}
}

/** Whether any string in a tool's input, however deep, contains one of wave's secrets (secretValues). */
function holdsSecret(value: unknown, secrets: string[], depth = 0): boolean {
  if (typeof value === 'string') return secrets.some((secret) => value.includes(secret))
  if (depth > 32 || value === null || typeof value !== 'object') return false
  return Object.entries(value).some(([key, item]) => holdsSecret(key, secrets, depth + 1) || holdsSecret(item, secrets, depth + 1))
}

/** Each tool's input schema with unknown keys refused, built once per tool. */
const strictSchemas = new WeakMap<ToolPlugin, z.ZodType>()

/**
 * A tool's input as the wrapper validates it: an unknown key is an error naming the keys the tool
 * takes, never dropped in silence (a model that sent it believes it had an effect). MCP tools keep
 * their own schema, which their server validates.
 */
function strictInput(tool: ToolPlugin): z.ZodType {
  if (tool.inputSchema) return tool.input
  let schema = strictSchemas.get(tool)
  if (!schema) {
    schema = tool.input.strict()
    strictSchemas.set(tool, schema)
  }

  return schema
}

function invalidInput(tool: ToolPlugin, error: z.ZodError): string {
  const message = `Invalid input for ${tool.name}: ${z.prettifyError(error).replaceAll('\n', ' ')}`
  const unknown = error.issues.find((issue) => issue.code === 'unrecognized_keys' && issue.path.length === 0)
  if (!unknown) return message
  return `${message.replace(/\.?$/, '.')} ${tool.name} accepts: ${Object.keys(tool.input.shape).join(', ')}.`
}

function refusal(message: string, decision?: PolicyDecision): ToolCallOutcome {
  return {content: `Permission denied: ${message}`, decision: decision ?? {decision: 'deny', reason: message}, isError: true}
}

function failure(message: string): ToolCallOutcome {
  return {content: message, isError: true}
}

/** Glob patterns are relative to the searched directory; an absolute one or `..` would search elsewhere. */
function checkGlobs(tool: ToolPlugin, input: Record<string, unknown>): string | undefined {
  for (const field of tool.globFields ?? []) {
    const pattern = input[field]
    if (typeof pattern !== 'string') continue
    if (pattern.startsWith('/') || pattern.startsWith('~') || /^[A-Za-z]:[\\/]/.test(pattern)) {
      return `${field} must be relative to the searched directory; set path to choose where to search.`
    }

    if (pattern.split(/[\\/]/).includes('..')) return `${field} must not contain "..": set path to choose where to search.`
  }

  return undefined
}

/** Why `target` no longer leads where the policy saw it lead, or undefined when it still does. */
async function changedSince(target: ResolvedPath): Promise<string | undefined> {
  let now: string
  try {
    now = await realPathOf(target.absolute)
  } catch (error) {
    if (error instanceof PathResolutionError) return `${target.input} changed while the call was checked: ${error.message}`
    throw error
  }

  return now === target.real ? undefined : `${target.input} changed while the call was checked; it now resolves to ${now}.`
}

/** What a reading tool may return of what it finds: inside the workspace, and not denied by a `Read(...)` rule. */
function readableFor(policy: PolicyContext, tool: ToolIdentity): (absolute: string) => Promise<boolean> {
  const denied = readDenials(policy, tool)
  return async (absolute) => {
    const real = await readablePath(policy, absolute)
    return real !== undefined && !denied({absolute, real})
  }
}

/** The real path of `absolute` when it lies inside the workspace (or is the plan file), else undefined. */
async function readablePath(policy: PolicyContext, absolute: string): Promise<string | undefined> {
  // Glob asks this of every file it lists: realPathOf runs realpath(3) synchronously (microseconds, where
  // the thread pool took 7× more over 15,000 files, bench/RESULTS.md), a path that does not resolve the careful way.
  let real: string
  try {
    real = await realPathOf(absolute)
  } catch {
    return undefined // A loop or an unreadable directory: not known to be inside.
  }

  return isInside(policy.workspaceRoot, real) || real === policy.planFile ? real : undefined
}

/**
 * What a tool may ask of the policy after the wrapper's decision, asked the same way (WebFetch: each
 * redirect is a new call of it, and a private address needs a rule naming its host).
 */
export function toolPermissions(policy: PolicyContext, tool: ToolIdentity): ToolPermissions {
  return {
    decide: (input) => decide(policy, {input, tool}),
    namesHost: (host) => ruleNamesHost(policy.rules, tool.name, host),
  }
}

/** Keep the head and the tail: the end of a long output (an error, a summary) is often what matters. */
function capResult(text: string, cap: number): string {
  if (text.length <= cap) return text
  const keep = Math.floor(cap / 2)
  const cut = text.length - 2 * keep
  return `${text.slice(0, keep)}\n\n[... truncated: ${cut} characters cut from the middle ...]\n\n${text.slice(-keep)}`
}

function describeFailure(tool: ToolPlugin, error: unknown): string {
  if (error instanceof ToolError) return error.message
  const code = (error as NodeJS.ErrnoException)?.code
  const message = error instanceof Error ? error.message : String(error)
  switch (code) {
    case 'EACCES':
    case 'EPERM': {
      return `${tool.name} failed: permission denied by the file system (${message}).`
    }

    case 'ENOENT': {
      return `${tool.name} failed: no such file or directory (${message}).`
    }

    default: {
      return `${tool.name} failed: ${message}`
    }
  }
}
