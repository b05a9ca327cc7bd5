/**
 * What a plan unit's job hands on (`wave run --unit`): its change as a binary-safe patch against the
 * plan's base commit, and its result (plans/unit-result.ts) naming the patch by file name and sha256.
 * Written whether the unit succeeded or not: the merge says which units failed.
 */
import {mkdir} from 'node:fs/promises'
import path from 'node:path'

import writeFileAtomic from 'write-file-atomic'

import {WaveError} from '../base/errors.js'
import {workTreePatch} from '../base/workspace/patch.js'
import {type ApprovalRecord, sha256Of} from '../plans/approval.js'
import type {PlanRun} from '../plans/lifecycle.js'
import {buildReport} from '../plans/report.js'
import {planNameOf, planSidecars, unitOutputPaths} from '../plans/store.js'
import {UNIT_RESULT_VERSION, type UnitResult} from '../plans/unit-result.js'

declare module '../base/errors.js' {
  interface FailureDetails {
    /** A plan unit's run: the unit, and where its result and patch were written. */
    unit?: UnitFiles
  }
}

export interface UnitFiles {
  name: string
  result: string
  patch: string
}

interface UnitOutputInput {
  planPath: string
  /** The approval as decided (its sha256 and time bind the result). */
  record: ApprovalRecord
  unit: string
  run: PlanRun
  /** The plan's base commit, and the repository's top. */
  base: string
  top: string
  resultOut?: string
  patchOut?: string
}

/** Where the unit's files go: `--result-out` and `--patch-out`, else beside the plan. */
function unitFilePaths(planPath: string, unit: string, given: {resultOut?: string; patchOut?: string}): UnitFiles {
  const defaults = unitOutputPaths(planPath, unit)
  return {name: unit, patch: path.resolve(given.patchOut ?? defaults.patch), result: path.resolve(given.resultOut ?? defaults.result)}
}

/** Writes the unit's patch, then its result. wave's own files beside the plan are never part of the patch. */
export async function writeUnitOutputs(input: UnitOutputInput): Promise<UnitFiles> {
  const files = unitFilePaths(input.planPath, input.unit, input)
  const own = [input.planPath, ...Object.values(planSidecars(input.planPath)), files.result, files.patch]
  const inside = own
    .map((file) => path.relative(input.top, path.resolve(file)))
    .filter((relative) => relative && !relative.startsWith('..') && !path.isAbsolute(relative))
  let patch: Buffer
  try {
    patch = await workTreePatch(input.top, input.base, inside)
  } catch (error) {
    throw new WaveError(`Could not make the unit ${input.unit}'s patch: ${(error as Error).message}.`)
  }

  const {run} = input
  const report = run.report ?? buildReport({changed: run.changedFiles, checks: [], denials: [], scope: undefined})
  const result: UnitResult = {
    approvalDecidedAt: input.record.decidedAt ?? null,
    base: input.base,
    costUsd: run.costUsd ?? null,
    endedAt: run.endedAt ?? new Date().toISOString(),
    exitCode: run.exitCode ?? 1,
    outcome: run.exitCode === 0 ? 'succeeded' : 'failed',
    patch: {bytes: patch.length, file: path.basename(files.patch), sha256: sha256Of(patch)},
    plan: {name: input.record.plan.name ?? planNameOf(input.planPath), sha256: input.record.plan.sha256.toLowerCase()},
    report,
    startedAt: run.startedAt,
    turns: run.turns ?? 0,
    unit: input.unit,
    version: UNIT_RESULT_VERSION,
  }
  try {
    await mkdir(path.dirname(files.patch), {recursive: true})
    await writeFileAtomic(files.patch, patch)
    await mkdir(path.dirname(files.result), {recursive: true})
    await writeFileAtomic(files.result, JSON.stringify(result, null, 2) + '\n')
  } catch (error) {
    throw new WaveError(`Could not write the unit ${input.unit}'s result or patch: ${(error as Error).message}.`)
  }

  return files
}
