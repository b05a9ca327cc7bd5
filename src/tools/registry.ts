import {z} from 'zod'

import {offered, type PolicyContext} from '../policy/policy.js'
import agent from './agent.js'
import askUserQuestion from './ask-user-question.js'
import {BUILTIN_TOOLS, DEFERRED_BUILTINS} from './builtin.js'
import toolSearch, {TOOL_SEARCH, toolSearchDescription} from './deferred/tool-search.js'
import enterPlanMode from './enter-plan-mode.js'
import exitPlanMode from './exit-plan-mode.js'
import todoWrite from './todo-write.js'
import type {ToolPlugin} from './tool.js'

/** A tool definition as the Messages API takes it. */
export interface ApiTool {
  name: string
  description: string
  input_schema: {type: 'object'; [key: string]: unknown}
  /** Deferred: the API keeps the definition out of the prompt until a tool_reference (ToolSearch's result) loads it. */
  defer_loading?: true
}

/** Whether a tool is sent deferred, to be loaded by ToolSearch: its declaration says so, or it is one of DEFERRED_BUILTINS. */
export function isDeferred(tool: ToolPlugin): boolean {
  return tool.deferred ?? DEFERRED_BUILTINS.has(tool.name)
}

/**
 * The built-in tools' input schemas as the build converted them (scripts/bundle.js defines this in the
 * command bundles), so that a session does not convert them again from zod on the way to its first
 * request (~10 ms). Undefined when wave runs from its sources (the tests): converted then.
 */
declare const __WAVE_TOOL_SCHEMAS__: Record<string, Record<string, unknown>> | undefined
const BUILT_SCHEMAS = typeof __WAVE_TOOL_SCHEMAS__ === 'undefined' ? undefined : __WAVE_TOOL_SCHEMAS__

/** The tool plugins a session can use; the policy decides which of them each mode offers. */
export class ToolRegistry {
  private readonly byName = new Map<string, ToolPlugin>()
  /** Older names of built-ins (Task for Agent), answered by the tool under its name of now. */
  private readonly aliases = new Map<string, ToolPlugin>()
  private readonly schemas = new Map<string, ApiTool>()

  constructor(readonly tools: ToolPlugin[]) {
    for (const tool of tools) {
      if (this.byName.has(tool.name)) throw new Error(`Two tool plugins are named ${tool.name}${tool.source ? ` (the second from ${tool.source})` : ''}.`)
      this.byName.set(tool.name, tool)
    }

    for (const tool of tools) {
      for (const alias of tool.aliases ?? []) if (!this.byName.has(alias)) this.aliases.set(alias, tool)
    }
  }

  /** The tool of that name, or the one that name is an older name of. */
  get(name: string): ToolPlugin | undefined {
    return this.byName.get(name) ?? this.aliases.get(name)
  }

  offered(ctx: PolicyContext): ToolPlugin[] {
    return this.tools.filter((tool) => offered(ctx, tool))
  }

  /**
   * The offered tools as API definitions; schemas are computed once per tool, so requests stay
   * byte-identical for caching. With a deferred tool among them and ToolSearch offered: the others
   * first, then ToolSearch listing the deferred ones, then those with `defer_loading` (the API keeps
   * them out of the prompt, so the last cached tool is ToolSearch). Without ToolSearch (a rule denies
   * it) the deferred tools are sent as the others are: never a tool the model could not load.
   */
  apiTools(ctx: PolicyContext): ApiTool[] {
    const offered = this.offered(ctx)
    const search = offered.find((tool) => tool.name === TOOL_SEARCH)
    const deferred = search ? offered.filter((tool) => isDeferred(tool)) : []
    const rest = offered.filter((tool) => tool !== search && !(deferred.length > 0 && isDeferred(tool)))
    if (!search || deferred.length === 0) return rest.map((tool) => this.apiTool(tool))
    return [...rest.map((tool) => this.apiTool(tool)), this.searchTool(search, deferred), ...deferred.map((tool) => this.deferredTool(tool))]
  }

  /** Whether `tool` is sent deferred where ToolSearch is offered: declared so, and ToolSearch in this set (toolset.ts leaves it out where tool search is off). */
  sendsDeferred(tool: ToolPlugin): boolean {
    return isDeferred(tool) && this.byName.has(TOOL_SEARCH)
  }

  /** The deferred tools the policy offers in `ctx`, which ToolSearch may load: none when ToolSearch is not offered. */
  deferredOffered(ctx: PolicyContext): ToolPlugin[] {
    const offered = this.offered(ctx)
    return offered.some((tool) => tool.name === TOOL_SEARCH) ? offered.filter((tool) => isDeferred(tool)) : []
  }

  /** One tool as the model is shown it (`wave tools --verbose` prints this); ToolSearch listing every deferred tool of the registry. */
  apiTool(tool: ToolPlugin): ApiTool {
    if (tool.name === TOOL_SEARCH)
      return this.searchTool(
        tool,
        this.tools.filter((each) => isDeferred(each)),
      )
    let api = this.schemas.get(tool.name)
    if (!api) {
      const {$schema: _ignored, ...schema} = tool.inputSchema ?? builtSchema(tool) ?? inputSchemaOf(tool)
      api = {description: tool.description, input_schema: {...schema, type: 'object'}, name: tool.name}
      this.schemas.set(tool.name, api)
    }

    return api
  }

  /** A deferred tool's definition, with `defer_loading`, made once. */
  private deferredTool(tool: ToolPlugin): ApiTool {
    const key = `deferred:${tool.name}`
    let api = this.schemas.get(key)
    if (!api) {
      api = {...this.apiTool(tool), defer_loading: true}
      this.schemas.set(key, api)
    }

    return api
  }

  /** ToolSearch as sent beside these deferred tools: its description names each (tool-search.ts). */
  private searchTool(search: ToolPlugin, deferred: ToolPlugin[]): ApiTool {
    const key = `${TOOL_SEARCH}:${deferred.map((tool) => tool.name).join(',')}`
    let api = this.schemas.get(key)
    if (!api) {
      const {$schema: _ignored, ...schema} = builtSchema(search) ?? inputSchemaOf(search)
      api = {description: toolSearchDescription(deferred), input_schema: {...schema, type: 'object'}, name: TOOL_SEARCH}
      this.schemas.set(key, api)
    }

    return api
  }
}

/** A tool's input schema converted from its zod input, as the model is sent it. */
export function inputSchemaOf(tool: ToolPlugin): Record<string, unknown> {
  return z.toJSONSchema(tool.input, {io: 'input', override: dropSafeIntegerBounds}) as Record<string, unknown>
}

/** The build's schema of a built-in (the very object: a plugin's tool never takes one), if the build made them. */
function builtSchema(tool: ToolPlugin): Record<string, unknown> | undefined {
  if (!BUILT_SCHEMAS) return undefined
  builtins ??= new Set<ToolPlugin>(builtinTools())
  return builtins.has(tool) ? BUILT_SCHEMAS[tool.name] : undefined
}

let builtins: Set<ToolPlugin> | undefined

/**
 * zod writes `.int()` as JavaScript's safe-integer range (`"maximum": 9007199254740991`): bytes in every
 * request that tell the model nothing. The input is still validated against the zod schema.
 */
function dropSafeIntegerBounds({jsonSchema}: {jsonSchema: Record<string, unknown>}): void {
  if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum
  if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum
}

/** The tools that act on the session rather than the workspace: its to-do list, its questions, plan mode, its agents. */
export const CONTROL_TOOLS: ToolPlugin[] = [todoWrite, askUserQuestion, enterPlanMode, exitPlanMode, agent] as ToolPlugin[]

/** Every built-in a session has: the file and shell tools, the control tools, and ToolSearch, which loads the deferred ones. */
export function builtinTools(): ToolPlugin[] {
  return [...(BUILTIN_TOOLS as ToolPlugin[]), ...CONTROL_TOOLS, toolSearch as ToolPlugin]
}

export function builtinRegistry(): ToolRegistry {
  return new ToolRegistry(builtinTools())
}
