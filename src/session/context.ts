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

import {openSessionTools, type SessionTools} from '../tools/toolset.js'
import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {compileOutputSchema, type OutputSchema} from '../base/json-schema.js'
import {type BudgetCap, capName} from '../model/budget.js'
import {assertHomeOutsideWorkspace, type EffectiveSettings, loadSettings, type McpServerConfig} from '../config/settings.js'
import {type SessionPlace, sessionWorkspace} from '../base/workspace/git.js'
import {type RepositorySnapshot, sessionSnapshot} from '../base/workspace/snapshot.js'
import {primeThrowawayStatus, type SandboxChoice, type SandboxSettings, sandboxSettings} from '../base/process/sandbox.js'
import {knowModel, type ModelKnowledge, type ModelProfile, tableProfile} from '../model/catalog.js'
import type {AgentEvent, RequestShape} from '../agent/loop.js'
import {assertCredentials, createClient, loadFetchSoon, modelFrom} from '../model/table.js'
import {chooseProvider, providerFrom, toolSearchOn} from '../model/providers.js'
import {aliasFromTable, isModelAlias, type ModelAlias, resolveAlias} from '../model/aliases.js'
import {capabilitiesOfProfile, type Effort, type Reasoning, type ReasoningChoice, reasoningFor, type ThinkingSetting} from '../model/reasoning.js'

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

/** The turns a session takes unless told otherwise: planning explores; a run (or a task) also does the work. */
export const DEFAULT_MAX_TURNS = {plan: 40, run: 60} as const

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
  /** `--max-turns`: the session stops (exit 5) after this many turns; absent, DEFAULT_MAX_TURNS of its kind. */
  maxTurns?: number
  /**
   * `--max-budget-usd` (or a caller's cap, naming where it was set: the forge's WAVE_MAX_BUDGET_USD, what
   * planning left of it): the session stops (exit 5) once it has spent more.
   */
  budget?: BudgetCap
  /** `--fallback-model`: the model asked once the session's is overloaded or unavailable after its retries. */
  fallbackModel?: string
  /** `--deny`, `--disallowed-tools`: deny rules over the settings' (a deny rule only ever narrows). */
  deny?: string[]
  /** `--mcp-config` servers (over the settings'), and `--strict-mcp-config`: only those. */
  mcp?: {servers: Record<string, McpServerConfig>; strict: boolean}
  /** `--append-system-prompt`: the last of the system prompt's own sections. */
  appendSystemPrompt?: string
  /** `--effort`, `--thinking`, `--max-output-tokens` (over the settings'; reasoning.ts has the defaults). */
  effort?: Effort
  thinking?: ThinkingSetting
  maxOutputTokens?: number
  /**
   * `--json-schema`: the model gives the session's result through StructuredOutput, checked against it
   * (for a run, the approval record's when it binds one: useApprovedSchema).
   */
  outputSchema?: OutputSchema
}

interface OpenOptions {
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
  /**
   * The session starts in plan mode (`wave plan`, `--revise`): its Bash's sandbox probes start as soon as
   * the settings are read, and run while the rest of the session opens (primeThrowawayStatus).
   */
  planMode?: boolean
}

/** The approver's model settings (the approval record's `model` section): part of what was approved. */
interface ApprovedModel extends ReasoningChoice {
  model?: string
  fallbackModel?: string
}

export class SessionContext {
  private openedTools?: Promise<SessionTools>
  private madeClient?: Promise<Anthropic>
  /** The look-up of what the model can do (catalog.ts), started once the client is at hand. */
  private known?: Promise<ModelKnowledge>
  private knowledge?: ModelKnowledge
  private modelId: string
  /** What was asked for: the flags over the settings (and the approver's over both, for a run). */
  private choice: ReasoningChoice
  private readonly shapes = new WeakMap<ModelProfile, {reasoning: Reasoning; shape: RequestShape}>()
  private readonly warned = new Set<string>()
  /** The table's profile of the model, made once (a new object each time would be shaped anew each turn). */
  private tableKnown?: ModelProfile
  private beginLookup!: () => void
  /** The alias the model was given as (`--model sonnet`, `ANTHROPIC_MODEL=opus`), until resolved. */
  private alias?: ModelAlias
  /** Settles when the session's first response has begun: the model look-up is sent then, off the first request's path. */
  private readonly responseBegun = new Promise<void>((resolve) => {
    this.beginLookup = resolve
  })

  constructor(
    readonly options: SessionOptions,
    readonly place: SessionPlace,
    /** The settings in force, read once when the session opened: a session never re-reads them. */
    readonly settings: EffectiveSettings,
    model: string,
    /** The repository as the session found it (snapshot.ts); absent for a preview. */
    readonly snapshot: RepositorySnapshot | undefined,
    private readonly inherited?: SessionContext,
  ) {
    const {effort, maxOutputTokens, thinking} = options
    // An alias (`sonnet`) is the table's newest of its family until the API's list says otherwise (resolveAlias).
    this.alias = isModelAlias(model) ? model : undefined
    this.modelId = this.alias ? aliasFromTable(this.alias) : model
    this.choice = {...settings.reasoning, ...defined({effort, maxOutputTokens, thinking})}
    // Checked now, against the table, so that a budget no model of this kind takes fails before any request.
    this.shaped(this.profile())
  }

  /** The model ID: the flag, WAVE_MODEL, the settings or the default (for a run, the approver's when the record names one). */
  get model(): string {
    return this.modelId
  }

  /**
   * Thinking, effort and max_tokens of the session's requests, as far as the model is known now: the
   * flags over the settings, within what the model takes.
   */
  get reasoning(): Reasoning {
    return this.shaped(this.profile()).reasoning
  }

  /** What is known of the model now: the API's answer (fresh or cached) once at hand, else the table's. */
  profile(): ModelProfile {
    this.tableKnown ??= tableProfile(this.model, this.settings.contextWindow)
    return this.knowledge?.current() ?? this.tableKnown
  }

  /**
   * Starts learning what the model can do, once: the client is made (the first request needs it anyway)
   * and catalog.ts answers at once from its cache or the table; the API is asked once the first response
   * has begun (firstResponseBegun). Never
   * rejects: without a client the table answers (the client's own error surfaces where it is used).
   */
  knowModel(): Promise<ModelKnowledge> {
    const {contextWindow} = this.settings
    this.known ??= this.client()
      .then(
        (client) => knowModel({after: this.responseBegun, client, contextWindow, model: this.model}),
        () => knowModel({contextWindow, model: this.model}),
      )
      .then((knowledge) => {
        this.knowledge = knowledge
        return knowledge
      })
    return this.known
  }

  /**
   * An alias as its family's newest model in the API's list, asked once, before the first request (every
   * request, the result and the transcript then name one model); without an answer the table's stands.
   */
  async resolveAlias(): Promise<void> {
    const alias = this.alias
    if (!alias || this.known) return
    this.alias = undefined
    // The progress header and session_start name the model it became: no line of its own.
    const {id} = await resolveAlias(await this.client(), alias)
    if (id !== this.modelId) {
      this.modelId = id
      this.tableKnown = undefined
      this.shaped(this.profile())
    }
  }

  /** The first response of the session has begun (request.ts): the look-up of the model may go now. */
  firstResponseBegun(): void {
    this.beginLookup()
  }

  /** The shape of the next request: the model as known now, the reasoning it takes; a note is warned once. */
  requestShape(): RequestShape {
    const {reasoning, shape} = this.shaped(this.profile())
    for (const note of reasoning.notes) {
      if (this.warned.has(note)) continue
      this.warned.add(note)
      this.host.warn(note)
    }

    return shape
  }

  /**
   * The approver's model settings, from the approval record: what a run runs with. A flag of the run
   * that says otherwise is refused (exit 2) rather than either side winning in silence: as Terraform
   * refuses `-var` with a saved plan, what was approved is applied as approved, or approved again.
   * Flags that agree, or that set what the approver left open, stand.
   */
  useApproved(approved: ApprovedModel | undefined, recordFile: string): void {
    if (!approved) return
    const {options} = this
    const given: Array<[string, unknown, unknown]> = [
      ['model', options.model, approved.model],
      ['effort', options.effort, approved.effort],
      ['thinking', options.thinking, approved.thinking],
      ['max-output-tokens', options.maxOutputTokens, approved.maxOutputTokens],
      ['fallback-model', options.fallbackModel, approved.fallbackModel],
    ]
    for (const [flag, mine, theirs] of given) {
      if (mine === undefined || theirs === undefined || mine === theirs) continue
      throw usageError(
        `--${flag} ${String(mine)} contradicts the approval record ${recordFile}, which approved ${flag} ${String(theirs)}.`,
        `Run without --${flag} to run as approved, or approve the plan again with --${flag} ${String(mine)}.`,
      )
    }

    if (this.known) throw new Error('useApproved after the model look-up started')
    const {fallbackModel, model, ...choice} = approved
    if (fallbackModel) this.options.fallbackModel = fallbackModel
    // What was approved binds: an alias in the record means the table's model of its family, not a newer one the API may list.
    if (model) this.modelId = isModelAlias(model) ? aliasFromTable(model) : model
    this.tableKnown = undefined
    this.choice = {...this.choice, ...defined(choice)}
    this.shaped(this.profile())
  }

  /**
   * The approval record's dollar cap binds the run, whoever runs it: `--max-budget-usd` above it is
   * refused (exit 2, naming both), below it is a tighter bound; without the flag, the record's cap applies
   * (the run's conversation is given it: runSession takes the lowest).
   */
  assertWithinApprovedBudget(approved: number | undefined, recordFile: string): void {
    const given = this.options.budget
    if (approved === undefined || given === undefined || given.usd <= approved) return
    throw usageError(
      `${capName(given)} is above the budget of ${approved} USD in the approval record ${recordFile}: the approved budget binds the run.`,
      `Run without --max-budget-usd to run under the approved ${approved} USD, or with a lower cap.`,
    )
  }

  /**
   * The schema the approval record binds for the run's result (its `outputSchema`): the run's, checked
   * before any request. `--json-schema` of the run that differs from it is refused (exit 2), as a
   * model flag is (useApproved); the same schema, or one where the approver set none, stands.
   */
  async useApprovedSchema(approved: {schema: Record<string, unknown>; sha256: string} | undefined, recordFile: string): Promise<void> {
    if (!approved) return
    const mine = this.options.outputSchema
    if (mine && mine.sha256 !== approved.sha256) {
      throw usageError(
        `--json-schema (sha256 ${mine.sha256.slice(0, 12)}…) contradicts the approval record ${recordFile}, which approved the JSON Schema with sha256 ${approved.sha256.slice(0, 12)}….`,
        'Run without --json-schema to run with the approved schema, or approve the plan again with --json-schema.',
      )
    }

    if (this.openedTools) throw new Error('useApprovedSchema after the tool set was opened')
    this.options.outputSchema = mine ?? (await compileOutputSchema(approved.schema, `The approval record ${recordFile}'s outputSchema`))
  }

  /** The reasoning and request shape for a profile, made once per profile. */
  private shaped(profile: ModelProfile): {reasoning: Reasoning; shape: RequestShape} {
    let made = this.shapes.get(profile)
    if (!made) {
      // An answer that came from the API mid-session lowers a budget it makes too large, rather than failing the session.
      const reasoning = reasoningFor(this.model, this.choice, capabilitiesOfProfile(profile), profile.source === 'api')
      const {betas, contextWindow, maxOutput} = profile
      made = {reasoning, shape: {betas, contextWindow, effort: reasoning.effort, maxOutput, maxTokens: reasoning.maxTokens, thinking: reasoning.thinking}}
      this.shapes.set(profile, made)
    }

    return made
  }

  get host(): SessionHost {
    return this.options.host
  }

  /** The workspace root, a real path. */
  get workspace(): string {
    return this.place.workspace
  }

  /** The sandbox of the session's commands and checks: the choice (an approval's, or --sandbox) with what the settings add. */
  sandboxFor(choice: SandboxChoice, proxy?: string): SandboxSettings {
    return sandboxSettings(choice, this.settings, proxy)
  }

  /** Fails before any request when no credential is set (exit 2). */
  assertCredentials(): void {
    assertCredentials(this.settings.provider)
  }

  /** The session's tool set, opened on first use (plugins load, MCP servers start), closed by close(). */
  tools(): Promise<SessionTools> {
    if (this.inherited) return this.inherited.tools()
    this.openedTools ??= openSessionTools({
      config: this.host.config,
      outputSchema: this.options.outputSchema,
      settings: this.settings,
      toolSearch: toolSearchOn(providerFrom(this.settings.provider)),
      warn: this.host.warn,
      workspace: this.workspace,
    })
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
    // A look-up still running is stopped: no timer or socket of it keeps the process alive.
    void this.known?.then((knowledge) => knowledge.close())
    const tools = this.openedTools
    this.openedTools = undefined
    if (tools) await (await tools.catch(() => undefined))?.close()
  }
}

/** Opens a session's context: place → settings → model → credentials → snapshot, in that order. */
export async function openSession(options: SessionOptions, open: OpenOptions = {}): Promise<SessionContext> {
  const {inherited} = open
  const place = open.place ?? inherited?.place ?? (await sessionPlace(options.cwd, open))
  const settings = inherited?.settings ?? loadSettings(place.workspace, {deny: options.deny, mcpServers: options.mcp?.servers, strictMcp: options.mcp?.strict})
  const model = modelFrom(options.model, settings.model)
  if (open.preview) return new SessionContext(options, place, settings, model, undefined)
  if (open.credentials !== false) {
    assertCredentials(settings.provider)
    // A Claude Code switch honoured or overruled is said once, by the session that reads it.
    const {note} = chooseProvider(settings.provider)
    if (note && !inherited) options.host.warn(note)
  }
  if (open.planMode && settings.planModeBash) primeThrowawayStatus().catch(() => {})
  const snapshot = await sessionSnapshot(place.workspace, {changes: open.changes})
  // A session that sends requests loads node's fetch while it waits on git and the file system below.
  loadFetchSoon()
  const session = new SessionContext(options, place, settings, model, snapshot, inherited)
  if (open.credentials !== false) await session.resolveAlias()
  // A session that runs now reads what it knows of its model: the cache or the table; the API is asked
  // once the first response has begun. A run starts this once its approval is read (the record may name the model).
  if (open.credentials !== false) void session.knowModel()
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
  const guessed = cwd === undefined && !place.repository
  // A session that writes works where the user says, never in a directory guessed for them.
  if (open.outside && guessed) throw notInRepository(place, 'wave run', open.outside.hint)
  try {
    await assertHomeOutsideWorkspace(place.workspace)
  } catch (error) {
    // Started in a directory that is no repository and holds HOME (the home directory itself): the
    // mistake is where wave was started, not where HOME is, so the advice to move HOME would mislead.
    if (guessed) throw notInRepository(place, 'wave plan', 'Start it in a repository, or name the workspace with --cwd DIR.')
    throw error
  }

  return place
}

function notInRepository(place: SessionPlace, command: string, hint: string): WaveError {
  return new WaveError(`${place.cwd} is not inside a git repository: ${command} works at the top of the repository it is started in.`, ExitCode.usage, hint)
}
