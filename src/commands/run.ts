import {Args, Flags} from '@oclif/core'

import {defaultApprover} from '../core/approval.js'
import {OUTPUT_VERSION, outputFormatFlag, WaveCommand} from '../core/command.js'
import {usageError} from '../core/errors.js'
import {modelFrom} from '../core/model.js'
import {EXECUTION_MODES, parseRule} from '../core/policy.js'
import {appendStepSummary, emitAgentEvent, emitStreamEvent, markdownTable} from '../core/output.js'
import {formatUsage, withProgress} from '../core/progress.js'
import {executePlan, type RunOutcome} from '../core/runner.js'

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
    model: Flags.string({description: 'Model ID (default: $WAVE_MODEL, else claude-sonnet-5-5)'}),
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

    const stream = flags['output-format'] === 'stream-json'
    const model = modelFrom(flags.model)
    const controller = new AbortController()
    const approver = flags.approve ? await defaultApprover() : ''
    const outcome = await withProgress('wave run', {quiet: flags.quiet}, (reporter) =>
      executePlan({
        allowStale: flags['allow-stale'],
        approvalPath: flags.approval,
        approve: flags.approve ? {allow, approver, mode: flags.mode ?? 'acceptEdits'} : undefined,
        cwd: flags.cwd ?? process.cwd(),
        maxTurns: flags['max-turns'],
        model,
        onEvent(event) {
          reporter.event(event)
          if (stream) emitAgentEvent(event)
        },
        onStart({mode, name, workspace}) {
          reporter.title(`wave run ${name}`)
          if (stream) emitStreamEvent('session_start', {command: 'run', mode, model, name, planPath: args.plan, workspace})
        },
        planPath: args.plan!,
        signal: controller.signal,
      }),
    )
    const result = runResult(outcome)
    await appendStepSummary(runSummary(outcome))
    if (stream) emitStreamEvent('result', result)
    else if (!this.jsonEnabled()) {
      if (!flags.quiet) process.stderr.write(`done in ${outcome.turns} turns; ${outcome.filesChanged.length} files changed; ${formatUsage(outcome.usage)}\n`)
      this.log(outcome.finalText)
    }

    return result
  }
}

function runResult(outcome: RunOutcome) {
  return {
    denials: outcome.denials,
    filesChanged: outcome.filesChanged,
    mode: outcome.mode,
    name: outcome.name,
    ok: true,
    outcome: 'completed',
    planPath: outcome.planPath,
    result: outcome.finalText,
    turns: outcome.turns,
    usage: outcome.usage,
    version: OUTPUT_VERSION,
  }
}

function runSummary(outcome: RunOutcome): string {
  const usage = outcome.usage
  const files = outcome.filesChanged.length > 0 ? outcome.filesChanged.map((file) => `- \`${file}\``).join('\n') : '_none_'
  return `## wave run: ${outcome.name}

${markdownTable([
  ['Plan', `\`${outcome.planPath}\``],
  ['Mode', outcome.mode],
  ['Turns', String(outcome.turns)],
  ['Denied calls', String(outcome.denials)],
  ['Tokens', `${usage.input_tokens} in, ${usage.output_tokens} out, ${usage.cache_read_input_tokens} cache read, ${usage.cache_creation_input_tokens} cache write`],
])}

**Files changed**

${files}

**Result**

${outcome.finalText}`
}
