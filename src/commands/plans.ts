import {Args} from '@oclif/core'

import {WaveCommand} from '../cli/command.js'
import {overviewText} from '../output/report-view.js'
import {planOverview} from '../plans/overview.js'
import {listPlans} from '../plans/lifecycle.js'
import {resolvePlanReference} from '../plans/store.js'

export default class Plans extends WaveCommand {
  static description = `List the plans, newest first, with their status.

Plans live under ~/.wave/plans (or $WAVE_HOME/plans). A status is one of draft, approved, rejected, changes_requested, running, ran or failed; a failed plan says why, and one whose planning session failed before writing its file is listed too (no plan file). The name works wherever a plan is named (approve, run, plan --revise). wave plans <name> shows one plan: its record, revisions and last run's report (as wave plans show <name>). wave plans diff <name> shows what changed since the last decision. wave plans rm <name> and wave plans prune --older-than 7d remove plans.`

  static examples = [
    '<%= config.bin %> plans',
    '<%= config.bin %> plans --json',
    '<%= config.bin %> plans gentle-breeze',
    '<%= config.bin %> plans rm gentle-breeze',
    '<%= config.bin %> plans prune --older-than 7d',
  ]

  static args = {
    plan: Args.string({description: 'One plan to show (its name or path): as wave plans show <name>'}),
  }

  async run(): Promise<void> {
    const {args} = await this.parse(Plans)
    if (args.plan) {
      const overview = await planOverview(await resolvePlanReference(args.plan, {unwritten: true}))
      await this.output.result({data: {...overview}, text: overviewText(overview)})
      return
    }

    const plans = await listPlans()
    if (plans.length === 0) this.output.note('No plans yet: make one with wave plan --task "..."')
    const lines = plans.map((plan) => {
      const task = shorten(plan.task.replaceAll(/\s+/g, ' '), 60)
      // A plan approved to run unsandboxed says so wherever it is listed.
      const status = plan.sandboxOff ? `${plan.status} (sandbox off)` : plan.status
      // A plan whose file was never written is listed all the same: with why, where it failed.
      const missing = plan.planFile ? [] : ['no plan file']
      const notes = [...missing, ...(plan.reason ? [plan.reason] : [])]
      return [
        plan.name.padEnd(28),
        status.padEnd(17),
        plan.updatedAt.slice(0, 16).replace('T', ' '),
        task,
        ...(notes.length > 0 ? [`(${notes.join(': ')})`] : []),
      ]
        .join('  ')
        .trimEnd()
    })
    await this.output.result({data: {plans}, text: lines.length > 0 ? lines.join('\n') : undefined})
  }
}

const shorten = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 3)}...` : text)
