/**
 * A plan's units as its sticky comment (GitHub) or note (GitLab) shows them: a row per unit with its
 * status, exit code and checks, and the plan's own checks on the merged tree once `wave plans merge`
 * ran. The status of a row is derived as the plan's own is (plans/lifecycle.ts, `statusAfter`): a unit
 * with no result yet is where its plan is (approved: its job pending), a unit's result is a run's end.
 */
import {z} from 'zod'

import {inertMarkdown} from '../base/text.js'
import {type PlanStatus, statusAfter} from '../plans/lifecycle.js'
import {formatCost} from '../output/progress.js'

export const checkRowSchema = z.lazy(() => z.object({command: z.string(), exitCode: z.number().nullable()}))

/** One unit's row: its name, its job's exit code (null: no result yet), its checks, whether the merge applied it. */
export const unitRowSchema = z.lazy(() =>
  z.object({
    name: z.string(),
    exitCode: z.number().int().nullable(),
    checks: z.array(checkRowSchema).default([]),
    costUsd: z.number().nullable().optional(),
    merged: z.boolean().optional(),
  }),
)

export type UnitRow = z.infer<typeof unitRowSchema>
type CheckRow = z.infer<typeof checkRowSchema>

/** A unit's status in the plan's vocabulary: approved (its job has not reported), ran, or failed. */
function unitStatus(row: Pick<UnitRow, 'exitCode'>): PlanStatus {
  return row.exitCode === null ? statusAfter({decision: 'approved', kind: 'decided'}) : statusAfter({kind: 'run', run: {exitCode: row.exitCode}})
}

const SHOWN: Partial<Record<PlanStatus, string>> = {approved: '⏳ pending', failed: '❌ failed', ran: '✅ succeeded'}

/** How a row's status reads: pending, succeeded (merged), or failed with its exit code. */
function unitStatusLabel(row: UnitRow): string {
  const status = unitStatus(row)
  if (status === 'failed') return `${SHOWN.failed} (exit ${row.exitCode})`
  if (status === 'ran' && row.merged) return '✅ merged'
  return SHOWN[status] ?? status
}

const checkText = (check: CheckRow) =>
  `${inertMarkdown(check.command, 120)} ${check.exitCode === 0 ? 'passed' : check.exitCode === null ? 'not run' : `exit ${check.exitCode}`}`

/** The units' table, then the plan's checks on the merged tree when the merge ran them. */
export function unitsMarkdown(rows: readonly UnitRow[], mergeChecks?: readonly CheckRow[]): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
  const lines = [
    `**Units** (${rows.length}, each its own job)`,
    '',
    '| Unit | Status | Checks | Cost |',
    '|---|---|---|---|',
    ...rows
      .map((row) =>
        [
          `\`${row.name}\``,
          unitStatusLabel(row),
          row.checks.length > 0 ? row.checks.map(checkText).join('; ') : row.exitCode === null ? '' : 'none',
          row.costUsd === undefined || row.costUsd === null ? '' : formatCost(row.costUsd),
        ]
          .map(cell)
          .join(' | '),
      )
      .map((line) => `| ${line} |`),
  ]
  if (mergeChecks) {
    lines.push('', `**The plan's checks on the merged tree:** ${mergeChecks.length > 0 ? mergeChecks.map(checkText).join('; ') : 'none'}`)
  }

  return lines.join('\n')
}

/** Every unit pending: the rows of a plan just approved. */
export const pendingRows = (names: readonly string[]): UnitRow[] => names.map((name) => ({checks: [], exitCode: null, name}))

/**
 * A plan's units as its contract shows them before approval (each unit's paths and checks), and what is
 * wrong with them (the contract's unitErrors): an approval is refused until they are fixed.
 */
export function unitsContractMarkdown(
  units: ReadonlyArray<{name: string; paths: string[]; verify: Array<{command: string}>}>,
  unitErrors: readonly string[],
): string {
  const parts: string[] = []
  if (units.length > 0) {
    const code = (text: string) => `\`${text.replaceAll('`', "'")}\``
    parts.push(
      `**Units** (${units.length}: each runs as its own job, held to its paths)`,
      '',
      '| Unit | Paths | Checks |',
      '|---|---|---|',
      ...units.map(
        (unit) =>
          `| \`${unit.name}\` | ${unit.paths.map(code).join(', ').replaceAll('|', '\\|')} | ${
            unit.verify
              .map((check) => inertMarkdown(check.command, 120))
              .join('; ')
              .replaceAll('|', '\\|') || 'none'
          } |`,
      ),
    )
  }

  if (unitErrors.length > 0) {
    if (parts.length > 0) parts.push('')
    parts.push(
      `**Problems with the units** (an approval is refused until the plan is revised):`,
      '',
      ...unitErrors.map((problem) => `- ${inertMarkdown(problem, 300)}`),
    )
  }

  return parts.join('\n')
}
