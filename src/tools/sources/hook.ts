/**
 * Tools from installed oclif plugins (`wave plugins install|link`), through the typed custom hook
 * `wave:tools`. A plugin's hook gets wave's own `z` (so its input schemas are wave's zod), `ToolError`
 * and `defineTool`, and returns tool plugins of the built-ins' shape. wave validates each one: a tool
 * with no valid access class, a bad name, a name already taken or an input that is not a zod object is
 * rejected with a message naming the plugin, and the session goes on without it.
 */
import type {Config, Hook, Interfaces} from '@oclif/core'
import {z} from 'zod'

import {errorLine} from '../../base/errors.js'
import {DEFAULT_RESULT_CAP, defineTool, type ToolContext, ToolError, type ToolPlugin} from '../tool.js'

export const TOOLS_HOOK = 'wave:tools'
/** Bumped if the hook's options or the tool shape change incompatibly. */
export const TOOLS_HOOK_API = 1

/** The access classes a plugin tool may declare: `control` is reserved for wave's own tools. */
export const PLUGIN_ACCESS_CLASSES = ['read', 'write', 'execute', 'network'] as const

/** What wave passes to a plugin's `wave:tools` hook (besides oclif's `config` and `context`). */
export type WaveToolsHookOptions = {
  apiVersion: typeof TOOLS_HOOK_API
  /** wave's zod: build `input` schemas with it. */
  z: typeof z
  /** Throw it from `run` for an expected failure: its message goes to the model as an error result. */
  ToolError: typeof ToolError
  /** Identity helper that types a tool (for TypeScript plugins). */
  defineTool: typeof defineTool
  /** The workspace root of the session (a real path). */
  workspace: string
}

/** One tool as a plugin returns it; wave sets `origin` and `source` itself. */
/** A plugin's tool: the built-ins' shape, its result cap optional (DEFAULT_RESULT_CAP, and never above it). */
export type PluginTool = Omit<ToolPlugin, 'inputSchema' | 'origin' | 'resultCap' | 'source'> & {resultCap?: number}

export interface WaveHooks extends Interfaces.Hooks {
  'wave:tools': {options: WaveToolsHookOptions; return: PluginTool | PluginTool[]}
}

/** The type of a plugin's hook function: `const hook: WaveToolsHook = async ({z}) => [...]`. */
export type WaveToolsHook = Hook<'wave:tools', WaveHooks>

const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/

const pluginToolSchema = z.lazy(() =>
  z.object({
    access: z.enum(PLUGIN_ACCESS_CLASSES, {
      error: (issue) =>
        `no valid access class (${issue.input === undefined ? 'none given' : `got ${JSON.stringify(issue.input)}`}); expected one of ${PLUGIN_ACCESS_CLASSES.join(', ')}`,
    }),
    description: z.string({error: 'description must be a string'}).trim().min(1, 'description must not be empty'),
    globFields: z.array(z.string()).optional(),
    input: z.custom<z.ZodObject>((value) => value instanceof z.ZodObject, {
      error: 'input must be a zod object schema: build it with the z that wave passes to the wave:tools hook',
    }),
    name: z.string({error: 'name must be a string'}).regex(TOOL_NAME, 'name must start with a letter and hold only letters, digits, "_" and "-" (at most 64)'),
    pathField: z.string().optional(),
    resultCap: z
      .number({error: 'resultCap must be a number'})
      .int('resultCap must be a whole number of characters')
      .positive('resultCap must be positive')
      .max(DEFAULT_RESULT_CAP, `resultCap must be at most ${DEFAULT_RESULT_CAP}`)
      .optional(),
    run: z.custom<ToolPlugin['run']>((value) => typeof value === 'function', {error: 'run must be a function'}),
  }),
)

interface PluginToolsOptions {
  config: Config
  workspace: string
  /** Names already taken (built-ins): a plugin tool may not shadow them. */
  taken: Set<string>
  /** settings `plugins`: a plugin mapped to false contributes no tools. */
  enabled?: Record<string, boolean>
  warn(message: string): void
  /** How long one plugin's hook may take (ms). */
  timeoutMs?: number
}

/** Asks every installed plugin for tools; returns the valid ones, warning about the rest. */
export async function loadPluginTools(options: PluginToolsOptions): Promise<ToolPlugin[]> {
  const {config, warn} = options
  const hasHook = config.getPluginsList().some((plugin) => (plugin.hooks[TOOLS_HOOK] ?? []).length > 0)
  if (!hasHook) return []
  const hookOptions: WaveToolsHookOptions = {apiVersion: TOOLS_HOOK_API, defineTool, ToolError, workspace: options.workspace, z}
  // Hooks are loaded as the compiled JavaScript they point at: no ts-node, and no warning on stderr that
  // a linked ESM plugin "cannot be auto-transpiled" (which would only ever be true).
  const {settings} = await import('@oclif/core')
  const autoTranspile = settings.enableAutoTranspile
  settings.enableAutoTranspile ??= false
  const result = await config.runHook<'wave:tools', WaveHooks>(TOOLS_HOOK, hookOptions, options.timeoutMs ?? 10_000, true).finally(() => {
    settings.enableAutoTranspile = autoTranspile
  })
  for (const failure of result.failures) {
    warn(`Plugin "${failure.plugin.name}": its ${TOOLS_HOOK} hook failed (${errorLine(failure.error)}); it contributes no tools.`)
  }

  const tools: ToolPlugin[] = []
  const taken = new Set(options.taken)
  for (const {plugin, result: returned} of result.successes) {
    if (options.enabled?.[plugin.name] === false) continue
    const candidates: unknown[] = returned === undefined || returned === null ? [] : Array.isArray(returned) ? returned : [returned]
    for (const candidate of candidates) {
      const checked = checkPluginTool(plugin.name, candidate, taken)
      if (typeof checked === 'string') {
        warn(checked)
        continue
      }

      taken.add(checked.name)
      tools.push(checked)
    }
  }

  return tools
}

/** A valid tool as wave will use it, or the message saying why it was rejected. Exported for tests. */
export function checkPluginTool(pluginName: string, candidate: unknown, taken: Set<string>): string | ToolPlugin {
  const label = toolLabel(candidate)
  const rejected = (why: string) => `Plugin "${pluginName}": tool ${label} rejected: ${why}.`
  if (!candidate || typeof candidate !== 'object') return rejected('a tool must be an object')
  let parsed: ReturnType<typeof pluginToolSchema.safeParse>
  try {
    parsed = pluginToolSchema.safeParse(candidate)
  } catch (error) {
    // A getter of the plugin's that throws: an input defineTool builds on first use (or any property).
    return rejected(`reading it failed (${errorLine(error)})`)
  }
  if (!parsed.success) return rejected(parsed.error.issues.map((issue) => issue.message).join('; '))
  const tool = parsed.data
  if (taken.has(tool.name)) return rejected(`the name ${tool.name} is already taken`)
  if (tool.name.startsWith('mcp__')) return rejected('names starting with mcp__ are reserved for MCP tools')
  const shape = tool.input.shape as Record<string, unknown>
  if (tool.pathField && !(tool.pathField in shape)) return rejected(`pathField ${tool.pathField} is not a field of its input`)
  for (const field of tool.globFields ?? []) {
    if (!(field in shape)) return rejected(`globFields names ${field}, which is not a field of its input`)
  }

  try {
    z.toJSONSchema(tool.input, {io: 'input'})
  } catch (error) {
    return rejected(`its input cannot be shown to the model as JSON Schema (${errorLine(error)})`)
  }

  const original = candidate as PluginTool
  return {
    access: tool.access,
    description: tool.description,
    globFields: tool.globFields,
    input: tool.input,
    name: tool.name,
    origin: 'plugin',
    pathField: tool.pathField,
    resultCap: tool.resultCap ?? DEFAULT_RESULT_CAP,
    run: (input: unknown, ctx: ToolContext) => original.run.call(original, input as never, ctx),
    source: pluginName,
  }
}

function toolLabel(candidate: unknown): string {
  const name = (candidate as {name?: unknown} | null)?.name
  return typeof name === 'string' && name ? `"${name}"` : '(unnamed)'
}
