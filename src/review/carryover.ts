/**
 * What a stopped run, or a planning session stopped at a limit, leaves for the job that resumes it
 * (`/wave resume`). A CI job's workspace and
 * WAVE_HOME are gone with its runner, so the recipe keeps the plans directory (the plan, its approval
 * record, its state and transcript) in a cache, and wave writes the run's changes there too, as a patch
 * against the commit it ran on. The resuming job finds them here, or says what is missing.
 *
 * A cache is transport, not authority: on GitLab any pipeline of the project on a protected branch (and,
 * where a project shares caches between branches, any branch) can write a key, and the job that stopped
 * ran the plan's commands next to it. So the stopping job records the sha256 of each file the resume
 * reads (the approval record, the state, the transcript, the patch) in the plan's comment, which only
 * wave's token writes (`KeptDigests`), and the resuming job uses the restored files only when every one
 * of them has those bytes, and none of the plan's files there is a symbolic link or anything but a
 * regular file: the approval record grants the run's permissions, the patch becomes part of what is
 * pushed, the transcript is what the model is told it did. A planning session keeps less (`KeptPlanning`):
 * its state, its transcript and the plan so far, if it wrote one.
 */
import {lstat, readdir, readFile, rm, stat, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {ExitCode} from '../base/errors.js'
import {approvalPathFor, previousRecord, sha256Of} from '../plans/approval.js'
import {type PlanningSession, readPlanState} from '../plans/lifecycle.js'
import {planSidecars, plansDir} from '../plans/store.js'
import type {Remote} from './remote.js'
import {newestRun} from '../session/resume.js'

/** The stopped run's changes, beside its plan. */
const changesPathFor = (planPath: string) => planSidecars(planPath).transcript.replace(/\.transcript\.jsonl$/, '.changes.patch')

/** The sha256 of each file a resume reads, as the stopping job wrote them (the patch only when there were changes). */
interface KeptDigests {
  approval: string
  state: string
  transcript: string
  changes?: string
}

/** The files a resume reads, by their part in it. */
const keptFiles = (planPath: string): Record<keyof KeptDigests, string> => ({
  approval: approvalPathFor(planPath),
  changes: changesPathFor(planPath),
  state: planSidecars(planPath).state,
  transcript: planSidecars(planPath).transcript,
})

/** What each kept file is, in a refusal. */
const KEPT_WORDS: Record<keyof KeptDigests, string> = {
  approval: 'approval record',
  changes: "run's changes (the patch)",
  state: 'state',
  transcript: 'transcript',
}

/** Writes the workspace's changes beside the plan (no file when nothing changed). */
export async function keepStoppedRun(remote: Remote, planPath: string): Promise<void> {
  const scratch = path.join(tmpdir(), `wave-index-${process.pid}-${Date.now()}`)
  try {
    const patch = await remote.changesPatch(scratch)
    const file = changesPathFor(planPath)
    if (patch.trim()) await writeFile(file, patch, {mode: 0o600})
    else await rm(file, {force: true})
  } finally {
    await rm(scratch, {force: true})
  }
}

/** The digests of what a stopped run left, for its comment (keepStoppedRun has written the patch, or removed it). */
export async function keptDigests(planPath: string): Promise<KeptDigests> {
  const files = keptFiles(planPath)
  const digest = async (file: string) => sha256Of(await readFile(file))
  const changes = await readFile(files.changes).then(sha256Of, () => undefined)
  return {
    approval: await digest(files.approval),
    state: await digest(files.state),
    transcript: await digest(files.transcript),
    ...(changes ? {changes} : {}),
  }
}

type KeptRun =
  /** `priorCostUsd`: what the stopped run had spent, as its record says. */
  | {planPath: string; text: string; patch?: string; priorCostUsd?: number | null}
  /** Nothing (usable) was restored: start over. */
  | {missing: string}
  /** Something was restored, but not the bytes the stopping job recorded: it is not used. */
  | {tampered: string}

/**
 * The kept run of plan `name` at `sha256`: its plan file with those bytes, and the files a resume reads
 * with the digests its comment recorded (`digests`; absent, the comment recorded none, and nothing
 * restored is used), an approval of those bytes, and a newest run that stopped at its checks or a limit.
 * Otherwise what is missing, or what does not match, in a few words.
 */
export async function keptRun(name: string, sha256: string | undefined, digests: KeptDigests | undefined): Promise<KeptRun> {
  const planPath = path.join(plansDir(), `${name}.md`)
  const bytes = await readFile(planPath).catch(() => undefined)
  if (!bytes) return {missing: 'no cache of its state was restored'}
  if (!sha256 || sha256Of(bytes) !== sha256) return {missing: 'the state restored is of another version of the plan'}
  if (!digests) return {missing: 'its comment records no digest of the state it kept, so nothing restored can be checked'}
  const odd = await notRegular(name)
  if (odd) return {tampered: `${odd} is not a regular file`}
  const files = keptFiles(planPath)
  for (const part of ['approval', 'state', 'transcript', 'changes'] as const) {
    const expected = digests[part]
    if (expected === undefined) continue
    const actual = await readFile(files[part]).then(sha256Of, () => undefined)
    if (actual === undefined) return {missing: `its ${KEPT_WORDS[part]} was not restored`}
    if (actual !== expected)
      return {tampered: `its ${KEPT_WORDS[part]} is not the one the stopped run left (sha256 ${actual.slice(0, 12)}…, recorded ${expected.slice(0, 12)}…)`}
  }

  const record = previousRecord(files.approval)
  if (record?.decision !== 'approved' || record.plan.sha256 !== sha256) return {missing: 'no approval of this version was kept'}
  const run = newestRun(await readPlanState(planPath))
  if (!run || (run.exitCode !== ExitCode.unmet && run.exitCode !== ExitCode.limit)) return {missing: 'its newest run did not stop at its checks or a limit'}
  // The patch is applied only when the comment names one: a patch file the stopping job did not leave is not the run's.
  return {planPath, priorCostUsd: run.costUsd, text: bytes.toString('utf8'), ...(digests.changes ? {patch: files.changes} : {})}
}

/** The first of the plan's files in the plans directory that is not a regular file (a link could send wave's writes anywhere). */
async function notRegular(name: string): Promise<string | undefined> {
  const dir = plansDir()
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) return 'the plans directory'
  for (const entry of await readdir(dir)) {
    if (!entry.startsWith(`${name}.`)) continue
    if (!(await lstat(path.join(dir, entry))).isFile()) return entry
  }

  return undefined
}

/** The sha256 of each file a planning session's resume reads: its state, its transcript, and the plan so far (absent: it wrote none). */
interface KeptPlanning {
  state: string
  transcript: string
  plan?: string
}

/** The digests of what a planning session stopped at a limit left, for its comment. */
export async function keptPlanningDigests(planPath: string): Promise<KeptPlanning> {
  const digest = (file: string) => readFile(file).then(sha256Of)
  const plan = await digest(planPath).catch(() => undefined)
  return {
    state: await digest(planSidecars(planPath).state),
    transcript: await digest(planSidecars(planPath).transcript),
    ...(plan ? {plan} : {}),
  }
}

type KeptSession = {planPath: string; planning: PlanningSession} | {missing: string} | {tampered: string}

/**
 * The kept planning session of plan `name`: its state and transcript with the digests its comment
 * recorded, and its plan so far with the one recorded (no plan file where none was), its newest planning
 * session not ended with a plan. Otherwise what is missing, or what does not match, in a few words.
 */
export async function keptPlanning(name: string, digests: KeptPlanning | undefined): Promise<KeptSession> {
  const planPath = path.join(plansDir(), `${name}.md`)
  if (!digests) return {missing: 'its comment records no digest of the state it kept, so nothing restored can be checked'}
  const files = {plan: planPath, state: planSidecars(planPath).state, transcript: planSidecars(planPath).transcript}
  if (!(await lstat(files.state).catch(() => undefined))) return {missing: 'no cache of its state was restored'}
  const odd = await notRegular(name)
  if (odd) return {tampered: `${odd} is not a regular file`}
  for (const part of ['state', 'transcript', 'plan'] as const) {
    const actual = await readFile(files[part]).then(sha256Of, () => undefined)
    const expected = digests[part]
    if (expected === undefined) {
      // A plan file the stopped session did not leave is not its plan so far.
      if (actual !== undefined) return {tampered: 'a plan file the stopped session did not leave was restored'}
      continue
    }

    const words = part === 'plan' ? 'plan so far' : part
    if (actual === undefined) return {missing: `its ${words} was not restored`}
    if (actual !== expected)
      return {tampered: `its ${words} is not the one the stopped session left (sha256 ${actual.slice(0, 12)}…, recorded ${expected.slice(0, 12)}…)`}
  }

  const planning = (await readPlanState(planPath))?.planning
  if (!planning || planning.exitCode === ExitCode.ok) return {missing: 'its newest planning session did not stop before its plan'}
  return {planPath, planning}
}
