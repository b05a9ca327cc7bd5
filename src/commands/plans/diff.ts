import {Args, Flags} from '@oclif/core'

import {WaveCommand} from '../../cli/command.js'
import {approvalPathFor, lastDecidedSha256} from '../../plans/approval.js'
import {readPlanFile, resolvePlanReference} from '../../plans/store.js'
import {revisionDiff} from '../../plans/revisions.js'

export default class PlansDiff extends WaveCommand {
  static args = {
    plan: Args.string({description: 'The plan: its name (as wave plans lists it) or its path', required: true}),
  }

  static description = `Show what changed between two revisions of a plan, as a unified diff.

wave keeps every revision of a plan (each planning or revising session's result, and the bytes each decision was made on) with the feedback that asked for it. By default the diff goes from the revision last decided on (approved, rejected, changes requested) to the current plan: what a reviewer has not seen yet. REV is a revision number (wave plans <name> lists them), a sha256 prefix, or current. stdout is the diff (empty when nothing changed).`

  static examples = [
    '<%= config.bin %> plans diff gentle-breeze',
    '<%= config.bin %> plans diff gentle-breeze --from 1 --to 2',
    '<%= config.bin %> plans diff gentle-breeze --json',
  ]

  static flags = {
    from: Flags.string({description: 'The older side: a revision number, a sha256 prefix, or current (default: the revision last decided on)'}),
    to: Flags.string({description: 'The newer side (default: current, the plan file as it is)'}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(PlansDiff)
    const planPath = await resolvePlanReference(args.plan)
    const {bytes} = await readPlanFile(planPath)
    const diff = await revisionDiff({current: bytes, decidedSha256: lastDecidedSha256(approvalPathFor(planPath)), from: flags.from, planPath, to: flags.to})
    if (!diff) {
      this.output.note(`The plan ${args.plan} has no earlier revision to compare with.`)
      await this.output.result({data: {diff: null, planPath}, text: undefined})
      return
    }

    await this.output.result({
      data: {
        added: diff.added,
        feedback: diff.feedback,
        from: {label: diff.from.label, revision: diff.from.revision ?? null, sha256: diff.from.sha256},
        patch: diff.patch,
        planPath,
        removed: diff.removed,
        to: {label: diff.to.label, revision: diff.to.revision ?? null, sha256: diff.to.sha256},
      },
      tally: `${diff.from.label} → ${diff.to.label}: +${diff.added} −${diff.removed}${diff.feedback.length > 0 ? `; asked for: ${diff.feedback.join('; ').replaceAll('\n', ' ')}` : ''}`,
      text: diff.patch ? diff.patch.trimEnd() : undefined,
    })
  }
}
