import path from 'node:path'

import type {AskedQuestion, Todo} from '../../base/notes.js'
import {ExitCode} from '../../base/errors.js'
import type {SandboxChoice} from '../../base/process/sandbox.js'
import type {StopReason, TokenUsage} from '../../agent/loop.js'
import {failureOf, type Stopped} from '../../agent/outcome.js'
import type {Continuation} from '../../model/budget.js'
import type {PlanRun} from '../../plans/lifecycle.js'
import type {RunReport} from '../../plans/report.js'
import {planNameOf, plansDir} from '../../plans/store.js'
import type {ExecutionMode} from '../../policy/policy.js'
import type {UnitFiles} from '../unit-output.js'

export interface RunOutcome {
  kind: 'ran'
  name: string
  planPath: string
  mode: ExecutionMode
  finalText: string
  turns: number
  usage: TokenUsage
  stopReason: StopReason
  costUsd: number | null
  sandbox: SandboxChoice
  filesChanged: string[]
  denials: number
  /** The run went on from an interrupted one (`--resume`): turns, usage, cost and files are the whole run's. */
  resumed: boolean
  /** Planned versus actual: the approved scope against the files changed, the checks, the denials. */
  report: RunReport
  /** Questions the model asked (AskUserQuestion) that no one could answer during the run. */
  questions: AskedQuestion[]
  /** The model's to-do list as the run left it. */
  todos: Todo[]
  /** A unit's run: the unit, and where its result and patch were written. */
  unit?: UnitFiles
}

/**
 * A run that did not succeed goes on from where it stopped: the hint says how (a limit's names the
 * command with the limit raised), and the details carry what it changed and its report (planned versus
 * actual, a failed run's too).
 */
export function resumable(stopped: Stopped, run: PlanRun, planPath: string): Stopped {
  const details = {...stopped.details, filesChanged: run.changedFiles, planPath, report: run.report}
  if (failureOf(stopped).exitCode === ExitCode.limit) return {...stopped, details, goOn: runContinuation(planPath, run.unit)}
  return {...stopped, details, next: resumeHint(planPath, false, run.unit)}
}

/** The command that goes on with a stopped run, as a limit's hint names it. */
export const runContinuation = (planPath: string, unit?: string): Continuation => ({
  command: `wave run ${planReference(planPath)}${unit ? ` --unit ${unit}` : ''} --resume`,
  kept: 'its changes and conversation',
  takesFlags: true,
})

/** How to go on with a stopped run: by the plan's name when it is in the plans directory (a name works from any directory, a path may not). */
export function resumeHint(planPath: string, limit: boolean, unit?: string): string {
  return `Continue the run where it stopped: ${runContinuation(planPath, unit).command}${limit ? ' (--max-turns and --max-budget-usd count the whole run)' : ''}.`
}

/** A plan as a command names it: its name when it is in the plans directory (a name works from any directory), else its path. */
export const planReference = (planPath: string) => (path.dirname(planPath) === plansDir() ? planNameOf(planPath) : planPath)
