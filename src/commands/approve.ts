import {Args, Flags} from '@oclif/core'

import {defaultApprover, writeDecision} from '../core/plans/approval.js'
import {checkedRules, sandboxFlags, sandboxFrom, WaveCommand} from '../core/command.js'
import {describeSandbox} from '../core/policy/sandbox.js'
import {usageError} from '../core/errors.js'
import {type Decision, readPlanState} from '../core/plans/lifecycle.js'
import {readPlanFile, resolvePlanReference} from '../core/plans/plans.js'
import {EXECUTION_MODES} from '../core/policy/policy.js'
import {interactiveProblem, reviewPlan, type ReviewOutcome} from '../core/output/review.js'

export default class Approve extends WaveCommand {
  static args = {
    plan: Args.string({description: 'The plan: its name (as wave plans lists it) or its path (as wave plan prints it)', required: true}),
  }

  static description = `Record a decision on a plan: approve it (the default), request changes, or reject it.

The record, <plan>.approval.json beside the plan (or --out), binds the plan's sha256: wave run refuses
the plan if its content changes afterwards. stdout is the record's path.`

  static examples = [
    '<%= config.bin %> approve gentle-breeze',
    '<%= config.bin %> approve "$PLAN" --mode acceptEdits --allow "Bash(npm test:*)" --approver ci-bot',
    '<%= config.bin %> approve "$PLAN" --request-changes "Keep the public API unchanged"',
    '<%= config.bin %> approve "$PLAN" --reject --feedback "Out of scope"',
    '<%= config.bin %> approve "$PLAN" --interactive',
  ]

  static flags = {
    allow: Flags.string({description: 'Permission rule for the run, e.g. Bash(npm test:*); repeatable', multiple: true}),
    approver: Flags.string({description: 'Who decides (default: $GITHUB_ACTOR, git user.name, the OS user)'}),
    feedback: Flags.string({description: 'Feedback to record with the decision'}),
    interactive: Flags.boolean({
      char: 'i',
      description: 'Review the plan at a terminal, then approve, request changes or reject it (Shift+Tab cycles --mode)',
    }),
    mode: Flags.option({default: 'acceptEdits', description: 'Permission mode the run executes in', options: EXECUTION_MODES})(),
    out: Flags.file({description: 'Write the record here instead of beside the plan'}),
    reject: Flags.boolean({description: 'Reject the plan', exclusive: ['request-changes']}),
    'request-changes': Flags.string({description: 'Ask for changes, with this feedback', exclusive: ['reject']}),
    ...sandboxFlags,
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Approve)
    const allow = checkedRules(flags.allow)
    const sandbox = sandboxFrom(flags)

    if (flags['request-changes'] !== undefined && !flags['request-changes'].trim()) {
      throw usageError('--request-changes needs feedback saying what to change.')
    }

    if (flags.interactive) {
      const decided = flags.reject ? 'reject' : flags['request-changes'] === undefined ? (flags.feedback === undefined ? undefined : 'feedback') : 'request-changes'
      if (decided) throw usageError(`--interactive cannot be combined with --${decided}: the decision and its feedback are given at the terminal.`)
      const problem = interactiveProblem()
      if (problem) {
        throw usageError(`--interactive needs someone at a terminal, but ${problem}.`, 'Decide with flags instead: --reject, --request-changes "<feedback>", or neither to approve.')
      }
    }

    const planPath = await resolvePlanReference(args.plan)
    const {bytes, text} = await readPlanFile(planPath)
    const state = await readPlanState(planPath)
    // What the plan says it needs (ExitPlanMode's allowedPrompts): shown, never granted without --allow.
    const asked = state?.allowedPrompts ?? []
    if (asked.length > 0) {
      this.output.note(`The plan asks for: ${asked.map((p) => `${p.tool} (${p.prompt})`).join('; ')}. Grant what it needs with --allow rules, e.g. --allow "Bash(npm test:*)".`)
    }

    let review: ReviewOutcome | undefined
    if (flags.interactive) {
      review = await reviewPlan({allow, sandbox: describeSandbox(sandbox), mode: flags.mode, planLabel: planPath, planText: text, signal: this.interruption.signal, task: state?.task})
    }

    const decision: Decision =
      review?.decision ?? (flags.reject ? 'rejected' : flags['request-changes'] === undefined ? 'approved' : 'changes_requested')
    const {path, record} = await writeDecision({
      allow,
      approver: flags.approver ?? (await defaultApprover()),
      decision,
      feedback: review ? review.feedback : (flags['request-changes'] ?? flags.feedback),
      mode: review?.mode ?? flags.mode,
      out: flags.out,
      planBytes: bytes,
      planPath,
      repository: state?.repository ?? null,
      sandbox,
      task: state?.task,
    })
    await this.output.result({
      data: {...record, allowedPrompts: asked, recordPath: path},
      tally: `${decision.replace('_', ' ')}: ${planPath} (mode ${record.mode}, ${describeSandbox(record.sandbox)})`,
      text: path,
    })
  }
}
