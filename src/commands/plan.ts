import {Flags} from '@oclif/core'

import {checkedRules, sessionFlags, toolList, WaveCommand} from '../cli/command.js'
import {usageError} from '../base/errors.js'
import {taskText} from '../base/input.js'
import {parseRule} from '../policy/policy.js'
import {contractLine} from '../plans/contract.js'
import {DEFAULT_MAX_TURNS} from '../session/context.js'
import {makePlan, resumePlan, revisePlan} from '../flows/plan.js'
import {planResult} from '../output/views/plan-result.js'
export default class Plan extends WaveCommand {
  static description = `Explore the repository read-only and write an implementation plan.

The agent runs in plan mode: it may read the workspace and write one file, a new plan under ~/.wave/plans (or $WAVE_HOME/plans). stdout is the plan's path; progress goes to stderr.

The workspace is the top of the git repository holding the current directory (outside any repository, the current directory), or --cwd. The repository's AGENTS.md files (CLAUDE.md where a directory has none), from its root down to the current directory, go into the prompt.

wave plan --resume NAME goes on with the plan's newest planning session when it stopped before it ended with a plan (a limit, an API failure, an interrupt): in plan mode again, on the same plan file, with its conversation as the plan's transcript recorded it, so what it read is not read again; its turns and cost count on, and --max-turns and --max-budget-usd count the whole session. A plan that finished planning is changed with --revise instead.

Plan mode allows reads and the plan file whatever the rules say, so --allow takes only WebFetch rules, for research on the web: WebFetch(domain:docs.example.com). Rules for the run are given when the plan is approved (wave approve --allow).`

  static examples = [
    'PLAN=$(<%= config.bin %> plan --task "Add a --verbose flag to the CLI")',
    '<%= config.bin %> plan --task "Fix the failing date test" --cwd ./service --json',
    '<%= config.bin %> plan --task "Explain the build" --output-format stream-json --quiet',
    '<%= config.bin %> plan --revise gentle-breeze --feedback "Also update the docs"',
    '<%= config.bin %> plan --resume gentle-breeze --max-budget-usd 2',
    'gh issue view 42 --json body -q .body | <%= config.bin %> plan --task -',
    '<%= config.bin %> plan --task "Upgrade the parser" --allow "WebFetch(domain:docs.example.com)"',
  ]

  static flags = {
    allow: Flags.string({
      description: 'A WebFetch rule for research, e.g. WebFetch(domain:docs.example.com); plan mode takes no other rules; repeatable',
      multiple: true,
    }),
    ...sessionFlags(DEFAULT_MAX_TURNS.plan),
    cwd: Flags.directory({description: 'Workspace root (default: the top of the git repository holding the current directory, else the current directory)'}),
    feedback: Flags.string({dependsOn: ['revise'], description: 'With --revise: what to change (default: the newest review feedback)'}),
    resume: Flags.string({
      description: 'Go on with the planning session of this plan (its name or path) that stopped before it ended with a plan, its exploration kept',
      exclusive: ['task', 'task-file', 'revise', 'feedback'],
    }),
    revise: Flags.string({
      description: 'Continue this plan (its name or path) in plan mode: the same file, with review feedback',
      exclusive: ['task', 'task-file', 'resume'],
    }),
    task: Flags.string({char: 't', description: 'What to plan; - reads it from stdin', exclusive: ['task-file']}),
    'task-file': Flags.file({description: 'Read the task from this file'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Plan)
    const allow = researchRules(checkedRules([...(flags.allow ?? []), ...toolList(flags['allowed-tools'])]))
    const task = await taskText(flags)
    if (!flags.revise && !flags.resume && !task?.trim()) throw usageError('Missing --task: say what to plan.', 'wave plan --task "Add a --verbose flag"')
    const inputs = await this.sessionInputs(flags)
    const outcome = await this.output.session('wave plan', (reporter) => {
      const common = {
        ...this.sessionOptions(flags, inputs, reporter),
        allow,
        onStart: (info: {mode: string; model: string; name?: string; planPath?: string; workspace: string}) => reporter.start({command: 'plan', ...info}),
      }
      if (flags.resume) return resumePlan({...common, planPath: flags.resume})
      return flags.revise ? revisePlan({...common, feedback: flags.feedback, planPath: flags.revise}) : makePlan({...common, task: task!})
    })
    if (outcome.kind === 'stopped') return this.stopped(outcome)
    this.output.note(contractLine(outcome.contract))
    for (const problem of outcome.contract.problems) this.output.warn(`The plan's ## Scope: ${problem}; left out.`)
    for (const warning of outcome.contract.warnings) this.output.warn(warning)
    // The plan is written either way (a revision can fix it); its approval is refused while these stand.
    for (const error of outcome.contract.unitErrors) this.output.warn(`${error} wave approve refuses the plan until this is fixed.`)
    await this.output.result(await planResult(outcome, task ?? (flags.resume ? `resumed planning of ${outcome.name}` : `revision of ${outcome.name}`)))
  }
}

/**
 * Plan mode allows reads in the workspace and the plan file whatever the rules say; the one thing a
 * rule can add is WebFetch, for research. Any other rule would do nothing, silently: refused (exit 2).
 */
function researchRules(rules: string[]): string[] {
  const other = rules.find((rule) => parseRule(rule).tool !== 'WebFetch')
  if (other) {
    throw usageError(
      `--allow ${other}: plan mode takes no rules but WebFetch ones (it reads the workspace and writes only the plan, whatever the rules say).`,
      'Give the run its rules when approving the plan: wave approve <plan> --allow "Bash(npm test:*)".',
    )
  }

  return rules
}
