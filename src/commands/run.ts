import {Args, Flags} from '@oclif/core'

import type {AgentEvent} from '../core/session/loop.js'
import {defaultApprover} from '../core/plans/approval.js'
import {checkedRules, OUTPUT_VERSION, sessionFlags, WaveCommand} from '../core/command.js'
import {ExitCode, usageError} from '../core/errors.js'
import {modelFrom} from '../core/session/model.js'
import {appendStepSummary, emitAgentEvent, emitStreamEvent, markdownTable} from '../core/output/sink.js'
import {EXECUTION_MODES} from '../core/policy/policy.js'
import {loadSettings} from '../core/settings.js'
import {formatUsage, type Reporter, withProgress} from '../core/output/progress.js'
import {executePlan, type RunOutcome} from '../core/session/run.js'
import {runTask, type TaskOutcome} from '../core/session/task.js'

export default class Run extends WaveCommand {
  static args = {
    plan: Args.file({description: 'The approved plan file'}),
  }

  static description = `Execute an approved plan in a fresh context with the full tool set, or run a task directly.

wave run <plan.md> refuses, before any model request, a plan with no approval record or another
decision (exit 3), a plan whose content changed since approval, or one made against another git HEAD
(exit 4; --allow-stale overrides the latter). stdout is the agent's final message.

wave run --task "<text>" works in --mode with EnterPlanMode on offer: if the model plans first, the
command stops with the plan's path on stdout and exit 10 (approve and run it later), or, with
--approve, approves the plan and executes it in a fresh context.`

  static examples = [
    '<%= config.bin %> run ~/.wave/plans/gentle-breeze.md',
    '<%= config.bin %> run "$PLAN" --approve --mode acceptEdits --allow "Bash(npm test:*)" --json',
    '<%= config.bin %> run "$PLAN" --approval review/gentle-breeze.approval.json --cwd ./checkout',
    '<%= config.bin %> run --task "Rename the config loader" --mode acceptEdits',
  ]

  static flags = {
    allow: Flags.string({description: 'With --approve or --task: a permission rule for the run, e.g. Bash(npm test:*); repeatable', multiple: true}),
    'allow-stale': Flags.boolean({description: 'Run even if the plan was made against another git HEAD'}),
    approval: Flags.file({description: 'The approval record (default: <plan>.approval.json beside the plan)', exclusive: ['approve']}),
    approve: Flags.boolean({description: 'Approve inline (the record is written first), for trusted pipelines'}),
    ...sessionFlags(60),
    mode: Flags.option({description: 'With --approve or --task: the permission mode (default acceptEdits)', options: EXECUTION_MODES})(),
    task: Flags.string({char: 't', description: 'Run this task directly; the model may enter plan mode itself'}),
  }

  async run(): Promise<unknown> {
    const {args, flags} = await this.parse(Run)
    if (args.plan && flags.task !== undefined) throw usageError('Give either a plan to run or --task, not both.')
    if (!args.plan && !flags.task?.trim()) throw usageError('Missing the plan to run (or --task).', 'wave run <plan.md>')
    if (!flags.approve && !flags.task && (flags.mode || flags.allow)) {
      throw usageError('--mode and --allow choose how an inline approval runs: use them with --approve (or --task).', 'The approval record holds the mode and rules of an approved plan.')
    }

    const allow = checkedRules(flags.allow)

    const stream = flags['output-format'] === 'stream-json'
    // Settings are validated before anything starts (a bad file: exit 2); the session reads them again.
    const model = modelFrom(flags.model, loadSettings(flags.cwd ?? process.cwd()).model)
    const mode = flags.mode ?? 'acceptEdits'
    const approve = flags.approve ? {allow, approver: await defaultApprover(), mode} : undefined
    const events = (reporter: Reporter) => (event: AgentEvent) => {
      reporter.event(event)
      if (stream) emitAgentEvent(event)
    }

    if (flags.task) {
      const task = flags.task
      const outcome = await withProgress('wave run --task', {quiet: flags.quiet}, (reporter) =>
        runTask({
          allow,
          approve,
          cwd: flags.cwd ?? process.cwd(),
          maxTurns: flags['max-turns'],
          mode,
          model,
          onEvent: events(reporter),
          onPlanMode({name, planPath}) {
            reporter.title(`wave run --task · planning ${name}`)
            if (stream) emitStreamEvent('plan_mode', {name, planPath})
          },
          onStart({workspace}) {
            if (stream) emitStreamEvent('session_start', {command: 'run', mode, model, task, workspace})
          },
          signal: this.interruption.signal,
          task,
        }),
      )
      return this.finishTask(outcome, stream, flags.quiet)
    }

    const outcome = await withProgress('wave run', {quiet: flags.quiet}, (reporter) =>
      executePlan({
        allowStale: flags['allow-stale'],
        approvalPath: flags.approval,
        approve,
        cwd: flags.cwd ?? process.cwd(),
        maxTurns: flags['max-turns'],
        model,
        onEvent: events(reporter),
        onStart({mode, name, workspace}) {
          reporter.title(`wave run ${name}`)
          if (stream) emitStreamEvent('session_start', {command: 'run', mode, model, name, planPath: args.plan, workspace})
        },
        planPath: args.plan!,
        signal: this.interruption.signal,
      }),
    )
    return this.finishRun(outcome, stream, flags.quiet)
  }

  private async finishRun(outcome: RunOutcome, stream: boolean, quiet: boolean) {
    const result = runResult(outcome)
    await appendStepSummary(runSummary(outcome))
    if (stream) emitStreamEvent('result', result)
    else if (!this.jsonEnabled()) {
      if (!quiet) process.stderr.write(`done in ${outcome.turns} turns; ${outcome.filesChanged.length} files changed; ${formatUsage(outcome.usage)}\n`)
      this.log(outcome.finalText)
    }

    return result
  }

  private async finishTask(outcome: TaskOutcome, stream: boolean, quiet: boolean) {
    if (outcome.kind === 'executed') return this.finishRun(outcome.run, stream, quiet)
    if (outcome.kind === 'awaiting_approval') {
      const result = {name: outcome.name, ok: true, outcome: 'awaiting_approval', planPath: outcome.planPath, turns: outcome.turns, usage: outcome.usage, version: OUTPUT_VERSION}
      await appendStepSummary(`## wave run --task: plan ${outcome.name} awaits approval\n\n\`${outcome.planPath}\``)
      if (stream) emitStreamEvent('result', result)
      else if (!this.jsonEnabled()) {
        if (!quiet) process.stderr.write(`The plan awaits approval: wave approve ${outcome.planPath} && wave run ${outcome.planPath}\n`)
        this.log(outcome.planPath)
      }

      process.exitCode = ExitCode.awaitsApproval
      return result
    }

    const result = {
      denials: outcome.denials,
      filesChanged: outcome.filesChanged,
      mode: outcome.mode,
      ok: true,
      outcome: 'completed',
      result: outcome.finalText,
      turns: outcome.turns,
      usage: outcome.usage,
      version: OUTPUT_VERSION,
    }
    if (stream) emitStreamEvent('result', result)
    else if (!this.jsonEnabled()) this.log(outcome.finalText)
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
