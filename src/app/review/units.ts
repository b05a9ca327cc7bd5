/**
 * The end of a plan's units on the forge: the job after `wave plans merge` (`wave github --units-merged
 * FILE`, `wave gitlab --units-merged FILE`) shows every unit's outcome and the merge's in the plan's
 * sticky comment, and delivers the merged tree as a run's changes are delivered (a commit on the pull
 * request's branch, or a pull request). The one writer of the units' rows after their approval: the
 * unit jobs run side by side, and a comment edited by several at once would lose rows.
 */
import {readFile} from 'node:fs/promises'

import {ExitCode, usageError, WaveError} from '../../base/errors.js'
import {parseJsonText} from '../../base/json.js'
import {z} from 'zod'
import {deliver} from './delivery.js'
import type {Thread} from './forge.js'
import {now, PlanComment, plansOf} from './plan-comment.js'
import {stickyStatusAfter} from './status.js'
import type {ReviewOutcome, ReviewRun} from './steps.js'
import type {UnitRow} from './unit-rows.js'

const check = z.object({command: z.string(), exitCode: z.number().nullable()})

/** What the comment takes of `wave plans merge --json`: the plan, each unit's outcome, the plan's checks, the problem. */
const mergeResultSchema = z.object({
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
})

export type MergeResult = z.infer<typeof mergeResultSchema>

/** Reads `wave plans merge --json`'s output; a file that is not one is a usage error naming it. */
export async function readMergeResult(file: string): Promise<MergeResult> {
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
export async function reportMerge(run: ReviewRun, thread: Thread, merge: MergeResult): Promise<ReviewOutcome> {
  const plans = await plansOf(run.client, thread, run.author)
  const found = plans.find((plan) => !('damaged' in plan) && plan.state.name === merge.name)
  if (!found || 'damaged' in found) {
    throw usageError(
      `No comment of plan ${merge.name} in ${run.client.words.ref(thread)}: the merge is reported on the plan's own ${run.client.words.comment}.`,
    )
  }

  const {state} = found
  if (state.sha256 !== merge.sha256) {
    throw new WaveError(
      `The merge is of plan ${merge.name} with sha256 ${merge.sha256}, and its ${run.client.words.comment} shows ${state.sha256 ?? 'no sha256'}.`,
      ExitCode.mismatch,
    )
  }

  const rows: UnitRow[] = merge.units.map((unit) => ({
    checks: unit.checks,
    costUsd: unit.costUsd,
    exitCode: unit.status === 'missing' ? null : unit.exitCode,
    merged: unit.status === 'merged',
    name: unit.unit,
  }))
  const exitCode = merge.problem ? ExitCode.unmet : ExitCode.ok
  const sticky = PlanComment.of(run.client, found)
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
      files: [...new Set(merge.units.flatMap((unit) => (unit.status === 'merged' ? unit.changed : [])))],
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
