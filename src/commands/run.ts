import {Args, Flags} from '@oclif/core'

import {defaultApprover} from '../core/approval.js'
import {OUTPUT_VERSION, outputFormatFlag, WaveCommand} from '../core/command.js'
import {usageError} from '../core/errors.js'
import {modelFrom} from '../core/model.js'
import {EXECUTION_MODES, parseRule} from '../core/policy.js'
import {createProgress, formatUsage} from '../core/progress.js'
import {executePlan} from '../core/runner.js'

export default class Run extends WaveCommand {
  static args = {
    plan: Args.file({description: 'The approved plan file'}),
  }

  static description = `Execute an approved plan in a fresh context with the full tool set.

Refuses, before any model request, a plan with no approval record or another decision (exit 3), a plan
whose content changed since approval, or one made against another git HEAD (exit 4; --allow-stale
overrides the latter). stdout is the agent's final message.`

  static examples = [
    '<%= config.bin %> run ~/.wave/plans/gentle-breeze.md',
    '<%= config.bin %> run "$PLAN" --approve --mode acceptEdits --allow "Bash(npm test:*)" --json',
    '<%= config.bin %> run "$PLAN" --approval review/gentle-breeze.approval.json --cwd ./checkout',
  ]

  static flags = {
    allow: Flags.string({dependsOn: ['approve'], description: 'With --approve: permission rule for the run; repeatable', multiple: true}),
    'allow-stale': Flags.boolean({description: 'Run even if the plan was made against another git HEAD'}),
    approval: Flags.file({description: 'The approval record (default: <plan>.approval.json beside the plan)'}),
    approve: Flags.boolean({description: 'Approve the plan inline (writes the record first), for trusted pipelines'}),
    cwd: Flags.directory({description: 'Workspace root (default: the current directory)'}),
    'max-turns': Flags.integer({default: 60, description: 'Stop with exit 5 after this many model turns', min: 1}),
    mode: Flags.option({dependsOn: ['approve'], description: 'With --approve: the permission mode (default acceptEdits)', options: EXECUTION_MODES})(),
    model: Flags.string({description: 'Model ID (default: $WAVE_MODEL, else claude-sonnet-4-5)'}),
    'output-format': outputFormatFlag({default: 'text'}),
    quiet: Flags.boolean({char: 'q', description: 'No progress on stderr'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Run)
    if (!args.plan) throw usageError('Missing the plan to run.', 'wave run <plan.md>')
    const allow = flags.allow ?? []
    for (const rule of allow) {
      try {
        parseRule(rule)
      } catch (error) {
        throw usageError((error as Error).message)
      }
    }

    const progress = createProgress({quiet: flags.quiet})
    const controller = new AbortController()
    const outcome = await executePlan({
      allowStale: flags['allow-stale'],
      approvalPath: flags.approval,
      approve: flags.approve ? {allow, approver: await defaultApprover(), mode: flags.mode ?? 'acceptEdits'} : undefined,
      cwd: flags.cwd ?? process.cwd(),
      maxTurns: flags['max-turns'],
      model: modelFrom(flags.model),
      onEvent: (event) => progress.event(event),
      onStart: ({mode, model, name, workspace}) => progress.info(`wave run: ${name} (mode ${mode}, model ${model}, workspace ${workspace})`),
      planPath: args.plan,
      signal: controller.signal,
    })
    progress.info(`done in ${outcome.turns} turns; ${outcome.filesChanged.length} files changed; ${formatUsage(outcome.usage)}`)
    if (!this.jsonEnabled()) this.log(outcome.finalText)
    return {
      denials: outcome.denials,
      filesChanged: outcome.filesChanged,
      mode: outcome.mode,
      name: outcome.name,
      outcome: 'completed',
      planPath: outcome.planPath,
      result: outcome.finalText,
      turns: outcome.turns,
      usage: outcome.usage,
      version: OUTPUT_VERSION,
    }
  }
}
