import {Args, Flags} from '@oclif/core'

import {WaveCommand} from '../../cli/command.js'
import {ExitCode} from '../../base/errors.js'
import {inertMarkdown} from '../../base/text.js'
import {formatCost} from '../../output/progress.js'
import {failingChecksText} from '../../output/report-view.js'
import {type MergeOutcome, mergeUnits} from '../../flows/merge.js'
import type {CommandResult} from '../../output/sink.js'
import {checkOutcome} from '../../plans/report.js'

export default class PlansMerge extends WaveCommand {
  static args = {
    plan: Args.string({description: 'The approved plan with units: its name (as wave plans lists it) or its path', required: true}),
  }

  static strict = false

  static description = `Merge the results of a plan's units (wave run --unit) into the work tree, and check the whole.

Each RESULT is a unit result file, or a folder of them (every .json file in it, at any depth); each result's patch is read from beside it. Every result must be of this plan and this approval (its sha256 and decision time), of one of its units, and no unit may come twice (exit 2 otherwise). The patches are applied in the plan's unit order onto the plan's base commit, all or nothing: a patch that does not apply, or that changes a file outside its unit's paths, refuses the merge naming the unit (exit 7), and nothing is written. Then the plan's own checks (## Verification, as approved) run once on the merged tree, in the approval's sandbox.

A unit with no result, or whose run failed, is named and nothing is applied (exit 7), unless --partial: then the units that succeeded are applied and checked. stdout is one planned-versus-actual report with a row per unit.`

  static examples = [
    '<%= config.bin %> plans merge gentle-breeze ./results',
    '<%= config.bin %> plans merge ~/.wave/plans/gentle-breeze.md api.result.json web.result.json --json',
  ]

  static flags = {
    approval: Flags.file({description: 'The approval record (default: <plan>.approval.json beside the plan)'}),
    cwd: Flags.directory({description: 'The work tree to merge into (default: the top of the repository holding the current directory)'}),
    partial: Flags.boolean({description: 'Apply the units that succeeded even when others are missing or failed (still exit 7)'}),
  }

  static usage = 'plans merge <plan> RESULT... [--partial] [--approval FILE] [--cwd DIR] [--json]'

  async run(): Promise<void> {
    const {args, argv, flags} = await this.parse(PlansMerge)
    const results = (argv as string[]).slice(1)
    if (results.length === 0) {
      const {usageError} = await import('../../base/errors.js')
      throw usageError('Missing the unit results to merge.', 'wave plans merge <plan> RESULT... (files, or a folder of them)')
    }

    const controller = new AbortController()
    const outcome = await mergeUnits({
      approvalPath: flags.approval,
      cwd: flags.cwd,
      onCheck: ({command, result}) => {
        if (!result) this.output.note(`Checking the merged tree: ${command}`)
      },
      partial: flags.partial,
      planPath: args.plan,
      results,
      signal: controller.signal,
      warn: (message) => this.output.warn(message),
    })
    if (outcome.problem) {
      process.exitCode = ExitCode.unmet
      // As `wave run` at exit 7: what the failing plan checks said (their kept output), then the way on.
      const said = failingChecksText({checks: outcome.checks})
      this.output.warn(`${said ? `${said}\n\n` : ''}Next: ${mergeNextStep(outcome)}`)
    }

    await this.output.result(mergeResult(outcome))
  }
}

/** The way on from an incomplete merge: the units to run again, or the plan's checks to make pass. */
function mergeNextStep(outcome: MergeOutcome): string {
  const again = [...outcome.failed, ...outcome.missing]
  if (again.length > 0)
    return `run the ${again.length === 1 ? 'unit' : 'units'} ${again.join(', ')} again (their jobs, or wave run ${outcome.name} --unit NAME), then merge again.`
  return `the units merged, and the plan's checks on the merged tree failed: fix what they say (a unit run again with wave run ${outcome.name} --unit NAME --resume), then merge again from a clean checkout.`
}

const STATUS_WORDS: Record<MergeOutcome['units'][number]['status'], string> = {
  failed: 'failed',
  merged: 'merged',
  missing: 'missing',
  skipped: 'not applied',
}

function mergeResult(outcome: MergeOutcome): CommandResult {
  const rows = outcome.units.map((unit) => {
    const checks =
      unit.checks.length === 0
        ? 'none'
        : unit.checks.map((check) => `${check.command} ${check.exitCode === 0 ? 'passed' : `exit ${check.exitCode ?? '?'}`}`).join('; ')
    return [
      unit.unit,
      STATUS_WORDS[unit.status],
      unit.exitCode === null ? '-' : String(unit.exitCode),
      String(unit.changed.length),
      String(unit.outOfScope.length),
      checks,
      formatCost(unit.costUsd),
    ]
  })
  const merged = outcome.units.filter((unit) => unit.status === 'merged').length
  const checks = outcome.checks.length === 0 ? 'no plan checks' : outcome.checks.map((check) => `${check.command} ${checkOutcome(check)}`).join(', ')
  const headline = outcome.problem ? `Merge incomplete: ${outcome.problem}.` : `Merge complete! ${merged} of ${outcome.units.length} units merged; ${checks}.`
  const text = [
    `${outcome.name}: ${merged} of ${outcome.units.length} units merged${outcome.applied ? '' : ' (nothing applied)'}`,
    ...outcome.units.map(
      (unit, index) =>
        `  ${unit.unit}: ${STATUS_WORDS[unit.status]}; ${rows[index][3]} files changed; ${rows[index][4]} outside its scope; checks: ${rows[index][5]}`,
    ),
    `plan checks: ${checks}`,
  ].join('\n')
  return {
    data: {
      applied: outcome.applied,
      base: outcome.base,
      checks: outcome.checks,
      costUsd: outcome.costUsd,
      failed: outcome.failed,
      missing: outcome.missing,
      name: outcome.name,
      outcome: outcome.problem ? 'incomplete' : 'merged',
      planPath: outcome.planPath,
      problem: outcome.problem ?? null,
      sha256: outcome.sha256,
      units: outcome.units,
    },
    summary: `## wave plans merge: ${outcome.name}\n\n${headline}\n\n${grid(['Unit', 'Status', 'Exit', 'Files changed', 'Outside scope', 'Checks', 'Cost'], rows)}\n\n**Plan checks on the merged tree:** ${checks}`,
    tally: headline,
    text,
  }
}

/** A Markdown table with a header row; a cell's text is inert (a check's command is the plan's words). */
function grid(header: string[], rows: string[][]): string {
  const cell = (text: string) => inertMarkdown(text, 200).replaceAll('|', '\\|').replaceAll('\n', ' ')
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n')
}
