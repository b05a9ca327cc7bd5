/**
 * A plan unit's job and what it hands on (issue 36): the record a unit runs under (the approval narrowed
 * to the unit: its paths, strict, its checks, its budget), the gates a unit's run passes (a succeeded
 * unit does not run twice), and the unit result `wave run --unit` writes beside its patch for
 * `wave plans merge`. A result and its patch come from a sandboxed job: the merge validates them here
 * (zod) and never runs anything they say.
 */
import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {parseJsonText} from '../base/json.js'
import {type BudgetCap, capOf, lowestCap} from '../model/budget.js'
import type {ApprovalRecord} from './approval.js'
import type {PlanRun, PlanState} from './lifecycle.js'
import {runReportSchema} from './report.js'
import {planNameOf} from './store.js'
import {z} from 'zod'

export const UNIT_RESULT_VERSION = 1

export type ApprovedUnit = NonNullable<ApprovalRecord['units']>[number]

const sha256 = z.lazy(() => z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 is 64 lowercase hex digits'))
/** A unit name as the record's schema allows it. */
const unitName = z.lazy(() => z.string().regex(/^[A-Za-z0-9][\w.-]*$/, 'a unit name is letters, digits, -, _ and .'))

const unitResultSchema = z.lazy(() =>
  z.object({
    version: z.literal(UNIT_RESULT_VERSION),
    plan: z.object({name: z.string().max(200), sha256}),
    /** When the approval the unit ran under was decided: a result of an earlier approval of the same bytes is not this one's. */
    approvalDecidedAt: z.string().max(100).nullable(),
    unit: unitName,
    exitCode: z.number().int(),
    outcome: z.enum(['succeeded', 'failed']),
    costUsd: z.number().nullable(),
    turns: z.number().int().min(0),
    startedAt: z.string().max(100),
    endedAt: z.string().max(100),
    /** The commit the patch applies to: the plan's base. */
    base: z.string().regex(/^[0-9a-f]{40,64}$/, 'a commit is 40 or 64 hex digits'),
    /** Planned versus actual for the unit: its paths (strict), the files changed, its checks. */
    report: runReportSchema,
    patch: z.object({
      /** The patch's file name, beside the result (a name, never a path). */
      file: z
        .string()
        .min(1)
        .max(255)
        .refine((name) => !name.includes('/') && !name.includes('\\') && name !== '.' && name !== '..', 'the patch is named by a file name beside the result'),
      sha256,
      bytes: z.number().int().min(0),
    }),
  }),
)

export type UnitResult = z.infer<typeof unitResultSchema>

/** Reads a unit result from its text; a malformed one is a usage error naming `file`. */
export function parseUnitResult(text: string, file: string): UnitResult {
  return parseJsonText(text, unitResultSchema, {
    exitCode: ExitCode.usage,
    invalid: (problem) => `The unit result ${file} is malformed: ${problem}.`,
  })
}

/** The record's unit named `name`: a usage error when the plan has no units, or none of that name (naming them). */
export function unitOf(record: ApprovalRecord, name: string, planPath: string): ApprovedUnit {
  const units = record.units ?? []
  if (units.length === 0) {
    throw usageError(
      `The plan ${planNameOf(planPath)} has no units: --unit runs one unit of a plan approved with a ## Units section.`,
      `Run it whole: wave run ${planNameOf(planPath)}`,
    )
  }

  const unit = units.find((candidate) => candidate.name === name)
  if (!unit) throw usageError(`The plan ${planNameOf(planPath)} has no unit named ${name}; its units: ${units.map((u) => u.name).join(', ')}.`)
  return unit
}

/**
 * The approval as one unit's job is held to it: the unit's paths, strict whatever the plan's
 * enforcement (units run side by side: a change outside one's paths is another's), its own checks
 * (the plan-level ones run once, on the merged tree), and its budget within the plan's.
 */
export function unitRecord(record: ApprovalRecord, unit: ApprovedUnit): ApprovalRecord {
  return {
    ...record,
    maxBudgetUsd: approvedBudget(record, unit)?.usd,
    scope: {enforce: 'strict', paths: [...unit.paths]},
    verify: [...unit.verify],
  }
}

/**
 * The cap an approval binds a run to, naming where it was set: the record's `maxBudgetUsd`, and for a
 * unit's run the unit's `budgetUsd` within it (the lower; the approval's on a tie).
 */
export function approvedBudget(record: ApprovalRecord, unit?: ApprovedUnit): BudgetCap | undefined {
  return lowestCap(capOf(record.maxBudgetUsd, {kind: 'approval'}), unit && capOf(unit.budgetUsd, {kind: 'unit', unit: unit.name}))
}

/** A run of `unit` under this approval that succeeded: started after the decision, of these bytes. */
function succeededRun(state: PlanState | undefined, record: ApprovalRecord, unit: string): PlanRun | undefined {
  const decidedAt = Date.parse(record.decidedAt ?? '')
  return state?.runs.find(
    (run) => run.unit === unit && run.exitCode === ExitCode.ok && run.approvalSha256 === record.plan.sha256 && !(Date.parse(run.startedAt) <= decidedAt),
  )
}

/**
 * A unit that succeeded under this approval does not run again (exit 3), as a plan runs once; a unit
 * that failed runs again (afresh, or `--resume` to go on), the others left as they are. A record spent
 * by every unit's success refuses any unit.
 */
export function assertUnitUnspent(record: ApprovalRecord, planPath: string, state: PlanState | undefined, unit: string): void {
  const name = planNameOf(planPath)
  const again = `Approve it again to run it again: wave approve ${name}`
  if (record.spentAt)
    throw new WaveError(`The plan ${name} already ran under this approval (every unit succeeded, finished ${record.spentAt}).`, ExitCode.notApproved, again)
  const ran = succeededRun(state, record, unit)
  if (ran) {
    throw new WaveError(
      `The unit ${unit} of ${name} already succeeded under this approval${ran.endedAt ? ` (finished ${ran.endedAt})` : ''}: a unit runs once.`,
      ExitCode.notApproved,
      again,
    )
  }
}

/** The units of the record with no successful run under it yet: empty once the plan is spent. */
export function unitsLeft(record: ApprovalRecord, state: PlanState | undefined): string[] {
  return (record.units ?? []).map((unit) => unit.name).filter((unit) => !succeededRun(state, record, unit))
}

/** The plan's state with only `unit`'s runs: what `--resume` chooses among (undefined: the runs of the whole plan). */
export function runsOf(state: PlanState | undefined, unit: string | undefined): PlanState | undefined {
  return state && {...state, runs: state.runs.filter((run) => run.unit === unit)}
}
