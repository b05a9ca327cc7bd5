/**
 * What `wave run` shows of a finished run, of a plan or of a task: the fields of `--json`, the final
 * message on stdout, the closing tally on stderr and the job summary's Markdown. The outcomes are taken
 * by their shape (the drivers of flows/ return them; this folder does not import them).
 */
import type {AskedQuestion, Todo} from '../../base/notes.js'
import {describeSandbox, type SandboxChoice} from '../../base/process/sandbox.js'
import {markdownTable} from '../../base/text.js'
import type {StopReason, TokenUsage} from '../../agent/loop.js'
import type {RunReport} from '../../plans/report.js'
import type {ExecutionMode} from '../../policy/policy.js'
import {formatCost, formatUsage, tokenCounts} from '../progress.js'
import {reportMarkdown, reportTally} from '../report-view.js'
import type {CommandResult} from '../sink.js'
import {questionsMarkdown, todosMarkdown} from './notes.js'

/** The totals every session reports and what the model left: a completed run's, and a plan awaiting approval's. */
interface SessionShown {
  costUsd: number | null
  questions: AskedQuestion[]
  stopReason: StopReason
  todos: Todo[]
  turns: number
  usage: TokenUsage
}

/** What every completed run reports, of a plan or of a task. */
interface RanShown extends SessionShown {
  sandbox: SandboxChoice
  denials: number
  filesChanged: string[]
  finalText: string
  mode: ExecutionMode
}

/** A plan's run: the run's own fields, its report (planned versus actual) and, for a unit's job, where its result and patch went. */
interface PlanRunShown extends RanShown {
  name: string
  planPath: string
  report: RunReport
  resumed: boolean
  unit?: {name: string; result: string; patch: string}
}

/** `wave run --task`: done in one session, a plan that awaits approval, or a plan approved inline and run. */
type TaskShown =
  | ({kind: 'completed'} & RanShown)
  | ({kind: 'awaiting_approval'; planPath: string; name: string} & SessionShown)
  | {kind: 'executed'; run: PlanRunShown}

export function runResult(outcome: PlanRunShown): CommandResult {
  return {
    data: {
      ...completedData(outcome),
      name: outcome.name,
      planPath: outcome.planPath,
      report: outcome.report,
      resumed: outcome.resumed,
      ...(outcome.unit ? {unit: outcome.unit} : {}),
    },
    summary: `${runSummary(`## wave run: ${outcome.name}`, outcome, [['Plan', `\`${outcome.planPath}\``]])}\n\n${reportMarkdown(outcome.report)}`,
    tally: `${outcome.resumed ? 'resumed and ' : ''}${ranTally(outcome)}\n${reportTally(outcome.report)}${
      outcome.unit ? `\nUnit ${outcome.unit.name}: result ${outcome.unit.result}, patch ${outcome.unit.patch}` : ''
    }`,
    text: outcome.finalText,
  }
}

export function taskResult(outcome: TaskShown, task: string): CommandResult {
  switch (outcome.kind) {
    case 'executed': {
      return runResult(outcome.run)
    }

    case 'awaiting_approval': {
      return {
        data: {
          costUsd: outcome.costUsd,
          name: outcome.name,
          outcome: 'awaiting_approval',
          planPath: outcome.planPath,
          questions: outcome.questions,
          todos: outcome.todos,
          stopReason: outcome.stopReason,
          turns: outcome.turns,
          usage: outcome.usage,
        },
        summary: `## wave run --task: plan ${outcome.name} awaits approval\n\n${markdownTable([
          ['Task', task],
          ['Plan', `\`${outcome.planPath}\``],
          ['Approve and run', `\`wave approve ${outcome.planPath} && wave run ${outcome.planPath}\``],
        ])}`,
        tally: `The plan awaits approval: wave approve ${outcome.planPath} && wave run ${outcome.planPath}`,
        text: outcome.planPath,
      }
    }

    case 'completed': {
      return {
        data: completedData(outcome),
        summary: runSummary('## wave run --task', outcome, [['Task', task]]),
        tally: ranTally(outcome),
        text: outcome.finalText,
      }
    }
  }
}

function completedData(outcome: RanShown) {
  return {
    costUsd: outcome.costUsd,
    denials: outcome.denials,
    filesChanged: outcome.filesChanged,
    mode: outcome.mode,
    outcome: 'completed',
    questions: outcome.questions,
    result: outcome.finalText,
    sandbox: outcome.sandbox,
    stopReason: outcome.stopReason,
    todos: outcome.todos,
    turns: outcome.turns,
    usage: outcome.usage,
  }
}

/** The closing stderr line of every completed run. */
const ranTally = (outcome: RanShown) =>
  `done in ${outcome.turns} turns; ${outcome.filesChanged.length} files changed; ${deniedCalls(outcome.denials)}${formatUsage(outcome.usage)}; ${formatCost(outcome.costUsd)}`

/** Denied calls, when there were any: a run that was refused what it tried did not do all it was asked. */
const deniedCalls = (denials: number) => (denials === 0 ? '' : `${denials} ${denials === 1 ? 'call' : 'calls'} denied; `)

function runSummary(heading: string, outcome: RanShown, first: Array<[string, string]>): string {
  const files = outcome.filesChanged.length > 0 ? outcome.filesChanged.map((file) => `- \`${file}\``).join('\n') : '_none_'
  return `${heading}

${markdownTable([
  ...first,
  ['Mode', outcome.mode],
  ['Sandbox', describeSandbox(outcome.sandbox)],
  ['Turns', String(outcome.turns)],
  ['Stop reason', outcome.stopReason],
  ['Cost', formatCost(outcome.costUsd)],
  ['Denied calls', String(outcome.denials)],
  ['Tokens', tokenCounts(outcome.usage)],
])}

**Files changed**

${files}

${questionsMarkdown(outcome.questions, '**Questions** (asked during the run; no one could answer them)')}

${todosMarkdown(outcome.todos)}

**Result**

${outcome.finalText}`
}
