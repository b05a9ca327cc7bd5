import {Args} from '@oclif/core'

import {WaveCommand} from '../../cli/command.js'
import {removePlan, type RemovedPlan, resolvePlanReference} from '../../plans/store.js'

export default class PlansRm extends WaveCommand {
  static args = {
    plan: Args.string({description: 'The plan: its name (as wave plans lists it) or its path; several may follow', required: true}),
  }

  static description =
    `Remove plans from the plans directory, with everything wave keeps beside them: approval records, states, transcripts, check logs, and units' results and patches.

Only plans in the plans directory (~/.wave/plans or $WAVE_HOME/plans) are removed; a plan being run is left alone (exit 1). stdout lists the removed plans' paths.`

  static examples = ['<%= config.bin %> plans rm gentle-breeze', '<%= config.bin %> plans rm gentle-breeze brave-otter --json']

  static strict = false

  async run(): Promise<void> {
    const {argv} = await this.parse(PlansRm)
    // Every name is checked before anything is removed: a typo in the third name removes nothing.
    const plans = await Promise.all((argv as string[]).map((reference) => resolvePlanReference(reference, {unwritten: true})))
    const removed: RemovedPlan[] = []
    for (const plan of new Set(plans)) removed.push(await removePlan(plan))
    await this.output.result({
      data: {removed},
      tally: `removed ${removed.length} plan${removed.length === 1 ? '' : 's'}: ${removed.map((plan) => plan.name).join(', ')}`,
      text: removed.map((plan) => plan.path).join('\n'),
    })
  }
}
