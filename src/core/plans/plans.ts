import {randomBytes} from 'node:crypto'
import {appendFile, link, mkdir, readdir, readFile, realpath, rm, stat, writeFile} from 'node:fs/promises'
import {homedir} from 'node:os'
import path from 'node:path'

import {adjectives, animals, uniqueNamesGenerator} from 'unique-names-generator'
import writeFileAtomic from 'write-file-atomic'
import {z} from 'zod'

import {usageError} from '../errors.js'
import {scrubSecrets} from '../session/model.js'
import type {RepositoryState} from '../workspace/git.js'
import {settingsPlansDirectory} from '../settings.js'

export const PLAN_EXTENSION = '.md'

export function waveHome(): string {
  return process.env.WAVE_HOME ? path.resolve(process.env.WAVE_HOME) : path.join(homedir(), '.wave')
}

/** `plansDirectory` from the user settings file, else `$WAVE_HOME/plans`. */
export function plansDir(): string {
  return settingsPlansDirectory(waveHome()) ?? path.join(waveHome(), 'plans')
}

/** Where wave keeps what it knows of a plan: files beside it, sharing its name. */
export function planSidecars(planPath: string) {
  const base = planPath.endsWith(PLAN_EXTENSION) ? planPath.slice(0, -PLAN_EXTENSION.length) : planPath
  return {
    approval: `${base}.approval.json`,
    lock: `${base}.lock`,
    state: `${base}.state.json`,
    transcript: `${base}.transcript.jsonl`,
  }
}

export const planNameOf = (planPath: string) => path.basename(planPath, PLAN_EXTENSION)

const repositorySchema = z.object({
  branch: z.string().nullable(),
  dirty: z.boolean(),
  head: z.string().nullable(),
  root: z.string(),
})

const runSchema = z.object({
  approvalSha256: z.string().optional(),
  changedFiles: z.array(z.string()).default([]),
  endedAt: z.string().optional(),
  exitCode: z.number().optional(),
  startedAt: z.string(),
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

export async function readPlanState(planPath: string): Promise<PlanState | undefined> {
  let text: string
  try {
    text = await readFile(planSidecars(planPath).state, 'utf8')
  } catch {
    return undefined
  }

  const parsed = planStateSchema.safeParse(safeJson(text))
  return parsed.success ? parsed.data : undefined
}

/**
 * The plan's state for a command about to act on it: undefined when there is none, a usage error when
 * it cannot be read or is malformed (rather than a silent fresh state written over it).
 */
export async function readPlanStateChecked(planPath: string): Promise<PlanState | undefined> {
  const file = planSidecars(planPath).state
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw usageError(`Cannot read the plan's state file ${file}: ${code === 'EISDIR' ? 'it is a directory' : (error as Error).message}.`)
  }

  const parsed = planStateSchema.safeParse(safeJson(text))
  if (!parsed.success) {
    throw usageError(`The plan's state file ${file} is malformed; wave leaves it as it is.`, 'Fix it, or remove it (the plan and its approval record are enough to run it).')
  }

  return parsed.data
}

export async function writePlanState(planPath: string, state: PlanState): Promise<void> {
  const next = {...state, updatedAt: new Date().toISOString()}
  await writeFileAtomic(planSidecars(planPath).state, JSON.stringify(next, null, 2) + '\n')
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * Reads a plan file given on the command line: it must exist, be a regular file, and hold text.
 * Returns its bytes (the approval binds them) and its text.
 */
export async function readPlanFile(planPath: string): Promise<{bytes: Buffer; text: string}> {
  let info
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

/** Appends one entry to the plan's transcript (JSON lines); secrets are scrubbed on the way to disk. */
export async function appendTranscript(planPath: string, entry: unknown): Promise<void> {
  await appendFile(planSidecars(planPath).transcript, scrubSecrets(JSON.stringify(entry)) + '\n', {mode: 0o600})
}

/**
 * ExitPlanMode's checks, with Gemini CLI's care: a given path must resolve to the session's plan file,
 * which must exist and hold more than white space. Returns the problem, or undefined when it is ready.
 */
export async function planFileProblem(planFile: string, given: string | undefined, resolveGiven: (p: string) => Promise<string>): Promise<string | undefined> {
  if (given !== undefined) {
    const real = await resolveGiven(given)
    if (real !== planFile) return `plan_path ${given} is not this session's plan file. Write the plan to ${planFile}, then call ExitPlanMode again (plan_path may be omitted).`
  }

  let text: string
  try {
    const info = await stat(planFile)
    if (!info.isFile()) return `The plan file ${planFile} is not a regular file.`
    text = await readFile(planFile, 'utf8')
  } catch {
    return `No plan file exists yet. Write the plan to ${planFile} with the Write tool, then call ExitPlanMode.`
  }

  if (text.trim() === '') return `The plan file ${planFile} is empty. Write the plan into it, then call ExitPlanMode.`
  return undefined
}

export interface PlanListing {
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

async function approvalDecision(planPath: string): Promise<{decision: PlanState['status']; at: string} | undefined> {
  try {
    const record = JSON.parse(await readFile(planSidecars(planPath).approval, 'utf8'))
    if (typeof record?.decision === 'string' && (PLAN_STATUSES as readonly string[]).includes(record.decision)) {
      return {at: String(record.decidedAt ?? ''), decision: record.decision}
    }
  } catch {}

  return undefined
}

export async function isRegularFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile()
  } catch {
    return false
  }
}

/** Sets the plan's status where wave keeps a state for it. */
export async function setPlanStatus(planPath: string, status: PlanState['status']): Promise<void> {
  const state = await readPlanState(planPath)
  if (state) await writePlanState(planPath, {...state, status})
}
