import {realpath} from 'node:fs/promises'
import path from 'node:path'

import type {AskedQuestion, Todo} from '../base/notes.js'
import {outcomeDetails, type StopReason, type TokenUsage} from '../agent/loop.js'
import {type ApprovalRecord, approvalPathFor, assertApproved, checkApprovedHooks, markSpent, readApproval} from '../plans/approval.js'
import {approvePlan} from '../plans/decision.js'
import {assertFresh, assertUnspent, lockPlan} from '../plans/gates.js'
import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {ENDINGS, failureOf, type Stopped, stoppedBy} from '../agent/outcome.js'
import {openSession, type SessionContext, type SessionOptions} from '../session/context.js'
import {type PlanRun, type PlanState, readPlanState, readPlanStateChecked, runRecorded} from '../plans/lifecycle.js'
import {checkLogPath, liveLockOwner, planNameOf, planSidecars, plansDir, readPlanFile, resolvePlanReference} from '../plans/store.js'
import {appendTranscript, type TranscriptContent, transcriptPathOf} from '../plans/transcript.js'
import type {ExecutionMode} from '../policy/policy.js'
import {describeSandbox, type SandboxChoice} from '../base/process/sandbox.js'
import {assertSandboxForCommands, openSandboxNetwork} from '../base/process/runner.js'
import {runProfile} from '../session/profiles.js'
import {runOpening} from '../session/prompts/run.js'
import {changedPaths, headOf} from '../base/workspace/git.js'
import type {RepositoryHead} from '../base/workspace/snapshot.js'
import type {SessionStart} from './plan.js'
import {newestRun, resumableRun, resumePoint} from '../session/resume.js'
import {resultRequired, runSession} from '../session/session.js'
import {displayPath} from '../base/workspace/paths.js'
import {bindContract, parseContract} from '../plans/contract.js'
import {DEFAULT_VERIFY_RETRIES, Enforcement} from '../plans/enforcement.js'
import type {RunReport} from '../plans/report.js'
import {approvedBudget, assertUnitUnspent, type BoundUnit, runsOf, unitOf, unitRecord, unitsLeft} from '../plans/unit-result.js'
import {unitOpening} from '../session/prompts/unit.js'
import {type UnitFiles, writeUnitOutputs} from './unit-output.js'

export interface InlineApproval {
  mode: ExecutionMode
  allow: string[]
  approver: string
  sandbox: SandboxChoice
}

export interface RunOptions extends SessionOptions {
  /** The plan's path, or its name as `wave plans` lists it. */
  planPath: string
  approvalPath?: string
  /** `--approve`: write an approved record first, so there is always an audit trail. */
  approve?: InlineApproval
  /** `--force`: with `approve`, approve even over a newest decision of rejected or changes_requested. */
  force?: boolean
  /** `--resume`: continue the plan's newest run, which did not succeed, from its transcript. */
  resume?: boolean
  allowStale: boolean
  /** `--verify-retries`: how many more turns the model gets when the approved checks fail (default 2). */
  verifyRetries?: number
  /** `--unit`: run this unit of the plan only, held to its paths (strict) and checks; it writes its result and patch. */
  unit?: string
  /** `--result-out` and `--patch-out`: where a unit's result and patch go (default beside the plan). */
  resultOut?: string
  patchOut?: string
  onStart?(info: SessionStart): void
}

export interface RunOutcome {
  kind: 'ran'
  name: string
  planPath: string
  mode: ExecutionMode
  finalText: string
  turns: number
  usage: TokenUsage
  stopReason: StopReason
  costUsd: number | null
  sandbox: SandboxChoice
  filesChanged: string[]
  denials: number
  /** The run went on from an interrupted one (`--resume`): turns, usage, cost and files are the whole run's. */
  resumed: boolean
  /** Planned versus actual: the approved scope against the files changed, the checks, the denials. */
  report: RunReport
  /** Questions the model asked (AskUserQuestion) that no one could answer during the run. */
  questions: AskedQuestion[]
  /** The model's to-do list as the run left it. */
  todos: Todo[]
  /** A unit's run: the unit, and where its result and patch were written. */
  unit?: UnitFiles
}

/**
 * `wave run plan.md`: every check that can refuse happens before the first model request; then a new
 * conversation whose only user message holds the task and the approved plan. `inherited`: the session
 * of `run --task --approve` that made the plan, whose place, settings and tools the run keeps, so
 * nothing the task wrote (a `.wave/settings.json`) can widen what the run may do.
 */
export async function executePlan(options: RunOptions, inherited?: SessionContext): Promise<RunOutcome | Stopped> {
  const planPath = await resolvePlanReference(options.planPath)
  const {bytes, text} = await readPlanFile(planPath)
  const state = await readPlanStateChecked(planPath)
  const session = await openSession(options, {changes: true, credentials: false, inherited, outside: {hint: runPlaceHint(state)}})
  try {
    return await executeIn(session, {...options, planPath}, {bytes, state, text})
  } finally {
    await session.close()
  }
}

async function executeIn(
  session: SessionContext,
  options: RunOptions,
  plan: {bytes: Buffer; state: PlanState | undefined; text: string},
): Promise<RunOutcome | Stopped> {
  const {planPath} = options
  const {bytes, state, text} = plan
  const {workspace} = session

  let record: ApprovalRecord
  const recordPath = options.approvalPath ? path.resolve(options.approvalPath) : approvalPathFor(planPath)
  if (options.approve) {
    // No record is written for a run that cannot start for want of a key, or of the sandbox.
    session.assertCredentials()
    assertSandboxForCommands(options.approve)
    // An inline approval binds the plan's own contract, as `wave approve` without --scope/--verify does:
    // approving in the same breath as running must not drop the checks and scope the plan states.
    const contract = bindContract(await parseContract(text, {workspace}))
    record = (
      await approvePlan({
        ...options.approve,
        // The approver is the one running: the cap they run with is the one approved.
        maxBudgetUsd: options.budget?.usd,
        scope: contract.scope,
        units: contract.units,
        verify: contract.verify,
        decision: 'approved',
        // The approver is the one running: the model settings given on the command line are what is approved.
        model: {
          effort: options.effort,
          fallbackModel: options.fallbackModel,
          maxOutputTokens: options.maxOutputTokens,
          model: options.model,
          thinking: options.thinking,
        },
        outputSchema: options.outputSchema,
        hooks: session.settings.hooks,
        out: recordPath,
        overrides: options.force === true,
        planBytes: bytes,
        planPath,
        repository: state?.repository ?? null,
        task: state?.task,
      })
    ).record
  } else {
    record = await readApproval(recordPath, options.planPath)
  }

  assertApproved(record, recordPath, options.planPath, bytes)
  // A unit's job runs under the approval narrowed to the unit: its paths (strict), its checks, its budget.
  const unit = options.unit === undefined ? undefined : unitOf(record, options.unit, planPath)
  const decided = record
  if (unit) record = unitRecord(record, unit)
  checkApprovedHooks(record, session.settings.hooks, recordPath, options.host.warn)
  session.useApproved(record.model, recordPath)
  session.assertWithinApprovedBudget(record.maxBudgetUsd, recordPath)
  await session.useApprovedSchema(record.outputSchema, recordPath)
  assertSandboxForCommands(record)
  // A resumed run is not a second run of a spent plan: it is the unfinished one, going on. A unit's runs are its own.
  const ownRuns = unit ? runsOf(state, unit.name) : state
  const resumed = options.resume ? resumableRun({lockOwner: await liveLockOwner(planPath), planPath, record, state: ownRuns}) : undefined
  if (!resumed) {
    if (unit) assertUnitUnspent(decided, planPath, state, unit.name)
    else assertUnspent(record, recordPath, planPath, state)
  }

  const snapshot = session.snapshot!
  const current = await snapshot.head()
  // A unit's change is handed on as a patch against the plan's base commit: that needs the repository.
  const base = unit ? (decided.repository?.head ?? state?.repository?.head ?? current?.head ?? undefined) : undefined
  if (unit && (!current || !base)) {
    throw usageError(
      `A unit runs in a git repository with a commit to patch against: ${workspace} has none.`,
      "Run it in a clone of the repository at the plan's commit.",
    )
  }
  assertFresh({
    allowStale: options.allowStale,
    current: current?.head,
    // The run being resumed may have moved HEAD itself (a commit it made): that is not staleness.
    movedByRun: Boolean(resumed?.head) && current?.head === resumed?.head,
    planned: record.repository?.head ?? state?.repository?.head ?? null,
    plannedWorkspace: state?.workspace,
    workspace,
  })

  session.assertCredentials()
  // The proxy to the approved hosts, before anything runs: one that cannot start refuses the run.
  const network = await openSandboxNetwork(record.sandbox, (host) => options.host.warn(`A sandboxed command asked for ${host}: refused, not an approved host.`))
  const release = await lockPlan(planPath).catch(async (error: unknown) => {
    await network?.close()
    throw error
  })
  try {
    if (resumed) await assertStillNewest(planPath, resumed, unit?.name)
    const units = unit ? {base: base!, decided, unit} : undefined
    return await execute(session, options, {current, proxy: network?.directory, record, recordPath, resumed, state, text, units})
  } finally {
    await release()
    await network?.close()
  }
}

/**
 * Where `wave run <plan>` works: `--cwd`, else the top of the git repository holding the current
 * directory. Outside any repository there is no such top, and a guess could run the plan in the wrong
 * place: a usage error naming --cwd and, as a hint only, the workspace the plan was made in.
 */
function runPlaceHint(state: PlanState | undefined): string {
  const planned = state?.workspace ? ` (the plan was made in ${state.workspace})` : ''
  return `Run it from the repository the plan is for, or name the workspace with --cwd${planned}.`
}

/** Between choosing the run to resume and locking the plan, another run may have started and ended. */
async function assertStillNewest(planPath: string, resumed: PlanRun, unit: string | undefined): Promise<void> {
  const state = await readPlanState(planPath)
  if (newestRun(unit === undefined ? state : runsOf(state, unit))?.startedAt === resumed.startedAt) return
  throw new WaveError(
    `The plan ${planNameOf(planPath)} ran again while this resume was starting: the run it would resume is no longer the newest.`,
    ExitCode.runtime,
  )
}

interface Prepared {
  /** The run `--resume` continues. */
  resumed?: PlanRun
  recordPath: string
  text: string
  record: ApprovalRecord
  state: PlanState | undefined
  current: RepositoryHead | null
  /** The filtering proxy's socket directory, when the record allows named hosts. */
  proxy?: string
  /** A unit's run: the unit, the approval as decided (`record` is it narrowed to the unit), the plan's base commit. */
  units?: {unit: BoundUnit; decided: ApprovalRecord; base: string}
}

async function execute(session: SessionContext, options: RunOptions, prepared: Prepared): Promise<RunOutcome | Stopped> {
  const {planPath} = options
  const {record, resumed} = prepared
  const {workspace} = session
  const name = planNameOf(planPath)
  // What the run's changes are measured from: read while the first request goes out, and awaited
  // before any tool runs (beforeTools below), so no tool can change the workspace before it is taken.
  const before = prepared.current ? session.snapshot!.changes() : Promise.resolve(new Map<string, string>())
  // A resumed run goes on in its own record: same start, its totals kept, its end to be written again.
  const run: PlanRun = resumed
    ? {...withoutEnd(resumed), changedFiles: [...resumed.changedFiles]}
    : {approvalSha256: record.plan.sha256, changedFiles: [], startedAt: new Date().toISOString(), ...(prepared.units ? {unit: prepared.units.unit.name} : {})}
  const earlierFiles = [...run.changedFiles]
  // The task comes from the record alone: the state file beside a plan is bookkeeping, not authority.
  const units = prepared.units
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
  /** What the run ends with, to which a unit's run adds where its result and patch went. */
  let finished: RunOutcome | Stopped | undefined
  let thrown: WaveError | undefined
  const point = resumed ? await resumePoint(planPath, resumed, opening) : undefined
  options.onStart?.({mode: record.mode, model: session.model, name, planPath, sandbox: describeSandbox(record.sandbox), workspace})
  if (point && point.unanswered.length > 0) {
    options.host.warn(
      `The run was killed during a turn: ${point.unanswered.join(', ')} ${point.unanswered.length === 1 ? 'call is' : 'calls are'} answered as having an unknown effect, not run again.`,
    )
  }

  // Recorded as running only once nothing but the session itself can fail: the finally below ends it.
  await saveRun(planPath, session, prepared, run)

  /** What the run has spent so far, written with each transcript entry: a killed run's resume counts on from it. */
  let progress = point?.prior
  const entry = (fields: TranscriptContent) => appendTranscript(planPath, {...fields, progress, session: 'run', startedAt: run.startedAt})

  // The approved contract: commands watched against the scope, the checks run when the model is done.
  const enforcement = new Enforcement({
    checks: {
      onCheck: ({command, result}) => options.host.onEvent?.({command, durationMs: result?.durationMs, exitCode: result?.exitCode, type: 'check'}),
      // Units run side by side, each its own logs: a unit's checks never write over another's.
      outputFile: (index) => checkLogPath(planPath, index, prepared.units?.unit.name),
      root: workspace,
      sandbox: session.sandboxFor(record.sandbox, prepared.proxy),
      signal: options.host.signal,
    },
    earlier: resumed?.report,
    // The model's work ends before the checks: its background commands with it.
    endWork: async () => (await session.tools()).tasks.endAll(),
    place: prepared.current ? {own: await sidecarsOf(planPath), top: prepared.current.root, workspace} : undefined,
    record,
    retries: options.verifyRetries ?? DEFAULT_VERIFY_RETRIES,
  })
  /** What the model changed, as of the last time the checks ran: what the checks themselves write is not the run's. */
  let beforeChecks: string[] | undefined

  let exitCode: number = ExitCode.runtime
  let changed = new Set<string>()
  try {
    // The resumed conversation replaces the recorded one in the transcript: a second resume starts from it.
    if (point?.history) await entry({conversation: point.history, resumed: {after: resumed?.exitCode ?? null, at: new Date().toISOString()}})
    const result = await runSession(session, {
      ...runProfile(record.mode, workspace),
      // The record's rules; the settings files add theirs (and their deny rules beat any allow).
      allow: record.allow,
      beforeTools: () => Promise.all([before, enforcement.ready()]),
      followUp: resultRequired(),
      commandWatch: enforcement.watchesCommands
        ? {after: (state) => enforcement.afterCommand(state as Awaited<ReturnType<Enforcement['beforeCommand']>>), before: () => enforcement.beforeCommand()}
        : undefined,
      history: point?.history,
      observe(event) {
        if (event.type === 'usage') progress = {costUsd: event.costUsd, turns: event.turn, usage: {...event.usage}}
        // Denials are kept for the report.
        enforcement.observe(event)
      },
      onEndTurn: () =>
        enforcement.onEndTurn(async () => {
          beforeChecks = union(beforeChecks ?? [], await filesChangedBy(workspace, await before, new Set(), prepared.current?.root, planPath))
        }),
      scope: record.scope,
      // The budget the approver bound (wave approve --max-budget-usd, a unit's --unit-budget-usd): the run's own flag can only lower it.
      budget: approvedBudget(units?.decided ?? record, units?.unit),
      onCompacted: (messages, compaction) => entry({compacted: messages, compaction}),
      opening,
      prior: point?.prior,
      // The record decides whether commands are contained; the settings may only name more variables.
      sandbox: session.sandboxFor(record.sandbox, prepared.proxy),
      recordAgent: (agent) => entry({agent}),
      transcript: (message) => entry({message}),
      transcriptPath: () => transcriptPathOf(planPath),
    })
    changed = result.changed
    Object.assign(run, {costUsd: result.costUsd, turns: result.turns, usage: {...result.usage}})
    const stopped = stoppedBy(result, outcomeDetails(result))
    if (stopped) {
      exitCode = failureOf(stopped).exitCode
      // What the run changed before it stopped, in workspace terms; the report says what it did.
      run.changedFiles = union(earlierFiles, await filesChangedBy(workspace, await before, changed, prepared.current?.root, planPath))
      run.report = enforcement.report(run.changedFiles)
      finished = resumable(stopped, run, planPath)
      return finished
    }

    const written = [...changed].map((real) => displayPath(workspace, real))
    const filesChanged = union(
      earlierFiles,
      beforeChecks ? union(beforeChecks, written) : await filesChangedBy(workspace, await before, changed, prepared.current?.root, planPath),
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
      exitCode = ENDINGS[ending.stopReason].exitCode
      finished = resumable({details: outcomeDetails(result), ending, kind: 'stopped'}, run, planPath)
      return finished
    }

    exitCode = ExitCode.ok
    finished = {
      costUsd: result.costUsd,
      denials: result.denials,
      filesChanged,
      finalText: result.finalText,
      kind: 'ran',
      mode: record.mode,
      name,
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
    return finished
  } catch (error) {
    // Thrown: an API failure, an interrupt, a failure of wave's own. The run records what it did before.
    if (error instanceof WaveError) {
      exitCode = error.exitCode
      // An error from before the loop carries no totals: a resumed run keeps the ones it had.
      const {costUsd, turns, usage} = error.details ?? {}
      if (turns !== undefined) Object.assign(run, {costUsd, turns, usage})
    }

    // What the run changed before it failed is the error's to report, in workspace terms.
    const failed = error instanceof WaveError ? error.details?.filesChanged : undefined
    run.changedFiles = union(
      earlierFiles,
      await filesChangedBy(workspace, await before, new Set([...changed, ...(failed ?? [])]), prepared.current?.root, planPath),
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
    thrown = resumableError
    throw resumableError
  } finally {
    run.endedAt = new Date().toISOString()
    run.exitCode = exitCode
    if (prepared.current) run.head = await headOf(workspace)
    const saved = await saveRun(planPath, session, prepared, run)
    if (units) {
      // Written whatever the outcome: the merge says which units failed. A unit that cannot hand on its work failed.
      const unitFiles = await writeUnitOutputs({
        base: units.base,
        patchOut: options.patchOut,
        planPath,
        record: units.decided,
        resultOut: options.resultOut,
        run,
        top: prepared.current!.root,
        unit: units.unit.name,
      })
      if (finished?.kind === 'stopped') finished.details.unit = unitFiles
      else if (finished) finished.unit = unitFiles
      if (thrown?.details) thrown.details.unit = unitFiles
    }

    // A unit's success spends the approval only once every unit has succeeded (the state beside the plan says which have).
    if (exitCode === ExitCode.ok && (!units || unitsLeft(units.decided, saved).length === 0)) {
      await markSpent(prepared.recordPath, record, run.endedAt).catch((error: unknown) => {
        options.host.warn(`Could not mark the approval ${prepared.recordPath} as spent (${(error as Error).message}); the plan's state records the run.`)
      })
    }
  }
}

/**
 * A run that did not succeed goes on from where it stopped: the hint says how, and the details carry
 * what it changed and its report (planned versus actual, a failed run's too).
 */
function resumable(stopped: Stopped, run: PlanRun, planPath: string): Stopped {
  const limit = failureOf(stopped).exitCode === ExitCode.limit
  return {...stopped, details: {...stopped.details, filesChanged: run.changedFiles, planPath, report: run.report}, next: resumeHint(planPath, limit, run.unit)}
}

/** How to go on with a stopped run: by the plan's name when it is in the plans directory (a name works from any directory, a path may not). */
function resumeHint(planPath: string, limit: boolean, unit?: string): string {
  const reference = path.dirname(planPath) === plansDir() ? planNameOf(planPath) : planPath
  return `Continue the run where it stopped: wave run ${reference}${unit ? ` --unit ${unit}` : ''} --resume${limit ? ' (--max-turns and --max-budget-usd count the whole run)' : ''}.`
}

function withoutEnd(run: PlanRun): PlanRun {
  const {endedAt: _ended, exitCode: _exit, ...going} = run
  return going
}

const union = (a: string[], b: string[]): string[] => [...new Set([...a, ...b])].sort()

/**
 * Files the run changed: what write tools touched plus what git sees newly changed (Bash included).
 * wave's own files beside the plan (state, transcript, lock) are not the run's changes, even when the
 * plan travels inside the workspace.
 */
export async function filesChangedBy(
  workspace: string,
  before: Map<string, string>,
  written: Set<string>,
  top: string | undefined,
  planPath?: string,
): Promise<string[]> {
  const files = new Set([...written].map((real) => displayPath(workspace, real)))
  // `top`, the repository's root, is where git's paths are relative to; outside a repository only the writes count.
  if (top) {
    const own = planPath ? await sidecarsOf(planPath) : new Set<string>()
    const after = await changedPaths(workspace)
    for (const [file, code] of after) {
      const absolute = path.join(top, file)
      if (before.get(file) !== code && !own.has(absolute)) files.add(path.relative(workspace, absolute))
    }
  }

  return [...files].sort()
}

/** The real paths of the files wave keeps beside a plan. */
async function sidecarsOf(planPath: string): Promise<Set<string>> {
  const dir = await realpath(path.dirname(planPath)).catch(() => path.dirname(planPath))
  return new Set(Object.values(planSidecars(path.join(dir, path.basename(planPath)))))
}

/** The run's record in the plan's state; a plan copied here with only its approval record gets a state started from the record. */
async function saveRun(planPath: string, session: SessionContext, prepared: Prepared, run: PlanRun): Promise<PlanState> {
  const origin = {model: 'unknown', repository: prepared.current, task: prepared.record.task ?? '', workspace: session.workspace}
  const decided = prepared.units?.decided
  return runRecorded(planPath, run, origin, decided ? (state) => unitsLeft(decided, state).length : undefined)
}
