/**
 * One model session, whatever drives it (a plan, a revision, a run of an approved plan, `run --task`):
 * open the tools, build the policy, wire the transcript, create the client, run the loop, and close
 * what was opened, in `finally`. The drivers (plan.ts, run.ts, task.ts) keep only what differs: the
 * opening message, the plan bookkeeping, the outcome.
 */
import type Anthropic from '@anthropic-ai/sdk'
import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'
import type {Config} from '@oclif/core'

import {ExitCode, WaveError} from '../errors.js'
import {openSessionTools, type SessionTools} from '../../plugins/toolset.js'
import {parseRules, type PermissionMode, type PolicyContext, readDenials, type Rules} from '../policy/policy.js'
import type {SandboxSettings} from '../policy/sandbox.js'
import {assertHomeOutsideWorkspace, type EffectiveSettings, loadSettings} from '../settings.js'
import {type SessionPlace, sessionWorkspace} from '../workspace/git.js'
import type {RepositorySnapshot} from '../workspace/snapshot.js'
import {environmentSection, readEnvironment} from './environment.js'
import {type AgentEvent, type AgentResult, type CommandWatch, type CompactionEvent, runAgent, type TokenUsage} from './loop.js'
import type {Scope} from '../policy/scope.js'
import {instructionsSections, readInstructionFiles} from './instructions.js'
import {assertCredentials, createClient, modelFrom} from './model.js'
import type {PlanMode} from './plan-mode.js'

/** What the command gives every session it starts: read once, passed in, never kept in module state. */
export interface SessionHost {
  /** The running CLI's oclif config, whose installed plugins contribute tools. */
  config?: Config
  /** Aborted on SIGINT or SIGTERM. */
  signal: AbortSignal
  /** Warnings (a plugin that failed to load, a server that did not start). */
  warn(message: string): void
  /** Every event of the session, for progress and stream output. */
  onEvent?(event: AgentEvent): void
}

export interface SessionSpec {
  host: SessionHost
  /** The workspace root, a real path. */
  workspace: string
  /**
   * Where the command was started (or `--cwd`), a real path, and the top of the git repository around
   * the workspace: the repository's AGENTS.md / CLAUDE.md files are read from `repository` (else the
   * workspace) down to `cwd` (else the workspace).
   */
  cwd?: string
  repository?: string | null
  /** `--append-system-prompt`: the last of the system prompt's own sections. */
  appendSystemPrompt?: string
  /** The settings in force, read once when the driver started: a session never re-reads them. */
  settings: EffectiveSettings
  model: string
  maxTurns: number
  /** The permission mode while plan mode is not active. */
  mode: PermissionMode
  /** Rules beyond the settings files': `--allow` flags, or an approval record's `allow`. */
  allow: string[]
  /** Plan mode's state: active from the start (plan, revise), enterable (run --task), or neither (run). */
  planMode: PlanMode
  /** The first user message. */
  opening: string
  /**
   * A resumed session: the conversation to go on with instead of the opening (ending with a user
   * message), already in the transcript, so not written to it again.
   */
  history?: MessageParam[]
  /** What the session's earlier part spent (a resumed run): turns, usage and cost go on counting from it. */
  prior?: {turns: number; usage: TokenUsage; costUsd: number | null}
  /** The system prompt while plan mode is not active, given the rules in force. */
  system(rules: Rules): string
  /** Appends a message to the transcript (the opening included). */
  transcript(message: MessageParam): Promise<void>
  /** An open tool set to use, which the caller closes; else one is opened and closed here. */
  tools?: SessionTools
  client?: Anthropic
  /** The OS sandbox of the session's commands (the approval record's, or --sandbox); absent: on, no network. */
  sandbox?: SandboxSettings
  /** `--max-budget-usd`: the session stops (exit 5) once it has spent more. */
  maxBudgetUsd?: number
  /** After a compaction replaced the conversation: the transcript records the new starting point. */
  onCompacted?(messages: MessageParam[], compaction: CompactionEvent): Promise<void>
  /** The repository as the session found it (snapshot.ts): the environment block is read from it. */
  snapshot?: RepositorySnapshot
  /** Awaited before the first tool call runs: what must be read of the workspace before any tool can change it. */
  beforeTools?(): Promise<unknown>
  /** The approved scope every write is held to (a run's approval record). */
  scope?: Scope
  /** Around each command: what it changed outside the scope (enforcement.ts). */
  commandWatch?: CommandWatch
  /** When the model ends its turn: the approved checks, and a message for another turn when they fail. */
  onEndTurn?(): Promise<string | undefined>
}

export async function runSession(spec: SessionSpec): Promise<AgentResult> {
  const {host, planMode, settings, workspace} = spec
  // The prompt's context (git, the instruction files) is read while the tools load.
  const prompt = sessionPrompt(spec)
  prompt.catch(() => {}) // awaited below, unless opening the tools fails first
  const tools = spec.tools ?? (await openSessionTools({config: host.config, settings, warn: host.warn, workspace}))
  try {
    const {policy, system} = await prompt
    const messages: MessageParam[] = spec.history ? [...spec.history] : [{content: spec.opening, role: 'user'}]
    if (!spec.history) await spec.transcript(messages[0])
    return await runAgent({
      beforeTools: spec.beforeTools,
      commandWatch: spec.commandWatch,
      onEndTurn: spec.onEndTurn,
      client: spec.client ?? (await createClient(settings.provider)),
      contextWindow: settings.contextWindow,
      maxBudgetUsd: spec.maxBudgetUsd,
      maxTurns: spec.maxTurns,
      messages,
      model: spec.model,
      onEvent: host.onEvent,
      onCompacted: spec.onCompacted,
      onMessage: spec.transcript,
      policy,
      priorCostUsd: spec.prior?.costUsd,
      priorTurns: spec.prior?.turns,
      priorUsage: spec.prior?.usage,
      prices: settings.prices,
      sandbox: spec.sandbox,
      registry: tools.registry,
      session: planMode,
      signal: host.signal,
      stopRequested: () => planMode.finished,
      system,
    })
  } finally {
    if (!spec.tools) await tools.close()
  }
}

/** What decides the system prompt and the tools a session offers: its spec less the conversation and the model. */
export type PromptSpec = Omit<SessionSpec, 'client' | 'commandWatch' | 'onEndTurn' | 'history' | 'maxBudgetUsd' | 'sandbox' | 'maxTurns' | 'model' | 'onCompacted' | 'opening' | 'prior' | 'tools' | 'transcript'>

/** What a session sends the model besides the conversation, turn by turn. */
export interface SessionPrompt {
  /** The policy in force this turn (EnterPlanMode changes it); the registry offers the tools it allows. */
  policy(): PolicyContext
  /** The system prompt this turn: the same text every turn, but for plan mode's reminder when the plan file appears. */
  system(): Promise<string>
}

/**
 * The one place a session's system prompt and policy are built: runSession sends what this gives, and
 * `wave prompt` prints it (src/core/session/preview.ts), so what a user reviews is what the model gets.
 */
export async function sessionPrompt(spec: PromptSpec): Promise<SessionPrompt> {
  const {planMode, settings} = spec
  // Deny rules come from the settings files only; allow rules add up, and a deny always wins.
  const rules = parseRules([...settings.allow, ...spec.allow], settings.deny)
  const base: PolicyContext = {headless: true, mode: spec.mode, rules, scope: spec.scope, workspaceRoot: spec.workspace}
  // Built once: the system prompt must not change between turns, or the prompt cache is lost.
  const context = await sessionContext(spec, base)
  const own = spec.system(rules)
  return {
    policy: () => ({...base, ...planMode.policy()}),
    system: async () => (planMode.active ? planMode.prompt(context) : [own, context].filter(Boolean).join('\n\n')),
  }
}

/**
 * What every session's system prompt carries besides its mode's own text, in sections joined by blank
 * lines: the environment first. Plan mode puts it before its reminder, which must end the prompt.
 */
async function sessionContext(spec: PromptSpec, policy: PolicyContext): Promise<string> {
  // Names a Read(...) deny rule hides from the tools are not named in the environment block either.
  const denied = readDenials(policy, {access: 'read', name: 'LS'})
  const environment = readEnvironment({hidden: (absolute) => denied({absolute, real: absolute}), repository: spec.snapshot?.summary(), workspace: spec.workspace})
  const sections: string[] = []
  const top = spec.repository ?? spec.workspace
  const instructions = instructionsSections({
    appended: spec.appendSystemPrompt,
    repository: await readInstructionFiles(top, spec.cwd ?? spec.workspace),
    settings: spec.settings.instructions,
  })
  if (instructions.cut) spec.host.warn(instructions.cut)
  sections.push(instructions.text)
  return [environmentSection(await environment), ...sections].filter(Boolean).join('\n\n')
}

/**
 * Where a session works: `--cwd`, else the top of the git repository around the current directory.
 * Never a workspace holding WAVE_HOME (or held by it): the session could write its own settings and plans.
 */
export async function sessionPlace(cwd: string | undefined, outside?: {hint: string}): Promise<SessionPlace> {
  const place = await sessionWorkspace(cwd ?? process.cwd(), cwd !== undefined)
  await assertHomeOutsideWorkspace(place.workspace)
  // A session that writes works where the user says, never in a directory guessed for them.
  if (outside && cwd === undefined && !place.repository) {
    throw new WaveError(`${place.cwd} is not inside a git repository: wave run works at the top of the repository it is started in.`, ExitCode.usage, outside.hint)
  }

  return place
}

/** The settings in force, read once here, and the model they and `--model` choose; credentials checked before any request. */
export function sessionSettings(workspace: string, modelFlag: string | undefined): {settings: EffectiveSettings; model: string} {
  const settings = loadSettings(workspace)
  const model = modelFrom(modelFlag, settings.model)
  assertCredentials(settings.provider)
  return {model, settings}
}
