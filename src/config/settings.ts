/**
 * Settings files: `$WAVE_HOME/settings.json` (the user's) and `<workspace>/.wave/settings.json` (the
 * project's), validated with zod, and the `hooks` of Claude Code's `.claude/settings.json` and
 * `.claude/settings.local.json` as project files. Read in that order: flags override the project file,
 * which overrides the user file; permission rules and hooks add up across all of them, and a deny rule
 * beats any allow (the policy sees to that).
 */
import path from 'node:path'

import {z} from 'zod'

import {codeCacheDirectory} from '../base/bundles.js'
import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {type JsonFileOptions, parseJsonText, readJsonFile} from '../base/json.js'
import {waveHome} from '../base/home.js'
import {type BudgetCap, capOf, lowestCap} from '../model/budget.js'
import {type PriceTable, priceTableSchema} from '../model/pricing.js'
import {type Provider, PROVIDERS} from '../model/providers.js'
import {EFFORTS, MIN_THINKING_BUDGET, type ReasoningChoice} from '../model/reasoning.js'
import {ruleSchema} from '../policy/policy.js'
import {expandHome, isInside, PathResolutionError, realPathOf} from '../base/workspace/paths.js'
import {claudePermissions, claudePermissionsSchema} from './claude-permissions.js'
import {type ConfiguredHook, configuredHooks, hooksSchema} from './hooks.js'

const SETTINGS_FILE = 'settings.json'

const envSchema = z.lazy(() => z.record(z.string(), z.string()))

const stdioServerSchema = z.lazy(() =>
  z.strictObject({
    args: z.array(z.string()).optional(),
    command: z.string().min(1, 'must not be empty'),
    /** Relative to the workspace root (default: the workspace root). */
    cwd: z.string().optional(),
    env: envSchema.optional(),
    /** Milliseconds a tool call may take (default 60000). */
    timeout: z.number().int().positive().optional(),
    type: z.literal('stdio'),
  }),
)

const httpServerSchema = z.lazy(() =>
  z.strictObject({
    headers: z.record(z.string(), z.string()).optional(),
    timeout: z.number().int().positive().optional(),
    type: z.literal('http'),
    url: z.url({protocol: /^https?$/, error: 'must be an http:// or https:// URL'}),
  }),
)

/** `type` may be left out: `url` means streamable HTTP, anything else stdio. */
const mcpServerSchema = z.lazy(() =>
  z.preprocess(
    (value) => {
      if (!value || typeof value !== 'object' || Array.isArray(value) || 'type' in value) return value
      return {...value, type: 'url' in value ? 'http' : 'stdio'}
    },
    z.discriminatedUnion('type', [stdioServerSchema, httpServerSchema], {error: 'type must be "stdio" (with command) or "http" (with url)'}),
  ),
)

export type McpServerConfig = z.infer<typeof mcpServerSchema>

/** A size as settings spell it: `512MiB`, `2GiB`, `1G`, or bytes. */
const SIZE = /^\s*(\d+)\s*(B|K|KB|KiB|M|MB|MiB|G|GB|GiB)?\s*$/i

/** Bytes of a size settings give (see SIZE): binary units, as `df -h` reads them. */
function sizeInBytes(size: number | string): number {
  if (typeof size === 'number') return size
  const [, digits, unit = 'B'] = SIZE.exec(size) ?? []
  const power = {b: 0, g: 3, k: 1, m: 2}[unit[0].toLowerCase() as 'b' | 'g' | 'k' | 'm']
  return Number(digits) * 1024 ** power
}

/** `protectedPaths`: workspace-relative, as a scope's entries (policy/protected.ts). */
const protectedPathsSchema = z.lazy(() =>
  z.array(
    z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .refine((entry) => !entry.startsWith('/') && !entry.split(/[\\/]/).includes('..'), 'a protected path is relative to the workspace and stays inside it'),
  ),
)

const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/

const settingsSchema = z.lazy(() =>
  z.strictObject({
    $schema: z.string().optional(),
    /**
     * Text added to every session's system prompt, after the repository's AGENTS.md / CLAUDE.md: the
     * user file's first, then the project file's. Only words for the model: it grants nothing.
     */
    instructions: z.string().optional(),
    /** The model's context window in tokens, where wave's table does not know it (compaction starts near it). */
    contextWindow: z.number().int().min(1000).optional(),
    /** Prices per million tokens by model ID, over wave's table (costUsd, --max-budget-usd). */
    prices: priceTableSchema.optional(),
    mcpServers: z
      .record(
        z.string().regex(MCP_SERVER_NAME, 'server names are letters, digits and "-" (at most 32), so tools can be named mcp__<server>__<tool>'),
        mcpServerSchema,
      )
      .optional(),
    model: z.string().trim().min(1, 'must not be empty').optional(),
    /** How hard the model works (`output_config.effort`); --effort comes first. */
    effort: z.enum(EFFORTS).optional(),
    /** adaptive (the default where the model takes it), off, or a thinking budget in tokens; --thinking comes first. */
    thinking: z.union([z.enum(['adaptive', 'off']), z.number().int().min(MIN_THINKING_BUDGET)]).optional(),
    /** `max_tokens` of each request (default 64000, within the model's limit); --max-output-tokens comes first. */
    maxOutputTokens: z.number().int().min(1).optional(),
    /**
     * A dollar cap on every session (plan, run, and the forge flow's each plan and run): the lowest of this
     * key in either file and --max-budget-usd applies. A cap only ever lowers spending, so a project's file
     * sets it too, trusted or not.
     */
    maxBudgetUsd: z.number().positive().optional(),
    permissions: z
      .strictObject({
        allow: z.array(ruleSchema).optional(),
        deny: z.array(ruleSchema).optional(),
        /** Claude Code's ask rules: a matching call needs a person's confirmation, which headless is a refusal. They only narrow. */
        ask: z.array(ruleSchema).optional(),
      })
      .optional(),
    /** Where plans go (user settings only); relative to the settings file's directory. */
    plansDirectory: z.string().trim().min(1, 'must not be empty').optional(),
    /**
     * Commands run at events of the session, in Claude Code's format (config/hooks.ts). A project file's
     * run only when project settings are trusted, and then in the sandbox.
     */
    hooks: hooksSchema.optional(),
    /** Paths the model may not write, added to the defaults (policy/protected.ts): from any file, since they only narrow. */
    protectedPaths: protectedPathsSchema.optional(),
    /** Installed oclif plugins whose tools to use (true) or ignore (false); plugins not named are used. */
    plugins: z.record(z.string(), z.boolean()).optional(),
    /**
     * User settings only (WAVE_PROVIDER overrides): whose client reaches the model. A repository does
     * not choose which of the user's cloud credentials wave spends.
     */
    provider: z.enum(PROVIDERS).optional(),
    /**
     * The OS sandbox Bash runs in: `env` names further environment variables commands may see (`NAME`,
     * or `PREFIX_*`); a credential-like name passes only when named exactly. From a project file only
     * when trusted, like allow rules: a listed name is a secret handed to the model's commands.
     */
    sandbox: z
      .strictObject({
        env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, 'an environment variable name, or a prefix ending in *')).optional(),
        /** The private /tmp's (and $HOME's) size: bytes, or a number with KiB, MiB or GiB (default 1 GiB). */
        tmpSize: z
          .union([
            z
              .number()
              .int()
              .min(1024 * 1024),
            z.string().regex(SIZE, 'a size such as "512MiB" or "2GiB"'),
          ])
          .optional(),
      })
      .optional(),
    /**
     * Plan mode: `bash: false` turns off plan mode's Bash (a throwaway sandbox; on where the sandbox can
     * start). Turning it off takes any settings file: it narrows what a session may do.
     */
    planMode: z.strictObject({bash: z.boolean().optional()}).optional(),
    /**
     * Explore and general-purpose agents (the Agent tool): how many of one turn run at once (default 3),
     * each one's turn cap (default 25), its share of --max-budget-usd (default 0.25) and its wall-clock
     * limit in seconds (default 600). Spending: from a project file only when trusted.
     */
    agents: z
      .strictObject({
        budgetShare: z.number().positive().max(1).optional(),
        maxConcurrent: z.number().int().min(1).max(16).optional(),
        maxTurns: z.number().int().min(1).max(500).optional(),
        timeoutSeconds: z.number().positive().max(86_400).optional(),
      })
      .optional(),
    /**
     * User settings only: let a repository's own .wave/settings.json grant capabilities (allow rules,
     * MCP servers). Off by default: in CI the repository is often a pull request's, and its files must
     * not widen what wave may do. Deny rules and the model always apply.
     */
    trustProjectSettings: z.boolean().optional(),
  }),
)

export type Settings = z.infer<typeof settingsSchema>
type SettingsScope = 'project' | 'user'

export interface SettingsLayer {
  scope: SettingsScope
  file: string
  settings: Settings
  /** What of the file wave cannot honour as written (Claude Code's permissions): named wherever settings are shown. */
  unhonoured?: string[]
}

/** The settings in force: files merged, then flags on top. */
export interface EffectiveSettings {
  /** The default model (before WAVE_MODEL and --model, which come first). */
  model?: string
  /** effort, thinking and maxOutputTokens of the files, project over user (the flags come first). */
  reasoning: ReasoningChoice
  allow: string[]
  deny: string[]
  plugins: Record<string, boolean>
  /** The settings files' `instructions`, user file first. */
  instructions: string[]
  contextWindow?: number
  prices?: PriceTable
  /** The user file's `provider` (WAVE_PROVIDER, read by the client, comes first). */
  provider?: Provider
  mcpServers: Record<string, McpServerConfig & {scope: SettingsScope}>
  /** Absolute; from the user file only. */
  plansDirectory?: string
  /** The files that were read, user first. */
  files: string[]
  /** What an untrusted project file asked for and did not get, to be reported. */
  ignored: string[]
  /** Claude Code's permissions wave cannot honour as written (claude-permissions.ts): `wave doctor` and `wave approve` name them. */
  unhonoured?: string[]
  /** Ask rules (Claude Code's `permissions.ask`), from any file: headless, a matching call is refused. */
  ask?: string[]
  /** Further environment variables sandboxed commands may see (`sandbox.env` of the files). */
  sandboxEnv: string[]
  /** The private /tmp's size in bytes (`sandbox.tmpSize`); absent: the sandbox's default. */
  sandboxTmpSize?: number
  /** The files' `protectedPaths`, added to the defaults (policy/protected.ts). */
  protectedPaths: string[]
  /** Plan mode's Bash, unless a settings file says `planMode.bash: false`. */
  planModeBash: boolean
  /** The Agent tool's bounds (`agents` of the files), defaults filled in. */
  agents: AgentLimits
  /** The hooks in force, user file's first (a project's only when trusted). */
  hooks: ConfiguredHook[]
  /** The lowest `maxBudgetUsd` of the files, naming its file: a cap on every session's spending, with --max-budget-usd. */
  budget?: BudgetCap
}

/** What bounds the agents a session starts (the Agent tool). */
export interface AgentLimits {
  /** Agents of one turn running at once. */
  maxConcurrent: number
  /** Turns each agent may take. */
  maxTurns: number
  /** The share of --max-budget-usd each agent may spend. */
  budgetShare: number
  /** Wall-clock milliseconds each agent may take. */
  timeoutMs: number
}

const DEFAULT_AGENT_LIMITS: AgentLimits = {budgetShare: 0.25, maxConcurrent: 3, maxTurns: 25, timeoutMs: 600_000}

export interface SettingsFlags {
  /** WAVE_TRUST_PROJECT_SETTINGS=1: as `trustProjectSettings` in the user file. */
  trustProject?: boolean
  model?: string
  allow?: string[]
  deny?: string[]
  /** `--mcp-config`: servers the user gives on the command line, as trusted as the user's own file. */
  mcpServers?: Record<string, McpServerConfig>
  /** `--strict-mcp-config`: only the `--mcp-config` servers; those of the settings files are not started. */
  strictMcp?: boolean
}

/** What `--mcp-config` takes: Claude Code's file (`{"mcpServers": {...}}`), as JSON text or a file's path. */
const mcpConfigSchema = z.lazy(() => z.strictObject({mcpServers: settingsSchema.unwrap().shape.mcpServers.unwrap()}))

/**
 * The servers of `--mcp-config` values (each JSON text, `@FILE` or a file's path, as Claude Code takes
 * them), later ones over earlier ones by name; a bad one is a usage error naming it.
 */
export function mcpConfigServers(values: readonly string[], read: (file: string) => string): Record<string, McpServerConfig> {
  const servers: Record<string, McpServerConfig> = {}
  for (const value of values) {
    const inline = value.trimStart().startsWith('{')
    const file = inline ? '--mcp-config' : value.replace(/^@/, '')
    let text: string
    try {
      text = inline ? value : read(file)
    } catch (error) {
      throw usageError(`--mcp-config ${value}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`)
    }

    const config = parseJsonText(text, mcpConfigSchema, {
      exitCode: ExitCode.usage,
      hint: 'It takes Claude Code\'s format: {"mcpServers": {"name": {"command": "...", "args": [...]}}}.',
      invalid: (problem) => `Invalid --mcp-config ${inline ? 'JSON' : file}: ${problem}.`,
      keyNoun: 'field',
    })
    Object.assign(servers, config.mcpServers)
  }

  return servers
}

export const userSettingsPath = (home = waveHome()) => path.join(home, SETTINGS_FILE)
export const projectSettingsPath = (workspace: string) => path.join(workspace, '.wave', SETTINGS_FILE)
/**
 * Claude Code's project settings, shared (`.claude/settings.json`) and local (`.claude/settings.local.json`,
 * which Claude Code keeps out of git): wave reads their `hooks` alone, each as a project file (untrusted
 * unless project settings are trusted: a file in the workspace is the repository's, whoever wrote it).
 * In Claude Code's order of precedence, the local one last; hooks add up, so the order is the order they run in.
 */
const claudeProjectSettingsPaths = (workspace: string) => [
  path.join(workspace, '.claude', SETTINGS_FILE),
  path.join(workspace, '.claude', 'settings.local.json'),
]

/** Claude Code's file holds keys wave does not read (env, statusLine ...): `hooks` and `permissions` are taken. */
const claudeSettingsSchema = z.lazy(() => z.looseObject({hooks: hooksSchema.optional(), permissions: claudePermissionsSchema.optional()}))

function readClaudeSettings(file: string): SettingsLayer | undefined {
  const read = readJsonFile(file, claudeSettingsSchema, settingsFileOptions(file))
  if (!read) return undefined
  const {permissions, unhonoured} = claudePermissions(read.permissions, file)
  return {file, scope: 'project', settings: {hooks: read.hooks, ...(permissions ? {permissions} : {})}, unhonoured}
}

/** Reads and validates one settings file; undefined when it does not exist. A bad file is a usage error (exit 2). */
function readSettingsFile(file: string, scope: SettingsScope): SettingsLayer | undefined {
  const settings = readJsonFile(file, settingsSchema, settingsFileOptions(file))
  return settings && {file, scope, settings: inScope(settings, file, scope)}
}

/** Validates settings text; errors name the file, the field and the problem. */
export function parseSettings(text: string, file: string, scope: SettingsScope): Settings {
  return inScope(parseJsonText(text, settingsSchema, settingsFileOptions(file)), file, scope)
}

const SETTINGS_HINT = 'See docs/settings.md for the settings wave reads.'
const invalidLine = (file: string, problem: string) => `Invalid settings file ${file}: ${problem}.`

/** An empty settings file is `{}`; a bad one is a usage error naming the file and the setting. */
const settingsFileOptions = (file: string): JsonFileOptions => ({
  empty: {},
  exitCode: ExitCode.usage,
  hint: SETTINGS_HINT,
  invalid: (problem) => invalidLine(file, problem),
  keyNoun: 'setting',
})

/** The settings, unless a project's file sets what only the user's own may. */
function inScope(settings: Settings, file: string, scope: SettingsScope): Settings {
  if (scope === 'project') {
    for (const key of ['plansDirectory', 'provider', 'trustProjectSettings'] as const) {
      if (settings[key] !== undefined) {
        throw new WaveError(
          invalidLine(file, `${key}: can be set only in the user settings file ${userSettingsPath()}, not in a project's`),
          ExitCode.usage,
          SETTINGS_HINT,
        )
      }
    }
  }

  return settings
}

/** Merges settings layers (user first, then project) and flags: the pure part, table-tested. */
export function mergeSettings(layers: SettingsLayer[], flags: SettingsFlags = {}): EffectiveSettings {
  const ordered = [...layers].sort((a, b) => (a.scope === b.scope ? 0 : a.scope === 'user' ? -1 : 1))
  const merged: EffectiveSettings = {
    agents: {...DEFAULT_AGENT_LIMITS},
    allow: [],
    deny: [],
    files: [],
    ask: [],
    hooks: [],
    ignored: [],
    instructions: [],
    mcpServers: {},
    planModeBash: true,
    plugins: {},
    protectedPaths: [],
    reasoning: {},
    sandboxEnv: [],
  }
  const trusted = flags.trustProject ?? ordered.some((layer) => layer.scope === 'user' && layer.settings.trustProjectSettings === true)
  for (const {file, scope, settings, unhonoured = []} of ordered) {
    merged.files.push(file)
    merged.unhonoured = [...(merged.unhonoured ?? []), ...unhonoured]
    merged.ignored.push(...unhonoured)
    merged.budget = lowestCap(merged.budget, capOf(settings.maxBudgetUsd, {file, kind: 'settings'}))
    // Words for the model, as the repository's AGENTS.md are: used from any file. They grant nothing.
    if (settings.instructions?.trim()) merged.instructions.push(settings.instructions)
    if (scope === 'user' && settings.provider) merged.provider = settings.provider
    // Off from any file: it only narrows what a session may do.
    if (settings.planMode?.bash === false) merged.planModeBash = false
    merged.deny.push(...(settings.permissions?.deny ?? []))
    merged.protectedPaths.push(...(settings.protectedPaths ?? []).filter((entry) => !merged.protectedPaths.includes(entry)))
    // Ask rules only narrow (headless, a call one matches is refused): taken from any file, as deny rules are.
    merged.ask!.push(...(settings.permissions?.ask ?? []))
    Object.assign(merged.plugins, settings.plugins)
    const grants = scope === 'user' || trusted
    const allow = settings.permissions?.allow ?? []
    const servers = Object.entries(settings.mcpServers ?? {})
    const sandboxEnv = settings.sandbox?.env ?? []
    // What the user pays and when --max-budget-usd stops (the model, its window, its prices), and how
    // much memory a command's /tmp may take, are the user's to choose: a project's file sets them only when trusted.
    const spending = (['model', 'contextWindow', 'prices', 'effort', 'thinking', 'maxOutputTokens', 'agents'] as const).filter(
      (key) => settings[key] !== undefined,
    )
    const tmpSize = settings.sandbox?.tmpSize
    // A hook is a command: a repository's runs only when its settings are trusted (then in the sandbox, tools/hooks/).
    const hooks = configuredHooks(settings.hooks, scope, file)
    merged.ignored.push(...hooks.unsupported)
    if (grants) {
      merged.hooks.push(...hooks.hooks)
      if (settings.model) merged.model = settings.model
      if (settings.contextWindow) merged.contextWindow = settings.contextWindow
      if (settings.prices) merged.prices = {...merged.prices, ...settings.prices}
      // How hard the model works and how much it may write is spending too.
      if (settings.effort) merged.reasoning.effort = settings.effort
      if (settings.thinking !== undefined) merged.reasoning.thinking = settings.thinking
      if (settings.maxOutputTokens) merged.reasoning.maxOutputTokens = settings.maxOutputTokens
      if (tmpSize !== undefined) merged.sandboxTmpSize = sizeInBytes(tmpSize)
      const agents = settings.agents
      if (agents) {
        const {timeoutSeconds, ...rest} = agents
        Object.assign(merged.agents, Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)))
        if (timeoutSeconds !== undefined) merged.agents.timeoutMs = Math.round(timeoutSeconds * 1000)
      }
    }

    if (!grants && allow.length + servers.length + sandboxEnv.length + spending.length + hooks.hooks.length + (tmpSize === undefined ? 0 : 1) > 0) {
      const what = [
        hooks.hooks.length > 0 ? `hooks (${hooks.hooks.map((hook) => `${hook.event} "${hook.command}"`).join(', ')})` : '',
        allow.length > 0 ? `allow rules (${allow.join(', ')})` : '',
        servers.length > 0 ? `mcpServers (${servers.map(([name]) => name).join(', ')})` : '',
        sandboxEnv.length > 0 ? `sandbox.env (${sandboxEnv.join(', ')})` : '',
        tmpSize === undefined ? '' : 'sandbox.tmpSize',
        ...spending,
      ]
      merged.ignored.push(
        `${file}: ${what.filter(Boolean).join(' and ')} ignored, since project settings are not trusted (set "trustProjectSettings": true in ${userSettingsPath()} or WAVE_TRUST_PROJECT_SETTINGS=1)`,
      )
      continue
    }

    merged.allow.push(...allow)
    merged.sandboxEnv.push(...sandboxEnv.filter((name) => !merged.sandboxEnv.includes(name)))
    // A project's server replaces the user's server of the same name as a whole.
    for (const [name, server] of servers) merged.mcpServers[name] = {...server, scope}
    if (scope === 'user' && settings.plansDirectory) {
      merged.plansDirectory = path.resolve(path.dirname(file), expandHome(settings.plansDirectory))
    }
  }

  if (flags.model) merged.model = flags.model
  if (flags.strictMcp) merged.mcpServers = {}
  for (const [name, server] of Object.entries(flags.mcpServers ?? {})) merged.mcpServers[name] = {...server, scope: 'user'}
  merged.allow.push(...(flags.allow ?? []))
  merged.deny.push(...(flags.deny ?? []))
  merged.allow = [...new Set(merged.allow)]
  merged.deny = [...new Set(merged.deny)]
  merged.ask = [...new Set(merged.ask)]
  return merged
}

/** The user's and the workspace's settings files, validated and merged, with flags on top. */
export function loadSettings(workspace: string | undefined, flags: SettingsFlags = {}): EffectiveSettings {
  const trust = process.env.WAVE_TRUST_PROJECT_SETTINGS
  if (flags.trustProject === undefined && trust) flags = {...flags, trustProject: trust === '1' || trust.toLowerCase() === 'true'}
  const layers = [readSettingsFile(userSettingsPath(), 'user')]
  if (workspace) {
    const project = projectSettingsPath(path.resolve(workspace))
    if (path.resolve(project) !== path.resolve(userSettingsPath())) layers.push(readSettingsFile(project, 'project'))
    for (const file of claudeProjectSettingsPaths(path.resolve(workspace))) layers.push(readClaudeSettings(file))
  }

  return mergeSettings(
    layers.filter((layer): layer is SettingsLayer => layer !== undefined),
    flags,
  )
}

/** The plans directory the user settings file chooses, if any (absolute). */
export function settingsPlansDirectory(home = waveHome()): string | undefined {
  const layer = readSettingsFile(userSettingsPath(home), 'user')
  if (!layer?.settings.plansDirectory) return undefined
  return path.resolve(home, expandHome(layer.settings.plansDirectory))
}

/**
 * Refuses a WAVE_HOME inside the workspace, or a workspace inside WAVE_HOME (real paths, symlinks
 * followed, a home that does not exist yet through its deepest existing ancestor): the user's settings
 * file, which alone may grant trust, and the plans with their approval records must not be files that a
 * repository ships or a session's file tools can write. A usage error (exit 2).
 */
export async function assertHomeOutsideWorkspace(workspace: string, home = waveHome()): Promise<void> {
  const real = async (what: string, dir: string) => {
    try {
      return await realPathOf(path.resolve(dir))
    } catch (error) {
      if (error instanceof PathResolutionError) throw usageError(`Cannot use ${what}: ${error.message}`)
      throw error
    }
  }

  const [root, wave] = [await real('the workspace', workspace), await real('WAVE_HOME', home)]
  // What wave's own code reads or runs outside the sandbox: a sandboxed command writes anywhere in the
  // workspace, as the same user, so none of it may lie there. HOME first: WAVE_HOME is below it by default.
  for (const {name, what, dir, why} of outsideTheSandbox()) {
    const real = await realPathOf(path.resolve(dir)).catch(() => undefined)
    if (real && isInside(root, real)) {
      throw usageError(`${what} ${dir} lies inside the workspace ${root}: ${why}`, `Set ${name} to a directory outside the workspace.`)
    }
  }

  const hint = 'Set WAVE_HOME to a directory outside the repository (the default is ~/.wave).'
  if (isInside(root, wave)) {
    throw usageError(`WAVE_HOME ${wave} lies inside the workspace ${root}: the repository could supply wave's own settings and approvals.`, hint)
  }

  if (isInside(wave, root)) {
    throw usageError(`The workspace ${root} lies inside WAVE_HOME ${wave}: wave's own settings and approvals would be files the session can edit.`, hint)
  }
}

/** The directories besides WAVE_HOME whose files wave's unsandboxed code reads or runs, each with the variable that places it. */
function outsideTheSandbox(): Array<{name: string; what: string; dir: string; why: string}> {
  const env = process.env
  const gitConfig = "a sandboxed command could write the git config there, which wave's own git reads."
  const dirs: Array<{name: string; what: string; dir: string; why: string}> = []
  for (const name of ['HOME', 'XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL']) {
    if (env[name]) dirs.push({dir: env[name], name, what: name, why: gitConfig})
  }

  if (!env.NODE_DISABLE_COMPILE_CACHE) {
    const name = env.WAVE_COMPILE_CACHE ? 'WAVE_COMPILE_CACHE' : env.XDG_CACHE_HOME ? 'XDG_CACHE_HOME' : 'HOME'
    dirs.push({
      dir: codeCacheDirectory(),
      name,
      what: `The code cache (from ${name})`,
      why: "wave's code cache is code the next wave runs, and a sandboxed command could write it (NODE_DISABLE_COMPILE_CACHE=1 turns the cache off).",
    })
  }

  return dirs
}
