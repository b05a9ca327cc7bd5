/**
 * `wave run --task`: the task in the chosen mode, with EnterPlanMode on offer. If the model plans,
 * ExitPlanMode ends the session: with --approve the plan runs in a fresh context, else the command
 * stops with the plan awaiting approval (exit 10).
 */
import {keepOpenQuestions} from '../tools/ask-user-question.js'
import type {AskedQuestion, Todo} from '../base/notes.js'
import {ExitCode, WaveError} from '../base/errors.js'
import {type SessionTotals, type Stopped, stoppedBy} from '../agent/outcome.js'
import {createPlan, planningEnded} from '../plans/lifecycle.js'
import type {RepositoryState} from '../base/workspace/snapshot.js'
import type {PlanMode} from '../session/plan-mode.js'
import {TaskTranscript} from './task-transcript.js'
import type {ExecutionMode} from '../policy/policy.js'
import {describeSandbox, type SandboxChoice} from '../base/process/sandbox.js'
import {assertSandboxForCommands} from '../base/process/runner.js'
import {openSession, type SessionContext, type SessionOptions} from '../session/context.js'
import {outcomeDetails, type StopReason} from '../agent/loop.js'
import type {SessionStart} from './plan.js'
import {taskProfile} from '../session/profiles.js'
import {taskOpening} from '../session/prompts/task.js'
import {filesChangedBy} from './changed-files.js'
import {executePlan, type InlineApproval, type RunOutcome} from './run.js'
import {resultRequired, runSession, type SessionOutcome} from '../session/session.js'
import {roundUsd} from '../model/pricing.js'

interface TaskOptions extends SessionOptions {
  task: string
  mode: ExecutionMode
  allow: string[]
  /** `--sandbox` / `--sandbox-network`: for this session's commands and, with --approve, in the record. */
  sandbox: SandboxChoice
  /** `--approve`: a plan the model makes is approved and executed at once, in a fresh context. */
  approve?: InlineApproval
  /** `--verify-retries`, for the run of an approved plan (executePlan's). */
  verifyRetries?: number
  onStart?(info: SessionStart): void
  onPlanMode?(info: {planPath: string; name: string}): void
}

/** What the task's session did: the totals every session reports, how it ended, and what the model left. */
type TaskTotals = SessionTotals & {
  stopReason: StopReason
  /** Questions the model asked that no one could answer (in a plan, also under its open questions). */
  questions: AskedQuestion[]
  todos: Todo[]
}

type TaskOutcome =
  | ({
      kind: 'completed'
      finalText: string
      filesChanged: string[]
      denials: number
      mode: ExecutionMode
      sandbox: SandboxChoice
    } & TaskTotals)
  | ({kind: 'awaiting_approval'; planPath: string; name: string} & TaskTotals)
  | {kind: 'executed'; planPath: string; name: string; planning: TaskTotals; run: RunOutcome}

export async function runTask(options: TaskOptions): Promise<TaskOutcome | Stopped> {
  // Before the session opens (its settings, git reads): a run granted commands needs a sandbox that starts.
  assertSandboxForCommands(options)
  const session = await openSession(options, {changes: true, outside: {hint: 'Start it in a repository, or name the workspace with --cwd DIR.'}})
  const {model, workspace} = session
  const snapshot = session.snapshot!
  const repository = await snapshot.state()
  // What the task's changes are measured from: read while the first request goes out, and awaited
  // before any tool runs (beforeTools below), so no tool can change the workspace before it is taken.
  const before = repository ? snapshot.changes() : Promise.resolve(new Map<string, string>())
  options.onStart?.({mode: options.mode, model, sandbox: describeSandbox(options.sandbox), workspace})

  const transcript = new TaskTranscript()
  const profile = taskProfile(options.mode, {
    async enter() {
      const dirty = repository?.dirty ?? (await snapshot.dirty())
      const plan = await createPlan({model, repository: repository && {...repository, dirty}, task: options.task, workspace})
      options.onPlanMode?.({name: plan.name, planPath: plan.path})
      await transcript.planMade(plan.path)
      return plan
    },
    exitMessage: options.approve
      ? 'The plan is approved and will be executed in a fresh session. End your turn now.'
      : 'The plan is recorded and awaits approval. End your turn now.',
    workspace,
  })
  const planMode = profile.planMode

  // One tool set for the task and, with --approve, the execution of its plan: MCP servers start once.
  try {
    const result = await runSession(session, {
      ...profile,
      allow: options.allow,
      beforeTools: () => before,
      followUp: resultRequired(() => !planMode.active),
      onCompacted: (messages, compaction) => transcript.planEntry({compacted: messages, compaction}),
      opening: taskOpening(options.task),
      recordAgent: (agent) => transcript.planEntry({agent}),
      sandbox: session.sandboxFor(options.sandbox),
      transcript: (message) => transcript.message(message),
      transcriptPath: () => transcript.path(),
    })
    return await taskEnding(options, session, result, {before, planMode, repository})
  } catch (error) {
    // Thrown (an API failure, an interrupt): a run of the plan reports its own details; the task's session its changes and plan here.
    if (!(error instanceof WaveError) || error.details?.planPath) throw error
    const written = new Set(error.details?.filesChanged ?? [])
    const filesChanged = await filesChangedBy(workspace, await before, written, repository?.root)
    throw error.withDetails({filesChanged, planPath: planMode.planFile?.path ?? null})
  } finally {
    transcript.close()
    await session.close()
  }
}

/** What the task's session ended with: stopped, done in one session, a plan awaiting approval, or the plan approved inline and run. */
async function taskEnding(
  options: TaskOptions,
  session: SessionContext,
  result: SessionOutcome,
  started: {before: Promise<Map<string, string>>; planMode: PlanMode; repository: RepositoryState | null},
): Promise<TaskOutcome | Stopped> {
  const {model, workspace} = session
  const {before, planMode, repository} = started
  const stopped = stoppedBy(result, outcomeDetails(result))
  if (stopped) {
    // What the task changed before it stopped, in workspace terms, and the plan it was making.
    const filesChanged = await filesChangedBy(workspace, await before, result.changed, repository?.root)
    return {...stopped, details: {...stopped.details, filesChanged, planPath: planMode.planFile?.path ?? null}}
  }

  const tally = {
    costUsd: result.costUsd,
    questions: result.questions,
    stopReason: result.stopReason,
    todos: result.todos,
    turns: result.turns,
    usage: result.usage,
  }

  const plan = planMode.planFile
  if (!plan) {
    const filesChanged = await filesChangedBy(workspace, await before, result.changed, repository?.root)
    return {...tally, denials: result.denials, filesChanged, finalText: result.finalText, kind: 'completed', mode: options.mode, sandbox: options.sandbox}
  }

  // A session that ended in plan mode without ExitPlanMode still leaves its plan for review, if it wrote one.
  const problem = await planMode.problem()
  if (problem) {
    const reason = `The session entered plan mode but ended without a plan: ${problem}`
    await planningEnded(plan.path, {ok: false, reason})
    throw new WaveError(reason, ExitCode.runtime)
  }

  await keepOpenQuestions(plan.path, result.questions)
  await planningEnded(plan.path, {costUsd: result.costUsd, ok: true})
  if (!options.approve) return {...tally, kind: 'awaiting_approval', name: plan.name, planPath: plan.path}

  // A run that stopped is the task's ending as it is: it reports its own details.
  const run = await executePlan(
    {
      ...options,
      allowStale: false,
      approve: options.approve,
      // The budget covers both sessions: the run gets what planning left (and says so when it stops there).
      budget: options.budget && {
        // run --task's cap is only ever --max-budget-usd's.
        source: {kind: 'flag', leftOf: options.budget.usd},
        usd: roundUsd(Math.max(0, options.budget.usd - (result.costUsd ?? 0))),
      },
      // The model the task ran with, whatever a settings file it wrote now names.
      model,
      onStart: undefined,
      planPath: plan.path,
    },
    session,
  )
  if (run.kind === 'stopped') return run
  return {kind: 'executed', name: plan.name, planPath: plan.path, planning: tally, run}
}
