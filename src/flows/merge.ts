/**
 * `wave plans merge <plan> RESULT...`: the units' work put together. Every result is checked against
 * the plan and its approval (sha256, the approval's time, unit names: none unknown, none twice), each
 * patch against the sha256 its result gives; missing and failed units are named and nothing is applied
 * (unless `--partial`); the patches are applied in the record's unit order onto the plan's base, all or
 * nothing (base/workspace/patch.ts: a conflict, or a change outside its unit's paths, refuses the merge
 * naming the unit); then the plan's own checks (the record's `verify`) run once on the merged tree, in
 * the approval's sandbox (plans/checks.ts). Results and patches come from sandboxed jobs: validated,
 * never run.
 */
import {lstat, readdir, readFile} from 'node:fs/promises'
import path from 'node:path'

import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {visible} from '../base/text.js'
import {applyPatches, hasCommit, MAX_PATCH_BYTES} from '../base/workspace/patch.js'
import {headOf, sessionWorkspace} from '../base/workspace/git.js'
import {changedBetween, WorkTreeWatch} from '../base/workspace/worktree.js'
import {assertSandboxForCommands, openSandboxNetwork} from '../base/process/runner.js'
import {sandboxSettings} from '../base/process/sandbox.js'
import {loadSettings} from '../config/settings.js'
import {type ApprovalRecord, approvalPathFor, assertApproved, readApproval, sha256Of} from '../plans/approval.js'
import {runChecks} from '../plans/checks.js'
import {type CheckResult, checkPassed} from '../plans/report.js'
import {planNameOf, readPlanFile, resolvePlanReference} from '../plans/store.js'
import {type ApprovedUnit, parseUnitResult, type UnitResult} from '../plans/unit-result.js'
import {scopeMatcher} from '../policy/scope.js'

interface MergeOptions {
  planPath: string
  /** Result files, or folders of them (every `.json` file in a folder, at any depth, is a result). */
  results: string[]
  approvalPath?: string
  /** `--cwd`: the work tree to merge into (default: the top of the repository holding the current directory). */
  cwd?: string
  /** `--partial`: apply the units that succeeded even when others are missing or failed. */
  partial?: boolean
  signal: AbortSignal
  warn(message: string): void
  onCheck?(event: {command: string; result?: CheckResult}): void
}

/** One unit as the merge saw it: a row of the report. */
interface MergedUnit {
  unit: string
  /** merged: its patch applied; failed: its run failed; missing: no result; skipped: not applied (the merge stopped first). */
  status: 'merged' | 'failed' | 'missing' | 'skipped'
  exitCode: number | null
  costUsd: number | null
  /** The files its patch changed (merged), or its run's changed files. */
  changed: string[]
  outOfScope: string[]
  checks: Array<{command: string; exitCode: number | null}>
  result: string | null
}

export interface MergeOutcome {
  name: string
  planPath: string
  sha256: string
  base: string
  workspace: string
  units: MergedUnit[]
  missing: string[]
  failed: string[]
  applied: boolean
  /** The plan-level checks, run once on the merged tree (empty when none, or nothing was applied). */
  checks: CheckResult[]
  costUsd: number | null
  /** Why the merge did not meet its plan (exit 7), or undefined. */
  problem?: string
}

interface ReadResult {
  file: string
  result: UnitResult
  patch: Buffer
}

/** Every result file the arguments name: a file as given, a folder's `.json` files (sorted, at any depth). */
async function resultFiles(given: readonly string[]): Promise<string[]> {
  const files: string[] = []
  for (const entry of given) {
    const info = await lstat(entry).catch(() => undefined)
    if (!info) throw usageError(`No unit result at ${entry}.`)
    if (info.isDirectory()) {
      const found = (await readdir(entry, {recursive: true, withFileTypes: true}))
        .filter((dirent) => dirent.isFile() && dirent.name.endsWith('.json'))
        .map((dirent) => path.join(dirent.parentPath, dirent.name))
        .sort()
      if (found.length === 0) throw usageError(`The folder ${entry} holds no unit result (.json file).`)
      files.push(...found)
    } else if (info.isFile()) files.push(entry)
    else throw usageError(`${entry} is not a file or a folder of unit results.`)
  }

  return [...new Set(files.map((file) => path.resolve(file)))]
}

/** A result and its patch, read and checked against each other; anything wrong is a usage error naming the file. */
async function readResult(file: string): Promise<ReadResult> {
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw usageError(`Cannot read the unit result ${file}: ${error.message}.`)
  })
  const result = parseUnitResult(text, file)
  const patchFile = path.join(path.dirname(file), result.patch.file)
  const info = await lstat(patchFile).catch(() => undefined)
  if (!info?.isFile()) throw usageError(`The unit ${result.unit}'s patch ${patchFile} (named by ${file}) is missing.`, 'Keep each patch beside its result.')
  if (info.size > MAX_PATCH_BYTES) throw usageError(`The unit ${result.unit}'s patch ${patchFile} is over ${MAX_PATCH_BYTES} bytes.`)
  const patch = await readFile(patchFile)
  if (sha256Of(patch) !== result.patch.sha256) {
    throw usageError(`The unit ${result.unit}'s patch ${patchFile} is not the one its result ${file} names (sha256 differs).`)
  }

  return {file, patch, result}
}

/**
 * Checks every result against the plan and its approval: the plan's sha256, the approval's time, a
 * known unit, none twice, a base that is the plan's. The first problem refuses the whole merge (exit 2).
 */
export function checkResults(record: ApprovalRecord, results: readonly ReadResult[], planPath: string): Map<string, ReadResult> {
  const units = new Set((record.units ?? []).map((unit) => unit.name))
  const byUnit = new Map<string, ReadResult>()
  const name = planNameOf(planPath)
  for (const read of results) {
    const {file, result} = read
    if (result.plan.sha256 !== record.plan.sha256.toLowerCase()) {
      throw usageError(
        `The unit result ${file} is of another plan (sha256 ${result.plan.sha256.slice(0, 12)}…, not ${name}'s ${record.plan.sha256.slice(0, 12)}…).`,
      )
    }

    if (record.decidedAt && result.approvalDecidedAt !== record.decidedAt) {
      throw usageError(
        `The unit result ${file} ran under another approval of ${name} (decided ${result.approvalDecidedAt ?? 'unknown'}, this one ${record.decidedAt}).`,
        'Run the unit again under the current approval.',
      )
    }

    if (!units.has(result.unit))
      throw usageError(`The unit result ${file} is of unit ${result.unit}, which ${name} does not have (its units: ${[...units].join(', ')}).`)
    const twin = byUnit.get(result.unit)
    if (twin) throw usageError(`The unit ${result.unit} has two results: ${twin.file} and ${file}. Give each unit's one result.`)
    byUnit.set(result.unit, read)
  }

  return byUnit
}

export async function mergeUnits(options: MergeOptions): Promise<MergeOutcome> {
  const planPath = await resolvePlanReference(options.planPath)
  const {bytes} = await readPlanFile(planPath)
  const recordPath = options.approvalPath ? path.resolve(options.approvalPath) : approvalPathFor(planPath)
  const record = await readApproval(recordPath, options.planPath)
  assertApproved(record, recordPath, options.planPath, bytes)
  const name = planNameOf(planPath)
  const units = record.units ?? []
  if (units.length === 0) throw usageError(`The plan ${name} has no units: there is nothing to merge.`, `Run it whole: wave run ${name}`)
  // The plan's checks run on the merged tree: a merge that could not run them contained refuses before applying anything.
  if ((record.verify ?? []).length > 0) assertSandboxForCommands(record)

  const place = await sessionWorkspace(options.cwd ?? process.cwd(), options.cwd !== undefined)
  if (!place.repository) throw usageError(`${place.workspace} is not in a git repository: the merge applies patches to a work tree.`)
  const top = place.repository
  const files = await resultFiles(options.results)
  const byUnit = checkResults(record, await Promise.all(files.map((file) => readResult(file))), planPath)

  const base = await baseOf(name, record, byUnit, top, options.warn)

  const missing = units.filter((unit) => !byUnit.has(unit.name)).map((unit) => unit.name)
  const failed = units.filter((unit) => byUnit.get(unit.name)?.result.outcome === 'failed').map((unit) => unit.name)
  const rows = unitRows(units, byUnit)
  const outcome = (applied: boolean, checks: CheckResult[], problem?: string): MergeOutcome => ({
    applied,
    base,
    checks,
    costUsd: [...rows.values()].reduce<number | null>(
      (sum, row) => (sum === null || row.costUsd === null ? (row.status === 'missing' ? sum : null) : Math.round((sum + row.costUsd) * 1e6) / 1e6),
      0,
    ),
    failed,
    missing,
    name,
    planPath,
    problem,
    sha256: record.plan.sha256,
    units: [...rows.values()],
    workspace: top,
  })

  const incomplete = [
    missing.length > 0 ? `${missing.length === 1 ? 'unit' : 'units'} ${missing.join(', ')} missing (no result)` : '',
    failed.length > 0 ? `${failed.length === 1 ? 'unit' : 'units'} ${failed.join(', ')} failed` : '',
  ]
    .filter(Boolean)
    .join('; ')
  if (incomplete && !options.partial) return outcome(false, [], `${incomplete}: nothing applied (--partial applies the units that succeeded)`)

  const toApply = units.filter((unit) => byUnit.get(unit.name)?.result.outcome === 'succeeded')
  const applied = await applyPatches(
    top,
    base,
    toApply.map((unit) => unitPatch(unit, byUnit.get(unit.name)!.patch, path.relative(top, place.workspace))),
  )
  if (!applied.ok) {
    const unit = rows.has(applied.name) ? `unit ${applied.name}` : applied.name
    throw new WaveError(`The merge of ${name} is refused: ${unit}: ${visible(applied.problem)}. Nothing was applied.`, ExitCode.unmet)
  }

  for (const [unit, changed] of Object.entries(applied.files)) Object.assign(rows.get(unit)!, {changed, status: 'merged'})
  // The checks are held to the units' paths as a run's are to its scope: the tree is read again after them.
  const watch = new WorkTreeWatch({top, workspace: place.workspace})
  const before = await watch.read()
  const checks = await planChecks(record, place.workspace, options)
  const outside = changedOutsideUnits(changedBetween(before, await watch.read()), units)
  const failing = checks.filter((check) => !checkPassed(check))
  const problem = [
    incomplete,
    failing.length > 0 ? `the plan's checks failed on the merged tree: ${failing.map((check) => check.command).join(', ')}` : '',
    outside.length > 0 ? `the plan's checks changed paths outside the units': ${outside.map((file) => visible(file)).join(', ')}` : '',
  ]
    .filter(Boolean)
    .join('; ')
  return outcome(true, checks, problem || undefined)
}

/** The paths changed that no unit's scope covers: what the merge's checks may not write. */
export function changedOutsideUnits(changed: readonly string[], units: readonly ApprovedUnit[]): string[] {
  const inUnits = scopeMatcher(units.flatMap((unit) => unit.paths))
  return changed.filter((file) => !inUnits(file.replace(/\/$/, '')))
}

/**
 * The commit every unit patched: the approval's, else the results' (each must name the same), present in
 * the repository. A work tree elsewhere is warned of: the merged change is applied to it if it applies.
 */
async function baseOf(name: string, record: ApprovalRecord, byUnit: Map<string, ReadResult>, top: string, warn: (line: string) => void): Promise<string> {
  const base = record.repository?.head ?? [...byUnit.values()][0]?.result.base
  if (!base) throw usageError(`The approval of ${name} names no base commit, and no result does.`)
  for (const {file, result} of byUnit.values()) {
    if (result.base !== base) throw usageError(`The unit result ${file} patches commit ${result.base.slice(0, 12)}, not the plan's ${base.slice(0, 12)}.`)
  }

  if (!(await hasCommit(top, base)))
    throw usageError(`The plan's base commit ${base.slice(0, 12)} is not in the repository at ${top}.`, 'Fetch it, or merge in a clone that has it.')
  const head = await headOf(top)
  if (head !== base)
    warn(
      `The work tree is at ${head?.slice(0, 12) ?? 'no commit'}, not the plan's base ${base.slice(0, 12)}: the merged change is applied to it if it applies.`,
    )
  return base
}

/** Each unit's row as its result left it, before anything is applied (missing, failed, or skipped until merged). */
function unitRows(units: ApprovedUnit[], byUnit: Map<string, ReadResult>): Map<string, MergedUnit> {
  return new Map<string, MergedUnit>(
    units.map((unit) => {
      const read = byUnit.get(unit.name)
      const status = !read ? 'missing' : read.result.outcome === 'failed' ? 'failed' : 'skipped'
      return [
        unit.name,
        {
          changed: read?.result.report.changed ?? [],
          checks: (read?.result.report.checks ?? []).map((check) => ({command: check.command, exitCode: check.exitCode})),
          costUsd: read?.result.costUsd ?? null,
          exitCode: read?.result.exitCode ?? null,
          outOfScope: read?.result.report.outOfScope ?? [],
          result: read?.file ?? null,
          status,
          unit: unit.name,
        },
      ]
    }),
  )
}

/** A unit's patch, held to the unit's paths: they are workspace-relative, git's relative to the repository's top (`prefix` between). */
function unitPatch(unit: ApprovedUnit, bytes: Buffer, prefix: string) {
  const inScope = scopeMatcher(unit.paths)
  return {
    allows: (file: string) => {
      const relative = prefix ? path.relative(prefix, file) : file
      return !relative.startsWith('..') && inScope(relative)
    },
    bytes,
    name: unit.name,
  }
}

/** The plan's `## Verification`, once, on the merged tree: in the approval's sandbox, as a run's checks. */
async function planChecks(record: ApprovalRecord, root: string, options: MergeOptions): Promise<CheckResult[]> {
  const verify = record.verify ?? []
  if (verify.length === 0) return []
  const settings = loadSettings(root)
  const network = await openSandboxNetwork(record.sandbox, (host) => options.warn(`A check asked for ${host}: refused, not an approved host.`))
  try {
    const sandbox = sandboxSettings(record.sandbox, settings, network?.directory)
    return await runChecks(verify, {onCheck: options.onCheck, root, sandbox, signal: options.signal})
  } finally {
    await network?.close()
  }
}
