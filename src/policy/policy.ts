import {isIP} from 'node:net'
import path from 'node:path'
import picomatch from 'picomatch'
import {z} from 'zod'

import {isInside, type ResolvedPath} from '../base/workspace/paths.js'
import {DEFAULT_PROTECTED_PATHS, protectedEntry, protectedReason} from './protected.js'
import {inScope, outsideScopeReason, type Scope} from './scope.js'
import {commandAllowed, commandPattern, denyMatches, type ShellAnalysis} from './shell.js'

import type {Throwaway} from '../base/process/sandbox.js'
import type {PermissionMode} from './modes.js'

export {EXECUTION_MODES, type ExecutionMode, nextMode, PERMISSION_MODES, type PermissionMode} from './modes.js'

const ACCESS_CLASSES = ['read', 'write', 'execute', 'network', 'control'] as const
export type AccessClass = (typeof ACCESS_CLASSES)[number]

export type PermissionDecision = 'allow' | 'ask' | 'deny'

export interface PolicyDecision {
  decision: PermissionDecision
  reason: string
  /** An allowed write outside the approved scope (enforcement `warn`): the run records it as a deviation. */
  outOfScope?: boolean
  /** A Bash call allowed as one of the approved checks, and only as it: the command, exactly as approved. */
  approvedCheck?: string
}

/** A permission rule such as `Bash(npm test:*)`, `Read(./.env)`, `WebFetch(domain:example.com)` or `Edit`. */
export interface Rule {
  tool: string
  specifier?: string
  source: string
}

export interface Rules {
  allow: Rule[]
  deny: Rule[]
  /** Claude Code's ask rules: a call one matches needs a person's confirmation (headless: refused). Between deny and allow. */
  ask?: Rule[]
}

export const NO_RULES: Rules = {allow: [], deny: []}

/** What the policy knows of the session. Every path here is a real path (symlinks resolved). */
export interface PolicyContext {
  mode: PermissionMode
  rules: Rules
  workspaceRoot: string
  /** The session's plan file (plan mode); it may not exist yet. */
  planFile?: string
  /** No one can answer an ASK: it becomes a DENY. */
  headless: boolean
  /** `wave run --task` lets the model enter plan mode; `wave plan` and `wave run plan.md` do not. */
  canEnterPlanMode?: boolean
  /** The approved scope of a run (the approval record's); absent, or `off`, writes are not held to one. */
  scope?: Scope
  /**
   * Plan mode's Bash, run in a throwaway sandbox (base/process/sandbox.ts): offered when that sandbox can
   * start and the settings leave it on (`planMode.bash`), else refused with the reason. Absent: off, the
   * sandbox not asked.
   */
  planBash?: PlanBash
  /**
   * The directory holding the session's background commands' output files (background.ts): read tools
   * may read the files in it, which lie outside the workspace. Absent: none.
   */
  taskOutputs?: string
  /**
   * The calls of an agent (the Agent tool): no control tool (no plan file to finish, no agents of its
   * own, no questions or to-do list of the session's); the mode and rules are the agent's.
   */
  nested?: boolean
  /**
   * The session was given a JSON Schema for its result (`--json-schema`): StructuredOutput, the tool the
   * model gives it through, is offered (and only then). It changes nothing in the workspace, so plan mode
   * takes it as it takes its other control tools.
   */
  structuredOutput?: boolean
  /**
   * The approved checks of a run (the record's `verify` commands, exactly as written): in acceptEdits and
   * default the model's Bash call of exactly one of them runs, as wave runs it, with no rule asked for, so
   * it can reproduce a failure and fix it. Any other command still needs a rule. Absent: none.
   */
  approvedChecks?: readonly string[]
  /**
   * The protected paths (protected.ts): no write tool writes there, in any mode, unless the scope names
   * the path plainly. Absent: the defaults.
   */
  protectedPaths?: readonly string[]
}

/** Whether plan mode runs Bash, and how (`wave doctor`, `wave tools` and `wave prompt` say which). */
export type PlanBash = {offered: true; kind: Throwaway} | {offered: false; why: string}

/** Why plan-mode Bash is off when the session says nothing of it. */
const PLAN_BASH_UNKNOWN = 'plan mode runs no commands in this session'

/** Where a tool comes from: wave itself, an installed oclif plugin, or an MCP server. */
const TOOL_ORIGINS = ['builtin', 'plugin', 'mcp'] as const
export type ToolOrigin = (typeof TOOL_ORIGINS)[number]

export interface ToolIdentity {
  name: string
  access: AccessClass
  /** Absent means built-in. Plugin and MCP tools are held to less trust (see `foreignDecision`). */
  origin?: ToolOrigin
  /** Its other names (Task for Agent): a rule naming any of them governs it, as one naming its name does. */
  aliases?: readonly string[]
}

export interface ToolCall {
  tool: ToolIdentity
  /**
   * The validated input. Absent, the call is a static query (what the model is offered): could some
   * call of this tool be allowed? Rules with a specifier then count as "might match".
   */
  input?: Record<string, unknown>
  /** The resolved path the call touches, for tools that declare one. */
  target?: ResolvedPath
  /**
   * An execute-class call's `command` as the shell grammar reads it (the wrapper, src/tools/dispatch.ts, computes it). Absent for
   * such a call, no allow rule with a specifier matches and every deny rule does: the policy fails closed.
   */
  shell?: ShellAnalysis
}

/**
 * The policy as data: what each mode does with each access class.
 * - `workspace`: allowed inside the workspace, denied outside
 * - `planFile`: allowed only on the session's plan file (Write and Edit)
 * - `ask`: allowed where an allow rule matches, else ASK
 * - `rule`: allowed where an allow rule matches, else DENY (the network is off by default)
 * - `throwaway`: Bash only, in a throwaway sandbox, where the session offers one (`planBash`), else DENY
 */
type Verdict = 'allow' | 'ask' | 'deny' | 'planFile' | 'rule' | 'throwaway' | 'workspace'

const TABLE: Record<PermissionMode, Record<AccessClass, Verdict>> = {
  acceptEdits: {control: 'allow', execute: 'ask', network: 'rule', read: 'workspace', write: 'workspace'},
  // The network is off by default in every mode, bypassPermissions included: a rule must name it.
  bypassPermissions: {control: 'allow', execute: 'allow', network: 'rule', read: 'workspace', write: 'workspace'},
  default: {control: 'allow', execute: 'ask', network: 'rule', read: 'workspace', write: 'ask'},
  // Commands in plan mode change nothing: each runs in a throwaway sandbox (or not at all).
  plan: {control: 'allow', execute: 'throwaway', network: 'rule', read: 'workspace', write: 'planFile'},
}

/** The one tool plan mode runs in a throwaway sandbox: plugin and MCP tools that execute are not contained by it. */
const THROWAWAY_TOOLS = new Set(['Bash'])

/** Only these write tools may touch the plan file in plan mode; a plugin's write tool never may. */
const PLAN_FILE_TOOLS = new Set(['Edit', 'Write'])

const allow = (reason: string): PolicyDecision => ({decision: 'allow', reason})
const deny = (reason: string): PolicyDecision => ({decision: 'deny', reason})

/**
 * The one decision function: (context, call) → ALLOW / ASK / DENY with a reason the model can act on.
 * The tools offered to the model come from it too (`offered`): one evaluation, two queries.
 */
export function decide(ctx: PolicyContext, call: ToolCall): PolicyDecision {
  const {tool, target} = call
  // A static query knows no input: only a deny rule without a specifier certainly matches it.
  const denied = ctx.rules.deny.find((rule) => (call.input === undefined ? ruleGoverns(rule, tool) && !rule.specifier : ruleMatches(rule, 'deny', ctx, call)))
  if (denied) return deny(denialReason(denied, call))

  const asked = askDecision(ctx, call)
  if (asked) return asked

  const foreign = foreignDecision(ctx, tool)
  if (foreign) return foreign

  const control = controlDecision(ctx, tool)
  if (control) return control

  const companion = backgroundDecision(ctx, tool)
  if (companion) return companion

  const check = approvedCheckDecision(ctx, call)
  if (check) return check

  const verdict = TABLE[ctx.mode][tool.access]
  const result = applyVerdict(verdict, ctx, call)
  if (result.decision !== 'deny' && target && tool.access !== 'execute' && tool.access !== 'network') {
    // Whatever the mode, file tools never leave the workspace (the plan file, and for reading the
    // session's background output files, are the exceptions).
    const outside = !isInside(ctx.workspaceRoot, target.real) && target.real !== ctx.planFile && !isTaskOutput(ctx, tool, target.real)
    if (outside) return deny(outsideReason(ctx, target))
    // Git's own files (hooks, config) run code later, outside any session: no write tool edits them.
    if (tool.access === 'write' && inGitDir(ctx.workspaceRoot, target.real)) {
      return deny(`${target.input} is inside a .git directory, which wave never writes; use git commands (Bash) for repository changes.`)
    }

    // The project's settings live in .wave/ and are read when a session starts: a write there could
    // grant the next phase or session what this one was denied (the plan file, if kept there, excepted).
    if (tool.access === 'write' && target.real !== ctx.planFile && inWaveDir(ctx.workspaceRoot, target.real)) {
      return deny(
        `${target.input} is inside the workspace's .wave directory, which file tools never write: the settings there are read when a session starts and could grant themselves permissions.`,
      )
    }

    const guarded = tool.access === 'write' ? protectedDecision(ctx, target) : undefined
    if (guarded) return guarded
  }

  if (result.decision === 'allow' && target && tool.access === 'write') {
    const scoped = scopeDecision(ctx, target)
    if (scoped) return scoped.decision === 'deny' ? scoped : {...result, outOfScope: true}
  }

  if (result.decision === 'ask' && ctx.headless) {
    return deny(
      `${result.reason} No one can approve it in a headless run; an --allow rule such as ${suggestRule(call)} would permit it.${checksYouMayRun(ctx, tool)}`,
    )
  }

  return result
}

/**
 * The approved scope, for a write the mode allows: inside it nothing changes; outside it a strict scope
 * denies and a warning one allows and marks the decision (the run reports it). The plan file and plan
 * mode are not a run's changes.
 */
export function scopeDecision(ctx: PolicyContext, target: ResolvedPath): PolicyDecision | undefined {
  const scope = ctx.scope
  if (!scope || scope.enforce === 'off' || ctx.mode === 'plan' || target.real === ctx.planFile) return undefined
  if (inScope(scope, ctx.workspaceRoot, target.real)) return undefined
  if (scope.enforce === 'strict') return deny(outsideScopeReason(target.input, scope))
  return {decision: 'allow', outOfScope: true, reason: `${target.input} is outside the approved scope; allowed (the scope warns), and reported as a deviation.`}
}

/**
 * A write to a protected path (protected.ts) the scope does not name: refused in every mode, whatever the
 * scope enforcement. Asked by decide() and again at the real path by dispatch. The plan file excepted.
 */
export function protectedDecision(ctx: PolicyContext, target: ResolvedPath): PolicyDecision | undefined {
  if (target.real === ctx.planFile) return undefined
  const entry = protectedEntry(ctx.workspaceRoot, target.real, ctx.protectedPaths ?? DEFAULT_PROTECTED_PATHS, ctx.scope?.paths)
  return entry === undefined ? undefined : deny(protectedReason(target.input, entry))
}

const isForeign = (tool: ToolIdentity) => tool.origin !== undefined && tool.origin !== 'builtin'

/**
 * Plugin and MCP tools: never control tools, and in plan mode only those declared read-only (a plugin's
 * `read` access class, an MCP tool's `readOnlyHint: true`, which wave maps to `read`).
 */
function foreignDecision(ctx: PolicyContext, tool: ToolIdentity): PolicyDecision | undefined {
  if (!isForeign(tool)) return undefined
  if (tool.access === 'control')
    return deny(`${tool.name} comes from ${tool.origin === 'mcp' ? 'an MCP server' : 'a plugin'}; only built-in tools may control the session.`)
  if (ctx.mode === 'plan' && tool.access !== 'read') {
    return deny(
      `${tool.name} is not available in plan mode: from plugins and MCP servers only read-only tools are allowed, and the plan file ${ctx.planFile ?? ''} is the only writable file.`,
    )
  }

  return undefined
}

/**
 * Why a plan-mode control call is refused: by the policy, and again by plan mode itself when it is
 * called (src/app/plan-mode.ts), in the same words.
 */
export const PLAN_MODE_REFUSALS = {
  alreadyActive: 'Plan mode is already active: build the plan, then call ExitPlanMode.',
  cannotEnter: 'This session cannot enter plan mode.',
  notActive: 'Plan mode is not active: there is no plan to exit.',
} as const

/** The tool a session given `--json-schema` ends with (tools/structured-output.ts): a control tool, in every mode, only then. */
const RESULT_TOOL = 'StructuredOutput'

/** Why an agent's control call is refused. */
export const AGENT_REFUSAL =
  'is not available to an agent: agents start no agents, have no plan file and do not control the session. Finish with your findings as your final message.'

/**
 * Why an agent's Agent (or Task) call is refused, in Claude Code's words ("subagents cannot spawn other
 * subagents"): by this table, and again by the Agent tool itself when an agent's call reaches it
 * (src/tools/agent.ts), in the same words.
 */
export const NESTED_AGENT_REFUSAL =
  'Subagents cannot spawn other subagents: you are running as an agent, and Agent (Task) is not available to you. Do this part of the work with your own tools, then finish with your findings as your final message.'

/** The Agent tool, by the name it is registered under (Task is its alias, resolved before the policy). */
const AGENT_TOOL_NAME = 'Agent'

function controlDecision(ctx: PolicyContext, tool: ToolIdentity): PolicyDecision | undefined {
  if (isForeign(tool)) return undefined
  if (ctx.nested && tool.name === AGENT_TOOL_NAME) return deny(NESTED_AGENT_REFUSAL)
  if (ctx.nested && tool.access === 'control') return deny(`${tool.name} ${AGENT_REFUSAL}`)
  if (tool.name === 'EnterPlanMode') {
    if (ctx.mode === 'plan') return deny(PLAN_MODE_REFUSALS.alreadyActive)
    if (!ctx.canEnterPlanMode) return deny(PLAN_MODE_REFUSALS.cannotEnter)
    return allow('Entering plan mode.')
  }

  if (tool.name === 'ExitPlanMode') {
    if (ctx.mode !== 'plan') return deny(PLAN_MODE_REFUSALS.notActive)
    return allow('Leaving plan mode.')
  }

  if (tool.name === RESULT_TOOL) {
    if (!ctx.structuredOutput) return deny(`${RESULT_TOOL} is offered only to a session given a JSON Schema for its result (--json-schema).`)
    return allow('Giving the structured result.')
  }

  return undefined
}

/**
 * An ask rule (Claude Code's `permissions.ask`) that matches a call: a person must confirm it, and in a
 * headless run no one can, so it is refused. Read as a deny rule is (any simple command matching), before
 * any allow rule or approved check: it only narrows. A static query is refused only by an ask rule without
 * a specifier, headless.
 */
function askDecision(ctx: PolicyContext, call: ToolCall): PolicyDecision | undefined {
  const query = call.input === undefined
  const rule = ctx.rules.ask?.find((each) => (query ? ctx.headless && ruleGoverns(each, call.tool) && !each.specifier : ruleMatches(each, 'deny', ctx, call)))
  if (!rule) return undefined
  const reason = `${call.tool.name} matches the ask rule ${rule.source}: a person must confirm it.`
  return ctx.headless ? deny(`${reason} No one can confirm it in a headless run.`) : {decision: 'ask', reason}
}

/** The modes whose Bash asks for a rule: there the approval's own checks are the one exception. */
const CHECKS_RUN_IN: ReadonlySet<PermissionMode> = new Set(['acceptEdits', 'default'])

/**
 * The model's Bash call of exactly an approved check (the record's `verify`, as written): allowed in
 * acceptEdits and default, where any other command needs a rule. The approval granted wave these commands
 * in the run's sandbox; the model running the same one there grants nothing more. Deny rules were asked first.
 */
function approvedCheckDecision(ctx: PolicyContext, call: ToolCall): PolicyDecision | undefined {
  const checks = checksFor(ctx, call.tool)
  if (checks.length === 0) return undefined
  // A static query: Bash is offered, for the checks at least.
  if (call.input === undefined) return allow(`Bash runs the approved checks: ${checks.join('; ')}.`)
  const command = call.input.command
  if (typeof command !== 'string' || !checks.includes(command)) return undefined
  return {approvedCheck: command, decision: 'allow', reason: `${command} is an approved check: it runs as wave runs it, in the run's sandbox.`}
}

/** What a refused command is told of the approved checks it may run instead, exactly as written. */
function checksYouMayRun(ctx: PolicyContext, tool: ToolIdentity): string {
  const checks = checksFor(ctx, tool)
  return checks.length === 0 ? '' : ` The approved checks run exactly as written: ${checks.join('; ')}.`
}

/** The approved checks `tool` may run: wave's own Bash, in a mode whose Bash asks for a rule; else none. */
function checksFor(ctx: PolicyContext, tool: ToolIdentity): readonly string[] {
  return isForeign(tool) || tool.name !== BASH.name || !CHECKS_RUN_IN.has(ctx.mode) ? [] : (ctx.approvedChecks ?? [])
}

/** The tools that read and end what Bash started in the background: no use where Bash cannot run. */
const BACKGROUND_TOOLS = new Set(['TaskOutput', 'TaskStop'])
const BASH: ToolIdentity = {access: 'execute', name: 'Bash'}

/**
 * TaskOutput and TaskStop act only on the session's own background commands, which Bash started under
 * the policy: they are allowed exactly where Bash may run some command (plan mode where it offers Bash), whatever
 * their access class says, so a mode that allows Bash can always read and end what it started.
 */
function backgroundDecision(ctx: PolicyContext, tool: ToolIdentity): PolicyDecision | undefined {
  if (isForeign(tool) || !BACKGROUND_TOOLS.has(tool.name)) return undefined
  if (!offered(ctx, BASH)) {
    const where = ctx.mode === 'plan' ? 'plan mode here, which runs no commands' : `${ctx.mode} mode without a rule allowing Bash`
    return deny(`${tool.name} acts on background commands started by Bash, which is not available in ${where}.`)
  }

  return allow(`${tool.name} acts on this session's own background commands.`)
}

function applyVerdict(verdict: Verdict, ctx: PolicyContext, call: ToolCall): PolicyDecision {
  const {tool, target} = call
  const mode = ctx.mode
  // A static query: an allow rule naming the tool might match some call of it.
  const matching = call.input === undefined ? ctx.rules.allow.filter((rule) => ruleGoverns(rule, tool)).slice(0, 1) : allowingRules(ctx, call)
  const allowedBy = () => `Allowed by the rule${matching.length > 1 ? 's' : ''} ${matching.map((rule) => rule.source).join(' and ')}.`
  switch (verdict) {
    case 'allow': {
      return allow(`${mode} mode allows ${tool.name}.`)
    }

    case 'deny': {
      if (mode === 'plan') {
        return deny(`${tool.name} is not available in plan mode: only read-only tools and edits to the plan file ${ctx.planFile ?? ''} are allowed.`)
      }

      return deny(`${tool.name} is not allowed in ${mode} mode.`)
    }

    case 'ask': {
      if (matching.length > 0) return allow(allowedBy())
      return {decision: 'ask', reason: `${tool.name} needs approval in ${mode} mode.${unmatchable(call)}`}
    }

    case 'rule': {
      if (matching.length > 0) return allow(allowedBy())
      return deny(`${tool.name} is off unless a rule allows it, such as ${suggestRule(call)}.`)
    }

    case 'workspace': {
      return allow(`${mode} mode allows ${tool.access} access inside the workspace.`)
    }

    case 'planFile': {
      return planFileDecision(ctx, tool, target, call.input === undefined)
    }

    case 'throwaway': {
      const planBash = ctx.planBash ?? {offered: false, why: PLAN_BASH_UNKNOWN}
      if (isForeign(tool) || !THROWAWAY_TOOLS.has(tool.name)) {
        return deny(
          `${tool.name} is not available in plan mode: only read-only tools, Bash in a throwaway sandbox and edits to the plan file ${ctx.planFile ?? ''} are allowed.`,
        )
      }

      if (!planBash.offered) return deny(`${tool.name} is not available in plan mode here: ${planBash.why}.`)
      return allow('Plan mode runs the command in a throwaway sandbox: nothing it writes survives it.')
    }
  }
}

function planFileDecision(ctx: PolicyContext, tool: ToolIdentity, target: ResolvedPath | undefined, query: boolean): PolicyDecision {
  const only = `In plan mode the only file you may write or edit is the plan file ${ctx.planFile ?? '(none assigned)'}; everything else is read-only.`
  const notAllowed = deny(`${tool.name} is not allowed in plan mode. ${only}`)
  if (isForeign(tool) || !PLAN_FILE_TOOLS.has(tool.name) || !ctx.planFile) return notAllowed
  if (query) return allow('The plan file is writable in plan mode.')
  if (!target) return notAllowed
  if (target.real !== ctx.planFile) return deny(`${target.input} is not the plan file. ${only}`)
  if (target.kind !== 'file' && target.kind !== 'missing') return deny(`The plan file must be a regular file. ${only}`)
  return allow('The plan file is writable in plan mode.')
}

/** A file of the session's background output directory, for a reading tool. */
function isTaskOutput(ctx: PolicyContext, tool: ToolIdentity, real: string): boolean {
  return tool.access === 'read' && ctx.taskOutputs !== undefined && real !== ctx.taskOutputs && isInside(ctx.taskOutputs, real)
}

function inGitDir(root: string, real: string): boolean {
  return path.relative(root, real).split(path.sep).includes('.git')
}

// macOS and Windows file systems fold case: `.WAVE/settings.json` is `.wave/settings.json` there.
const FOLDS_CASE = process.platform === 'darwin' || process.platform === 'win32'

/** Whether `real` is the workspace's own `.wave` directory or lies below it (in any case where the file system folds case). */
function inWaveDir(root: string, real: string): boolean {
  if (!isInside(root, real)) return false
  const first = path.relative(root, real).split(path.sep)[0]
  return (FOLDS_CASE ? first.toLowerCase() : first) === '.wave'
}

/** A command's word as a rule spells it: quoted where it holds a blank, a quote, * or shell syntax. */
function ruleWord(word: string): string {
  return /^[\w\-./:,+=@%^#~]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}

function outsideReason(ctx: PolicyContext, target: ResolvedPath): string {
  const via = target.real === target.absolute ? '' : ` (it resolves to ${target.real})`
  const plan = ctx.mode === 'plan' && ctx.planFile ? ` and the plan file ${ctx.planFile}` : ''
  return `${target.input} is outside the workspace${via}. Only paths inside ${ctx.workspaceRoot}${plan} are allowed.`
}

/**
 * Whether the model is offered a tool: some call of it could be allowed. The same decision function as
 * every call, asked without an input, so the offered list and the decisions cannot drift apart.
 */
export function offered(ctx: PolicyContext, tool: ToolIdentity): boolean {
  return decide(ctx, {tool}).decision !== 'deny'
}

/**
 * What the model is told when it calls a tool it was not offered. An agent's control call is told the
 * table's own reason (an Agent call: subagents cannot spawn other subagents), so that the words it gets
 * are the policy's wherever the call is stopped; anything else, that the tool is not available in the mode.
 */
export function notOfferedReason(ctx: PolicyContext, tool: ToolIdentity): string {
  if (ctx.nested && tool.access === 'control') return decide(ctx, {tool}).reason
  return `${tool.name} is not available in ${ctx.mode} mode.`
}

const RULE_PATTERN = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/s

/**
 * A rule as written, read; throws, naming the rule and why, for one wave cannot read: never a rule
 * loaded that could not match what its author meant (a deny rule that never fires).
 */
export function parseRule(source: string): Rule {
  const match = RULE_PATTERN.exec(source.trim())
  if (!match) throw new Error(`Invalid permission rule "${source}": expected Tool or Tool(specifier), e.g. Bash(npm test:*).`)
  const specifier = match[2]?.trim()
  if (match[2] !== undefined && !specifier) throw new Error(`Invalid permission rule "${source}": the specifier in () is empty.`)
  if (specifier && match[1] === 'Bash') {
    try {
      commandPattern(specifier)
    } catch (error) {
      throw new Error(`Invalid permission rule "${source}": wave cannot read ${(error as Error).message}.`)
    }
  }

  if (specifier && match[1] === 'WebFetch' && !/^domain:\S+$/.test(specifier)) {
    throw new Error(`Invalid permission rule "${source}": a WebFetch rule names a host, as WebFetch(domain:example.com).`)
  }

  return {source: source.trim(), specifier: specifier || undefined, tool: match[1]}
}

/**
 * A permission rule as written in settings files, approval records and --allow: a string parseRule
 * accepts, kept as written; its issue is parseRule's message. The one check of a rule's syntax.
 */
export const ruleSchema = z.lazy(() =>
  z.string().superRefine((source, ctx) => {
    try {
      parseRule(source)
    } catch (error) {
      ctx.addIssue({code: 'custom', message: (error as Error).message})
    }
  }),
)

export function parseRules(allow: string[] = [], denyRules: string[] = [], ask: string[] = []): Rules {
  return {allow: allow.map((r) => parseRule(r)), ask: ask.map((r) => parseRule(r)), deny: denyRules.map((r) => parseRule(r))}
}

/**
 * Whether a rule is about a tool: its name or one of its aliases (a `Task` rule governs Agent, as Claude
 * Code's configurations write it), or for MCP tools (`mcp__<server>__<tool>`) also the server alone,
 * `mcp__<server>`, which covers every tool of that server.
 */
function ruleNamesTool(rule: Rule, tool: ToolIdentity): boolean {
  if (rule.tool === tool.name || tool.aliases?.includes(rule.tool)) return true
  return rule.tool.startsWith('mcp__') && !rule.tool.slice('mcp__'.length).includes('__') && tool.name.startsWith(rule.tool + '__')
}

/**
 * The rules that name no tool of the session (by any of its names, its MCP server, or a family: `Read`
 * and `Edit` are tools themselves): each governs nothing, which its author did not mean. Said, not refused:
 * a settings file shared with Claude Code may name tools wave does not have.
 */
export function rulesNamingNoTool(rules: Rules, tools: readonly ToolIdentity[]): Rule[] {
  return [...rules.allow, ...rules.deny, ...(rules.ask ?? [])].filter((rule) => !tools.some((tool) => ruleNamesTool(rule, tool)))
}

/**
 * Whether a rule governs a tool: it names the tool (or its MCP server), or it names a tool family.
 * `Read(...)` rules govern every tool that reads (Read, Grep, Glob, LS, plugin and MCP read tools) and
 * `Edit(...)` rules every tool that writes (Edit, Write, plugin and MCP write tools).
 */
function ruleGoverns(rule: Rule, tool: ToolIdentity): boolean {
  if (ruleNamesTool(rule, tool)) return true
  return (rule.tool === 'Read' && tool.access === 'read') || (rule.tool === 'Edit' && tool.access === 'write')
}

/**
 * Whether a rule matches a call. Allow and deny rules read a command differently: an allow rule must
 * match every simple command, each literal words; a deny rule matches when any one does, and a command
 * that cannot be fully analysed matches every deny rule (see shell.ts).
 */
function ruleMatches(rule: Rule, kind: 'allow' | 'deny', ctx: PolicyContext, call: ToolCall): boolean {
  if (!ruleGoverns(rule, call.tool)) return false
  if (!rule.specifier) return true
  const {target} = call
  const input = call.input ?? {}
  if (call.tool.access === 'execute' && typeof input.command === 'string') {
    if (!call.shell) return kind === 'deny'
    if (kind === 'deny') return denyMatches(rule.specifier, call.shell)
    return call.shell.literal && call.shell.commands.length > 0 && call.shell.commands.every((words) => commandAllowed(rule.specifier!, words))
  }

  if (rule.specifier.startsWith('domain:') && typeof input.url === 'string') {
    return domainMatches(rule.specifier.slice('domain:'.length), input.url)
  }

  if (target) return pathMatches(rule.specifier, ctx.workspaceRoot, target)
  return false
}

/**
 * The allow rules that allow a call, or none. A command line is allowed when each of its simple
 * commands is allowed by some rule (`echo hi && ls` by `Bash(echo:*)` and `Bash(ls:*)`), each command
 * still literal words; any other call by one rule that matches it.
 */
function allowingRules(ctx: PolicyContext, call: ToolCall): Rule[] {
  const governing = ctx.rules.allow.filter((rule) => ruleGoverns(rule, call.tool))
  const whole = governing.find((rule) => !rule.specifier)
  if (whole) return [whole]
  const input = call.input ?? {}
  if (call.tool.access !== 'execute' || typeof input.command !== 'string') {
    const one = governing.find((rule) => ruleMatches(rule, 'allow', ctx, call))
    return one ? [one] : []
  }

  const shell = call.shell
  if (!shell?.literal || shell.commands.length === 0) return []
  const used: Rule[] = []
  for (const words of shell.commands) {
    const rule = governing.find((candidate) => commandAllowed(candidate.specifier!, words))
    if (!rule) return []
    if (!used.includes(rule)) used.push(rule)
  }

  return used
}

/** Why a deny rule matched, saying so when it matched only because the command could not be analysed. */
function denialReason(rule: Rule, call: ToolCall): string {
  const base = `${call.tool.name} is denied by the rule ${rule.source}`
  const shell = call.shell
  if (!rule.specifier || call.tool.access !== 'execute' || typeof call.input?.command !== 'string') return `${base}.`
  if (!shell) return `${base}: the command could not be analysed.`
  if (!shell.literal) return `${base}: a command wave cannot fully analyse (it has ${shell.problem}) counts as matching every deny rule.`
  if (shell.opaque) return `${base}: a command wave cannot fully analyse (${shell.opaque}) counts as matching every deny rule.`
  return `${base}.`
}

/** For a command no allow rule can match whatever it says, why: the model can rewrite it in plain words. */
function unmatchable(call: ToolCall): string {
  const shell = call.shell
  if (call.tool.access !== 'execute' || !shell || shell.literal) return ''
  return ` Allow rules match only plain commands (literal words, no expansion, substitution or file redirection); this one has ${shell.problem}.`
}

/**
 * The deny rules that keep a reading tool from a path, compiled once per call: Grep, Glob and LS skip
 * what they find that one of them matches, as Read refuses it.
 */
export function readDenials(ctx: PolicyContext, tool: ToolIdentity): (found: {absolute: string; real: string}) => boolean {
  const matchers = ctx.rules.deny.filter((rule) => rule.specifier && ruleGoverns(rule, tool)).map((rule) => pathMatcher(rule.specifier!, ctx.workspaceRoot))
  if (matchers.length === 0) return () => false
  return ({absolute, real}) => matchers.some((matches) => matches(real) || matches(absolute))
}

/** The host of a URL as rules spell it: lower case, IPv6 without brackets, no trailing dot. */
export function hostOf(url: string): string | undefined {
  try {
    const {hostname} = new URL(url)
    return hostname
      .toLowerCase()
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, '')
  } catch {
    return undefined
  }
}

/** `domain:example.com` matches example.com and its subdomains; an IP address matches only itself. */
function domainMatches(domain: string, url: string): boolean {
  const host = hostOf(url)
  if (!host) return false
  const want = domain
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
  if (host === want) return true
  return isIP(host) === 0 && isIP(want) === 0 && host.endsWith('.' + want)
}

/**
 * Whether an allow rule for `toolName` names this exact host (`WebFetch(domain:localhost)`), not
 * merely a parent domain of it: what WebFetch asks before it connects to a private or loopback address.
 */
export function ruleNamesHost(rules: Rules, toolName: string, host: string): boolean {
  const want = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '')
  return rules.allow.some((rule) => {
    if (rule.tool !== toolName || !rule.specifier?.startsWith('domain:')) return false
    return (
      rule.specifier
        .slice('domain:'.length)
        .toLowerCase()
        .replace(/^\[(.*)\]$/, '$1')
        .replace(/\.$/, '') === want
    )
  })
}

/** Path rules are workspace-relative globs (`./.env`, `src/**`) or absolute paths. */
function pathMatches(specifier: string, root: string, target: ResolvedPath): boolean {
  const matcher = pathMatcher(specifier, root)
  return matcher(target.real) || matcher(target.absolute)
}

function pathMatcher(specifier: string, root: string): (file: string) => boolean {
  return picomatch(specifier.startsWith('/') ? specifier : path.join(root, specifier), {dot: true})
}

/** A rule that would allow the call: for a command line, one per simple command (each of a compound line). */
function suggestRule(call: ToolCall): string {
  const {tool} = call
  const input = call.input ?? {}
  if (tool.access === 'execute' && typeof input.command === 'string') {
    const lines = call.shell?.literal && call.shell.commands.length > 0 ? call.shell.commands : [input.command.trim().split(/\s+/)]
    const rules = [...new Set(lines.map((words) => `${tool.name}(${words.slice(0, 2).map(ruleWord).join(' ')}:*)`))]
    return rules.length === 1 ? rules[0] : `${rules.slice(0, -1).join(', ')} and ${rules.at(-1)} (one for each command)`
  }

  if (tool.access === 'network' && typeof input.url === 'string') {
    try {
      return `${tool.name}(domain:${new URL(input.url).hostname})`
    } catch {}
  }

  return tool.name
}
