import type {z} from 'zod'

import type {AccessClass, PolicyDecision, ToolOrigin} from '../policy/policy.js'
import type {SandboxSettings} from '../base/process/sandbox.js'
import type {ResolvedPath} from '../base/workspace/paths.js'
import type {BackgroundTasks} from './background.js'
import type {SessionNotes} from './notes.js'

/** What a session lets control tools do (EnterPlanMode, ExitPlanMode). */
export interface SessionControl {
  enterPlanMode(reason?: string): Promise<string>
  /** Ends planning; `allowedPrompts` (deprecated) are recorded beside the plan for the approver by the session, not the tool. */
  exitPlanMode(planPath?: string, allowedPrompts?: AllowedPrompt[]): Promise<string>
}

/** ExitPlanMode's deprecated `allowedPrompts`: a command the plan asks to run, shown to the approver. */
export interface AllowedPrompt {
  tool: string
  prompt: string
}

/**
 * The most characters one call's result sends the model, unless a tool declares its own: the wrapper
 * keeps the head and the tail of anything longer (dispatch.ts).
 */
export const DEFAULT_RESULT_CAP = 40_000

/** What the Agent tool asks of one agent: a fresh conversation of the given type, started by the call `id`. */
export interface AgentRequest {
  /** The tool_use id of the Agent call: the agent's events and transcript are nested under it. */
  id: string
  description: string
  prompt: string
  subagentType: string
  /** Started in plan mode: only Explore agents. */
  planMode: boolean
}

/** The session's agents (src/agent/subagents.ts): what types it offers, and running one to its final message. */
export interface AgentLauncher {
  /** The subagent types offered, in plan mode or not. */
  types(planMode: boolean): string[]
  /** Runs one agent, waiting for a free slot, and returns its final message (marked when a bound cut it short). */
  launch(request: AgentRequest, signal: AbortSignal): Promise<string>
}

/** What a tool may ask of the policy in force, beyond the wrapper's decision on its call. */
export interface ToolPermissions {
  /** The decision on another call of this tool, as the wrapper would take it (WebFetch asks it for each redirect). */
  decide(input: Record<string, unknown>): PolicyDecision
  /** Whether an allow rule for this tool names this exact host, not merely a parent domain (WebFetch, before a private address). */
  namesHost(host: string): boolean
}

/** What a tool's `run` gets besides its validated input. Paths in it have passed the policy. */
export interface ToolContext {
  /** The workspace root, as a real path. */
  root: string
  /** The checked path of the call (for tools that declare `pathField`): operate on `target.real`. */
  target?: ResolvedPath
  /** Aborted when the session is interrupted. */
  signal: AbortSignal
  /** Whether an absolute path found while searching really lies inside what this call may read. */
  readable(absolute: string): Promise<boolean>
  session: SessionControl
  /** The policy in force, for tools that must check more than the first decision (WebFetch's redirects). */
  permissions?: ToolPermissions
  /**
   * The OS sandbox the tool's commands run in (src/base/process/sandbox.ts). Absent means enabled with
   * no network: a tool that starts a process for the model runs it sandboxed unless told otherwise.
   */
  sandbox?: SandboxSettings
  /** The session's plan file, set while plan mode is active (AskUserQuestion, ExitPlanMode). */
  planFile?: string
  /** The session's background commands (Bash run_in_background, TaskOutput, TaskStop); absent outside a session. */
  tasks?: BackgroundTasks
  /** The session's to-do list and unanswerable questions (TodoWrite, AskUserQuestion); absent outside a session. */
  notes?: SessionNotes
  /** The session's agents (Agent); absent outside a session and inside an agent. */
  agents?: AgentLauncher
  /** The call is an agent's (the policy's `nested`): the Agent tool refuses it in the policy's words. */
  nested?: boolean
  /** The tool_use id of this call. */
  callId?: string
  /**
   * The policy allowed this call as an approved check, and only as it (`PolicyDecision.approvedCheck`):
   * Bash runs exactly this command, as wave runs the checks, or refuses.
   */
  approvedCheck?: string
  /** The session's deferred tools, which ToolSearch finds and loads (registry.ts); absent outside a session's dispatch. */
  deferred?: DeferredCatalog
}

/** What ToolSearch may see and do: the deferred tools the policy offers in the mode, and loading some of them. */
export interface DeferredCatalog {
  /** The deferred tools offered now, in the order the request lists them. */
  offered(): ReadonlyArray<{name: string; description: string}>
  /** The call's result loads these tools: the model is sent a tool_reference to each, in place of the text. */
  load(names: string[]): void
}

/**
 * A tool plugin: declarative, like opencode's Tool.define. Validation, path resolution, the policy,
 * re-checks and the output cap are the shared wrapper's job (src/tools/dispatch.ts), not the tool's.
 */
export interface ToolPlugin<Input extends z.ZodObject = z.ZodObject> {
  name: string
  description: string
  access: AccessClass
  input: Input
  /**
   * The input field naming the file or directory the call touches. The wrapper resolves it (`~`, `..`,
   * symlinks), asks the policy, and hands the result to `run` as `ctx.target`. An absent optional
   * field means the workspace root.
   */
  pathField?: string
  /** Input fields holding glob patterns, which must stay relative and never climb out with `..`. */
  globFields?: string[]
  /**
   * The most characters of a result the model gets; the wrapper cuts the middle of anything longer.
   * A tool that can end its output more usefully (a page with the offset to read on from, the first N
   * matches with a note) does so below this. Plugin and MCP tools get DEFAULT_RESULT_CAP.
   */
  resultCap: number
  run(input: z.infer<Input>, ctx: ToolContext): Promise<string>
  /**
   * Calls of it run beside the turn's reads and each other, whatever the access class (Agent: each call
   * is a conversation of its own, and the session's agent limit bounds how many run at once).
   */
  concurrent?: boolean
  /**
   * Sent with `defer_loading: true`: its definition stays out of every request's cached prefix until the
   * model loads it with ToolSearch (tools/deferred/tool-search.ts). The built-ins' set is DEFERRED_BUILTINS
   * (builtin.ts); a plugin may declare it for a tool it expects to be rarely used.
   */
  deferred?: boolean
  /** Older names the model may call it by (Task for Agent): accepted, never offered. */
  aliases?: string[]
  /** Set by wave when it loads the tool (never by the tool): built-in, an oclif plugin, or an MCP server. */
  origin?: ToolOrigin
  /** The plugin package or MCP server a tool came from, for messages. */
  source?: string
  /**
   * The input's JSON Schema as the model is shown it, when it is not derived from `input` (MCP tools
   * bring their own; the server validates their arguments).
   */
  inputSchema?: Record<string, unknown>
}

/** A tool as its module declares it: its input's schema given, or a function that builds it. */
interface ToolDeclaration<Input extends z.ZodObject = z.ZodObject> extends Omit<ToolPlugin<Input>, 'input'> {
  /**
   * The input's schema, or a function that builds it when first asked for. The built-ins give a function:
   * a zod schema is dozens of objects made at load, and a session needs none of them before the model's
   * first call (the request's tool schemas are the build's: tools/registry.ts), so building them all at
   * start cost every run time before its first request.
   */
  input: Input | (() => Input)
}

export function defineTool<Input extends z.ZodObject>(declaration: ToolDeclaration<Input>): ToolPlugin<Input> {
  const {input} = declaration
  if (typeof input !== 'function') return declaration as ToolPlugin<Input>
  let built: Input | undefined
  return Object.defineProperty({...declaration}, 'input', {enumerable: true, get: () => (built ??= input())}) as ToolPlugin<Input>
}

export {ToolError} from './tool-error.js'
