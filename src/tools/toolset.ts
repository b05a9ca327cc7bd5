/**
 * The tools of one session: built-ins (with the plan-mode control tools), tools from installed oclif
 * plugins, and tools from the configured MCP servers. Plugins and the MCP SDK load only here, so
 * commands that start no session stay fast. Whoever opens a tool set closes it (MCP servers stop).
 */
import type {Config} from '@oclif/core'

import type {EffectiveSettings} from '../config/settings.js'
import {BackgroundTasks} from './background.js'
import {TOOL_SEARCH} from './deferred/tool-search.js'
import {builtinTools, ToolRegistry} from './registry.js'
import {loadPluginTools} from './sources/hook.js'
import {SessionNotes} from './notes.js'
import {skillListing, skillTool} from './skill.js'
import {loadSkills, type Skill} from './skills/catalog.js'
import type {ToolPlugin} from './tool.js'
import type {OutputSchema} from '../base/json-schema.js'
import {STRUCTURED_OUTPUT_TOOL, StructuredResult, structuredOutputTool} from './structured-output.js'

export interface SessionTools {
  registry: ToolRegistry
  /** The background commands started by Bash; every one still running ends when the tool set closes. */
  tasks: BackgroundTasks
  /** The to-do list and the questions no one could answer (TodoWrite, AskUserQuestion). */
  notes: SessionNotes
  /** The Agent Skills found (listed in the Skill tool, which is offered when there is one). */
  skills: Skill[]
  /** The session's structured result, when it was given a JSON Schema for it (--json-schema): the StructuredOutput tool's. */
  result?: StructuredResult
  /** Ends the background commands and stops the MCP servers this tool set started. Safe to call twice. */
  close(): Promise<void>
}

interface SessionToolsOptions {
  /** The workspace root (a real path). */
  workspace: string
  /** The settings in force, read once when the command started. */
  settings: EffectiveSettings
  /** The running CLI's oclif config, whose installed plugins are asked for tools; none without it. */
  config?: Config
  /** Where problems with plugins and servers go. */
  warn(message: string): void
  /** `--json-schema` (or the approval record's): the StructuredOutput tool is in the set, with this schema. */
  outputSchema?: OutputSchema
  /**
   * Whether ToolSearch is in the set (model/providers.ts, toolSearchOn): without it the registry sends
   * the deferred tools whole, as it does when a rule denies ToolSearch.
   */
  toolSearch: boolean
}

export async function openSessionTools(options: SessionToolsOptions): Promise<SessionTools> {
  const {settings, warn} = options
  for (const message of settings.ignored) warn(message)
  const builtins = builtinTools().filter((tool) => options.toolSearch || tool.name !== TOOL_SEARCH)
  const taken = new Set(builtins.map((tool) => tool.name))
  const tools: ToolPlugin[] = [...builtins]
  let closeMcp = async () => {}
  const result = options.outputSchema ? new StructuredResult(options.outputSchema) : undefined
  if (result) {
    tools.push(structuredOutputTool(result))
    taken.add(STRUCTURED_OUTPUT_TOOL)
  }

  // Skills are words for the model, from any place (as AGENTS.md): read once, each problem warned.
  const {skills, warnings} = loadSkills(options.workspace)
  for (const warning of warnings) warn(warning)
  if (skills.length > 0) {
    const listing = skillListing(skills)
    if (listing.nameOnly.length > 0) {
      warn(`The Skill tool lists ${listing.nameOnly.length} of ${skills.length} skills by name only, past its size budget: ${listing.nameOnly.join(', ')}.`)
    }

    tools.push(skillTool(skills, listing.description) as unknown as ToolPlugin)
    taken.add('Skill')
  }

  if (options.config) {
    const fromPlugins = await loadPluginTools({config: options.config, enabled: settings.plugins, taken, warn, workspace: options.workspace})
    for (const tool of fromPlugins) taken.add(tool.name)
    tools.push(...fromPlugins)
  }

  if (Object.keys(settings.mcpServers).length > 0) {
    const {connectMcpServers} = await import('./sources/mcp.js')
    const mcp = await connectMcpServers(settings.mcpServers, {clientVersion: options.config?.version, taken, warn, workspace: options.workspace})
    tools.push(...mcp.tools)
    closeMcp = mcp.close
  }

  const tasks = new BackgroundTasks()
  let closed: Promise<void> | undefined
  const close = () => (closed ??= Promise.all([tasks.close(), closeMcp().catch(() => {})]).then(() => {}))
  try {
    return {close, notes: new SessionNotes(), registry: new ToolRegistry(tools), result, skills, tasks}
  } catch (error) {
    await close()
    throw error
  }
}
