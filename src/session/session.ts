/**
 * One conversation of a session, whatever drives it (a plan, a revision, a run of an approved plan, `run
 * --task`): the policy and the system prompt built, the transcript wired, the loop bound to a way to make
 * requests and a way to run the turn's calls, and run. The drivers (plan.ts, run.ts, task.ts) keep only
 * what differs: the opening message, the plan bookkeeping, what an outcome means for them.
 */
import {randomUUID} from 'node:crypto'

import type Anthropic from '@anthropic-ai/sdk'
import type {Message, MessageParam} from '@anthropic-ai/sdk/resources/messages'

import type {BackgroundTasks} from '../tools/background.js'
import type {ToolRegistry} from '../tools/registry.js'
import type {AskedQuestion, Todo} from '../base/notes.js'
import type {SessionNotes} from '../tools/notes.js'
import type {AgentLauncher, SessionControl} from '../tools/tool.js'
import {type CommandWatch, turnExecutor} from '../tools/turn.js'
import {STRUCTURED_OUTPUT_TOOL, type StructuredResult, structuredOutputReminder} from '../tools/structured-output.js'
import {SessionHooks} from '../tools/hooks/session-hooks.js'
import {ExitCode, WaveError} from '../base/errors.js'
import {offered, parseRules, rulesNamingNoTool, type PlanBash, type PolicyContext, readDenials} from '../policy/policy.js'
import {DEFAULT_SANDBOX, primeThrowawayStatus, type SandboxSettings} from '../base/process/sandbox.js'
import {protectedPathsWith} from '../policy/protected.js'
import type {Scope} from '../policy/scope.js'
import {DEFAULT_MAX_TURNS, type SessionContext} from './context.js'
import {environmentSection, readEnvironment} from './environment.js'
import {instructionsSections, readInstructionFiles} from './instructions.js'
import {type AgentEvent, AgentLoop, type CompactionEvent, type LoopOptions} from '../agent/loop.js'
import type {AgentOutcome, SessionTotals} from '../agent/outcome.js'
import {budgetPriceOf} from '../model/pricing.js'
import {type BudgetCap, lowestCap} from '../model/budget.js'
import type {SessionProfile} from './profiles.js'
import {type SystemPrompt, turnRequest} from '../agent/request.js'
import type {SessionSpend} from '../agent/spend.js'
import {type AgentRecord, Subagents} from './subagents.js'
import {AGENT_TOOL, agentKinds} from './agents.js'
import {planBashOf} from './plan-mode.js'

export type {SessionHost, SessionOptions} from './context.js'

/** What one conversation of a session is, besides its context: its kind (profile), rules, sandbox and messages. */
export interface ConversationSpec extends SessionProfile {
  /** Rules beyond the settings files': `--allow` flags, or an approval record's `allow`. */
  allow: string[]
  /** The OS sandbox of the session's commands (the approval record's, or --sandbox); absent: on, no network. */
  sandbox?: SandboxSettings
  /** The first user message. */
  opening: string
  /**
   * A resumed session: the conversation to go on with instead of the opening (ending with a user
   * message), already in the transcript, so not written to it again.
   */
  history?: MessageParam[]
  /** What the session's earlier part spent (a resumed run): turns, usage and cost go on counting from it. */
  prior?: SessionTotals
  /** Appends a message to the transcript (the opening included). */
  transcript(message: MessageParam): Promise<void>
  /** The transcript's file now, which hooks are given as `transcript_path` (Claude Code always gives one). */
  transcriptPath(): string
  /** After a compaction replaced the conversation: the transcript records the new starting point. */
  onCompacted?(messages: MessageParam[], compaction: CompactionEvent): Promise<void>
  /** Awaited before the first tool call runs: what must be read of the workspace before any tool can change it. */
  beforeTools?(): Promise<unknown>
  /** Told of every event before the host is. */
  observe?(event: AgentEvent): void
  /** What to do when the model ends a turn without tool calls (loop.ts, FollowUp). */
  followUp?: LoopOptions['followUp']
  /** The approved scope every write is held to (a run's approval record). */
  scope?: Scope
  /** The protected paths in force (a run's: the record's and the settings'); absent, the defaults and the settings'. */
  protectedPaths?: readonly string[]
  /** The approval's dollar cap (`wave approve --max-budget-usd`, or a unit's): the lowest of it, the flag's and the settings' applies. */
  budget?: BudgetCap
  /** Around each allowed command: what it changed outside the scope (enforcement.ts). */
  commandWatch?: CommandWatch
  /** Around each firing of hooks: what they write where git ignores it is theirs, not the model's (enforcement.ts). */
  hookWatch?<T>(run: () => Promise<T>): Promise<T>
  /** When the model ends its turn: the approved checks, and a message for another turn when they fail. */
  onEndTurn?(): Promise<string | undefined>
  /** Records an agent's conversation once it ended, nested under the Agent call that started it. */
  recordAgent?(agent: AgentRecord): Promise<void>
}

/** How a conversation ended, with what the model left for the people behind it: its questions and to-do list. */
export type SessionOutcome = AgentOutcome & {
  /** Questions the model asked in this conversation that no one could answer (AskUserQuestion). */
  questions: AskedQuestion[]
  /** The model's to-do list as the conversation left it (TodoWrite). */
  todos: Todo[]
}

export async function runSession(session: SessionContext, spec: ConversationSpec): Promise<SessionOutcome> {
  const {host, options, settings} = session
  // The prompt's context (git, the instruction files) is read while the tools load.
  const prompt = sessionPrompt(session, spec)
  prompt.catch(() => {}) // awaited below, unless opening the tools fails first
  const tools = await session.tools()
  const built = await prompt
  // Plan mode's sandbox probes, started in the background, settle before anything asks the policy: asked
  // sooner, planBash would start bwrap again, synchronously, on the way to the first request.
  await built.ready
  for (const rule of rulesNamingNoTool(built.policy().rules, tools.registry.tools))
    host.warn(`The rule ${rule.source} names no tool of this session: it governs nothing.`)
  const {planBash, system} = built
  // Read tools may read the session's background output files (their paths are given when they start).
  const policy = (): PolicyContext => ({...built.policy(), taskOutputs: tools.tasks.outputDir})
  // The settings' maxBudgetUsd caps every session too: the lowest applies, and the ending names which it was (the flag's on a tie).
  const budget = lowestCap(options.budget, settings.budget, spec.budget)
  const budgetNote = budget === undefined ? undefined : budgetPriceOf(session.model, settings.prices).note
  if (budgetNote) host.warn(budgetNote)
  const onEvent = (event: AgentEvent) => {
    spec.observe?.(event)
    host.onEvent?.(event)
  }

  const hooks = new SessionHooks(settings.hooks, {
    around: spec.hookWatch,
    mode: () => policy().mode,
    onEvent,
    sandbox: spec.sandbox,
    sessionId: randomUUID(),
    signal: host.signal,
    transcriptPath: spec.transcriptPath,
    warn: host.warn,
    workspace: session.workspace,
  })
  const messages = await openingMessages(spec, hooks)
  if (!spec.history) await spec.transcript(messages[0])

  // A tool set shared by two conversations (run --task --approve) reports to, and counts questions for, the one running.
  const unlisten = tools.notes.listen(onEvent)
  const result = structuredGate(tools.result, spec, onEvent)
  const askedBefore = tools.notes.questions.length
  const sandbox = sessionSandbox(session, spec, tools.skills)
  try {
    const client = await session.client()
    // At once: the cached answer or the table's; the API's, asked once the first response has begun, shapes the turns after it comes.
    await session.knowModel()
    const outcome = await agentLoop({
      agents: (parent) =>
        new Subagents({
          charge: parent.charge,
          spend: parent.spend,
          client,
          hooks,
          kinds: (planMode) => agentKinds({planBash, planMode, policy, registry: tools.registry, sandbox, tasks: tools.tasks}),
          limits: settings.agents,
          budget,
          model: session.model,
          onEvent,
          prices: settings.prices,
          record: spec.recordAgent,
          shape: () => session.requestShape(),
        }),
      beforeTools: spec.beforeTools,
      client,
      commandWatch: spec.commandWatch,
      onEndTurn: spec.onEndTurn,
      budget,
      followUp: result.followUp,
      maxTurns: options.maxTurns ?? DEFAULT_MAX_TURNS[spec.mode === 'plan' ? 'plan' : 'run'],
      messages,
      model: session.model,
      onCompacted: spec.onCompacted,
      onEvent,
      onMessage: spec.transcript,
      fallbackModel: options.fallbackModel,
      onResponseBegun: () => session.firstResponseBegun(),
      policy,
      prices: settings.prices,
      prior: spec.prior,
      registry: tools.registry,
      sandbox,
      session: spec.planMode,
      shape: () => session.requestShape(),
      signal: host.signal,
      // A hook that answered `continue: false` ends the session after the step it was asked about.
      stopRequested: () => result.failed() ?? ((spec.planMode.finished && !result.due()) || hooks.halted !== undefined),
      system,
      tasks: tools.tasks,
      notes: tools.notes,
      hooks,
    }).run()
    return {...outcome, questions: tools.notes.questions.slice(askedBefore), todos: tools.notes.todos}
  } finally {
    unlisten()
    result.close()
    if (hooks.has('SessionEnd')) await hooks.sessionEnd('other')
    hooks.close()
  }
}

/**
 * The sandbox the session's commands run in. A planning session has no approval to take one from: the
 * default one, made as every other is (sandboxFor: the settings' environment and size; dispatch.ts makes
 * plan mode's commands throwaway). The user's skills' folders lie outside the workspace, under a $HOME the
 * sandbox hides: bound in read-only, so their scripts run.
 */
function sessionSandbox(session: SessionContext, spec: ConversationSpec, skills: ReadonlyArray<{location: string; dir: string}>): SandboxSettings {
  const skillFolders = skills.filter((skill) => skill.location === 'user').map((skill) => skill.dir)
  return {
    ...(spec.sandbox ?? session.sandboxFor(DEFAULT_SANDBOX)),
    ...(skillFolders.length > 0 ? {readOnly: skillFolders} : {}),
  }
}

/**
 * The conversation a session starts with: the opening (or the resumed history), with what the
 * SessionStart and UserPromptSubmit hooks add. A prompt a hook blocks is not sent (exit 2).
 */
async function openingMessages(spec: ConversationSpec, hooks: SessionHooks): Promise<MessageParam[]> {
  const context = hooks.has('SessionStart') ? await hooks.sessionStart(spec.history ? 'resume' : 'startup') : []
  if (spec.history) {
    const messages = [...spec.history]
    if (context.length > 0) messages.push(withText(messages.pop()!, context.join('\n\n')))
    return messages
  }

  if (hooks.has('UserPromptSubmit')) {
    const answer = await hooks.userPromptSubmit(spec.opening)
    if (answer.blocked) throw new WaveError(answer.blocked, ExitCode.usage, 'The prompt was not sent to the model: change the task, or the hook.')
    context.push(...answer.notes)
  }

  return [{content: [spec.opening, ...context].join('\n\n'), role: 'user'}]
}

/** A user message with `text` added at its end. */
function withText(message: MessageParam, text: string): MessageParam {
  if (typeof message.content === 'string') return {...message, content: `${message.content}\n\n${text}`}
  return {...message, content: [...message.content, {text, type: 'text'}]} as MessageParam
}

type StructuredFailure = {stopReason: 'structured_output'; tries: number; problem: string}

/**
 * `--json-schema`: the session ends only once the model gave its result through StructuredOutput, matching
 * the schema, or ran out of tries (STRUCTURED_OUTPUT_TRIES: each call that did not match, and each ending
 * without the call after one reminder), which ends it with the newest problem (exit 6). The planning half
 * of `run --task`, once its plan is finished, hands the task on (to approval, or to the run that follows):
 * its result is the plan. Without a schema, the conversation's own follow-up alone.
 */
function structuredGate(result: StructuredResult | undefined, spec: ConversationSpec, onEvent: (event: AgentEvent) => void) {
  if (!result) return {close() {}, due: () => false, failed: () => undefined, followUp: spec.followUp}
  result.begin()
  const close = result.listen((value) => onEvent({type: 'structured_output', value}))
  const handsOn = () => spec.planMode.finished && spec.planMode.enteredByModel
  const failure = (): StructuredFailure => ({problem: result.lastProblem, stopReason: 'structured_output', tries: result.failures})
  return {
    close,
    /** The session may not end yet: no result given. */
    due: () => !result.given && !handsOn(),
    /** Out of tries: the ending. */
    failed: () => (result.exhausted && !handsOn() ? failure() : undefined),
    followUp: ((turn) => {
      if (handsOn()) return spec.followUp?.(turn)
      if (result.exhausted) return failure()
      // Given: the structured result is the session's answer, whatever its last text said.
      if (result.given) return undefined
      if (!result.reminded) {
        result.reminded = true
        return structuredOutputReminder(result.left)
      }

      const left = result.fail(`the model ended without calling ${STRUCTURED_OUTPUT_TOOL}`)
      return left === 0 ? failure() : structuredOutputReminder(left)
    }) satisfies NonNullable<ConversationSpec['followUp']>,
  }
}

const CONTINUE_NUDGE =
  'Your last turn was empty. Continue the task: carry on with the next step, or, if the work is done, reply with a summary of what you did and its result.'

/**
 * A run's answer to a turn that ends with nothing said: one nudge to continue, then the session ends
 * without a result (exit 6), never as a silent success. `when` limits it (a task in plan mode ends as it did).
 */
export function resultRequired(when: () => boolean = () => true): NonNullable<ConversationSpec['followUp']> {
  let nudged = false
  return ({text}) => {
    if (text.trim() || !when()) return undefined
    if (nudged) return {stopReason: 'no_result'}
    nudged = true
    return CONTINUE_NUDGE
  }
}

/** What a loop is bound to: the client to ask, the tools and policy to run calls with. */
export interface LoopBinding extends Omit<LoopOptions, 'execute' | 'hooks' | 'offer' | 'request'> {
  /** The session's hooks: the executor fires the tool events, the loop Stop and PreCompact. */
  hooks?: SessionHooks
  client: Anthropic
  registry: ToolRegistry
  /** The policy in force; read every turn, since a control tool may change the mode. */
  policy(): PolicyContext
  /** What control tools may do (plan mode). */
  session: SessionControl
  sandbox?: SandboxSettings
  commandWatch?: CommandWatch
  /** The session's background commands and notes, from its tool set. */
  tasks?: BackgroundTasks
  notes?: SessionNotes
  /** A response has begun (request.ts): the session's model look-up waits for the first (context.ts). */
  onResponseBegun?(): void
  /** The session's agents (the Agent tool), made once the loop they charge exists; absent: none. */
  agents?(parent: {charge(usage: Message['usage']): void; spend(): SessionSpend | undefined}): AgentLauncher
  /** `--fallback-model`: asked once the model is overloaded or unavailable after its retries (request.ts). */
  fallbackModel?: string
}

/** The loop, bound once to a way to make a request and a way to run the turn's calls. */
export function agentLoop(binding: LoopBinding): AgentLoop {
  const {agents: makeAgents, client, commandWatch, fallbackModel, hooks, notes, onResponseBegun, policy, registry, sandbox, session, tasks, ...loop} = binding
  const onEvent = (event: AgentEvent) => loop.onEvent?.(event)
  // What the agents spend is the session's: charged to this loop's tally as each of their responses comes.
  let self: AgentLoop | undefined
  const agents = makeAgents?.({charge: (usage) => self?.charge(usage), spend: () => self?.spend})
  self = new AgentLoop({
    ...loop,
    hooks: hooks && {
      preCompact: (trigger) => hooks.preCompact(trigger),
      stop: (active, lastMessage) => (hooks.has('Stop') ? hooks.stop(active, lastMessage) : Promise.resolve(undefined)),
    },
    // Reads run together, anything else alone and in order (src/tools/turn.ts); each call reported as it starts and ends.
    execute: turnExecutor(
      {agents, commandWatch, hooks, notes, policy, registry, sandbox, session, signal: loop.signal, tasks},
      {
        ended: (call, result) =>
          onEvent({
            content: result.content,
            denied: result.denied,
            id: call.id,
            isError: result.isError,
            name: call.name,
            type: 'tool_result',
            ...(result.changed ? {changed: result.changed} : {}),
          }),
        started: (call) => onEvent({id: call.id, input: call.input, name: call.name, type: 'tool_call'}),
      },
    ),
    offer() {
      const now = policy()
      return {mode: now.mode, tools: registry.apiTools(now)}
    },
    request: turnRequest({
      client,
      model: loop.model,
      fallbackModel,
      onFallback: ({from, reason, to}) => onEvent({from, reason, to, type: 'fallback'}),
      onResponseBegun,
      onRetry: ({attempt, reason}) => onEvent({attempt, reason, type: 'retry'}),
      signal: loop.signal,
    }),
  })
  return self
}

/** What decides a session's system prompt and tools besides its context: its kind and its rules. */
type PromptSpec = SessionProfile & {allow: string[]; scope?: Scope; protectedPaths?: readonly string[]}

/** What a session sends the model besides the conversation, turn by turn. */
interface SessionPrompt {
  /** The policy in force this turn (EnterPlanMode changes it); the registry offers the tools it allows. */
  policy(): PolicyContext
  /** The system prompt, the same every turn: the part sessions share, then the session's own (request.ts). */
  system(): Promise<SystemPrompt>
  /** Whether plan mode (and Explore agents) run Bash here, and how; asked once, when first needed. */
  planBash(): PlanBash
  /** Settles once what the first request needs to know is known: a session starting in plan mode probes its sandbox meanwhile. */
  ready: Promise<void>
}

/**
 * The one place a session's system prompt and policy are built: runSession sends what this gives, and
 * `wave prompt` prints it (src/app/preview.ts), so what a user reviews is what the model gets.
 */
export async function sessionPrompt(session: SessionContext, spec: PromptSpec): Promise<SessionPrompt> {
  const {planMode} = spec
  const {settings} = session
  // A session that starts in plan mode asks planBash before its first request: its sandbox probes run
  // while the rest of the session loads, not one after the other on the way to that request.
  const ready = planMode.active && settings.planModeBash ? primeThrowawayStatus() : Promise.resolve()
  // Deny rules come from the settings files only; allow rules add up, and a deny always wins.
  const rules = parseRules([...settings.allow, ...spec.allow], settings.deny, settings.ask)
  const base: PolicyContext = {
    headless: true,
    mode: spec.mode,
    protectedPaths: spec.protectedPaths ?? protectedPathsWith(settings.protectedPaths),
    rules,
    scope: spec.scope,
    ...(spec.checks?.length ? {approvedChecks: spec.checks} : {}),
    structuredOutput: session.options.outputSchema !== undefined,
    workspaceRoot: session.workspace,
  }
  // Built once: the system prompt must not change between turns, or the prompt cache is lost.
  const context = await sessionContext(session, base)
  const own = spec.system(rules)
  // Asked when plan mode (or an Explore agent) first needs it: a run that never plans starts no probe.
  let planBash: PlanBash | undefined
  const planBashNow = () => (planBash ??= planBashOf(settings))
  const policy = (): PolicyContext => planMode.policy(base, planBashNow)

  return {
    planBash: planBashNow,
    policy,
    ready,
    system: async () => {
      if (!planMode.active) return {session: context.session, shared: [own, context.shared].filter(Boolean).join('\n\n')}
      return planMode.prompt(context, {agents: offered(policy(), AGENT_TOOL), bash: planBashNow()})
    },
  }
}

/**
 * What every session's system prompt carries besides its mode's own text: the repository's and the
 * settings' instructions, the same for every session in the repository (`shared`), and the environment,
 * this session's own (`session`: date, git status). Plan mode puts its reminder after them both.
 */
async function sessionContext(session: SessionContext, policy: PolicyContext): Promise<SystemPrompt> {
  const {place, workspace} = session
  // Names a Read(...) deny rule hides from the tools are not named in the environment block either.
  const denied = readDenials(policy, {access: 'read', name: 'LS'})
  const environment = readEnvironment({hidden: (absolute) => denied({absolute, real: absolute}), repository: session.snapshot?.summary(), workspace})
  // The repository's AGENTS.md / CLAUDE.md files are read from its top (else the workspace) down to where the command started.
  const top = place.repository ?? workspace
  const instructions = instructionsSections({
    appended: session.options.appendSystemPrompt,
    repository: await readInstructionFiles(top, place.cwd ?? workspace),
    settings: session.settings.instructions,
  })
  if (instructions.cut) session.host.warn(instructions.cut)
  return {session: environmentSection(await environment), shared: instructions.text}
}
