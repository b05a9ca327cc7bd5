import {readFile, realpath, rm} from 'node:fs/promises'
import path from 'node:path'

import type {SessionTools} from '../../plugins/toolset.js'
import {type EffectiveSettings, loadSettings} from '../settings.js'
import type {StopReason, TokenUsage} from './loop.js'
import {type ApprovalRecord, approvalPathFor, assertApproved, type DecisionKind, readApproval, writeDecision} from '../plans/approval.js'
import {ExitCode, WaveError} from '../errors.js'
import {assertCredentials, modelFrom} from './model.js'
import {appendTranscript, createExclusive, type PlanRun, type PlanState, planNameOf, planSidecars, readPlanFile, readPlanState, readPlanStateChecked, writePlanState} from '../plans/plans.js'
import type {ExecutionMode} from '../policy/policy.js'
import {executionSystemPrompt} from './prompts.js'
import {changedPaths, repositoryState} from '../workspace/git.js'
import type {SessionStart} from './plan.js'
import {PlanMode} from './plan-mode.js'
import {runSession, type SessionHost} from './session.js'
import {displayPath, workspaceRoot} from '../workspace/paths.js'

export interface InlineApproval {
  mode: ExecutionMode
  allow: string[]
  approver: string
}

export interface RunOptions {
  host: SessionHost
  planPath: string
  approvalPath?: string
  /** `--approve`: write an approved record first, so there is always an audit trail. */
  approve?: InlineApproval
  cwd: string
  allowStale: boolean
  /** `--model`; else WAVE_MODEL, the settings, the default. */
  model?: string
  maxTurns: number
  onStart?(info: SessionStart): void
  /**
   * `run --task --approve`: the settings and tool set the task session started with. The execution uses
   * them, so nothing the task wrote (a `.wave/settings.json`) can widen what the run may do.
   */
  inherited?: {settings: EffectiveSettings; tools: SessionTools}
}

export interface RunOutcome {
  name: string
  planPath: string
  mode: ExecutionMode
  finalText: string
  turns: number
  usage: TokenUsage
  stopReason: StopReason
  filesChanged: string[]
  denials: number
}

/**
 * `wave run plan.md`: every check that can refuse happens before the first model request; then a new
 * conversation whose only user message holds the task and the approved plan.
 */
export async function executePlan(options: RunOptions): Promise<RunOutcome> {
  const planPath = path.resolve(options.planPath)
  const {bytes, text} = await readPlanFile(planPath)
  const state = await readPlanStateChecked(planPath)
  const workspace = await workspaceRoot(options.cwd)
  const settings = options.inherited?.settings ?? loadSettings(workspace)

  let record: ApprovalRecord
  const recordPath = options.approvalPath ? path.resolve(options.approvalPath) : approvalPathFor(planPath)
  if (options.approve) {
    // No record is written for a run that cannot start for want of a key.
    assertCredentials()
    record = (
      await writeDecision({
        ...options.approve,
        decision: 'approved',
        out: recordPath,
        planBytes: bytes,
        planPath,
        repository: state?.repository ?? null,
        task: state?.task,
      })
    ).record
    await recordDecisionInState(planPath, 'approved')
  } else {
    record = await readApproval(recordPath, options.planPath)
  }

  assertApproved(record, recordPath, options.planPath, bytes)
  const current = await repositoryState(workspace)
  const plannedHead = record.repository?.head ?? state?.repository?.head ?? null
  if (plannedHead && current?.head !== plannedHead && !options.allowStale) {
    throw new WaveError(
      `The plan is stale: it was made against commit ${plannedHead.slice(0, 12)}, and the workspace is at ${current?.head?.slice(0, 12) ?? 'no commit'}.`,
      ExitCode.mismatch,
      'Make a new plan, or pass --allow-stale to run it anyway.',
    )
  }

  assertCredentials()
  const release = await lockPlan(planPath)
  try {
    return await execute({...options, planPath}, {current, model: modelFrom(options.model, settings.model), record, settings, state, text, workspace})
  } finally {
    await release()
  }
}

interface Prepared {
  model: string
  settings: EffectiveSettings
  text: string
  record: ApprovalRecord
  state: PlanState | undefined
  workspace: string
  current: Awaited<ReturnType<typeof repositoryState>>
}

async function execute(options: RunOptions, prepared: Prepared): Promise<RunOutcome> {
  const {planPath} = options
  const {record, workspace} = prepared
  const name = planNameOf(planPath)
  const before = prepared.current ? await changedPaths(workspace) : new Map<string, string>()
  const run: PlanRun = {approvalSha256: record.plan.sha256, changedFiles: [], startedAt: new Date().toISOString()}
  options.onStart?.({mode: record.mode, model: prepared.model, name, planPath, workspace})
  // Recorded as running only once nothing but the session itself can fail: the finally below ends it.
  await saveRun(planPath, prepared, run, 'running')

  let exitCode: number = ExitCode.runtime
  let changed = new Set<string>()
  try {
    const result = await runSession({
      // The record's rules; the settings files add theirs (and their deny rules beat any allow).
      allow: record.allow,
      host: options.host,
      maxTurns: options.maxTurns,
      mode: record.mode,
      model: prepared.model,
      // The task comes from the record alone: the state file beside a plan is bookkeeping, not authority.
      opening: firstMessage(record.task, name, record.plan.sha256, prepared.text),
      planMode: new PlanMode({workspace}),
      settings: prepared.settings,
      system: (rules) => executionSystemPrompt({allow: rules.allow.map((rule) => rule.source), mode: record.mode, workspace}),
      tools: options.inherited?.tools,
      transcript: (message) => appendTranscript(planPath, {message, session: 'run', startedAt: run.startedAt}),
      workspace,
    })
    changed = result.changed
    exitCode = ExitCode.ok
    const filesChanged = await filesChangedBy(workspace, before, changed, Boolean(prepared.current), planPath)
    run.changedFiles = filesChanged
    return {
      denials: result.denials,
      filesChanged,
      finalText: result.finalText,
      mode: record.mode,
      name,
      planPath,
      stopReason: result.stopReason,
      turns: result.turns,
      usage: result.usage,
    }
  } catch (error) {
    if (error instanceof WaveError) exitCode = error.exitCode
    run.changedFiles = await filesChangedBy(workspace, before, changed, Boolean(prepared.current), planPath)
    throw error
  } finally {
    run.endedAt = new Date().toISOString()
    run.exitCode = exitCode
    await saveRun(planPath, prepared, run, exitCode === ExitCode.ok ? 'ran' : 'failed')
  }
}

function firstMessage(task: string | undefined, name: string, sha: string, plan: string): string {
  const taskPart = task ? `Task:\n${task}\n\n` : ''
  return `${taskPart}Approved plan "${name}" (sha256 ${sha}):\n\n${plan.trimEnd()}\n\nCarry out this plan now.`
}

/**
 * Files the run changed: what write tools touched plus what git sees newly changed (Bash included).
 * wave's own files beside the plan (state, transcript, lock) are not the run's changes, even when the
 * plan travels inside the workspace.
 */
export async function filesChangedBy(workspace: string, before: Map<string, string>, written: Set<string>, inGit: boolean, planPath?: string): Promise<string[]> {
  const files = new Set([...written].map((real) => displayPath(workspace, real)))
  if (inGit) {
    const own = planPath ? await sidecarsOf(planPath) : new Set<string>()
    const after = await changedPaths(workspace)
    const top = (await repositoryState(workspace))?.root ?? workspace
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

async function saveRun(planPath: string, prepared: Prepared, run: PlanRun, status: PlanState['status']): Promise<void> {
  const now = new Date().toISOString()
  const state: PlanState = (await readPlanState(planPath)) ?? {
    // A plan copied here with only its approval record: start its state from the record.
    createdAt: now,
    model: 'unknown',
    name: planNameOf(planPath),
    repository: prepared.current,
    runs: [],
    status: 'approved',
    task: prepared.record.task ?? '',
    updatedAt: now,
    version: 1,
    workspace: prepared.workspace,
  }
  const runs = state.runs.filter((r) => r.startedAt !== run.startedAt)
  await writePlanState(planPath, {...state, runs: [...runs, {...run}], status})
}

/** Keeps the plan's state in step with the newest decision, where wave has a state for it. */
export async function recordDecisionInState(planPath: string, decision: DecisionKind): Promise<void> {
  const state = await readPlanState(planPath)
  if (state) await writePlanState(planPath, {...state, status: decision})
}

/** One run of a plan at a time: a lock file created exclusively, holding the owner's pid. */
async function lockPlan(planPath: string): Promise<() => Promise<void>> {
  const lock = planSidecars(planPath).lock
  for (let attempt = 0; attempt < 2; attempt++) {
    // Created with its owner's pid in one step: a racing run never reads an empty lock as a dead one.
    if (await createExclusive(lock, String(process.pid))) return () => rm(lock, {force: true})
    const owner = Number.parseInt(await readFile(lock, 'utf8').catch(() => ''), 10)
    if (owner && isAlive(owner)) {
      throw new WaveError(`The plan ${planNameOf(planPath)} is already running (pid ${owner}).`, ExitCode.runtime, `Wait for it to finish, or remove ${lock} if that process is gone.`)
    }

    await rm(lock, {force: true}) // left by a process that died
  }

  throw new WaveError(`Could not lock the plan ${planPath} for this run.`, ExitCode.runtime)
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

