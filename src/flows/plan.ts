/**
 * `wave plan --task`, `wave plan --revise` and `wave plan --resume`: a session in plan mode on one plan
 * file, the only file it may write. What differs from other sessions is only the opening message (or,
 * resumed, the conversation so far) and the plan's bookkeeping.
 */
import {lstat, realpath, stat, writeFile} from 'node:fs/promises'

import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'
import path from 'node:path'

import {keepOpenQuestions} from '../tools/ask-user-question.js'
import {approvalPathFor, type ApprovalRecord, readApproval} from '../plans/approval.js'
import {planContractOf} from '../plans/contract.js'
import {createPlan, type PlanSource, planningEnded, planningStarted, readPlanStateChecked, recordDirty} from '../plans/lifecycle.js'
import {ensurePlansDir, isRegularFile, planNameOf, planSidecars, resolvePlanReference} from '../plans/store.js'
import {appendTranscript, type TranscriptContent, transcriptPathOf} from '../plans/transcript.js'
import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {failureOf, type SessionTotals, type Stopped, stoppedBy} from '../agent/outcome.js'
import type {Continuation} from '../model/budget.js'
import {resumablePlanning, resumePoint, unansweredWarning} from '../session/resume.js'
import type {RepositorySnapshot} from '../base/workspace/snapshot.js'
import {openSession, type SessionContext, type SessionOptions} from '../session/context.js'
import {outcomeDetails} from '../agent/loop.js'
import {stateReasoning} from '../model/reasoning.js'
import {planningProfile} from '../session/profiles.js'
import {missingPlanPrompt, planOpening, reviseOpening} from '../session/prompts/plan.js'
import {runSession, type SessionOutcome} from '../session/session.js'
import type {PlanShown} from '../output/views/plan-result.js'
import {planReference} from './run/outcome.js'

export interface SessionStart {
  /** How the session's commands are contained (runs only: plan mode runs none). */
  sandbox?: string
  model: string
  workspace: string
  mode: string
  name?: string
  planPath?: string
}

interface PlanSessionOptions extends SessionOptions {
  /** `--allow` rules, on top of the settings files' (e.g. WebFetch(domain:docs.example.com) for research). */
  allow: string[]
  onStart?(info: SessionStart): void
}

interface PlanOptions extends PlanSessionOptions {
  task: string
}

interface ReviseOptions extends PlanSessionOptions {
  /** The plan's path, or its name as `wave plans` lists it. */
  planPath: string
  feedback?: string
}

interface ResumeOptions extends PlanSessionOptions {
  /** The plan's path, or its name as `wave plans` lists it. */
  planPath: string
}

/** What a plan session made: the plan, its contract and what the session did, as output/views/plan-result.ts shows it. */
export interface PlanOutcome extends PlanShown {
  kind: 'planned'
}

/**
 * `wave plan --task`: a plan-mode session whose one writable file is a freshly named plan. A session
 * stopped before it finished (a limit, a refusal) is returned as it stopped, its plan's state failed.
 */
export async function makePlan(options: PlanOptions): Promise<PlanOutcome | Stopped> {
  const session = await openSession(options, {planMode: true})
  const {model, snapshot, workspace} = session
  const repository = await snapshot!.state()
  // The reasoning recorded is what the first request carries: the model as known from the cache or the table.
  await session.knowModel()
  // The planning session is recorded in the plan's first state: no second write (read, checked, rewritten) before the first request.
  const startedAt = new Date().toISOString()
  const plan = await createPlan({model, planning: {startedAt}, reasoning: stateReasoning(session.reasoning), repository, task: options.task, workspace})
  // In a large work tree `dirty` is not awaited before the first request: recorded once git has it.
  const recorded = repository && repository.dirty === undefined ? recordLater(plan.path, snapshot!) : undefined
  const opening = planOpening(options.task, plan.path)
  return planSession(session, {...options, opening, planPath: plan.path, recorded, startedAt, transcriptLabel: 'plan'})
}

/**
 * `wave plan --revise`: the same plan file, in plan mode again, with the original task and the
 * reviewer's feedback in the first message. Also picks up a session that failed or was interrupted.
 */
export async function revisePlan(options: ReviseOptions): Promise<PlanOutcome | Stopped> {
  const {planPath, record, state} = await ownPlan(options.planPath, 'revised')
  // The record, when there is one, is the authority on the task; the state file is wave's bookkeeping.
  const task = record?.task || state?.task
  if (!task) throw usageError(`Nothing is known of the task behind ${planPath}: it has no approval record with a task, and its state file is missing.`)
  if (record?.task && state?.task && record.task !== state.task) {
    options.host.warn(`The state file of ${planNameOf(planPath)} names another task than its approval record; the record's is used.`)
  }

  const feedback = options.feedback?.trim() || newestFeedback(record)
  const session = await openSession(options, {planMode: true})
  const {workspace} = session
  const planned = record?.repository?.head ?? state?.repository?.head
  const current = await session.snapshot!.head()
  if (planned && current?.head && current.head !== planned) {
    options.host.warn(`The plan was made against commit ${planned.slice(0, 12)}; ${workspace} is at ${current.head.slice(0, 12)}.`)
  }

  const opening = reviseOpening(task, planPath, feedback)
  return planSession(session, {...options, feedback, opening, planPath, startedAt: await started(planPath), transcriptLabel: 'revise'})
}

/**
 * `wave plan --resume`: the plan's newest planning session, stopped before it ended with a plan (a
 * limit, an API failure, an interrupt), goes on in plan mode on the same plan file, its conversation
 * rebuilt from the plan's transcript (session/resume.ts, as `wave run --resume` does): what it read is
 * not read again. Its turns, usage and cost count on from where it stopped, and the caps in force count
 * them too: a cap raised is the session's whole budget.
 */
export async function resumePlan(options: ResumeOptions): Promise<PlanOutcome | Stopped> {
  const {planPath, record, state} = await ownPlan(options.planPath, 'resumed')
  const name = planNameOf(planPath)
  const stopped = resumablePlanning(planPath, state, record?.decidedAt)
  const point = await resumePoint(planPath, {...stopped, kind: 'planning'})
  if (!point.history) {
    throw usageError(
      `Nothing to resume: the transcript of ${name} holds nothing of its planning session (started ${stopped.startedAt}).`,
      `Revise it instead (a new session on the same plan file): wave plan --revise ${name}`,
    )
  }

  const session = await openSession(options, {planMode: true})
  const unanswered = unansweredWarning('planning', point.unanswered)
  if (unanswered) options.host.warn(unanswered)

  await planningStarted(planPath, stopped.startedAt)
  const transcriptLabel = point.session === 'revise' ? 'revise' : 'plan'
  // The resumed conversation replaces the recorded one in the transcript: a second resume starts from it.
  await appendTranscript(planPath, {
    conversation: point.history,
    progress: point.prior,
    resumed: {after: stopped.exitCode ?? null, at: new Date().toISOString()},
    session: transcriptLabel,
    startedAt: stopped.startedAt,
  })
  const opening = typeof point.history[0].content === 'string' ? point.history[0].content : ''
  return planSession(session, {...options, history: point.history, opening, planPath, prior: point.prior, startedAt: stopped.startedAt, transcriptLabel})
}

/** A new planning session of the plan, recorded as its newest: what `--resume` would go on with. */
async function started(planPath: string): Promise<string> {
  const startedAt = new Date().toISOString()
  await planningStarted(planPath, startedAt)
  return startedAt
}

/** How a stopped planning session goes on, as its limit's hint names it: by name, which works from any directory. */
const planContinuation = (planPath: string): Continuation => ({
  command: `wave plan --resume ${planReference(planPath)}`,
  kept: 'the exploration',
  takesFlags: true,
})

interface SessionInput extends PlanSessionOptions {
  planPath: string
  opening: string
  transcriptLabel: 'plan' | 'revise'
  /** When the planning session started: its transcript entries carry it, so `--resume` finds them. */
  startedAt: string
  /** A resumed session: its conversation so far, and what it had spent. */
  history?: MessageParam[]
  prior?: SessionTotals
  /** The plan state's `dirty`, being recorded: awaited before the session's outcome is written. */
  recorded?: Promise<void>
  /** The feedback a revision answers, kept with the revision. */
  feedback?: string
}

/** One planning session on one plan file: only that file is writable, the rest read-only. */
async function planSession(session: SessionContext, input: SessionInput): Promise<PlanOutcome | Stopped> {
  const {planPath} = input
  const {workspace} = session
  const name = planNameOf(planPath)
  input.onStart?.({mode: 'plan', model: session.model, name, planPath, workspace})
  const profile = planningProfile({name, path: planPath}, workspace)
  const planMode = profile.planMode
  // What the session has spent so far, written with each transcript entry: a killed session's resume counts on from it.
  let progress: SessionTotals | undefined = input.prior
  const entry = (fields: TranscriptContent) => appendTranscript(planPath, {...fields, progress, session: input.transcriptLabel, startedAt: input.startedAt})
  const ended = planningEnd(planPath, input.prior)
  let outcome: SessionOutcome
  let corrected = false
  try {
    outcome = await runSession(session, {
      ...profile,
      allow: input.allow,
      // A planning turn that ends without the plan file gets one more turn, naming the file.
      async followUp() {
        if (corrected || !(await planMode.problem())) return undefined
        corrected = true
        return missingPlanPrompt(planPath)
      },
      history: input.history,
      observe(event) {
        if (event.type === 'usage') progress = {costUsd: event.costUsd, turns: event.turn, usage: {...event.usage}}
      },
      onCompacted: (messages, compaction) => entry({compacted: messages, compaction}),
      opening: input.opening,
      prior: input.prior,
      recordAgent: (agent) => entry({agent}),
      transcript: (message) => entry({message}),
      transcriptPath: () => transcriptPathOf(planPath),
    })
  } catch (error) {
    // An API failure or an interrupt: the plan's state says why, and where the plan so far is.
    await input.recorded
    throw await ended.thrown(error, progress)
  } finally {
    await session.close()
  }

  await input.recorded
  const stopped = stoppedBy(outcome, outcomeDetails(outcome))
  if (stopped) {
    await ended.failed(failureOf(stopped).message, failureOf(stopped).exitCode, outcome)
    return {...stopped, details: {...stopped.details, planPath}, goOn: planContinuation(planPath), more: planSoFar(planPath)}
  }

  let planSource: PlanSource = 'plan_file'
  if (await planMode.problem()) {
    // Still no plan file after the corrective turn: a plan given in prose is kept, never lost.
    if (!outcome.finalText.trim() || !(await savedAsPlan(planPath, outcome.finalText))) {
      const reason = `The planning session ended without a plan: ${planPath} ${isRegularFile(planPath) ? 'is empty' : 'was never written'}.`
      await ended.failed(reason, ExitCode.runtime, outcome)
      throw new WaveError(reason, ExitCode.runtime)
    }

    planSource = 'final_message'
    session.host.warn(`The model wrote no plan file: its final message is saved as the plan at ${planPath}. Review it before approving.`)
  }

  await keepOpenQuestions(planPath, outcome.questions)
  await ended.planned(planSource, outcome)
  const {contract, revision} = await planContractOf(planPath, input.feedback, {workspace})
  return {
    contract,
    costUsd: outcome.costUsd,
    kind: 'planned',
    name,
    planPath,
    planSource,
    questions: outcome.questions,
    revision,
    stopReason: outcome.stopReason,
    summary: outcome.finalText,
    todos: outcome.todos,
    turns: outcome.turns,
    usage: outcome.usage,
  }
}

/** Where the plan so far is, said after a stopped session's line. */
const planSoFar = (planPath: string) => (isRegularFile(planPath) ? ` The plan so far is at ${planPath}.` : '')

/** The exits a planning session that threw goes on from with --resume: an API failure, an interrupt, a limit. */
const RESUMABLE_PLANNING = new Set<number>([ExitCode.runtime, ExitCode.limit, ExitCode.interrupted, ExitCode.terminated])

/**
 * How a planning session's end is recorded in the plan's state: the plan's planning cost grows by what
 * this session (or its resumed part, `prior` being what the earlier part spent) cost, and the newest
 * planning session's record gets its exit code and the whole session's totals, which `--resume` counts on from.
 */
function planningEnd(planPath: string, prior: SessionTotals | undefined) {
  const partOf = (totals: SessionTotals | undefined): number | null | undefined => {
    const total = totals?.costUsd
    if (total === undefined) return undefined
    if (total === null || prior?.costUsd === null) return null
    return Math.max(0, total - (prior?.costUsd ?? 0))
  }
  return {
    failed: (reason: string, exitCode: number, totals: SessionTotals) =>
      planningEnded(planPath, {costUsd: partOf(totals), ended: {exitCode, ...totals}, ok: false, reason}),
    planned: (planSource: PlanSource, totals: SessionTotals) =>
      planningEnded(planPath, {
        costUsd: partOf(totals),
        ended: {exitCode: ExitCode.ok, ...totals},
        ok: true,
        ...(planSource === 'final_message' ? {planSource} : {}),
      }),
    /** A thrown session (an API failure, an interrupt): recorded, and the error said with where the plan so far is and how to go on. */
    async thrown(error: unknown, progress: SessionTotals | undefined): Promise<unknown> {
      const reason = error instanceof Error ? error.message : String(error)
      const details = error instanceof WaveError ? error.details : undefined
      const totals = details?.turns === undefined ? progress : {costUsd: details.costUsd ?? null, turns: details.turns, usage: details.usage!}
      const exitCode = error instanceof WaveError ? error.exitCode : ExitCode.runtime
      await planningEnded(planPath, {costUsd: partOf(totals), ended: {exitCode, ...totals}, ok: false, reason})
      if (!(error instanceof WaveError)) return error
      const goOn = RESUMABLE_PLANNING.has(error.exitCode) ? `Go on with the exploration kept: ${planContinuation(planPath).command}.` : undefined
      const hint = [error.hint, goOn].filter(Boolean).join(' ') || undefined
      const said = new WaveError(error.message + planSoFar(planPath), error.exitCode, hint, {...error.details, planPath})
      said.stack = error.stack
      return said
    },
  }
}

/** Writes the final message as the plan, only where no plan file is (a file that appeared since is the model's). */
async function savedAsPlan(planPath: string, text: string): Promise<boolean> {
  try {
    await writeFile(planPath, text.trim() + '\n', {flag: 'wx', mode: 0o600})
    return true
  } catch {
    return false
  }
}

/** Records the plan's `dirty` once the snapshot has it; a failure leaves it unrecorded (the plan goes on). */
async function recordLater(planPath: string, snapshot: RepositorySnapshot): Promise<void> {
  const dirty = await snapshot.dirty()
  if (dirty !== undefined) await recordDirty(planPath, dirty).catch(() => {})
}

/** The plan `--revise` or `--resume` names, with its state and its approval record (if it has one). */
async function ownPlan(reference: string, verb: 'revised' | 'resumed') {
  const planPath = await planInPlansDir(await resolvePlanReference(reference, {unwritten: true}), verb)
  const state = await readPlanStateChecked(planPath)
  const record = await readApproval(approvalPathFor(planPath), planPath).catch(() => undefined)
  return {planPath, record, state}
}

/** A plan to revise or resume must be one of wave's: a regular file (or a plan still to write) in the plans directory. */
async function planInPlansDir(given: string, verb: 'revised' | 'resumed'): Promise<string> {
  const dir = await ensurePlansDir()
  const absolute = path.resolve(given)
  const parent = await existingDir(path.dirname(absolute))
  const planPath = parent ? path.join(parent, path.basename(absolute)) : absolute
  if (path.dirname(planPath) !== dir || !planPath.endsWith('.md')) {
    throw usageError(`${given} is not a plan in ${dir}: only wave's own plans can be ${verb}.`)
  }

  const [plan, state] = await Promise.all([lstat(planPath).catch(() => undefined), stat(planSidecars(planPath).state).catch(() => undefined)])
  if (!plan && !state) throw usageError(`Plan not found: ${given}`)
  if (plan && !plan.isFile()) throw usageError(`The plan ${given} is not a regular file.`)
  return planPath
}

function newestFeedback(record: ApprovalRecord | undefined): string | undefined {
  if (!record) return undefined
  const decisions = [...record.history].reverse()
  const wanted = decisions.find((entry) => entry.decision !== 'approved' && entry.feedback)
  return wanted?.feedback ?? (record.decision === 'approved' ? undefined : (record.feedback ?? undefined))
}

async function existingDir(dir: string | undefined): Promise<string | undefined> {
  if (!dir) return undefined
  try {
    return (await stat(dir)).isDirectory() ? await realpath(dir) : undefined
  } catch {
    return undefined
  }
}
