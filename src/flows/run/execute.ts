import {ExitCode, WaveError} from '../../base/errors.js'
import {describeSandbox} from '../../base/process/sandbox.js'
import {displayPath} from '../../base/workspace/paths.js'
import {outcomeDetails} from '../../agent/loop.js'
import {failureOf, type Stopped, stoppedBy} from '../../agent/outcome.js'
import {DEFAULT_VERIFY_RETRIES, Enforcement} from '../../plans/enforcement.js'
import type {PlanRun} from '../../plans/lifecycle.js'
import {checkLogs, planNameOf} from '../../plans/store.js'
import {appendTranscript, type TranscriptContent, transcriptPathOf} from '../../plans/transcript.js'
import {approvedBudget} from '../../plans/unit-result.js'
import type {ApprovalRecord} from '../../plans/approval.js'
import {protectedPathsWith} from '../../policy/protected.js'
import type {SessionContext} from '../../session/context.js'
import {runProfile} from '../../session/profiles.js'
import {runOpening} from '../../session/prompts/run.js'
import {unitOpening} from '../../session/prompts/unit.js'
import {resumePoint, unansweredWarning} from '../../session/resume.js'
import {type ConversationSpec, resultRequired, runSession, type SessionOutcome} from '../../session/session.js'
import {filesChangedBy, sidecarsOf, union} from '../changed-files.js'
import type {Prepared} from './gates.js'
import type {RunOptions} from './options.js'
import {type RunOutcome, resumable, resumeHint} from './outcome.js'
import {newRun, type RunEnd, recordEnd, saveRun} from './record.js'

type ResumePoint = Awaited<ReturnType<typeof resumePoint>>

/** The run as it goes: its record, what it started from, and what the session has changed and spent so far. */
interface Live {
  name: string
  run: PlanRun
  /** The files a resumed run had already changed. */
  earlierFiles: string[]
  /** What the run's changes are measured from (the repository's changed paths as the run began). */
  before: Promise<Map<string, string>>
  opening: string
  point: ResumePoint | undefined
  /** What the run has spent so far, written with each transcript entry: a killed run's resume counts on from it. */
  progress: ResumePoint['prior'] | undefined
  /** What the model changed, as of the last time the checks ran: what the checks themselves write is not the run's. */
  beforeChecks?: string[]
  changed: Set<string>
}

/** The run past its gates: recorded as running, the session with the approved contract, then its end recorded. */
export async function execute(session: SessionContext, options: RunOptions, prepared: Prepared): Promise<RunOutcome | Stopped> {
  const {planPath} = options
  const live = await startRun(session, options, prepared)
  const entry = (fields: TranscriptContent) => appendTranscript(planPath, {...fields, progress: live.progress, session: 'run', startedAt: live.run.startedAt})
  const enforcement = await enforcementOf(session, options, prepared)
  const end: RunEnd = {exitCode: ExitCode.runtime}
  try {
    // The resumed conversation replaces the recorded one in the transcript: a second resume starts from it.
    if (live.point?.history) {
      await entry({conversation: live.point.history, resumed: {after: prepared.resumed?.exitCode ?? null, at: new Date().toISOString()}})
    }
    const result = await runSession(session, conversationOf(session, planPath, prepared, live, enforcement, entry))
    live.changed = result.changed
    end.finished = await outcomeOf(session, options, prepared, live, enforcement, result, entry)
    end.exitCode = end.finished.kind === 'ran' ? ExitCode.ok : failureOf(end.finished).exitCode
    return end.finished
  } catch (error) {
    end.thrown = await failedRun(session, options, prepared, live, enforcement, error)
    end.exitCode = end.thrown.exitCode
    throw end.thrown
  } finally {
    await recordEnd(session, options, prepared, live.run, end)
  }
}

/** The run's opening and its record, written as running once nothing but the session itself can fail. */
async function startRun(session: SessionContext, options: RunOptions, prepared: Prepared): Promise<Live> {
  const {planPath} = options
  const {record, resumed, units} = prepared
  const name = planNameOf(planPath)
  // What the run's changes are measured from: read while the first request goes out, and awaited
  // before any tool runs (beforeTools), so no tool can change the workspace before it is taken.
  const before = prepared.current ? session.snapshot!.changes() : Promise.resolve(new Map<string, string>())
  const run = newRun(prepared)
  const earlierFiles = [...run.changedFiles]
  // The task comes from the record alone: the state file beside a plan is bookkeeping, not authority.
  const opening = units
    ? unitOpening(
        record.task,
        name,
        record.plan.sha256,
        prepared.text,
        units.unit,
        (units.decided.units ?? []).map((other) => other.name).filter((other) => other !== units.unit.name),
      )
    : runOpening(record.task, name, record.plan.sha256, prepared.text)
  const point = resumed ? await resumePoint(planPath, {...resumed, kind: 'run'}, opening) : undefined
  options.onStart?.({mode: record.mode, model: session.model, name, planPath, sandbox: describeSandbox(record.sandbox), workspace: session.workspace})
  const unanswered = point && unansweredWarning('run', point.unanswered)
  if (unanswered) options.host.warn(unanswered)

  // Recorded as running only once nothing but the session itself can fail: recordEnd ends it.
  await saveRun(planPath, session, prepared, run)
  return {before, changed: new Set(), earlierFiles, name, opening, point, progress: point?.prior, run}
}

/** The protected paths the approval bound, and any the settings add now: a run only ever adds to them. */
const protectedPathsOf = (session: SessionContext, record: ApprovalRecord) => protectedPathsWith(record.protectedPaths, session.settings.protectedPaths)

/** The approved contract: commands watched against the scope, the checks run when the model is done. */
async function enforcementOf(session: SessionContext, options: RunOptions, prepared: Prepared): Promise<Enforcement> {
  const {planPath} = options
  const {record, resumed} = prepared
  const {workspace} = session
  return new Enforcement({
    checks: {
      onCheck: ({command, result}) => options.host.onEvent?.({command, durationMs: result?.durationMs, exitCode: result?.exitCode, type: 'check'}),
      root: workspace,
      sandbox: session.sandboxFor(record.sandbox, prepared.proxy),
      signal: options.host.signal,
    },
    // Units run side by side, each its own logs: a unit's checks never write over another's; each round its own.
    logs: await checkLogs(planPath, prepared.units?.unit.name),
    earlier: resumed?.report,
    // The model's work ends before the checks: its background commands with it.
    endWork: async () => (await session.tools()).tasks.endAll(),
    place: prepared.current ? {own: await sidecarsOf(planPath), top: prepared.current.root, workspace} : undefined,
    protectedPaths: protectedPathsOf(session, record),
    record,
    retries: options.verifyRetries ?? DEFAULT_VERIFY_RETRIES,
  })
}

/** The run's conversation: the record's mode, rules, scope, budget and sandbox, the enforcement watching it. */
function conversationOf(
  session: SessionContext,
  planPath: string,
  prepared: Prepared,
  live: Live,
  enforcement: Enforcement,
  entry: (fields: TranscriptContent) => Promise<void>,
): ConversationSpec {
  const {record, units} = prepared
  const {workspace} = session
  return {
    ...runProfile(record.mode, workspace, record.verify),
    // The record's rules; the settings files add theirs (and their deny rules beat any allow).
    allow: record.allow,
    beforeTools: () => Promise.all([live.before, enforcement.ready()]),
    followUp: resultRequired(),
    hookWatch: enforcement.watchesHooks ? (run) => enforcement.aroundHooks(run) : undefined,
    commandWatch: enforcement.watchesCommands
      ? {after: (state) => enforcement.afterCommand(state as Awaited<ReturnType<Enforcement['beforeCommand']>>), before: () => enforcement.beforeCommand()}
      : undefined,
    history: live.point?.history,
    observe(event) {
      if (event.type === 'usage') live.progress = {costUsd: event.costUsd, turns: event.turn, usage: {...event.usage}}
      // Denials are kept for the report.
      enforcement.observe(event)
    },
    onEndTurn: () =>
      enforcement.onEndTurn(async () => {
        live.beforeChecks = union(live.beforeChecks ?? [], await filesChangedBy(workspace, await live.before, new Set(), prepared.current?.root, planPath))
      }),
    scope: record.scope,
    protectedPaths: protectedPathsOf(session, record),
    // The budget the approver bound (wave approve --max-budget-usd, a unit's --unit-budget-usd): the run's own flag can only lower it.
    budget: approvedBudget(units?.decided ?? record, units?.unit),
    onCompacted: (messages, compaction) => entry({compacted: messages, compaction}),
    opening: live.opening,
    prior: live.point?.prior,
    // The record decides whether commands are contained; the settings may only name more variables. The
    // project's dependencies are read-only to them (enforcement.ts).
    sandbox: enforcement.commandSandbox(session.sandboxFor(record.sandbox, prepared.proxy)),
    recordAgent: (agent) => entry({agent}),
    transcript: (message) => entry({message}),
    transcriptPath: () => transcriptPathOf(planPath),
  }
}

/** What the session's end makes of the run: stopped (its ending, or the approved checks unmet), or ran. */
async function outcomeOf(
  session: SessionContext,
  options: RunOptions,
  prepared: Prepared,
  live: Live,
  enforcement: Enforcement,
  result: SessionOutcome,
  entry: (fields: TranscriptContent) => Promise<void>,
): Promise<RunOutcome | Stopped> {
  const {planPath} = options
  const {record, resumed} = prepared
  const {workspace} = session
  const {run} = live
  Object.assign(run, {costUsd: result.costUsd, turns: result.turns, usage: {...result.usage}})
  const stopped = stoppedBy(result, outcomeDetails(result))
  if (stopped) {
    // What the run changed before it stopped, in workspace terms; the report says what it did.
    run.changedFiles = union(live.earlierFiles, await filesChangedBy(workspace, await live.before, live.changed, prepared.current?.root, planPath))
    run.report = enforcement.report(run.changedFiles)
    return resumable(stopped, run, planPath)
  }

  const written = [...live.changed].map((real) => displayPath(workspace, real))
  const filesChanged = union(
    live.earlierFiles,
    live.beforeChecks ? union(live.beforeChecks, written) : await filesChangedBy(workspace, await live.before, live.changed, prepared.current?.root, planPath),
  )
  run.changedFiles = filesChanged
  const report = enforcement.report(filesChanged)
  run.report = report
  const unmet = enforcement.problem(report)
  if (unmet) {
    // The run stops with the failing output as the conversation's last message: --resume goes on from it.
    const failing = enforcement.failingMessage()
    if (failing) await entry({message: {content: failing, role: 'user'}})
    const ending = {problem: unmet, stopReason: 'unmet'} as const
    return resumable({details: outcomeDetails(result), ending, kind: 'stopped'}, run, planPath)
  }

  return {
    costUsd: result.costUsd,
    denials: result.denials,
    filesChanged,
    finalText: result.finalText,
    kind: 'ran',
    mode: record.mode,
    name: live.name,
    planPath,
    report,
    questions: result.questions,
    resumed: Boolean(resumed),
    sandbox: record.sandbox,
    stopReason: result.stopReason,
    todos: result.todos,
    turns: result.turns,
    usage: result.usage,
  }
}

/**
 * Thrown: an API failure, an interrupt, a failure of wave's own. The run records what it did before, and
 * wave's own error comes back resumable (its hint says how, its details carry the files and the report);
 * anything else is thrown again as it was.
 */
async function failedRun(
  session: SessionContext,
  options: RunOptions,
  prepared: Prepared,
  live: Live,
  enforcement: Enforcement,
  error: unknown,
): Promise<WaveError> {
  const {planPath} = options
  const {run} = live
  if (error instanceof WaveError) {
    // An error from before the loop carries no totals: a resumed run keeps the ones it had.
    const {costUsd, turns, usage} = error.details ?? {}
    if (turns !== undefined) Object.assign(run, {costUsd, turns, usage})
  }

  // What the run changed before it failed is the error's to report, in workspace terms.
  const failed = error instanceof WaveError ? error.details?.filesChanged : undefined
  run.changedFiles = union(
    live.earlierFiles,
    await filesChangedBy(session.workspace, await live.before, new Set([...live.changed, ...(failed ?? [])]), prepared.current?.root, planPath),
  )
  // Every result carries the report, a failed run's too (what it did before it stopped).
  run.report ??= enforcement.report(run.changedFiles)
  if (!(error instanceof WaveError)) throw error
  const resume = resumeHint(planPath, error.exitCode === ExitCode.limit, run.unit)
  const resumableError = new WaveError(error.message, error.exitCode, error.hint ? `${error.hint} ${resume}` : resume, {
    ...error.details,
    filesChanged: run.changedFiles,
    planPath,
    report: run.report,
  })
  resumableError.stack = error.stack
  return resumableError
}
