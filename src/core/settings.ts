/**
 * Settings files: `$WAVE_HOME/settings.json` (the user's) and `<workspace>/.wave/settings.json` (the
 * project's), validated with zod. Flags override the project file, which overrides the user file;
 * permission rules add up across all three, and a deny rule beats any allow (the policy sees to that).
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {z} from 'zod'

import {ExitCode, WaveError} from './errors.js'
import {waveHome} from './plans/plans.js'
import {parseRule} from './policy/policy.js'
import {expandHome} from './workspace/paths.js'

export const SETTINGS_FILE = 'settings.json'

const ruleSchema = z.string().superRefine((source, ctx) => {
  try {
    parseRule(source)
  } catch (error) {
    ctx.addIssue({code: 'custom', message: (error as Error).message})
  }
})

const envSchema = z.record(z.string(), z.string())

const stdioServerSchema = z.strictObject({
  args: z.array(z.string()).optional(),
  command: z.string().min(1, 'must not be empty'),
  /** Relative to the workspace root (default: the workspace root). */
  cwd: z.string().optional(),
  env: envSchema.optional(),
  /** Milliseconds a tool call may take (default 60000). */
  timeout: z.number().int().positive().optional(),
  type: z.literal('stdio'),
})

const httpServerSchema = z.strictObject({
  headers: z.record(z.string(), z.string()).optional(),
  timeout: z.number().int().positive().optional(),
  type: z.literal('http'),
  url: z.url({protocol: /^https?$/, error: 'must be an http:// or https:// URL'}),
})

/** `type` may be left out: `url` means streamable HTTP, anything else stdio. */
const mcpServerSchema = z.preprocess(
  (value) => {
    if (!value || typeof value !== 'object' || Array.isArray(value) || 'type' in value) return value
    return {...value, type: 'url' in value ? 'http' : 'stdio'}
  },
  z.discriminatedUnion('type', [stdioServerSchema, httpServerSchema], {error: 'type must be "stdio" (with command) or "http" (with url)'}),
)

export type McpServerConfig = z.infer<typeof mcpServerSchema>
export type StdioServerConfig = z.infer<typeof stdioServerSchema>
export type HttpServerConfig = z.infer<typeof httpServerSchema>

export const MCP_SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,31}$/

export const settingsSchema = z.strictObject({
  $schema: z.string().optional(),
  mcpServers: z
    .record(z.string().regex(MCP_SERVER_NAME, 'server names are letters, digits and "-" (at most 32), so tools can be named mcp__<server>__<tool>'), mcpServerSchema)
    .optional(),
  model: z.string().trim().min(1, 'must not be empty').optional(),
  permissions: z
    .strictObject({
      allow: z.array(ruleSchema).optional(),
      deny: z.array(ruleSchema).optional(),
    })
    .optional(),
  /** Where plans go (user settings only); relative to the settings file's directory. */
  plansDirectory: z.string().trim().min(1, 'must not be empty').optional(),
  /** Installed oclif plugins whose tools to use (true) or ignore (false); plugins not named are used. */
  plugins: z.record(z.string(), z.boolean()).optional(),
  /**
   * User settings only: let a repository's own .wave/settings.json grant capabilities (allow rules,
   * MCP servers). Off by default: in CI the repository is often a pull request's, and its files must
   * not widen what wave may do. Deny rules and the model always apply.
   */
  trustProjectSettings: z.boolean().optional(),
})

export type Settings = z.infer<typeof settingsSchema>
export type SettingsScope = 'project' | 'user'

export interface SettingsLayer {
  scope: SettingsScope
  file: string
  settings: Settings
}

/** The settings in force: files merged, then flags on top. */
export interface EffectiveSettings {
  /** The default model (before WAVE_MODEL and --model, which come first). */
  model?: string
  allow: string[]
  deny: string[]
  plugins: Record<string, boolean>
  mcpServers: Record<string, McpServerConfig & {scope: SettingsScope}>
  /** Absolute; from the user file only. */
  plansDirectory?: string
  /** The files that were read, user first. */
  files: string[]
  /** What an untrusted project file asked for and did not get, to be reported. */
  ignored: string[]
}

export interface SettingsFlags {
  /** WAVE_TRUST_PROJECT_SETTINGS=1: as `trustProjectSettings` in the user file. */
  trustProject?: boolean
  model?: string
  allow?: string[]
  deny?: string[]
}

export const userSettingsPath = (home = waveHome()) => path.join(home, SETTINGS_FILE)
export const projectSettingsPath = (workspace: string) => path.join(workspace, '.wave', SETTINGS_FILE)

/** Reads and validates one settings file; undefined when it does not exist. A bad file is a usage error (exit 2). */
export function readSettingsFile(file: string, scope: SettingsScope): SettingsLayer | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw invalid(file, code === 'EISDIR' ? 'it is a directory, not a file' : `cannot be read (${(error as Error).message})`)
  }

  return {file, scope, settings: parseSettings(text, file, scope)}
}

/** Validates settings text; errors name the file, the field and the problem. */
export function parseSettings(text: string, file: string, scope: SettingsScope): Settings {
  let json: unknown
  try {
    json = text.trim() === '' ? {} : JSON.parse(text)
  } catch (error) {
    throw invalid(file, `not valid JSON (${(error as Error).message})`)
  }

  const parsed = settingsSchema.safeParse(json)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    const field = fieldName(issue)
    const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : ''
    throw invalid(file, `${field ? `${field}: ` : ''}${issueMessage(issue)}${more}`)
  }

  if (scope === 'project') {
    for (const key of ['plansDirectory', 'trustProjectSettings'] as const) {
      if (parsed.data[key] !== undefined) throw invalid(file, `${key}: can be set only in the user settings file ${userSettingsPath()}, not in a project's`)
    }
  }

  return parsed.data
}

function fieldName(issue: z.core.$ZodIssue): string {
  const keys = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : issue.path
  return keys.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('')
}

function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return `unknown setting${issue.keys.length > 1 ? ` (also ${issue.keys.slice(1).join(', ')})` : ''}`
  if ((issue.code === 'invalid_key' || issue.code === 'invalid_element') && issue.issues[0]) return issue.issues[0].message
  return issue.message
}

function invalid(file: string, problem: string): WaveError {
  return new WaveError(`Invalid settings file ${file}: ${problem}.`, ExitCode.usage, 'See docs/settings.md for the settings wave reads.')
}

/** Merges settings layers (user first, then project) and flags: the pure part, table-tested. */
export function mergeSettings(layers: SettingsLayer[], flags: SettingsFlags = {}): EffectiveSettings {
  const ordered = [...layers].sort((a, b) => (a.scope === b.scope ? 0 : a.scope === 'user' ? -1 : 1))
  const merged: EffectiveSettings = {allow: [], deny: [], files: [], ignored: [], mcpServers: {}, plugins: {}}
  const trusted = flags.trustProject ?? ordered.some((layer) => layer.scope === 'user' && layer.settings.trustProjectSettings === true)
  for (const {file, scope, settings} of ordered) {
    merged.files.push(file)
    if (settings.model) merged.model = settings.model
    merged.deny.push(...(settings.permissions?.deny ?? []))
    Object.assign(merged.plugins, settings.plugins)
    const grants = scope === 'user' || trusted
    const allow = settings.permissions?.allow ?? []
    const servers = Object.entries(settings.mcpServers ?? {})
    if (!grants && allow.length + servers.length > 0) {
      const what = [allow.length > 0 ? `allow rules (${allow.join(', ')})` : '', servers.length > 0 ? `mcpServers (${servers.map(([name]) => name).join(', ')})` : '']
      merged.ignored.push(`${file}: ${what.filter(Boolean).join(' and ')} ignored, since project settings are not trusted (set "trustProjectSettings": true in ${userSettingsPath()} or WAVE_TRUST_PROJECT_SETTINGS=1)`)
      continue
    }

    merged.allow.push(...allow)
    // A project's server replaces the user's server of the same name as a whole.
    for (const [name, server] of servers) merged.mcpServers[name] = {...server, scope}
    if (scope === 'user' && settings.plansDirectory) {
      merged.plansDirectory = path.resolve(path.dirname(file), expandHome(settings.plansDirectory))
    }
  }

  if (flags.model) merged.model = flags.model
  merged.allow.push(...(flags.allow ?? []))
  merged.deny.push(...(flags.deny ?? []))
  merged.allow = [...new Set(merged.allow)]
  merged.deny = [...new Set(merged.deny)]
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
