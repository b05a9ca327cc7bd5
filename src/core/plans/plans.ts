import {randomBytes} from 'node:crypto'
import {appendFileSync, statSync} from 'node:fs'
import {link, lstat, mkdir, readdir, readFile, realpath, rm, stat, writeFile} from 'node:fs/promises'
import {homedir} from 'node:os'
import path from 'node:path'

import {adjectives, animals, uniqueNamesGenerator} from 'unique-names-generator'
import writeFileAtomic from 'write-file-atomic'
import {z} from 'zod'

import {ExitCode, usageError, WaveError} from '../errors.js'
import {readJsonFile} from '../json.js'
import {runReportSchema} from './report.js'
import {scrubSecrets} from '../secrets.js'
import {expandHome} from '../workspace/paths.js'
import type {RepositoryState} from '../workspace/snapshot.js'
import {settingsPlansDirectory} from '../settings.js'

export const PLAN_EXTENSION = '.md'

export function waveHome(): string {
  return process.env.WAVE_HOME ? path.resolve(process.env.WAVE_HOME) : path.join(homedir(), '.wave')
}

/** `plansDirectory` from the user settings file, else `$WAVE_HOME/plans`. */
export function plansDir(): string {
  return settingsPlansDirectory(waveHome()) ?? path.join(waveHome(), 'plans')
}

/** The endings of the files wave keeps beside a plan, sharing its name. */
const SIDECAR_SUFFIXES = {approval: '.approval.json', lock: '.lock', revisions: '.revisions.jsonl', state: '.state.json', transcript: '.transcript.jsonl'} as const

/** Where wave keeps what it knows of a plan: files beside it, sharing its name. */
export function planSidecars(planPath: string): Record<keyof typeof SIDECAR_SUFFIXES, string> {
  const base = planPath.endsWith(PLAN_EXTENSION) ? planPath.slice(0, -PLAN_EXTENSION.length) : planPath
  return {
    approval: base + SIDECAR_SUFFIXES.approval,
    lock: base + SIDECAR_SUFFIXES.lock,
    revisions: base + SIDECAR_SUFFIXES.revisions,
    state: base + SIDECAR_SUFFIXES.state,
    transcript: base + SIDECAR_SUFFIXES.transcript,
  }
}

export const planNameOf = (planPath: string) => path.basename(planPath, PLAN_EXTENSION)

/** A name `wave plans` could list: no directory part, nothing a path could climb with. */
const PLAN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/**
 * The plan a command names: a path as given, or a plan's name as `wave plans` lists it (with or
 * without `.md`), looked up in the plans directory unless a file of that name is here (a path that
 * exists wins). Only Markdown plans are plans: any other existing file is a usage error (exit 2), as is
 * a name that names nothing. A missing path is left to the caller to report. `unwritten`: a plan whose
 * file is not written yet but whose state exists (a planning session that failed early) counts.
 */
export async function resolvePlanReference(reference: string, options: {unwritten?: boolean} = {}): Promise<string> {
  let planPath = path.resolve(expandHome(reference))
  const name = reference.endsWith(PLAN_EXTENSION) ? reference.slice(0, -PLAN_EXTENSION.length) : reference
  if (PLAN_NAME.test(name) && !(await lstat(planPath).catch(() => undefined))) {
    const candidate = path.join(plansDir(), name + PLAN_EXTENSION)
    if (!(await exists(candidate)) && !(options.unwritten && (await exists(planSidecars(candidate).state)))) {
      throw usageError(`Plan not found: no file ${reference} here, and no plan named ${name} in ${plansDir()}.`, 'wave plans lists the plans by name.')
    }

    planPath = candidate
  }

  if (path.extname(planPath) !== PLAN_EXTENSION && (await lstat(planPath).catch(() => undefined))) {
    throw usageError(`Not a plan: ${reference} is not a Markdown file (.md); wave approves and runs only Markdown plans.`)
  }

  return planPath
}

const repositorySchema = z.object({
  branch: z.string().nullable(),
  /** Whether the work tree had changes. Absent until known: in a large work tree it is recorded after the session started (snapshot.ts). */
  dirty: z.boolean().optional(),
  head: z.string().nullable(),
  root: z.string(),
})

const runSchema = z.object({
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
})

export const PLAN_STATUSES = ['draft', 'approved', 'rejected', 'changes_requested', 'running', 'ran', 'failed'] as const

export const planStateSchema = z.object({
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
})

export type PlanState = z.infer<typeof planStateSchema>
export type PlanRun = z.infer<typeof runSchema>

export interface NewPlan {
  name: string
  path: string
  state: PlanState
}

const MAX_DRAWS = 1000

/** A fresh, never-used plan name: reserved by creating its state file exclusively, redrawn on collision. */
export async function createPlan(init: {task: string; workspace: string; model: string; repository: RepositoryState | null}): Promise<NewPlan> {
  const dir = await ensurePlansDir()
  for (let draw = 0; draw < MAX_DRAWS; draw++) {
    const name = drawName()
    const planPath = path.join(dir, name + PLAN_EXTENSION)
    if (await exists(planPath)) continue
    const now = new Date().toISOString()
    const state: PlanState = {
      createdAt: now,
      model: init.model,
      name,
      repository: init.repository,
      runs: [],
      status: 'draft',
      task: init.task,
      updatedAt: now,
      version: 1,
      workspace: init.workspace,
    }
    if (!(await createExclusive(planSidecars(planPath).state, JSON.stringify(state, null, 2) + '\n'))) continue

    return {name, path: planPath, state}
  }

  throw new Error(`Could not find an unused plan name in ${dir} after ${MAX_DRAWS} draws.`)
}

/**
 * Creates `file` with `content` only if no file of that name exists, atomically: the content goes to a
 * temporary file first, which is then hard-linked to the name (link fails if the name is taken). No
 * reader ever sees the file empty or half-written, and of two racing writers exactly one wins.
 * Returns false when the name was taken.
 */
export async function createExclusive(file: string, content: string): Promise<boolean> {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  await writeFile(temporary, content, {flag: 'wx', mode: 0o600})
  try {
    await link(temporary, file)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error
  } finally {
    await rm(temporary, {force: true})
  }

  // A file system without hard links: create exclusively, then fill (not atomic, still exclusive).
  try {
    await writeFile(file, content, {flag: 'wx', mode: 0o600})
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

function drawName(): string {
  return uniqueNamesGenerator({dictionaries: [adjectives, animals], length: 2, separator: '-', style: 'lowerCase'})
    .replaceAll(/[^a-z-]/g, '')
}

/** The plans directory, created on demand, as a real path (the policy compares real paths). */
export async function ensurePlansDir(): Promise<string> {
  const dir = plansDir()
  try {
    await mkdir(dir, {mode: 0o700, recursive: true})
    const real = await realpath(dir)
    if (!(await stat(real)).isDirectory()) throw Object.assign(new Error('not a directory'), {code: 'ENOTDIR'})
    return real
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'a file is in the way' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message
    throw usageError(`Cannot use the plans directory ${dir}: ${why}.`, 'Set WAVE_HOME (or plansDirectory in the user settings) to a directory wave can write.')
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file)
    return true
  } catch {
    return false
  }
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
      fault === 'unreadable' ? `Cannot read the plan's state file ${file}: ${problem}.` : `The plan's state file ${file} is malformed (${problem}); wave leaves it as it is.`,
  })
}

export async function writePlanState(planPath: string, state: PlanState): Promise<void> {
  const next = {...state, updatedAt: new Date().toISOString()}
  await writeFileAtomic(planSidecars(planPath).state, JSON.stringify(next, null, 2) + '\n')
}

/**
 * Reads a plan file given on the command line: it must exist, be a regular file, and hold text.
 * Returns its bytes (the approval binds them) and its text.
 */
export async function readPlanFile(planPath: string): Promise<{bytes: Buffer; text: string}> {
  let info: Awaited<ReturnType<typeof stat>>
  try {
    info = await stat(planPath)
  } catch {
    throw usageError(`Plan file not found: ${planPath}`)
  }

  if (!info.isFile()) throw usageError(`Not a plan file: ${planPath} is ${info.isDirectory() ? 'a directory' : 'not a regular file'}.`)
  let bytes: Buffer
  try {
    bytes = await readFile(planPath)
  } catch (error) {
    throw usageError(`Cannot read the plan file ${planPath}: ${(error as Error).message}`)
  }

  let text: string
  try {
    text = new TextDecoder('utf-8', {fatal: true}).decode(bytes)
  } catch {
    throw usageError(`The plan file ${planPath} is not UTF-8 text.`)
  }

  if (text.trim() === '') throw usageError(`The plan file ${planPath} is empty.`)
  return {bytes, text}
}

/**
 * Appends one entry to the plan's transcript (JSON lines); secrets are scrubbed on the way to disk.
 * Synchronously: a session appends twice a turn, and open-write-close takes microseconds where the
 * promise-based call costs three trips through libuv's thread pool (bench/RESULTS.md, per-turn overhead).
 */
export async function appendTranscript(planPath: string, entry: unknown): Promise<void> {
  appendFileSync(planSidecars(planPath).transcript, scrubSecrets(JSON.stringify(entry)) + '\n', {mode: 0o600})
}

export interface PlanListing {
  /** Approved to run with commands unsandboxed (`--sandbox off`): shown wherever the plan is listed. */
  sandboxOff: boolean
  /** USD spent on the plan's sessions (planning and runs); null when a model had no known price. */
  costUsd: number | null
  name: string
  path: string
  status: PlanState['status']
  task: string
  workspace: string | null
  createdAt: string
  updatedAt: string
}

/** Every plan in the plans directory with what wave knows of it, newest first. */
export async function listPlans(): Promise<PlanListing[]> {
  const dir = plansDir()
  let names: string[]
  try {
    names = (await readdir(dir)).filter((file) => file.endsWith(PLAN_EXTENSION))
  } catch {
    return []
  }

  const listings = await Promise.all(
    names.map(async (file): Promise<PlanListing | undefined> => {
      const planPath = path.join(dir, file)
      const state = await readPlanState(planPath)
      // A dangling link, a directory, or a plan removed while listing is not a plan to show.
      const info = await stat(planPath).catch(() => undefined)
      if (!info?.isFile()) return undefined
      const decision = await approvalDecision(planPath)
      // A decision recorded after the state was written (by another tool) is the newer status.
      const status = state && !(decision && decision.at > state.updatedAt) ? state.status : (decision?.decision ?? 'draft')
      return {
        costUsd: state ? planCost(state) : 0,
        sandboxOff: decision?.sandboxOff ?? false,
        createdAt: state?.createdAt ?? info.birthtime.toISOString(),
        name: planNameOf(planPath),
        path: planPath,
        status,
        task: state?.task ?? '',
        updatedAt: state?.updatedAt ?? info.mtime.toISOString(),
        workspace: state?.workspace ?? null,
      }
    }),
  )
  return listings.filter((listing): listing is PlanListing => listing !== undefined).sort((a, b) => b.createdAt.localeCompare(a.createdAt))
}

async function approvalDecision(planPath: string): Promise<{decision: PlanState['status']; at: string; sandboxOff: boolean} | undefined> {
  try {
    const record = JSON.parse(await readFile(planSidecars(planPath).approval, 'utf8'))
    if (typeof record?.decision === 'string' && (PLAN_STATUSES as readonly string[]).includes(record.decision)) {
      return {at: String(record.decidedAt ?? ''), decision: record.decision, sandboxOff: record.decision === 'approved' && record.sandbox?.enabled === false}
    }
  } catch {}

  return undefined
}

export function isRegularFile(file: string): boolean {
  // Synchronous: plan mode asks before every request, where a stat through the thread pool costs a trip round the event loop.
  try {
    return statSync(file, {throwIfNoEntry: false})?.isFile() ?? false
  } catch {
    return false
  }
}

/** Records whether the work tree had changes when the plan was made, where that was not known when its state was first written. */
export async function recordDirty(planPath: string, dirty: boolean): Promise<void> {
  const state = await readPlanState(planPath)
  if (state?.repository) await writePlanState(planPath, {...state, repository: {...state.repository, dirty}})
}

/** Sets the plan's status where wave keeps a state for it. */
export async function setPlanStatus(planPath: string, status: PlanState['status'], spentUsd?: number | null): Promise<void> {
  const state = await readPlanState(planPath)
  if (!state) return
  const costUsd = spentUsd === undefined ? state.costUsd : addCost(state.costUsd, spentUsd)
  await writePlanState(planPath, {...state, costUsd, status})
}

/** Costs add up; an unknown one (null) makes the total unknown. */
export function addCost(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a === null || b === null) return null
  return (a ?? 0) + (b ?? 0)
}

/** What a plan has cost so far: its planning sessions and its runs. */
export function planCost(state: PlanState): number | null {
  return state.runs.reduce<number | null>((total, run) => addCost(total, run.costUsd), state.costUsd ?? 0)
}

/** The files wave may keep for a plan: the plan itself and its sidecars. */
const planFiles = (planPath: string) => [planPath, ...Object.values(planSidecars(planPath))]

/** The pid of a live process holding the plan's run lock, if one does. */
export async function liveLockOwner(planPath: string): Promise<number | undefined> {
  const owner = Number.parseInt(await readFile(planSidecars(planPath).lock, 'utf8').catch(() => ''), 10)
  if (!owner) return undefined
  try {
    process.kill(owner, 0)
    return owner
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? owner : undefined
  }
}

export interface RemovedPlan {
  name: string
  path: string
  /** The files removed (the plan and what wave kept beside it). */
  files: string[]
}

/**
 * Removes a plan of the plans directory with everything wave keeps beside it: approval record, state,
 * transcript, a lock left by a run that died. Only wave's own plans: a plan elsewhere is the user's file
 * (exit 2). A plan being run is left alone (exit 1).
 */
export async function removePlan(planPath: string): Promise<RemovedPlan> {
  const dir = await realpath(plansDir()).catch(() => plansDir())
  const parent = await realpath(path.dirname(planPath)).catch(() => path.dirname(planPath))
  if (parent !== dir) throw usageError(`${planPath} is not in the plans directory ${dir}: wave removes only its own plans.`)
  const owned = path.join(dir, path.basename(planPath))
  const owner = await liveLockOwner(owned)
  if (owner) throw new WaveError(`The plan ${planNameOf(owned)} is running (pid ${owner}); it is left as it is.`, ExitCode.runtime)
  const files: string[] = []
  for (const file of planFiles(owned)) {
    if (!(await lstat(file).catch(() => undefined))) continue
    await rm(file, {force: true})
    files.push(file)
  }

  return {files, name: planNameOf(owned), path: owned}
}

/** A file of a plan: its name, then the plan's ending or one of its sidecars'. */
const SIDECAR = new RegExp(`^(.+?)(${[PLAN_EXTENSION, ...Object.values(SIDECAR_SUFFIXES)].map((suffix) => suffix.replaceAll('.', '\\.')).join('|')})$`)

/**
 * The plans of the plans directory (and the remains of planning sessions that never wrote one) whose
 * newest file was last changed before `cutoff` (ms since the epoch), oldest first.
 */
export async function plansUntouchedSince(cutoff: number): Promise<Array<{path: string; changedAt: string}>> {
  const dir = plansDir()
  const names = new Set<string>()
  for (const file of await readdir(dir).catch(() => [] as string[])) {
    const match = SIDECAR.exec(file)
    if (match) names.add(match[1])
  }

  const found: Array<{path: string; changedAt: number}> = []
  for (const name of names) {
    const planPath = path.join(dir, name + PLAN_EXTENSION)
    const times = await Promise.all(planFiles(planPath).map((file) => lstat(file).then((info) => info.mtimeMs, () => 0)))
    const changedAt = Math.max(...times)
    if (changedAt > 0 && changedAt < cutoff) found.push({changedAt, path: planPath})
  }

  return found.sort((a, b) => a.changedAt - b.changedAt).map((plan) => ({changedAt: new Date(plan.changedAt).toISOString(), path: plan.path}))
}
