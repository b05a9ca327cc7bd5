import {isIP} from 'node:net'
import path from 'node:path'
import picomatch from 'picomatch'

import {isInside, type ResolvedPath} from '../workspace/paths.js'

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

export const ACCESS_CLASSES = ['read', 'write', 'execute', 'network', 'control'] as const
export type AccessClass = (typeof ACCESS_CLASSES)[number]

export type Decision = 'allow' | 'ask' | 'deny'

export interface PolicyDecision {
  decision: Decision
  reason: string
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
}

/** Where a tool comes from: wave itself, an installed oclif plugin, or an MCP server. */
export const TOOL_ORIGINS = ['builtin', 'plugin', 'mcp'] as const
export type ToolOrigin = (typeof TOOL_ORIGINS)[number]

export interface ToolIdentity {
  name: string
  access: AccessClass
  /** Absent means built-in. Plugin and MCP tools are held to less trust (see `foreignDecision`). */
  origin?: ToolOrigin
}

export interface ToolCall {
  tool: ToolIdentity
  /** The validated input. */
  input: Record<string, unknown>
  /** The resolved path the call touches, for tools that declare one. */
  target?: ResolvedPath
}

/**
 * The policy as data: what each mode does with each access class.
 * - `workspace`: allowed inside the workspace, denied outside
 * - `planFile`: allowed only on the session's plan file (Write and Edit)
 * - `ask`: allowed where an allow rule matches, else ASK
 * - `rule`: allowed where an allow rule matches, else DENY (the network is off by default)
 */
type Verdict = 'allow' | 'ask' | 'deny' | 'planFile' | 'rule' | 'workspace'

const TABLE: Record<PermissionMode, Record<AccessClass, Verdict>> = {
  acceptEdits: {control: 'allow', execute: 'ask', network: 'rule', read: 'workspace', write: 'workspace'},
  // The network is off by default in every mode, bypassPermissions included: a rule must name it.
  bypassPermissions: {control: 'allow', execute: 'allow', network: 'rule', read: 'workspace', write: 'workspace'},
  default: {control: 'allow', execute: 'ask', network: 'rule', read: 'workspace', write: 'ask'},
  plan: {control: 'allow', execute: 'deny', network: 'rule', read: 'workspace', write: 'planFile'},
}

/** Only these write tools may touch the plan file in plan mode; a plugin's write tool never may. */
const PLAN_FILE_TOOLS = new Set(['Edit', 'Write'])

const allow = (reason: string): PolicyDecision => ({decision: 'allow', reason})
const deny = (reason: string): PolicyDecision => ({decision: 'deny', reason})

/** The one decision function: (context, call) → ALLOW / ASK / DENY with a reason the model can act on. */
export function decide(ctx: PolicyContext, call: ToolCall): PolicyDecision {
  const {tool, target} = call
  const denied = ctx.rules.deny.find((rule) => ruleMatches(rule, ctx, call))
  if (denied) return deny(`${tool.name} is denied by the rule ${denied.source}.`)

  const foreign = foreignDecision(ctx, tool)
  if (foreign) return foreign

  const control = controlDecision(ctx, tool)
  if (control) return control

  const verdict = TABLE[ctx.mode][tool.access]
  const result = applyVerdict(verdict, ctx, call)
  if (result.decision !== 'deny' && target && tool.access !== 'execute' && tool.access !== 'network') {
    // Whatever the mode, file tools never leave the workspace (the plan file is the one exception).
    const outside = !isInside(ctx.workspaceRoot, target.real) && target.real !== ctx.planFile
    if (outside) return deny(outsideReason(ctx, target))
    // Git's own files (hooks, config) run code later, outside any session: no write tool edits them.
    if (tool.access === 'write' && inGitDir(ctx.workspaceRoot, target.real)) {
      return deny(`${target.input} is inside a .git directory, which wave never writes; use git commands (Bash) for repository changes.`)
    }
  }

  if (result.decision === 'ask' && ctx.headless) {
    return deny(`${result.reason} No one can approve it in a headless run; an --allow rule such as ${suggestRule(call)} would permit it.`)
  }

  return result
}

const isForeign = (tool: ToolIdentity) => tool.origin !== undefined && tool.origin !== 'builtin'

/**
 * Plugin and MCP tools: never control tools, and in plan mode only those declared read-only (a plugin's
 * `read` access class, an MCP tool's `readOnlyHint: true`, which wave maps to `read`).
 */
function foreignDecision(ctx: PolicyContext, tool: ToolIdentity): PolicyDecision | undefined {
  if (!isForeign(tool)) return undefined
  if (tool.access === 'control') return deny(`${tool.name} comes from ${tool.origin === 'mcp' ? 'an MCP server' : 'a plugin'}; only built-in tools may control the session.`)
  if (ctx.mode === 'plan' && tool.access !== 'read') {
    return deny(`${tool.name} is not available in plan mode: from plugins and MCP servers only read-only tools are allowed, and the plan file ${ctx.planFile ?? ''} is the only writable file.`)
  }

  return undefined
}

function controlDecision(ctx: PolicyContext, tool: ToolIdentity): PolicyDecision | undefined {
  if (isForeign(tool)) return undefined
  if (tool.name === 'EnterPlanMode') {
    if (ctx.mode === 'plan') return deny('Plan mode is already active: build the plan, then call ExitPlanMode.')
    if (!ctx.canEnterPlanMode) return deny('This session cannot enter plan mode.')
    return allow('Entering plan mode.')
  }

  if (tool.name === 'ExitPlanMode') {
    if (ctx.mode !== 'plan') return deny('Plan mode is not active: there is no plan to exit.')
    return allow('Leaving plan mode.')
  }

  return undefined
}

function applyVerdict(verdict: Verdict, ctx: PolicyContext, call: ToolCall): PolicyDecision {
  const {tool, target} = call
  const mode = ctx.mode
  const matching = ctx.rules.allow.find((rule) => ruleMatches(rule, ctx, call))
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
      if (matching) return allow(`Allowed by the rule ${matching.source}.`)
      return {decision: 'ask', reason: `${tool.name} needs approval in ${mode} mode.`}
    }

    case 'rule': {
      if (matching) return allow(`Allowed by the rule ${matching.source}.`)
      return deny(`${tool.name} is off unless a rule allows it, such as ${suggestRule(call)}.`)
    }

    case 'workspace': {
      return allow(`${mode} mode allows ${tool.access} access inside the workspace.`)
    }

    case 'planFile': {
      return planFileDecision(ctx, tool, target)
    }
  }
}

function planFileDecision(ctx: PolicyContext, tool: ToolIdentity, target?: ResolvedPath): PolicyDecision {
  const only = `In plan mode the only file you may write or edit is the plan file ${ctx.planFile ?? '(none assigned)'}; everything else is read-only.`
  if (isForeign(tool) || !PLAN_FILE_TOOLS.has(tool.name) || !target || !ctx.planFile) return deny(`${tool.name} is not allowed in plan mode. ${only}`)
  if (target.real !== ctx.planFile) return deny(`${target.input} is not the plan file. ${only}`)
  if (target.kind !== 'file' && target.kind !== 'missing') return deny(`The plan file must be a regular file. ${only}`)
  return allow('The plan file is writable in plan mode.')
}

function inGitDir(root: string, real: string): boolean {
  return path.relative(root, real).split(path.sep).includes('.git')
}

function outsideReason(ctx: PolicyContext, target: ResolvedPath): string {
  const via = target.real === target.absolute ? '' : ` (it resolves to ${target.real})`
  const plan = ctx.mode === 'plan' && ctx.planFile ? ` and the plan file ${ctx.planFile}` : ''
  return `${target.input} is outside the workspace${via}. Only paths inside ${ctx.workspaceRoot}${plan} are allowed.`
}

/** Tools the model is offered: those for which some call could be allowed. Same table, same rules. */
export function offers(ctx: PolicyContext, tool: ToolIdentity): boolean {
  if (ctx.rules.deny.some((rule) => ruleNamesTool(rule, tool.name) && !rule.specifier)) return false
  if (isForeign(tool)) {
    if (tool.access === 'control') return false
    if (ctx.mode === 'plan' && tool.access !== 'read') return false
  } else {
    if (tool.name === 'EnterPlanMode') return ctx.mode !== 'plan' && Boolean(ctx.canEnterPlanMode)
    if (tool.name === 'ExitPlanMode') return ctx.mode === 'plan'
  }

  const named = ctx.rules.allow.some((rule) => ruleNamesTool(rule, tool.name))
  switch (TABLE[ctx.mode][tool.access]) {
    case 'allow':
    case 'workspace': {
      return true
    }

    case 'ask': {
      return !ctx.headless || named
    }

    case 'deny': {
      return false
    }

    case 'planFile': {
      return !isForeign(tool) && PLAN_FILE_TOOLS.has(tool.name) && Boolean(ctx.planFile)
    }

    case 'rule': {
      return named
    }
  }
}

const RULE_PATTERN = /^([A-Za-z_][\w-]*)(?:\((.*)\))?$/s

export function parseRule(source: string): Rule {
  const match = RULE_PATTERN.exec(source.trim())
  if (!match) throw new Error(`Invalid permission rule "${source}": expected Tool or Tool(specifier), e.g. Bash(npm test:*).`)
  const specifier = match[2]?.trim()
  if (match[2] !== undefined && !specifier) throw new Error(`Invalid permission rule "${source}": the specifier in () is empty.`)
  return {source: source.trim(), specifier: specifier || undefined, tool: match[1]}
}

export function parseRules(allow: string[] = [], denyRules: string[] = []): Rules {
  return {allow: allow.map((r) => parseRule(r)), deny: denyRules.map((r) => parseRule(r))}
}

// Shell syntax that could smuggle a second command past a prefix rule.
const SHELL_SUBSTITUTION = /`|\$\(|<\(|>\(/
const SHELL_SEPARATORS = /\|\||&&|[;|&\n]/
// Redirections that touch no file (`2>&1`, `>/dev/null`); any other reads or writes a file the rule never named.
const HARMLESS_REDIRECTIONS = /(^|\s)\d?>&\d(?=\s|$)|(^|\s)[\d&]?>>?\s*\/dev\/null(?=\s|$)/g
const REDIRECTION = /[<>]/

/**
 * Whether a rule is about a tool: its name, or for MCP tools (`mcp__<server>__<tool>`) also the server
 * alone, `mcp__<server>`, which covers every tool of that server.
 */
export function ruleNamesTool(rule: Rule, toolName: string): boolean {
  if (rule.tool === toolName) return true
  return rule.tool.startsWith('mcp__') && !rule.tool.slice('mcp__'.length).includes('__') && toolName.startsWith(rule.tool + '__')
}

export function ruleMatches(rule: Rule, ctx: PolicyContext, call: ToolCall): boolean {
  if (!ruleNamesTool(rule, call.tool.name)) return false
  if (!rule.specifier) return true
  const {input, target} = call
  if (call.tool.access === 'execute' && typeof input.command === 'string') {
    return commandMatches(rule.specifier, input.command)
  }

  if (rule.specifier.startsWith('domain:') && typeof input.url === 'string') {
    return domainMatches(rule.specifier.slice('domain:'.length), input.url)
  }

  if (target) return pathMatches(rule.specifier, ctx.workspaceRoot, target)
  return false
}

/**
 * `npm test:*` matches `npm test` and `npm test -- --watch`; `npm test` matches only itself. A compound
 * command matches only when every part does; command substitution and redirection to or from a file
 * never match (`2>&1` and `>/dev/null` are fine).
 */
export function commandMatches(specifier: string, command: string): boolean {
  if (SHELL_SUBSTITUTION.test(command)) return false
  const plain = command.replaceAll(HARMLESS_REDIRECTIONS, ' ')
  if (REDIRECTION.test(plain)) return false
  const parts = plain.split(SHELL_SEPARATORS).map((part) => part.trim()).filter(Boolean)
  if (parts.length === 0) return false
  const prefix = specifier.endsWith(':*') ? specifier.slice(0, -2).trim() : undefined
  return parts.every((part) => {
    const normalised = part.replaceAll(/\s+/g, ' ')
    if (prefix === undefined) return normalised === specifier.trim()
    return normalised === prefix || normalised.startsWith(prefix + ' ')
  })
}

/** The host of a URL as rules spell it: lower case, IPv6 without brackets, no trailing dot. */
export function hostOf(url: string): string | undefined {
  try {
    const {hostname} = new URL(url)
    return hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')
  } catch {
    return undefined
  }
}

/** `domain:example.com` matches example.com and its subdomains; an IP address matches only itself. */
export function domainMatches(domain: string, url: string): boolean {
  const host = hostOf(url)
  if (!host) return false
  const want = domain.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')
  if (host === want) return true
  return isIP(host) === 0 && isIP(want) === 0 && host.endsWith('.' + want)
}

/**
 * Whether an allow rule for `toolName` names this exact host (`WebFetch(domain:localhost)`), not
 * merely a parent domain of it: what WebFetch asks before it connects to a private or loopback address.
 */
export function ruleNamesHost(rules: Rules, toolName: string, host: string): boolean {
  const want = host.toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '')
  return rules.allow.some((rule) => {
    if (rule.tool !== toolName || !rule.specifier?.startsWith('domain:')) return false
    return rule.specifier.slice('domain:'.length).toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '') === want
  })
}

/** Path rules are workspace-relative globs (`./.env`, `src/**`) or absolute paths. */
function pathMatches(specifier: string, root: string, target: ResolvedPath): boolean {
  const pattern = specifier.startsWith('/') ? specifier : path.join(root, specifier)
  const matcher = picomatch(pattern, {dot: true})
  return matcher(target.real) || matcher(target.absolute)
}

function suggestRule(call: ToolCall): string {
  const {input, tool} = call
  if (tool.access === 'execute' && typeof input.command === 'string') {
    const first = input.command.trim().split(/\s+/).slice(0, 2).join(' ')
    return `${tool.name}(${first}:*)`
  }

  if (tool.access === 'network' && typeof input.url === 'string') {
    try {
      return `${tool.name}(domain:${new URL(input.url).hostname})`
    } catch {}
  }

  return tool.name
}
