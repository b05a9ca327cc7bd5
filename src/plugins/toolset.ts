/**
 * The tools and rules of one session: built-ins, tools from installed oclif plugins, tools from the
 * configured MCP servers, and the permission rules of the settings files plus the command's own.
 * Plugins and the MCP SDK load only here, so commands that start no session stay fast.
 */
import {BUILTIN_TOOLS} from './builtin.js'
import {CONTROL_TOOLS, ToolRegistry} from './registry.js'
import type {ToolPlugin} from './tool.js'
import {parseRules, type Rules} from '../core/policy/policy.js'
import {getHostConfig, loadPluginTools, trackToolSource} from './sources/hook.js'
import {type EffectiveSettings, loadSettings} from '../core/settings.js'

export interface SessionTools {
  registry: ToolRegistry
  /** Settings rules plus the command's: allow and deny lists add up, and deny wins in the policy. */
  rules: Rules
  settings: EffectiveSettings
  /** Stops the MCP servers this session started. Safe to call twice. */
  close(): Promise<void>
}

export interface SessionToolsOptions {
  /** The workspace root (a real path): where `.wave/settings.json` is looked for. */
  workspace: string
  /** Rules beyond the settings files': `--allow` flags, or an approval record's `allow`. */
  allow?: string[]
  deny?: string[]
  /** Already loaded settings (else they are read now). */
  settings?: EffectiveSettings
  /** Where problems with plugins and servers go (default: a `Warning:` line on stderr). */
  warn?(message: string): void
  /** Only the built-ins: no plugin hook is run and no server started. */
  builtinOnly?: boolean
}

export async function openSessionTools(options: SessionToolsOptions): Promise<SessionTools> {
  const settings = options.settings ?? loadSettings(options.workspace)
  const rules = parseRules([...settings.allow, ...(options.allow ?? [])], [...settings.deny, ...(options.deny ?? [])])
  const warn = options.warn ?? ((message: string) => process.stderr.write(`Warning: ${message}\n`))
  for (const message of settings.ignored) warn(message)
  const builtins = [...BUILTIN_TOOLS, ...CONTROL_TOOLS]
  const taken = new Set(builtins.map((tool) => tool.name))
  const tools: ToolPlugin[] = [...builtins]
  let closeMcp = async () => {}

  const config = getHostConfig()
  if (config && !options.builtinOnly) {
    const fromPlugins = await loadPluginTools({config, enabled: settings.plugins, taken, warn, workspace: options.workspace})
    for (const tool of fromPlugins) taken.add(tool.name)
    tools.push(...fromPlugins)
  }

  if (Object.keys(settings.mcpServers).length > 0 && !options.builtinOnly) {
    const {connectMcpServers} = await import('./sources/mcp.js')
    const mcp = await connectMcpServers(settings.mcpServers, {clientVersion: config?.version, taken, warn, workspace: options.workspace})
    tools.push(...mcp.tools)
    closeMcp = mcp.close
  }

  const close = trackToolSource(closeMcp)
  try {
    return {close, registry: new ToolRegistry(tools), rules, settings}
  } catch (error) {
    await close()
    throw error
  }
}
