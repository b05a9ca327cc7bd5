import {readFile} from 'node:fs/promises'

import {Flags} from '@oclif/core'

import {checkedRules, sessionFlags, WaveCommand} from '../core/command.js'
import {usageError} from '../core/errors.js'
import {formatUsage} from '../core/output/progress.js'
import {type CommandResult, markdownTable} from '../core/output/sink.js'
import {makePlan, type PlanOutcome, revisePlan} from '../core/session/plan.js'
export default class Plan extends WaveCommand {
  static description = `Explore the repository read-only and write an implementation plan.

The agent runs in plan mode: it may read the workspace and write one file, a new plan under
~/.wave/plans (or $WAVE_HOME/plans). stdout is the plan's path; progress goes to stderr.`

  static examples = [
    'PLAN=$(<%= config.bin %> plan --task "Add a --verbose flag to the CLI")',
    '<%= config.bin %> plan --task "Fix the failing date test" --cwd ./service --json',
    '<%= config.bin %> plan --task "Explain the build" --output-format stream-json --quiet',
    '<%= config.bin %> plan --revise "$PLAN" --feedback "Also update the docs"',
  ]

  static flags = {
    allow: Flags.string({description: 'Permission rule for this session, e.g. WebFetch(domain:docs.example.com); repeatable', multiple: true}),
    ...sessionFlags(40),
    cwd: Flags.directory({description: 'Workspace root (default: the current directory; with --revise, the plan\'s own)'}),
    feedback: Flags.string({dependsOn: ['revise'], description: 'With --revise: what to change (default: the newest review feedback)'}),
    revise: Flags.file({description: 'Continue this plan in plan mode: the same file, with review feedback', exclusive: ['task']}),
    task: Flags.string({char: 't', description: 'What to plan'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Plan)
    if (!flags.revise && !flags.task?.trim()) throw usageError('Missing --task: say what to plan.', 'wave plan --task "Add a --verbose flag"')
    const allow = checkedRules(flags.allow)
    const outcome = await this.output.session('wave plan', (reporter) => {
      const common = {
        allow,
        host: this.sessionHost((event) => reporter.event(event)),
        maxTurns: flags['max-turns'],
        model: flags.model,
        onStart: (info: {mode: string; model: string; name?: string; planPath?: string; workspace: string}) => reporter.start({command: 'plan', ...info}),
      }
      return flags.revise
        ? revisePlan({...common, cwd: flags.cwd ?? process.cwd(), feedback: flags.feedback, planPath: flags.revise})
        : makePlan({...common, cwd: flags.cwd ?? process.cwd(), task: flags.task!})
    })
    await this.output.result(await planResult(outcome, flags.task ?? `revision of ${outcome.name}`))
  }
}

async function planResult(outcome: PlanOutcome, task: string): Promise<CommandResult> {
  const plan = await readFile(outcome.planPath, 'utf8').catch(() => '')
  const usage = outcome.usage
  const summary = `## wave plan: ${outcome.name}

${markdownTable([
  ['Task', task],
  ['Plan', `\`${outcome.planPath}\``],
  ['Turns', String(outcome.turns)],
  ['Stop reason', outcome.stopReason],
  ['Tokens', `${usage.input_tokens} in, ${usage.output_tokens} out, ${usage.cache_read_input_tokens} cache read, ${usage.cache_creation_input_tokens} cache write`],
])}

<details><summary>The plan</summary>

${plan.replaceAll('</details>', '&lt;/details&gt;')}

</details>`
  return {
    data: {
      name: outcome.name,
      planPath: outcome.planPath,
      stopReason: outcome.stopReason,
      summary: outcome.summary,
      turns: outcome.turns,
      usage: outcome.usage,
    },
    summary,
    tally: `plan written in ${outcome.turns} turns; ${formatUsage(outcome.usage)}`,
    text: outcome.planPath,
  }
}
