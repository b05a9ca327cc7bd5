/**
 * `wave run --task`: the task in the chosen mode, with EnterPlanMode on offer. If the model plans,
 * ExitPlanMode ends the session: with --approve the plan runs in a fresh context, else the command
 * stops with the plan awaiting approval (exit 10).
 */
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'

import {keepOpenQuestions} from '../tools/ask-user-question.js'
import type {AskedQuestion, Todo} from '../base/notes.js'
import {ExitCode, WaveError} from '../base/errors.js'
import {type SessionTotals, type Stopped, stoppedBy} from '../agent/outcome.js'
import {createPlan, planningEnded} from '../plans/lifecycle.js'
import {appendTranscript, appendTranscriptFile, transcriptPathOf} from '../plans/transcript.js'
import type {ExecutionMode} from '../policy/policy.js'
import {describeSandbox, type SandboxChoice} from '../base/process/sandbox.js'
import {assertSandboxForCommands} from '../base/process/runner.js'
import {openSession, type SessionOptions} from '../session/context.js'
import {outcomeDetails, type StopReason} from '../agent/loop.js'
import type {SessionStart} from './plan.js'
import {taskProfile} from '../session/profiles.js'
import {taskOpening} from '../session/prompts/task.js'
import {filesChangedBy} from './changed-files.js'
import {executePlan, type InlineApproval, type RunOutcome} from './run.js'
import {resultRequired, runSession} from '../session/session.js'
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

export type TaskOutcome =
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

  // Until the model enters plan mode there is no plan to keep a transcript beside: hold the messages.
  const held: MessageParam[] = []
  let planPath: string | undefined
  // Hooks are always given a transcript (as Claude Code gives one): until there is a plan, the held
  // messages in a file of the task's own outside the workspace, made when a hook first asks, removed when the task ends.
  let early: string | undefined
  const transcriptPath = () => {
    if (planPath) return transcriptPathOf(planPath)
    if (!early) {
      early = path.join(mkdtempSync(path.join(tmpdir(), 'wave-task-')), 'transcript.jsonl')
      writeFileSync(early, '', {mode: 0o600})
      for (const message of held) appendTranscriptFile(early, {message, session: 'task'})
    }

    return early
  }
  const profile = taskProfile(options.mode, {
    async enter() {
      const dirty = repository?.dirty ?? (await snapshot.dirty())
      const plan = await createPlan({model, repository: repository && {...repository, dirty}, task: options.task, workspace})
      planPath = plan.path
      options.onPlanMode?.({name: plan.name, planPath: plan.path})
      for (const message of held) await appendTranscript(plan.path, {message, session: 'task'})
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
      async onCompacted(messages, compaction) {
        if (planPath) await appendTranscript(planPath, {compacted: messages, compaction, session: 'task'})
      },
      opening: taskOpening(options.task),
      async recordAgent(agent) {
        if (planPath) await appendTranscript(planPath, {agent, session: 'task'})
      },
      sandbox: session.sandboxFor(options.sandbox),
      async transcript(message) {
        held.push(message)
        if (planPath) await appendTranscript(planPath, {message, session: 'task'})
        else if (early) appendTranscriptFile(early, {message, session: 'task'})
      },
      transcriptPath,
    })
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
  } catch (error) {
    // Thrown (an API failure, an interrupt): a run of the plan reports its own details; the task's session its changes and plan here.
    if (!(error instanceof WaveError) || error.details?.planPath) throw error
    const written = new Set(error.details?.filesChanged ?? [])
    const filesChanged = await filesChangedBy(workspace, await before, written, repository?.root)
    throw error.withDetails({filesChanged, planPath: planMode.planFile?.path ?? null})
  } finally {
    if (early) rmSync(path.dirname(early), {force: true, recursive: true})
    await session.close()
  }
}
