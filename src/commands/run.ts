import {Args, Flags} from '@oclif/core'

import {checkedRules, sandboxFlags, sandboxFrom, sessionFlags, toolList, WaveCommand} from '../cli/command.js'
import {usageError} from '../base/errors.js'
import {ENDINGS} from '../agent/outcome.js'
import {taskText} from '../base/input.js'
import {defaultApprover} from '../plans/approval.js'
import {EXECUTION_MODES} from '../policy/policy.js'
import type {SessionReporter} from '../output/sink.js'
import {DEFAULT_MAX_TURNS} from '../session/context.js'
import type {SessionStart} from '../flows/plan.js'
import {executePlan} from '../flows/run.js'
import {runTask} from '../flows/task.js'
import {runResult, taskResult} from '../output/views/run-result.js'

export default class Run extends WaveCommand {
  static args = {
    plan: Args.string({description: 'The approved plan: its name (as wave plans lists it) or its path'}),
  }

  static description = `Execute an approved plan in a fresh context with the full tool set, or run a task directly.

wave run <plan> refuses, before any model request, a plan with no approval record or another decision, or one that already ran under its approval (exit 3: a plan runs once per approval), a plan whose content changed since approval, one made against another git HEAD (exit 4; --allow-stale overrides it), or hooks in effect other than those approved (exit 4; --allow-hook-drift overrides it). stdout is the agent's final message.

The workspace is the top of the git repository holding the current directory, from wherever in it the command starts, or --cwd; outside any repository, give --cwd. The repository's AGENTS.md files (CLAUDE.md where a directory has none) go into the prompt as they are at run time.

When the model ends its work, wave runs the approval's checks itself (the plan's ## Verification, or approve --verify), each in the run's sandbox without any allow rule; a failing check's output goes back to the model for another turn, up to --verify-retries times. A run whose checks still fail, or that changed a file outside a strict scope, exits 7 and is not spent: --resume goes on with the failing output.

wave run <plan> --resume continues the plan's newest run when it did not succeed (interrupted, stopped at a limit, failed), after the same approval checks, with its conversation as its transcript recorded it: no tool call whose result was recorded runs again, and --max-turns and --max-budget-usd count the whole run. Nothing to resume (no run, or the newest succeeded) is exit 2.

wave run --task "<text>" works in --mode with EnterPlanMode on offer: if the model plans first, the command stops with the plan's path on stdout and exit 10 (approve and run it later), or, with --approve, approves the plan and executes it in a fresh context.`

  static examples = [
    '<%= config.bin %> run gentle-breeze',
    '<%= config.bin %> run ~/.wave/plans/gentle-breeze.md',
    '<%= config.bin %> run "$PLAN" --approve --mode acceptEdits --allow "Bash(npm test:*)" --json',
    '<%= config.bin %> run "$PLAN" --approval review/gentle-breeze.approval.json --cwd ./checkout',
    '<%= config.bin %> run gentle-breeze --resume',
    '<%= config.bin %> run --task "Rename the config loader" --mode acceptEdits',
  ]

  static flags = {
    allow: Flags.string({description: 'With --approve or --task: a permission rule for the run, e.g. Bash(npm test:*); repeatable', multiple: true}),
    'allow-stale': Flags.boolean({description: 'Run even if the plan was made against another git HEAD', exclusive: ['task', 'task-file']}),
    'allow-hook-drift': Flags.boolean({description: 'Run even if the hooks in effect differ from those approved (warned)', exclusive: ['task', 'task-file']}),
    approval: Flags.file({description: 'The approval record (default: <plan>.approval.json beside the plan)', exclusive: ['approve', 'task', 'task-file']}),
    approve: Flags.boolean({
      description: 'Approve inline (the record is written first), for trusted pipelines; refused over a recorded rejection or request for changes',
    }),
    force: Flags.boolean({
      dependsOn: ['approve'],
      description: 'With --approve: approve even over a newest decision of rejected or changes_requested (recorded)',
      exclusive: ['task', 'task-file'],
    }),
    ...sessionFlags(DEFAULT_MAX_TURNS.run),
    mode: Flags.option({description: 'With --approve or --task: the permission mode (default acceptEdits)', options: EXECUTION_MODES})(),
    resume: Flags.boolean({
      description:
        "Continue the plan's newest run, which did not succeed (interrupted, at a limit, failed), from its transcript: no recorded tool call runs again",
      exclusive: ['approve', 'task', 'task-file'],
    }),
    task: Flags.string({
      char: 't',
      description: 'Run this task directly (- reads it from stdin); the model may enter plan mode itself',
      exclusive: ['task-file'],
    }),
    'task-file': Flags.file({description: 'Run the task in this file directly'}),
    unit: Flags.string({
      description:
        "Run one unit of a plan with ## Units (its own job): held to the unit's paths (strict) and checks, within its budget; writes its result and patch",
      exclusive: ['approve', 'task', 'task-file'],
    }),
    'result-out': Flags.string({
      dependsOn: ['unit'],
      description: "With --unit: where the unit's result goes (default <plan>.unit-<name>.json beside the plan)",
    }),
    'patch-out': Flags.string({
      dependsOn: ['unit'],
      description: "With --unit: where the unit's change goes, a binary patch against the plan's base commit (default <plan>.unit-<name>.patch)",
    }),
    'verify-retries': Flags.integer({
      default: 2,
      description: 'How many more turns the model gets to fix failing approved checks before the run exits 7',
      min: 0,
    }),
    ...sandboxFlags,
    // No default here: a plan's record decides, so the flag is only for --approve and --task.
    sandbox: Flags.option({description: sandboxFlags.sandbox.description, options: ['on', 'off'] as const})(),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Run)
    const taskGiven = flags.task !== undefined || flags['task-file'] !== undefined
    if (args.plan && taskGiven) throw usageError('Give either a plan to run or --task, not both.')
    const task = await taskText(flags)
    if (!args.plan && !task?.trim()) throw usageError('Missing the plan to run (or --task).', 'wave run <plan>')
    // A run of an approved plan runs as its record says: nothing given here may widen it.
    const widening = (['allowed-tools', 'mcp-config', 'strict-mcp-config'] as const).find((flag) => flags[flag] !== undefined && flags[flag] !== false)
    if (!flags.approve && !taskGiven && widening) {
      throw usageError(
        `--${widening} would widen what the approved plan may do (${widening === 'allowed-tools' ? 'allow rules' : 'MCP servers and their tools'}), which only its approval record decides.`,
        'Approve the plan with the rules it needs (wave approve --allow ...), or run it inline with --approve. Deny rules (--deny, --disallowed-tools) are taken: they only narrow.',
      )
    }

    if (!flags.approve && !taskGiven && (flags.mode || flags.allow || flags.sandbox || flags['sandbox-network'])) {
      throw usageError(
        '--mode, --allow and --sandbox choose how an inline approval runs: use them with --approve (or --task).',
        'The approval record holds the mode, rules and sandbox of an approved plan.',
      )
    }

    const sandbox = sandboxFrom(flags)

    const allow = checkedRules([...(flags.allow ?? []), ...toolList(flags['allowed-tools'])])
    const mode = flags.mode ?? 'acceptEdits'
    const approve = flags.approve ? {allow, approver: await defaultApprover(), mode, sandbox} : undefined
    const inputs = await this.sessionInputs(flags)
    const common = (reporter: SessionReporter) => this.sessionOptions(flags, inputs, reporter)

    if (task) {
      const outcome = await this.output.session('wave run --task', (reporter) =>
        runTask({
          ...common(reporter),
          allow,
          approve,
          mode,
          onPlanMode: (info) => reporter.planMode(info),
          sandbox,
          onStart: (info: SessionStart) => reporter.start({command: 'run', ...info, task}),
          task,
          verifyRetries: flags['verify-retries'],
        }),
      )
      if (outcome.kind === 'stopped') return this.stopped(outcome)
      if (outcome.kind === 'awaiting_approval') process.exitCode = ENDINGS.awaiting_approval.exitCode
      await this.output.result(taskResult(outcome, task))
      return
    }

    const outcome = await this.output.session('wave run', (reporter) =>
      executePlan({
        ...common(reporter),
        allowHookDrift: flags['allow-hook-drift'],
        allowStale: flags['allow-stale'],
        approvalPath: flags.approval,
        approve,
        force: flags.force,
        onStart: (info) => reporter.start({command: 'run', ...info}),
        patchOut: flags['patch-out'],
        planPath: args.plan!,
        resultOut: flags['result-out'],
        resume: flags.resume,
        unit: flags.unit,
        verifyRetries: flags['verify-retries'],
      }),
    )
    if (outcome.kind === 'stopped') return this.stopped(outcome)
    await this.output.result(runResult(outcome))
  }
}
