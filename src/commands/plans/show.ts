import {Args} from '@oclif/core'

import {WaveCommand} from '../../cli/command.js'
import {overviewText} from '../../output/report-view.js'
import {planOverview} from '../../plans/overview.js'
import {resolvePlanReference} from '../../plans/store.js'

export default class PlansShow extends WaveCommand {
  static args = {
    plan: Args.string({description: 'The plan: its name (as wave plans lists it) or its path', required: true}),
  }

  static description = `Show one plan: its status, approval record, revisions and last run's report.

The approval record shown is the one in force (mode, rules, sandbox, scope and checks); the report of the last run sets what was planned against what was done. wave plans <name> does the same.`

  static examples = ['<%= config.bin %> plans show gentle-breeze', '<%= config.bin %> plans gentle-breeze --json']

  async run(): Promise<void> {
    const {args} = await this.parse(PlansShow)
    const overview = await planOverview(await resolvePlanReference(args.plan, {unwritten: true}))
    await this.output.result({data: {...overview}, text: overviewText(overview)})
  }
}
