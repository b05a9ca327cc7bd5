import {z} from 'zod'

import {offered, type PolicyContext} from '../policy/policy.js'
import agent from './agent.js'
import askUserQuestion from './ask-user-question.js'
import {BUILTIN_TOOLS} from './builtin.js'
import enterPlanMode from './enter-plan-mode.js'
import exitPlanMode from './exit-plan-mode.js'
import todoWrite from './todo-write.js'
import type {ToolPlugin} from './tool.js'

/** A tool definition as the Messages API takes it. */
export interface ApiTool {
  name: string
  description: string
  input_schema: {type: 'object'; [key: string]: unknown}
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

  /** The offered tools as API definitions; schemas are computed once per tool, so requests stay byte-identical for caching. */
  apiTools(ctx: PolicyContext): ApiTool[] {
    return this.offered(ctx).map((tool) => this.apiTool(tool))
  }

  /** One tool as the model is shown it (`wave tools --verbose` prints this). */
  apiTool(tool: ToolPlugin): ApiTool {
    let api = this.schemas.get(tool.name)
    if (!api) {
      const {$schema: _ignored, ...schema} = tool.inputSchema ?? builtSchema(tool) ?? inputSchemaOf(tool)
      api = {description: tool.description, input_schema: {...schema, type: 'object'}, name: tool.name}
      this.schemas.set(tool.name, api)
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
  builtins ??= new Set<ToolPlugin>([...(BUILTIN_TOOLS as ToolPlugin[]), ...CONTROL_TOOLS])
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

export function builtinRegistry(): ToolRegistry {
  return new ToolRegistry([...(BUILTIN_TOOLS as ToolPlugin[]), ...CONTROL_TOOLS])
}
