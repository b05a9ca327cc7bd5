/**
 * What a stopped run leaves for the job that resumes it (`/wave resume`). A CI job's workspace and
 * WAVE_HOME are gone with its runner, so the recipe keeps the plans directory (the plan, its approval
 * record, its state and transcript) in a cache keyed by the plan's sha256, and wave writes the run's
 * changes there too, as a patch against the commit it ran on. The resuming job finds them here, or says
 * what is missing.
 */
import {readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {ExitCode} from '../../base/errors.js'
import {approvalPathFor, previousRecord, sha256Of} from '../../plans/approval.js'
import {readPlanState} from '../../plans/lifecycle.js'
import {planSidecars, plansDir} from '../../plans/store.js'
import type {Remote} from './remote.js'
import {newestRun} from '../resume.js'

/** The stopped run's changes, beside its plan. */
export const changesPathFor = (planPath: string) => planSidecars(planPath).transcript.replace(/\.transcript\.jsonl$/, '.changes.patch')

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

export type KeptRun = {planPath: string; text: string; patch?: string} | {missing: string}

/**
 * The kept run of plan `name` at `sha256`: its plan file with those bytes, an approval of them, and a
 * newest run that stopped at its checks or a limit. Otherwise what is missing, in a few words.
 */
export async function keptRun(name: string, sha256: string | undefined): Promise<KeptRun> {
  const planPath = path.join(plansDir(), `${name}.md`)
  const bytes = await readFile(planPath).catch(() => undefined)
  if (!bytes) return {missing: 'no cache of its state was restored'}
  if (!sha256 || sha256Of(bytes) !== sha256) return {missing: 'the state restored is of another version of the plan'}
  const record = previousRecord(approvalPathFor(planPath))
  if (record?.decision !== 'approved' || record.plan.sha256 !== sha256) return {missing: 'no approval of this version was kept'}
  const run = newestRun(await readPlanState(planPath))
  if (!run || (run.exitCode !== ExitCode.unmet && run.exitCode !== ExitCode.limit)) return {missing: 'its newest run did not stop at its checks or a limit'}
  const patch = changesPathFor(planPath)
  const hasPatch = await readFile(patch).then(
    () => true,
    () => false,
  )
  return {planPath, text: bytes.toString('utf8'), ...(hasPatch ? {patch} : {})}
}
