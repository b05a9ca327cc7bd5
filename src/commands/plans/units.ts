import {Args, Flags} from '@oclif/core'

import {WaveCommand} from '../../cli/command.js'
import {formatJobList, jobListOf, MATRIX_FORMATS} from '../../plans/job-matrix.js'
import {resolvePlanReference} from '../../plans/store.js'

export default class PlansUnits extends WaveCommand {
  static args = {
    plan: Args.string({description: 'The plan: its name (as wave plans lists it) or its path', required: true}),
  }

  static description = `Print an approved plan's units for a CI system to fan out over, one job per unit.

The units are the approval record's (the plan's ## Units as wave approve bound them), in the plan's order. --format github-matrix prints {"include":[{"unit":"api"},...]} on one line, for fromJSON in a job's strategy.matrix; gitlab a parallel:matrix snippet (UNIT: [...]); gitlab-pipeline a child-pipeline file with one job per unit running wave run <plan> --unit NAME (--extends names a template job for them, --include the file defining it); json the units with their paths, checks and budgets; lines one name a line. A plan without units has an empty list (it runs as one job).

A plan that is not approved is exit 3; one changed since its approval, exit 4.`

  static examples = [
    '<%= config.bin %> plans units gentle-breeze',
    'echo "matrix=$(<%= config.bin %> plans units "$PLAN" --format github-matrix)" >> "$GITHUB_OUTPUT"',
    '<%= config.bin %> plans units "$PLAN" --format gitlab-pipeline --extends .wave-unit --include .gitlab/wave-unit.yml > units.yml',
  ]

  static flags = {
    approval: Flags.file({description: 'The approval record (default: <plan>.approval.json beside the plan)'}),
    extends: Flags.string({description: 'With --format gitlab-pipeline: the template job each unit job extends'}),
    format: Flags.option({default: 'lines', description: 'What to print', options: MATRIX_FORMATS})(),
    include: Flags.string({description: 'With --format gitlab-pipeline: a repository file the child pipeline includes (defining --extends)'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(PlansUnits)
    const list = await jobListOf(await resolvePlanReference(args.plan), flags.approval)
    const data = {plan: list.plan, recordPath: list.recordPath, units: list.units}
    const text =
      flags.format === 'json' ? JSON.stringify({version: 1, ...data}) : formatJobList(list, flags.format, {extends: flags.extends, include: flags.include})
    await this.output.result({
      data,
      tally: `${list.units.length} ${list.units.length === 1 ? 'unit' : 'units'} in ${list.plan.name}${list.units.length === 0 ? ' (it runs as one job)' : ''}`,
      // No units, no lines: an empty stdout, not an empty line.
      text: text === '' ? undefined : text,
    })
  }
}
