import {Flags} from '@oclif/core'

import {OUTPUT_VERSION, outputFormatFlag, WaveCommand} from '../core/command.js'
import {usageError} from '../core/errors.js'
import {modelFrom} from '../core/model.js'
import {makePlan} from '../core/planner.js'
import {createProgress, formatUsage} from '../core/progress.js'

export default class Plan extends WaveCommand {
  static description = `Explore the repository read-only and write an implementation plan.

The agent runs in plan mode: it may read the workspace and write one file, a new plan under
~/.wave/plans (or $WAVE_HOME/plans). stdout is the plan's path; progress goes to stderr.`

  static examples = [
    'PLAN=$(<%= config.bin %> plan --task "Add a --verbose flag to the CLI")',
    '<%= config.bin %> plan --task "Fix the failing date test" --cwd ./service --json',
  ]

  static flags = {
    cwd: Flags.directory({description: 'Workspace root (default: the current directory)'}),
    'max-turns': Flags.integer({default: 40, description: 'Stop with exit 5 after this many model turns', min: 1}),
    model: Flags.string({description: 'Model ID (default: $WAVE_MODEL, else claude-sonnet-4-5)'}),
    'output-format': outputFormatFlag({default: 'text'}),
    quiet: Flags.boolean({char: 'q', description: 'No progress on stderr'}),
    task: Flags.string({char: 't', description: 'What to plan'}),
  }

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Plan)
    if (!flags.task?.trim()) throw usageError('Missing --task: say what to plan.', 'wave plan --task "Add a --verbose flag"')
    const progress = createProgress({quiet: flags.quiet})
    const controller = new AbortController()
    const outcome = await makePlan({
      cwd: flags.cwd ?? process.cwd(),
      maxTurns: flags['max-turns'],
      model: modelFrom(flags.model),
      onEvent: (event) => progress.event(event),
      onStart: ({model, name, workspace}) => progress.info(`wave plan: ${name} (model ${model}, workspace ${workspace})`),
      signal: controller.signal,
      task: flags.task,
    })
    progress.info(`plan written in ${outcome.turns} turns; ${formatUsage(outcome.usage)}`)
    const result = {
      name: outcome.name,
      planPath: outcome.planPath,
      stopReason: outcome.stopReason,
      summary: outcome.summary,
      turns: outcome.turns,
      usage: outcome.usage,
      version: OUTPUT_VERSION,
    }
    if (!this.jsonEnabled()) this.log(outcome.planPath)
    return result
  }
}
