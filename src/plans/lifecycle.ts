/**
 * A plan's life: the one vocabulary of its statuses, the state wave keeps beside it, and every change
 * to that state. Nothing else writes the state file: a driver reports what happened (a planning
 * session ended, a decision was recorded, a run started or ended, a plan arrived from elsewhere) and
 * the status follows from that here (`statusAfter`). `wave plans` reads the status back with the
 * decision recorded beside the plan (`listPlans`).
 *
 *   draft ──approve──▶ approved ──run──▶ running ──▶ ran | failed
 *     ▲  ╲──reject / request changes──▶ rejected | changes_requested
 *     └── planning ended (plan, --revise) ─── failed (no plan written)
 */
import {lstat, readFile, readdir, stat} from 'node:fs/promises'
import path from 'node:path'

import writeFileAtomic from 'write-file-atomic'
import {z} from 'zod'

import {ExitCode} from '../base/errors.js'
import {readJsonFile} from '../base/json.js'
import type {RepositoryState} from '../base/workspace/snapshot.js'
import {createExclusive, drawPlanName, ensurePlansDir, exists, PLAN_EXTENSION, planNameOf, planSidecars, plansDir} from './store.js'
import {runReportSchema} from './report.js'

/** Every status a plan can have, in the order of its life. */
const PLAN_STATUSES = ['draft', 'approved', 'rejected', 'changes_requested', 'running', 'ran', 'failed'] as const
export type PlanStatus = (typeof PLAN_STATUSES)[number]

/** The statuses a decision gives a plan: what an approval record's `decision` may say. */
export const DECISIONS = ['approved', 'rejected', 'changes_requested'] as const satisfies readonly PlanStatus[]
export type Decision = (typeof DECISIONS)[number]

const repositorySchema = z.lazy(() =>
  z.object({
    branch: z.string().nullable(),
    /** Whether the work tree had changes. Absent until known: in a large work tree it is recorded after the session started (snapshot.ts). */
    dirty: z.boolean().optional(),
    head: z.string().nullable(),
    root: z.string(),
  }),
)

const runSchema = z.lazy(() =>
  z.object({
    approvalSha256: z.string().optional(),
    changedFiles: z.array(z.string()).default([]),
    endedAt: z.string().optional(),
    exitCode: z.number().optional(),
    startedAt: z.string(),
    /** What the run spent so far (kept when it fails, so `--resume` keeps counting). */
    turns: z.number().optional(),
    /** The git HEAD when the run stopped: a resumed run finds HEAD where the run itself may have moved it. */
    head: z.string().nullable().optional(),
    costUsd: z.number().nullable().optional(),
    usage: z.record(z.string(), z.number()).optional(),
    /** Planned versus actual, as the run ended (report.ts): `wave plans <name>` shows the last one. */
    report: runReportSchema.optional(),
    /** The plan unit this run was (`wave run --unit`); absent, the run was of the whole plan. */
    unit: z.string().optional(),
  }),
)

/**
 * The newest planning session (plan, --revise, and its --resume), so that `wave plan --resume` finds it
 * and counts on: when it started (its transcript entries carry that), the process working on it while it
 * goes on, and how it ended with what it had spent by then (the whole session's, a resumed part's
 * included). No `exitCode`: still going, or its process was killed before it could say.
 */
const planningSchema = z.lazy(() =>
  z.object({
    startedAt: z.string(),
    pid: z.number().optional(),
    endedAt: z.string().optional(),
    exitCode: z.number().optional(),
    turns: z.number().optional(),
    usage: z.record(z.string(), z.number()).optional(),
    costUsd: z.number().nullable().optional(),
  }),
)

const planStateSchema = z.lazy(() =>
  z.object({
    createdAt: z.string(),
    model: z.string(),
    name: z.string(),
    repository: repositorySchema.nullable(),
    runs: z.array(runSchema).default([]),
    status: z.enum(PLAN_STATUSES).default('draft'),
    task: z.string(),
    updatedAt: z.string(),
    version: z.literal(1),
    workspace: z.string(),
    /** What planning (plan and revise sessions) spent, in USD; null once a session's model had no price. */
    costUsd: z.number().nullable().optional(),
    /**
     * The `decidedAt` of the approval record beside the plan when this state was last written: a record
     * that says otherwise now was written since (by another tool, or copied in), and its decision is the
     * newer status. Absent in states written before wave kept it.
     */
    decisionSeen: z.string().nullable().optional(),
    /** How the model was asked to think when the plan was made: effort, thinking, max_tokens (model/reasoning.ts). */
    reasoning: z
      .object({effort: z.string().optional(), thinking: z.union([z.string(), z.number()]).optional(), maxOutputTokens: z.number().optional()})
      .optional(),
    /** `final_message`: the model wrote no plan file, and its final message was saved as the plan. */
    planSource: z.enum(['plan_file', 'final_message']).optional(),
    /**
     * The permissions the plan says it needs (ExitPlanMode's `allowedPrompts`, such as Bash: "run tests"):
     * shown to the approver, never granted by themselves (the approval's rules are).
     */
    allowedPrompts: z.array(z.object({prompt: z.string(), tool: z.string()})).optional(),
    /** Why the newest planning session failed (one line), so `wave plans` can say it; cleared when one succeeds. */
    failure: z.string().optional(),
    /** The newest planning session (absent in states written before wave kept it, and for a plan adopted from a forge). */
    planning: planningSchema.optional(),
  }),
)

export type PlanSource = NonNullable<PlanState['planSource']>

export type PlanState = z.infer<typeof planStateSchema>
export type PlanRun = z.infer<typeof runSchema>
export type PlanningSession = z.infer<typeof planningSchema>

/** What happened to a plan; its status follows from the newest event alone. */
export type PlanEvent =
  | {kind: 'created'}
  | {kind: 'planned'; ok: boolean}
  | {kind: 'decided'; decision: Decision}
  /** `unitsLeft`: of a plan with units, those not yet succeeded after this run (a unit's success leaves the plan approved until none is). */
  | {kind: 'run'; run: Partial<PlanRun>; unitsLeft?: number}

/** The one place a status is derived. A run without an exit code is still going. */
export function statusAfter(event: PlanEvent): PlanStatus {
  switch (event.kind) {
    case 'created': {
      return 'draft'
    }

    case 'planned': {
      return event.ok ? 'draft' : 'failed'
    }

    case 'decided': {
      return event.decision
    }

    case 'run': {
      if (event.run.exitCode === undefined) return 'running'
      if (event.run.exitCode !== ExitCode.ok) return 'failed'
      return event.unitsLeft ? 'approved' : 'ran'
    }
  }
}

/** Costs add up; unknown (null) makes the total unknown, and nothing spent (undefined) adds nothing. Rounded to a millionth of a dollar. */
export function addCost<T extends number | null | undefined>(a: T, b: number | null | undefined): T | number | null {
  if (b === undefined) return a
  if (a === undefined) return b
  return a === null || b === null ? null : Math.round((a + b) * 1e6) / 1e6
}

/** What a plan has cost so far: its planning sessions and its runs. */
export function planCost(state: PlanState): number | null {
  const total = state.runs.reduce<number | null | undefined>((sum, run) => addCost(sum, run.costUsd), state.costUsd)
  return total === undefined ? 0 : total
}

interface NewPlan {
  name: string
  path: string
  state: PlanState
}

const MAX_DRAWS = 1000

interface PlanOrigin {
  task: string
  workspace: string
  model: string
  repository: RepositoryState | null
  reasoning?: PlanState['reasoning']
  /** A planning session starts on the plan now (`wave plan --task`): recorded with the fresh state, as planningStarted would. */
  planning?: {startedAt: string}
}

const freshState = (name: string, origin: PlanOrigin, createdAt = new Date().toISOString()): PlanState => ({
  createdAt,
  model: origin.model,
  name,
  ...(origin.reasoning ? {reasoning: origin.reasoning} : {}),
  ...(origin.planning ? {planning: {pid: process.pid, startedAt: origin.planning.startedAt}} : {}),
  repository: origin.repository,
  runs: [],
  status: statusAfter({kind: 'created'}),
  task: origin.task,
  updatedAt: new Date().toISOString(),
  version: 1,
  workspace: origin.workspace,
})

/** A fresh, never-used plan name: reserved by creating its state file exclusively, redrawn on collision. */
export async function createPlan(origin: PlanOrigin): Promise<NewPlan> {
  const dir = await ensurePlansDir()
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const name = drawPlanName()
    const planPath = path.join(dir, name + PLAN_EXTENSION)
    if (await exists(planPath)) continue
    const state = freshState(name, origin)
    if (!(await createExclusive(planSidecars(planPath).state, JSON.stringify(state, null, 2) + '\n'))) continue
    return {name, path: planPath, state}
  }

  throw new Error(`Could not find an unused plan name in ${dir} after ${MAX_DRAWS} draws.`)
}

/**
 * A plan that arrived from elsewhere (a GitHub comment) put in the plans directory as wave's own: a
 * fresh draft state, whatever state a plan of that name had here.
 */
export async function adoptPlan(planPath: string, origin: PlanOrigin & {createdAt?: string}): Promise<void> {
  await writeState(planPath, freshState(planNameOf(planPath), origin, origin.createdAt))
}

/**
 * A planning session (plan, --revise) started, or a stopped one went on (--resume: the same `startedAt`,
 * its totals kept until it ends again): the newest planning session, worked on by this process.
 */
export async function planningStarted(planPath: string, startedAt: string): Promise<void> {
  await update(planPath, (state) => ({
    ...state,
    planning: {...(state.planning?.startedAt === startedAt ? state.planning : {}), endedAt: undefined, exitCode: undefined, pid: process.pid, startedAt},
  }))
}

/** How a planning session ended, for its record: its exit code and what the whole session had spent by then. */
interface PlanningEnd {
  exitCode: number
  turns?: number
  usage?: Record<string, number> | object
  costUsd?: number | null
}

/**
 * A planning session (plan, --revise, a task's plan mode) ended: with a plan (draft), or without one
 * (failed, and why: the error the session ended with). `costUsd` is what this session (or its resumed
 * part) spent, added to what planning cost; `ended`, the newest planning session's end, with the whole
 * session's totals.
 */
export async function planningEnded(
  planPath: string,
  outcome: {ok: boolean; costUsd?: number | null; planSource?: PlanSource; reason?: string; ended?: PlanningEnd},
): Promise<void> {
  const source = outcome.planSource ? {planSource: outcome.planSource} : {}
  await update(planPath, ({failure: _previous, ...state}) => ({
    ...state,
    costUsd: addCost(state.costUsd, outcome.costUsd),
    ...source,
    ...(outcome.ok ? {} : {failure: oneLine(outcome.reason) ?? 'the planning session ended without a plan'}),
    ...(outcome.ended && state.planning ? {planning: endedPlanning(state.planning, outcome.ended)} : {}),
    status: statusAfter({kind: 'planned', ok: outcome.ok}),
  }))
}

function endedPlanning(planning: PlanningSession, ended: PlanningEnd): PlanningSession {
  const {pid: _gone, ...rest} = planning
  const totals = ended.turns === undefined ? {} : {costUsd: ended.costUsd, turns: ended.turns, usage: {...(ended.usage as Record<string, number>)}}
  return {...rest, ...totals, endedAt: new Date().toISOString(), exitCode: ended.exitCode}
}

/** A reason as one short line: what a listing can show. */
function oneLine(reason: string | undefined): string | undefined {
  const line = reason?.split('\n')[0].trim()
  if (!line) return undefined
  return line.length > 300 ? `${line.slice(0, 297)}...` : line
}

/** Records whether the work tree had changes when the plan was made, where that was not known when its state was first written. */
export async function recordDirty(planPath: string, dirty: boolean): Promise<void> {
  await update(planPath, (state) => (state.repository ? {...state, repository: {...state.repository, dirty}} : undefined))
}

/** Records the permissions the plan asks for (ExitPlanMode's `allowedPrompts`); false where wave keeps no state for it. */
export async function recordAllowedPrompts(planPath: string, allowedPrompts: Array<{tool: string; prompt: string}>): Promise<boolean> {
  let recorded = false
  await update(planPath, (state) => {
    recorded = true
    return {...state, allowedPrompts}
  })
  return recorded
}

/**
 * A decision was recorded on the plan (decision.ts's approvePlan). `decidedAt`: when the record beside
 * the plan was decided, where this decision is that record (the writer knows it: nothing is read back).
 */
export async function decisionRecorded(planPath: string, decision: Decision, decidedAt?: string): Promise<void> {
  // A failure is the newest event's to explain: a decision or a run after it makes it history.
  await update(planPath, ({failure: _past, ...state}) => ({...state, status: statusAfter({decision, kind: 'decided'})}), decidedAt)
}

/**
 * A run started, went on or ended: its record (by `startedAt`) replaced in the state. A plan copied
 * here with only its approval record gets a state started from `origin`. `unitsLeft`: for a unit's run,
 * how many units have not succeeded given the runs now recorded (the plan is ran once none is left).
 * Answers the state written.
 */
export async function runRecorded(planPath: string, run: PlanRun, origin: PlanOrigin, unitsLeft?: (state: PlanState) => number): Promise<PlanState> {
  const {failure: _past, ...state} = (await readPlanState(planPath)) ?? {...freshState(planNameOf(planPath), origin), status: 'approved' as const}
  const runs = [...state.runs.filter((r) => r.startedAt !== run.startedAt), {...run}]
  const next = {...state, runs}
  const status = statusAfter({kind: 'run', run, unitsLeft: unitsLeft?.(next)})
  await writeState(planPath, {...next, status})
  return {...next, status}
}

async function update(planPath: string, change: (state: PlanState) => PlanState | undefined, decisionSeen?: string): Promise<void> {
  const state = await readPlanState(planPath)
  const next = state && change(state)
  if (next) await writeState(planPath, next, decisionSeen)
}

/**
 * The only writer of the state file: stamps the time and the decision beside the plan as seen (`seen`
 * when the caller wrote that decision itself, else the record read as it is now).
 */
async function writeState(planPath: string, state: PlanState, seen?: string): Promise<void> {
  const decisionSeen = seen ?? (await recordedDecision(planPath))?.at ?? null
  const next = {...state, decisionSeen, updatedAt: new Date().toISOString()}
  await writeFileAtomic(planSidecars(planPath).state, JSON.stringify(next, null, 2) + '\n')
}

/** The plan's state, or undefined when there is none or it cannot be used (listing plans, updating a status). */
export async function readPlanState(planPath: string): Promise<PlanState | undefined> {
  return readPlanStateChecked(planPath).catch(() => undefined)
}

/**
 * The plan's state for a command about to act on it: undefined when there is none, a usage error when
 * it cannot be read or is malformed (rather than a silent fresh state written over it).
 */
export async function readPlanStateChecked(planPath: string): Promise<PlanState | undefined> {
  const file = planSidecars(planPath).state
  return readJsonFile(file, planStateSchema, {
    exitCode: ExitCode.usage,
    hint: 'Fix it, or remove it (the plan and its approval record are enough to run it).',
    invalid: (problem, fault) =>
      fault === 'unreadable'
        ? `Cannot read the plan's state file ${file}: ${problem}.`
        : `The plan's state file ${file} is malformed (${problem}); wave leaves it as it is.`,
  })
}

interface RecordedDecision {
  decision: Decision
  at: string
  sandboxOff: boolean
}

/** The decision of the approval record beside the plan, read leniently (any tool may have written it). */
async function recordedDecision(planPath: string): Promise<RecordedDecision | undefined> {
  try {
    const record = JSON.parse(await readFile(planSidecars(planPath).approval, 'utf8'))
    if (typeof record?.decision === 'string' && (DECISIONS as readonly string[]).includes(record.decision)) {
      return {at: String(record.decidedAt ?? ''), decision: record.decision, sandboxOff: record.decision === 'approved' && record.sandbox?.enabled === false}
    }
  } catch {}

  return undefined
}

/**
 * A plan's status from its state and the decision recorded beside it: the state's, unless the record
 * holds a decision the state has not seen (written since by another tool, or a plan with no state).
 */
export function planStatus(state: PlanState | undefined, decision: {decision: Decision; at: string} | undefined): PlanStatus {
  if (!state) return decision?.decision ?? statusAfter({kind: 'created'})
  if (!decision) return state.status
  // A state from before `decisionSeen`: a record decided after the state was written is news.
  const seen = state.decisionSeen === undefined ? decision.at <= state.updatedAt : state.decisionSeen === decision.at
  return seen ? state.status : decision.decision
}

interface PlanListing {
  /** Approved to run with commands unsandboxed (`--sandbox off`): shown wherever the plan is listed. */
  sandboxOff: boolean
  /** USD spent on the plan's sessions (planning and runs); null when a model had no known price. */
  costUsd: number | null
  name: string
  path: string
  /** Whether the plan file exists: a planning session that failed before writing it leaves only the state. */
  planFile: boolean
  status: PlanStatus
  /** Why a failed plan failed (the planning session's error, or the last run's exit code); null otherwise. */
  reason: string | null
  task: string
  workspace: string | null
  createdAt: string
  updatedAt: string
}

const STATE_SUFFIX = planSidecars(`x${PLAN_EXTENSION}`).state.slice(1)

/** Why a plan is `failed`: the error its planning session ended with, else the exit code its last run ended with. */
export function failureReason(state: PlanState | undefined, status: PlanStatus): string | null {
  if (status !== 'failed' || !state) return null
  if (state.failure) return state.failure
  const last = state.runs.reduce<PlanRun | undefined>((newest, run) => (newest && newest.startedAt > run.startedAt ? newest : run), undefined)
  return last?.exitCode === undefined ? null : `the last run exited with code ${last.exitCode}`
}

/**
 * Every plan in the plans directory with what wave knows of it, newest first: each plan file, and
 * each state without one (a planning session that failed, or is still going, before the file was written).
 */
export async function listPlans(): Promise<PlanListing[]> {
  const dir = plansDir()
  let names: string[]
  try {
    const files = await readdir(dir)
    names = [
      ...new Set(
        files.flatMap((file) =>
          file.endsWith(STATE_SUFFIX) ? [file.slice(0, -STATE_SUFFIX.length)] : file.endsWith(PLAN_EXTENSION) ? [file.slice(0, -PLAN_EXTENSION.length)] : [],
        ),
      ),
    ]
  } catch {
    return []
  }

  const listings = await Promise.all(
    names.map(async (name): Promise<PlanListing | undefined> => {
      const planPath = path.join(dir, name + PLAN_EXTENSION)
      const state = await readPlanState(planPath)
      const present = await lstat(planPath).catch(() => undefined)
      // A dangling link, a directory, or a plan removed while listing is not a plan to show.
      const info = present ? await stat(planPath).catch(() => undefined) : undefined
      if (present && !info?.isFile()) return undefined
      // No plan file: only a readable state makes it a plan (a stray or damaged state file is not one).
      if (!info && !state) return undefined
      const decision = info ? await recordedDecision(planPath) : undefined
      const status = planStatus(state, decision)
      return {
        costUsd: state ? planCost(state) : 0,
        sandboxOff: decision?.sandboxOff ?? false,
        createdAt: state?.createdAt ?? info!.birthtime.toISOString(),
        name,
        path: planPath,
        planFile: info !== undefined,
        reason: failureReason(state, status),
        status,
        task: state?.task ?? '',
        updatedAt: state?.updatedAt ?? info!.mtime.toISOString(),
        workspace: state?.workspace ?? null,
      }
    }),
  )
  return listings.filter((listing): listing is PlanListing => listing !== undefined).sort((a, b) => b.createdAt.localeCompare(a.createdAt))
}
