/**
 * A plan's units on the forge after their approval: each unit's job reports its own result as it ends
 * (`wave github --unit-result FILE`, `wave gitlab --unit-result FILE`: its row of the plan's sticky
 * comment), and the job after `wave plans merge` (`--units-merged FILE`) shows every unit's outcome and
 * the merge's, then delivers the merged tree as a run's changes are delivered (a commit on the pull
 * request's branch, or a pull request). The forges find the thread; `reportUnits` does the rest.
 *
 * Unit jobs run side by side, and neither forge edits a comment conditionally: two jobs that read the
 * comment, then write it, can each write over the other's row. So a unit's job reads the comment right
 * before writing (changing its own row only), reads it again after, and writes again while its row is
 * not there (a bounded number of times); the merge's report is authoritative and writes every row from
 * the results themselves. A row is what the comment shows, never evidence: nothing here or in the merge
 * decides anything from a row another job (or a person editing the comment) wrote.
 */
import {readFile} from 'node:fs/promises'
import {isDeepStrictEqual} from 'node:util'

import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {parseJsonText} from '../base/json.js'
import {parseUnitResult, type UnitResult} from '../plans/unit-result.js'
import {parseContract} from '../plans/contract.js'
import {scopeMatcher} from '../policy/scope.js'
import {z} from 'zod'
import {deliver} from './delivery.js'
import type {Thread} from './forge.js'
import {now, PlanComment, plansOf} from './plan-comment.js'
import {stickyStatusAfter} from './status.js'
import type {ReviewOutcome, ReviewRun} from './steps.js'
import type {PlanOnForge} from './transport.js'
import type {UnitRow} from './unit-rows.js'

/** What a job of a plan's units reports on the plan's comment: `--units-merged FILE` (the merge's output) or `--unit-result FILE` (one unit's). */
export interface UnitsReport {
  kind: 'merged' | 'unit'
  file: string
}

/** The report the flags ask for (they exclude each other), or none. */
export function unitsReportOf(flags: {'units-merged'?: string; 'unit-result'?: string}): UnitsReport | undefined {
  if (flags['units-merged']) return {file: flags['units-merged'], kind: 'merged'}
  return flags['unit-result'] ? {file: flags['unit-result'], kind: 'unit'} : undefined
}

/** The flag a report comes from, for messages. */
export const unitsReportFlag = (report: UnitsReport) => (report.kind === 'merged' ? '--units-merged' : '--unit-result')

/**
 * Reports a job of a plan's units on the plan's comment in `thread` (each forge finds the thread its
 * own way): the file is read and checked before `prepare` (the checkout, wave's login) is asked for.
 */
export async function reportUnits(report: UnitsReport, thread: Thread, prepare: () => Promise<ReviewRun>): Promise<ReviewOutcome> {
  if (report.kind === 'merged') {
    const merge = await readMergeResult(report.file)
    return reportMerge(await prepare(), thread, merge)
  }

  const result = await readUnitResult(report.file)
  return reportUnit(await prepare(), thread, result)
}

const check = z.lazy(() => z.object({command: z.string(), exitCode: z.number().nullable()}))

/** What the comment takes of `wave plans merge --json`: the plan, each unit's outcome, the plan's checks, the problem. */
const mergeResultSchema = z.lazy(() =>
  z.object({
    name: z.string(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    units: z.array(
      z.object({
        unit: z.string(),
        status: z.enum(['merged', 'failed', 'missing', 'skipped']),
        exitCode: z.number().nullable(),
        costUsd: z.number().nullable(),
        changed: z.array(z.string()),
        checks: z.array(check),
      }),
    ),
    checks: z.array(check),
    costUsd: z.number().nullable(),
    problem: z.string().nullable(),
  }),
)

type MergeResult = z.infer<typeof mergeResultSchema>

/** Reads `wave plans merge --json`'s output; a file that is not one is a usage error naming it. */
async function readMergeResult(file: string): Promise<MergeResult> {
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw usageError(`Cannot read the merge result ${file}: ${error.message}.`, 'Pass the output of wave plans merge --json.')
  })
  return parseJsonText(text, mergeResultSchema, {
    exitCode: ExitCode.usage,
    invalid: (problem) => `${file} is not the output of wave plans merge --json: ${problem}.`,
  })
}

/**
 * Shows the merge in the plan's comment of `thread`: a row per unit (merged, failed with its exit
 * code, or no result), the plan's checks on the merged tree, the plan done or failed (exit 7, the
 * merge's problem); a merge without a problem is then delivered. Ends with exit 7 when the merge had a
 * problem, as `wave plans merge` did.
 */
async function reportMerge(run: ReviewRun, thread: Thread, merge: MergeResult): Promise<ReviewOutcome> {
  const found = await planOn(run, thread, merge.name, 'The merge')
  const {state} = found
  assertSameBytes(run, state, merge.name, merge.sha256, 'The merge')

  const rows: UnitRow[] = merge.units.map((unit) => ({
    checks: unit.checks,
    costUsd: unit.costUsd,
    exitCode: unit.status === 'missing' ? null : unit.exitCode,
    merged: unit.status === 'merged',
    name: unit.unit,
  }))
  const exitCode = merge.problem ? ExitCode.unmet : ExitCode.ok
  const sticky = PlanComment.of(run.client, found, run.options.dependencies)
  sticky.state = {
    ...state,
    cost: {...state.cost, run: merge.costUsd},
    mergeChecks: merge.checks,
    runUrl: run.runUrl ?? state.runUrl,
    units: rows,
  }
  if (merge.problem) {
    await sticky.fail('run', new WaveError(`The merge of the units: ${merge.problem}`, exitCode))
    throw new WaveError(`Plan ${merge.name}'s merge is incomplete: ${merge.problem}.`, exitCode, 'Re-run the failed units, then the merge.')
  }

  const approvedBy = [...state.history].reverse().find((entry) => entry.event === 'approved')
  const pull = state.thread.pull ? await run.client.changeRequest(state.thread.number) : undefined
  try {
    const delivery = await deliver(run.client, run.remote, {
      approver: approvedBy?.by ?? 'unknown',
      files: await deliveredFiles(found, merge),
      links: {approval: approvedBy?.url ?? found.comment.url, plan: found.comment.url},
      prDelivery: run.options.prDelivery,
      pull: pull && {baseRef: pull.base.ref, headRef: pull.head.ref, number: pull.number, sameRepository: pull.head.sameRepository},
      state: sticky.state,
    })
    sticky.state = {
      ...sticky.state,
      delivery,
      failure: undefined,
      history: [
        ...sticky.state.history,
        {at: now(), event: 'ran', text: delivery ? `units merged, delivered: ${delivery.url}` : 'units merged, no file changed'},
      ],
      status: stickyStatusAfter({kind: 'run', run: {exitCode}}),
    }
    await sticky.save()
    const merged = rows.filter((row) => row.merged).length
    return {
      costUsd: merge.costUsd,
      delivery: delivery ?? null,
      event: run.event,
      message: `Merged ${merged} of ${rows.length} units of ${merge.name}: ${delivery ? delivery.url : 'no file changed'}.`,
      outcome: 'merged',
      plan: {comment: sticky.url, name: merge.name, sha256: merge.sha256, status: sticky.state.status},
    }
  } catch (error) {
    await sticky.fail('delivery', error).catch(() => {})
    throw error
  }
}

/**
 * What the merge's delivery commits: each merged unit's files that lie in that unit's paths as the plan
 * names them, the plan's bytes from its comment (their sha256 the merge's, assertSameBytes). The merge's
 * JSON is a file in the job's work tree, which the plan's checks ran in and could rewrite: a path it
 * lists outside its unit (README.md, a workflow) is never committed (issue 48).
 */
async function deliveredFiles(found: PlanOnForge, merge: MergeResult): Promise<string[]> {
  if (!found.plan) throw usageError(`The comment of plan ${merge.name} carries no plan: its units' paths cannot be read to deliver the merge.`)
  const {units} = await parseContract(found.plan.toString('utf8'))
  const files = merge.units.flatMap((row) => {
    const unit = units.find((each) => each.name === row.unit)
    if (row.status !== 'merged' || !unit) return []
    const inUnit = scopeMatcher(unit.scope)
    return row.changed.filter((file) => inUnit(file))
  })
  return [...new Set(files)]
}

/** Reads a unit result (`wave run --unit` writes it); a file that is not one is a usage error naming it. */
async function readUnitResult(file: string): Promise<UnitResult> {
  const text = await readFile(file, 'utf8').catch((error: Error) => {
    throw usageError(`Cannot read the unit result ${file}: ${error.message}.`, 'Pass the result wave run --unit wrote (--result-out).')
  })
  return parseUnitResult(text, file)
}

/** How many times a unit's job writes its row while another job's write takes it away. */
const UNIT_ROW_TRIES = 4

/**
 * Shows one unit's result as its row of the plan's comment, checked as the merge checks a result: of
 * this plan's bytes (exit 4 otherwise), of the approval that bound the units, of one of its units (exit
 * 2). Only the unit's own row changes; the plan's status stays as it is (the merge says whether the plan
 * is done). Read right before each write and verified after it: another unit's job writing at the same
 * time can take the row away, and then it is written again, up to UNIT_ROW_TRIES times.
 */
async function reportUnit(run: ReviewRun, thread: Thread, result: UnitResult): Promise<ReviewOutcome> {
  const name = result.plan.name
  const row: UnitRow = {
    checks: result.report.checks.map((check) => ({command: check.command, exitCode: check.exitCode})),
    costUsd: result.costUsd,
    exitCode: result.exitCode,
    name: result.unit,
  }
  const label = `unit ${result.unit} of plan ${name}`
  let found = await planOn(run, thread, name, `The result of ${label}`)
  for (let attempt = 1; ; attempt++) {
    assertUnitResultOf(run, found, result)
    const sticky = PlanComment.of(run.client, found, run.options.dependencies)
    if (found.state.status === 'done') {
      // The merge reported and delivered: its rows stand (a unit that succeeded does not run again).
      return {
        ...reportOutcome(run, sticky),
        message: `The merge of ${name} has reported: the row of its unit ${result.unit} stays as the merge wrote it.`,
        outcome: 'ignored',
      }
    }

    sticky.state = {...found.state, units: (found.state.units ?? []).map((shown) => (shown.name === row.name ? row : shown))}
    await sticky.save({statuses: false})
    // Read again: a job that read before this write and writes after it takes this row away.
    found = await planOn(run, thread, name, `The result of ${label}`)
    const shown = found.state.units?.find((candidate) => candidate.name === row.name)
    if (shown && sameRow(shown, row)) {
      const words = result.exitCode === ExitCode.ok ? 'succeeded' : `failed (exit ${result.exitCode})`
      return {
        ...reportOutcome(run, sticky),
        costUsd: result.costUsd,
        message: `The ${label} ${words}: its row is in the plan's ${run.client.words.comment}${attempt > 1 ? ` (written ${attempt} times: another job wrote over it)` : ''}.`,
        outcome: 'reported',
      }
    }

    if (attempt >= UNIT_ROW_TRIES) {
      throw new WaveError(
        `The row of the ${label} was written over by other jobs ${UNIT_ROW_TRIES} times: the plan's ${run.client.words.comment} does not show it.`,
        ExitCode.runtime,
        "The merge's report writes every unit's row from the results: wave github|gitlab --units-merged.",
      )
    }
  }
}

/** The plan's own comment in the thread, by wave's login; none (or a damaged one) is a usage error. */
async function planOn(run: ReviewRun, thread: Thread, name: string, what: string): Promise<PlanOnForge> {
  const plans = await plansOf(run.client, thread, run.author)
  const found = plans.find((plan) => !('damaged' in plan) && plan.state.name === name)
  if (!found || 'damaged' in found) {
    throw usageError(
      `No comment of plan ${name} in ${run.client.words.ref(thread)}: ${what.toLowerCase()} is reported on the plan's own ${run.client.words.comment}.`,
    )
  }

  return found
}

/** The plan's comment shows the bytes `sha256` is of (exit 4 otherwise). */
function assertSameBytes(run: ReviewRun, state: PlanOnForge['state'], name: string, sha256: string, what: string): void {
  if (state.sha256 !== sha256) {
    throw new WaveError(
      `${what} is of plan ${name} with sha256 ${sha256}, and its ${run.client.words.comment} shows ${state.sha256 ?? 'no sha256'}.`,
      ExitCode.mismatch,
    )
  }
}

/** A unit's result as the merge checks it: these bytes, the approval that bound the units, one of them. */
function assertUnitResultOf(run: ReviewRun, found: PlanOnForge, result: UnitResult): void {
  const {state} = found
  const what = `The result of unit ${result.unit}`
  assertSameBytes(run, state, result.plan.name, result.plan.sha256, what)
  const units = state.units ?? []
  if (units.length === 0 || state.status === 'awaiting_approval' || state.status === 'changes_requested' || state.status === 'rejected') {
    throw usageError(`${what} is of plan ${result.plan.name}, whose ${run.client.words.comment} shows no approved units.`)
  }

  if (state.unitsApprovedAt && result.approvalDecidedAt !== state.unitsApprovedAt) {
    throw usageError(
      `${what} ran under another approval of ${result.plan.name} (decided ${result.approvalDecidedAt ?? 'unknown'}, this one ${state.unitsApprovedAt}).`,
      'Run the unit again under the current approval.',
    )
  }

  if (!units.some((unit) => unit.name === result.unit)) {
    throw usageError(`${what}: plan ${result.plan.name} has no such unit (its units: ${units.map((unit) => unit.name).join(', ')}).`)
  }
}

/** Whether the comment shows the row as this job wrote it. */
const sameRow = (shown: UnitRow, row: UnitRow) =>
  isDeepStrictEqual(
    [shown.exitCode, shown.checks, shown.costUsd ?? null, shown.merged ?? false],
    [row.exitCode, row.checks, row.costUsd ?? null, row.merged ?? false],
  )

function reportOutcome(run: ReviewRun, sticky: PlanComment): Omit<ReviewOutcome, 'message' | 'outcome'> {
  return {event: run.event, plan: {comment: sticky.url, name: sticky.state.name, sha256: sticky.state.sha256, status: sticky.state.status}}
}
