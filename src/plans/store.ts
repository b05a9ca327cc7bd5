/**
 * A plan's files and names: where plans live, the files wave keeps beside each (approval record, state,
 * transcript, run lock), how a command's plan reference becomes a path, and removing plans. What a
 * plan's state says and how it changes is lifecycle.ts; its transcript, transcript.ts.
 */
import {randomBytes} from 'node:crypto'
import {statSync} from 'node:fs'
import {link, lstat, mkdir, readdir, readFile, realpath, rm, stat, writeFile} from 'node:fs/promises'
import path from 'node:path'

import {adjectives, animals, uniqueNamesGenerator} from 'unique-names-generator'

import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {waveHome} from '../base/home.js'
import {expandHome} from '../base/workspace/paths.js'
import {settingsPlansDirectory} from '../config/settings.js'

export const PLAN_EXTENSION = '.md'

/** `plansDirectory` from the user settings file, else `$WAVE_HOME/plans`. */
export function plansDir(): string {
  return settingsPlansDirectory(waveHome()) ?? path.join(waveHome(), 'plans')
}

/** The endings of the files wave keeps beside a plan, sharing its name. */
const SIDECAR_SUFFIXES = {
  approval: '.approval.json',
  lock: '.lock',
  revisions: '.revisions.jsonl',
  state: '.state.json',
  transcript: '.transcript.jsonl',
} as const

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

const stemOf = (planPath: string) => (planPath.endsWith(PLAN_EXTENSION) ? planPath.slice(0, -PLAN_EXTENSION.length) : planPath)

/** Where a unit's result and patch go by default: beside the plan, `<plan>.unit-<name>.json` and `.patch`. */
export function unitOutputPaths(planPath: string, unit: string): {result: string; patch: string} {
  const stem = stemOf(planPath)
  return {patch: `${stem}.unit-${unit}.patch`, result: `${stem}.unit-${unit}.json`}
}

/**
 * Where the whole output of the `index`th check (from 0) of a run's `round`th run of its checks goes:
 * beside the plan, `<plan>.check-<round>-<N>.log`, every round its own (a failing round's evidence is not
 * written over by the retry that passed); a unit's run its own, `<plan>.unit-<name>.check-<round>-<N>.log`
 * (units run side by side).
 */
export function checkLogPath(planPath: string, index: number, unit?: string, round = 1): string {
  return `${checkLogStem(planPath, unit)}.check-${round}-${index + 1}.log`
}

const checkLogStem = (planPath: string, unit?: string) => `${stemOf(planPath)}${unit === undefined ? '' : `.unit-${unit}`}`

/** Where a run's check logs go, round by round (Enforcement numbers the rounds). */
export interface CheckLogs {
  /** The newest round whose logs are already beside the plan (a stopped run's): a run's rounds are numbered after it. */
  readonly after: number
  /** The log of the `index`th check (from 0) of round `round`. */
  path(round: number, index: number): string
}

/**
 * A run's check logs: each round of its checks its own files, numbered after the rounds already beside
 * the plan (a resumed run's follow the stopped run's, and a new run's write over no earlier run's).
 */
export async function checkLogs(planPath: string, unit?: string): Promise<CheckLogs> {
  const stem = checkLogStem(planPath, unit)
  const earlier = new RegExp(`^${escapeRegExp(path.basename(stem))}\\.check-(\\d+)-\\d+\\.log$`)
  const files = await readdir(path.dirname(stem)).catch(() => [] as string[])
  return {
    after: Math.max(0, ...files.map((file) => Number(earlier.exec(file)?.[1] ?? 0))),
    path: (round, index) => checkLogPath(planPath, index, unit, round),
  }
}

const escapeRegExp = (text: string) => text.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&')

/**
 * The files a plan's runs left beside it besides its sidecars: the check logs, and each unit's result,
 * patch and check logs (its units as its approval record and its state name them, read leniently: a
 * damaged file names none).
 */
async function runFilesOf(planPath: string): Promise<string[]> {
  const sidecars = planSidecars(planPath)
  const units = new Set<string>()
  const read = async (file: string) => JSON.parse(await readFile(file, 'utf8').catch(() => 'null')) as unknown
  const named = (list: unknown, key: string) => (Array.isArray(list) ? list.map((item) => (item as Record<string, unknown> | null)?.[key]) : [])
  for (const name of [
    ...named(((await read(sidecars.approval).catch(() => null)) as {units?: unknown} | null)?.units, 'name'),
    ...named(((await read(sidecars.state).catch(() => null)) as {runs?: unknown} | null)?.runs, 'unit'),
  ]) {
    if (typeof name === 'string' && PLAN_NAME.test(name)) units.add(name)
  }

  const stem = path.basename(stemOf(planPath))
  const prefixes = ['', ...[...units].map((unit) => `.unit-${unit}`)]
  const logs = new RegExp(`^(?:${prefixes.map((prefix) => escapeRegExp(stem + prefix)).join('|')})\\.check-\\d+(?:-\\d+)?\\.log$`)
  const dir = path.dirname(planPath)
  const beside = (await readdir(dir).catch(() => [] as string[])).filter((file) => logs.test(file)).map((file) => path.join(dir, file))
  return [...beside.sort(), ...[...units].flatMap((unit) => Object.values(unitOutputPaths(planPath, unit)))]
}

/** A name `wave plans` could list (wave draws `gentle-breeze`): no directory part, nothing a path could climb with. */
export const PLAN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

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
      // The plans of names close to the one given ("did you mean"), computed only on the way to this error.
      const {didYouMean} = await import('../base/suggestions.js')
      const suggestion = didYouMean(name, await planNames())
      throw usageError(
        `Plan not found: no file ${reference} here, and no plan named ${name} in ${plansDir()}${suggestion}.`,
        'wave plans lists the plans by name.',
      )
    }

    planPath = candidate
  }

  if (path.extname(planPath) !== PLAN_EXTENSION && (await lstat(planPath).catch(() => undefined))) {
    throw usageError(`Not a plan: ${reference} is not a Markdown file (.md); wave approves and runs only Markdown plans.`)
  }

  return planPath
}

/** The names of the plans in the plans directory, those whose planning session failed before writing the plan included. */
async function planNames(): Promise<string[]> {
  const files = await readdir(plansDir()).catch(() => [] as string[])
  const names = files.flatMap((file) =>
    file.endsWith(SIDECAR_SUFFIXES.state) ? [file.slice(0, -SIDECAR_SUFFIXES.state.length)] : file.endsWith(PLAN_EXTENSION) ? [planNameOf(file)] : [],
  )
  return names.filter((name) => PLAN_NAME.test(name))
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

/** A plan name as wave draws them: two lowercase English words joined by `-`. */
export function drawPlanName(): string {
  return uniqueNamesGenerator({dictionaries: [adjectives, animals], length: 2, separator: '-', style: 'lowerCase'}).replaceAll(/[^a-z-]/g, '')
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
    const why =
      code === 'ENOTDIR' || code === 'EEXIST' ? 'a file is in the way' : code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message
    throw usageError(`Cannot use the plans directory ${dir}: ${why}.`, 'Set WAVE_HOME (or plansDirectory in the user settings) to a directory wave can write.')
  }
}

/** Whether anything (a file, a directory, a link that leads somewhere) is at `file`. */
export async function exists(file: string): Promise<boolean> {
  try {
    await stat(file)
    return true
  } catch {
    return false
  }
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

export function isRegularFile(file: string): boolean {
  // Synchronous: plan mode asks before every request, where a stat through the thread pool costs a trip round the event loop.
  try {
    return statSync(file, {throwIfNoEntry: false})?.isFile() ?? false
  } catch {
    return false
  }
}

/** The files wave may keep for a plan: the plan itself and its sidecars. */
const planFiles = (planPath: string) => [planPath, ...Object.values(planSidecars(planPath))]

/** The pid of a live process holding the plan's run lock, if one does. */
export async function liveLockOwner(planPath: string): Promise<number | undefined> {
  const owner = Number.parseInt(await readFile(planSidecars(planPath).lock, 'utf8').catch(() => ''), 10)
  return owner && processAlive(owner) ? owner : undefined
}

/** Whether a process lives (one of another user's counts: signalling it is refused, not failed). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export interface RemovedPlan {
  name: string
  path: string
  /** The files removed (the plan and what wave kept beside it: its sidecars, check logs, units' results and patches). */
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
  for (const file of [...(await runFilesOf(owned)), ...planFiles(owned)]) {
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
    const times = await Promise.all(
      planFiles(planPath).map((file) =>
        lstat(file).then(
          (info) => info.mtimeMs,
          () => 0,
        ),
      ),
    )
    const changedAt = Math.max(...times)
    if (changedAt > 0 && changedAt < cutoff) found.push({changedAt, path: planPath})
  }

  return found.sort((a, b) => a.changedAt - b.changedAt).map((plan) => ({changedAt: new Date(plan.changedAt).toISOString(), path: plan.path}))
}
