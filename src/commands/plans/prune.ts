import {Flags} from '@oclif/core'

import {WaveCommand} from '../../cli/command.js'
import {usageError} from '../../base/errors.js'
import {planNameOf, plansUntouchedSince, removePlan, type RemovedPlan} from '../../plans/store.js'

const UNITS: Record<string, number> = {d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, w: 7 * 86_400_000}

/** `7d`, `12h`, `30m`, `90s`, `2w`: a whole number and one unit. */
function parseDuration(text: string): number {
  const match = /^(\d+)\s*([smhdw])$/.exec(text.trim())
  if (!match) throw usageError(`--older-than ${text}: expected a whole number and a unit (s, m, h, d or w), e.g. 7d or 12h.`)
  return Number(match[1]) * UNITS[match[2]]
}

export default class PlansPrune extends WaveCommand {
  static description = `Remove the plans not touched for a while, with their approval records, states and transcripts.

A plan's age is that of its newest file (the plan, its record, state or transcript). A plan being run is left alone. stdout lists the removed plans' paths.`

  static examples = ['<%= config.bin %> plans prune --older-than 7d', '<%= config.bin %> plans prune --older-than 12h --dry-run']

  static flags = {
    'dry-run': Flags.boolean({description: 'List what would be removed, and remove nothing'}),
    'older-than': Flags.string({description: 'Remove plans untouched for longer than this: 7d, 12h, 30m, 2w', required: true}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PlansPrune)
    const age = parseDuration(flags['older-than'])
    const old = await plansUntouchedSince(Date.now() - age)
    const removed: RemovedPlan[] = []
    const kept: string[] = []
    for (const plan of old) {
      if (flags['dry-run']) {
        removed.push({files: [], name: planNameOf(plan.path), path: plan.path})
        continue
      }

      try {
        removed.push(await removePlan(plan.path))
      } catch (error) {
        // One plan being run does not stop the others from going.
        this.output.warn((error as Error).message)
        kept.push(plan.path)
      }
    }

    if (removed.length === 0) this.output.note(`No plans untouched for longer than ${flags['older-than']}.`)
    await this.output.result({
      data: {dryRun: flags['dry-run'], kept, removed},
      tally: removed.length > 0 ? `${flags['dry-run'] ? 'would remove' : 'removed'} ${removed.length} plan${removed.length === 1 ? '' : 's'}` : undefined,
      text: removed.length > 0 ? removed.map((plan) => plan.path).join('\n') : undefined,
    })
  }
}
