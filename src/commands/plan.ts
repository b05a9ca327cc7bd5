import {readFile} from 'node:fs/promises'

import {Flags} from '@oclif/core'

import {checkedRules, OUTPUT_VERSION, sessionFlags, WaveCommand} from '../core/command.js'
import {usageError} from '../core/errors.js'
import {modelFrom} from '../core/session/model.js'
import {appendStepSummary, emitAgentEvent, emitStreamEvent, markdownTable} from '../core/output/sink.js'
import {makePlan, type PlanOutcome, revisePlan} from '../core/session/plan.js'
import {loadSettings} from '../core/settings.js'
import type {AgentEvent} from '../core/session/loop.js'
import {formatUsage, withProgress} from '../core/output/progress.js'

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

  async run(): Promise<unknown> {
    const {flags} = await this.parse(Plan)
    if (!flags.revise && !flags.task?.trim()) throw usageError('Missing --task: say what to plan.', 'wave plan --task "Add a --verbose flag"')
    const stream = flags['output-format'] === 'stream-json'
    const allow = checkedRules(flags.allow)

    // Settings are validated before anything starts (a bad file: exit 2); the session reads them again.
    const model = modelFrom(flags.model, loadSettings(flags.cwd ?? process.cwd()).model)
    const outcome = await withProgress('wave plan', {quiet: flags.quiet}, (reporter) => {
      const common = {
        allow,
        maxTurns: flags['max-turns'],
        model,
        onEvent(event: AgentEvent) {
          reporter.event(event)
          if (stream) emitAgentEvent(event)
        },
        onStart({name, planPath, workspace}: {name: string; planPath: string; workspace: string}) {
          reporter.title(`wave plan ${name}`)
          if (stream) emitStreamEvent('session_start', {command: 'plan', mode: 'plan', model, name, planPath, workspace})
        },
        signal: this.interruption.signal,
      }
      return flags.revise
        ? revisePlan({...common, cwd: flags.cwd, feedback: flags.feedback, planPath: flags.revise})
        : makePlan({...common, cwd: flags.cwd ?? process.cwd(), task: flags.task!})
    })
    const result = planResult(outcome)
    await appendStepSummary(await planSummary(outcome, flags.task ?? `revision of ${outcome.name}`))
    if (stream) emitStreamEvent('result', result)
    else if (!this.jsonEnabled()) {
      if (!flags.quiet) process.stderr.write(`plan written in ${outcome.turns} turns; ${formatUsage(outcome.usage)}\n`)
      this.log(outcome.planPath)
    }

    return result
  }
}

function planResult(outcome: PlanOutcome) {
  return {
    name: outcome.name,
    ok: true,
    planPath: outcome.planPath,
    stopReason: outcome.stopReason,
    summary: outcome.summary,
    turns: outcome.turns,
    usage: outcome.usage,
    version: OUTPUT_VERSION,
  }
}

async function planSummary(outcome: PlanOutcome, task: string): Promise<string> {
  const plan = await readFile(outcome.planPath, 'utf8').catch(() => '')
  const usage = outcome.usage
  return `## wave plan: ${outcome.name}

${markdownTable([
  ['Task', task],
  ['Plan', `\`${outcome.planPath}\``],
  ['Turns', String(outcome.turns)],
  ['Tokens', `${usage.input_tokens} in, ${usage.output_tokens} out, ${usage.cache_read_input_tokens} cache read, ${usage.cache_creation_input_tokens} cache write`],
])}

<details><summary>The plan</summary>

${plan.replaceAll('</details>', '&lt;/details&gt;')}

</details>`
}
