import path from 'node:path'

import {Flags} from '@oclif/core'

import {outputFormatFlag, WaveCommand} from '../cli/command.js'
import {type DemoCheck, type DemoOutcome, type DemoToolCall, runDemo} from '../ops/demo/demo.js'
import {reportTally} from '../output/report-view.js'
import {checkOutcome} from '../plans/report.js'
import type {CommandResult} from '../output/sink.js'

export default class Demo extends WaveCommand {
  static description = `See plan → approve → run on a tiny project, with no key and no network.

A scripted model served on 127.0.0.1 stands in for the API; everything else is wave as it runs with a real key. wave plan writes a plan with its contract (## Scope, ## Verification), wave approve records the approval binding it, and wave run makes the change; when the model ends its turn, wave runs the approved check (npm test, in the sandbox where one can start), which fails once and is fixed on the retry turn, and prints the planned-versus-actual tally.

stdout shows what each step did and the diff. The repository and plans are removed afterwards, unless --keep names a directory for them.`

  static examples = ['<%= config.bin %> demo', '<%= config.bin %> demo --keep ./wave-demo', '<%= config.bin %> demo --json']

  static flags = {
    keep: Flags.string({description: 'Keep the demo repository and its plans in this directory (new or empty)'}),
    'output-format': outputFormatFlag({default: 'text'}),
    quiet: Flags.boolean({char: 'q', description: 'No progress on stderr'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Demo)
    const outcome = await runDemo({
      cli: path.join(this.config.root, 'bin', 'run.js'),
      keep: flags.keep,
      progress: (line) => this.output.note(line),
      signal: this.interruption.signal,
    })
    await this.output.result(demoResult(outcome))
  }
}

function demoResult(outcome: DemoOutcome): CommandResult {
  const [plan, approve, run] = outcome.steps
  const where = outcome.kept ? `kept in ${outcome.kept.directory}` : 'removed with the demo; --keep DIR keeps them'
  const sandbox = outcome.sandbox.available
    ? ''
    : `\nThe sandbox cannot start here, so the demo approved its check with --sandbox off (the record says so):\n${outcome.sandbox.problem}\n`
  const text = `${section(`1. ${plan.command}`)}
The model explored read-only, then wrote the plan:
${callsText(plan.toolCalls)}

The plan, ${outcome.plan.path} (stdout of wave plan is its path):

${outcome.plan.text.trimEnd()}

${section(`2. ${approve.command}`)}
The approval record, ${outcome.approval.path}:

${JSON.stringify(outcome.approval.record, null, 2)}

${section(`3. ${run.command}`)}
A fresh session holding the task and the approved plan; its tool calls, and the approved check wave ran each time the model ended its turn:
${callsText(run.toolCalls, run.checks)}

Planned versus actual: ${reportTally(outcome.run.report, 'Run complete')}
Files changed: ${outcome.run.filesChanged.join(', ') || 'none'}
The agent's final message (stdout of wave run):

${outcome.run.result}
${sandbox}
${section('The change (git diff)')}
${outcome.diff.trimEnd() || '(no change)'}

${section('With a real key')}
${outcome.withRealKey.join('\n')}

Plans and the repository: ${where}.`
  return {
    data: {
      approval: outcome.approval,
      diff: outcome.diff,
      durationMs: outcome.durationMs,
      kept: outcome.kept,
      plan: outcome.plan,
      run: outcome.run,
      sandbox: outcome.sandbox,
      steps: outcome.steps,
      task: outcome.task,
      withRealKey: outcome.withRealKey,
    },
    tally: `demo done in ${(outcome.durationMs / 1000).toFixed(1)} s: plan, approve and run, each the real CLI against a scripted model`,
    text,
  }
}

/** One line a call, what went wrong under a refused one, the tail of a command's output; the checks where they ran. */
function callsText(calls: DemoToolCall[], checks: DemoCheck[] = []): string {
  const checkLine = (check: DemoCheck) => `  wave ran ${check.command}: ${checkOutcome(check)} in ${(check.durationMs / 1000).toFixed(1)} s`
  return calls
    .map((call, index) => {
      const before = checks.filter((check) => check.afterCalls === index).map(checkLine)
      return [...before, callText(call)].join('\n')
    })
    .concat(checks.filter((check) => check.afterCalls >= calls.length).map(checkLine))
    .join('\n')
}

function callText(call: DemoToolCall): string {
  const input = (call.input ?? {}) as Record<string, unknown>
  const said = call.said ? `  > ${call.said.split('\n').join('\n  > ')}\n` : ''
  const line = `${said}  ${call.name} ${String(input.file_path ?? input.pattern ?? input.command ?? '')}`.trimEnd()
  if (call.isError) return `${line}\n    ${call.denied ? 'denied' : 'failed'}: ${call.content.split('\n')[0]}`
  if (call.name !== 'Bash') return line
  return [
    line,
    ...call.content
      .trimEnd()
      .split('\n')
      .slice(-8)
      .map((output) => `    | ${output}`),
  ].join('\n')
}

const section = (title: string) => `== ${title} ==`
