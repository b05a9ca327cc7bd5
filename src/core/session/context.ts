/**
 * A session's context, opened once: where it works, the settings in force (read once, never again), the
 * model and what it can do, the credentials checked, the repository as the session found it, and, when
 * asked for, the tool set and the API client. Every driver (plan, revise, run, task, the prompt preview,
 * `wave tools`) starts from `openSession`; what differs between them is only what they do with it.
 *
 * A session-wide option is one field of SessionOptions and one flag (command.ts, sessionFlags).
 */
import type Anthropic from '@anthropic-ai/sdk'
import type {Config} from '@oclif/core'

import {openSessionTools, type SessionTools} from '../../plugins/toolset.js'
import {ExitCode, WaveError} from '../errors.js'
import {assertHomeOutsideWorkspace, type EffectiveSettings, loadSettings} from '../settings.js'
import {type SessionPlace, sessionWorkspace} from '../workspace/git.js'
import {type RepositorySnapshot, sessionSnapshot} from '../workspace/snapshot.js'
import type {AgentEvent} from './loop.js'
import {assertCredentials, createClient, modelFrom} from './model.js'
import {chooseProvider} from './providers.js'
import {type Effort, type Reasoning, reasoningFor, type ThinkingSetting} from './reasoning.js'

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

/** The options every session takes, from the session flags (command.ts) or a caller (the GitHub review). */
export interface SessionOptions {
  host: SessionHost
  /**
   * `--cwd`: the workspace. Without it, the top of the git repository holding the current directory
   * (outside any repository, the current directory, where a session may work there).
   */
  cwd?: string
  /** `--model`; else WAVE_MODEL, the settings, the default. */
  model?: string
  maxTurns: number
  /** `--max-budget-usd`: the session stops (exit 5) once it has spent more. */
  maxBudgetUsd?: number
  /** `--append-system-prompt`: the last of the system prompt's own sections. */
  appendSystemPrompt?: string
  /** `--effort`, `--thinking`, `--max-output-tokens` (over the settings'; reasoning.ts has the defaults). */
  effort?: Effort
  thinking?: ThinkingSetting
  maxOutputTokens?: number
}

export interface OpenOptions {
  /** Where the session works, already chosen. */
  place?: SessionPlace
  /** A session that writes works where the user says: outside any repository it needs --cwd (the hint says so). */
  outside?: {hint: string}
  /** The snapshot also reads the work tree's changes (a run measures its changes from them). */
  changes?: boolean
  /** Check the credentials now (default); a run checks them itself, after the approval checks. */
  credentials?: boolean
  /**
   * A second session after another in the same process (`run --task --approve` executing its plan): the
   * place, settings, tool set and client of the first, so nothing the first wrote (a `.wave/settings.json`)
   * can widen what the second may do. The repository is read again.
   */
  inherited?: SessionContext
  /** No session will run (`wave prompt`, `wave tools`): no credentials, no snapshot, no home check. */
  preview?: boolean
}

export class SessionContext {
  private openedTools?: Promise<SessionTools>
  private madeClient?: Promise<Anthropic>

  constructor(
    readonly options: SessionOptions,
    readonly place: SessionPlace,
    /** The settings in force, read once when the session opened: a session never re-reads them. */
    readonly settings: EffectiveSettings,
    readonly model: string,
    /** The repository as the session found it (snapshot.ts); absent for a preview. */
    readonly snapshot: RepositorySnapshot | undefined,
    private readonly inherited?: SessionContext,
  ) {
    const {effort, maxOutputTokens, thinking} = options
    this.reasoning = reasoningFor(model, {...settings.reasoning, ...defined({effort, maxOutputTokens, thinking})})
  }

  /** Thinking, effort and max_tokens of the session's requests: the flags over the settings, within what the model takes. */
  readonly reasoning: Reasoning

  get host(): SessionHost {
    return this.options.host
  }

  /** The workspace root, a real path. */
  get workspace(): string {
    return this.place.workspace
  }

  /** Fails before any request when no credential is set (exit 2). */
  assertCredentials(): void {
    assertCredentials(this.settings.provider)
  }

  /** The session's tool set, opened on first use (plugins load, MCP servers start), closed by close(). */
  tools(): Promise<SessionTools> {
    if (this.inherited) return this.inherited.tools()
    this.openedTools ??= openSessionTools({config: this.host.config, settings: this.settings, warn: this.host.warn, workspace: this.workspace})
    return this.openedTools
  }

  /** The API client, made on first use. */
  client(): Promise<Anthropic> {
    if (this.inherited) return this.inherited.client()
    this.madeClient ??= createClient(this.settings.provider)
    return this.madeClient
  }

  /** Closes what this context opened (an inherited tool set is its first session's to close). */
  async close(): Promise<void> {
    const tools = this.openedTools
    this.openedTools = undefined
    if (tools) await (await tools.catch(() => undefined))?.close()
  }
}

/** Opens a session's context: place → settings → model → credentials → snapshot, in that order. */
export async function openSession(options: SessionOptions, open: OpenOptions = {}): Promise<SessionContext> {
  const {inherited} = open
  const place = open.place ?? inherited?.place ?? (await sessionPlace(options.cwd, open))
  const settings = inherited?.settings ?? loadSettings(place.workspace)
  const model = modelFrom(options.model, settings.model)
  if (open.preview) return new SessionContext(options, place, settings, model, undefined)
  if (open.credentials !== false) {
    assertCredentials(settings.provider)
    // A Claude Code switch honoured or overruled is said once, by the session that reads it.
    const {note} = chooseProvider(settings.provider)
    if (note && !inherited) options.host.warn(note)
  }
  const snapshot = await sessionSnapshot(place.workspace, {changes: open.changes})
  const session = new SessionContext(options, place, settings, model, snapshot, inherited)
  for (const note of session.reasoning.notes) options.host.warn(note)
  return session
}

/** The fields of `values` that are set: an absent flag leaves the settings' value in force. */
function defined<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined)) as Partial<T>
}

/**
 * Where a session works: `--cwd`, else the top of the git repository around the current directory.
 * Never a workspace holding WAVE_HOME (or held by it): the session could write its own settings and plans.
 */
async function sessionPlace(cwd: string | undefined, open: OpenOptions): Promise<SessionPlace> {
  const place = await sessionWorkspace(cwd ?? process.cwd(), cwd !== undefined)
  if (open.preview) return place
  await assertHomeOutsideWorkspace(place.workspace)
  // A session that writes works where the user says, never in a directory guessed for them.
  if (open.outside && cwd === undefined && !place.repository) {
    throw new WaveError(
      `${place.cwd} is not inside a git repository: wave run works at the top of the repository it is started in.`,
      ExitCode.usage,
      open.outside.hint,
    )
  }

  return place
}
