/**
 * How a session ended, typed: every normal ending is an outcome the loop returns, and the drivers return
 * a stopped one as it is (`Stopped`); only API failures and interrupts are thrown. `ENDINGS` maps each
 * ending to its exit code, message and hint, in one table.
 */
import {ExitCode, type ExitCodeValue, type FailureDetails, WaveError} from '../base/errors.js'
import {type BudgetSource, type Continuation, capName, capRaise} from '../model/budget.js'
import type {TokenUsage} from '../model/pricing.js'
import {formatUsd, roundUsd} from '../model/pricing.js'

declare module '../base/errors.js' {
  /** What a session's failure adds to the details every error may carry. */
  interface FailureDetails {
    stopReason?: StopReason
    usage?: TokenUsage
    /** A session stopped at its budget: the cap, where it was set (model/budget.ts), and what it spent as the budget counts it. */
    budget?: {maxBudgetUsd: number; source: BudgetSource; spentUsd: number}
  }
}

/** How a session ended: the API's stop reasons, and wave's own. */
export type StopReason =
  | 'end_turn'
  | 'stop_sequence'
  | 'stop_requested'
  | 'max_tokens'
  | 'max_turns'
  | 'budget'
  | 'refusal'
  | 'pause_turn'
  | 'model_context_window_exceeded'
  | 'no_result'
  | 'structured_output'
  | 'api_error'
  | 'interrupted'

/** Every ending the loop returns rather than throws, with what its message needs. */
export type Ending =
  /** The model ended its turn without tool calls: the session's answer is its text. */
  | {stopReason: 'end_turn' | 'stop_sequence'}
  /** A control tool asked the session to end after its round of calls (ExitPlanMode). */
  | {stopReason: 'stop_requested'}
  | {stopReason: 'max_turns'; maxTurns: number}
  /** Past the lowest cap given; `source` says where it was set (the flag, the settings, the approval, a unit). */
  | {stopReason: 'budget'; spentUsd: number; maxBudgetUsd: number; source: BudgetSource}
  | {stopReason: 'refusal'; category?: string | null}
  /** The final answer stayed cut after its one continuation (at max_tokens, or the window full). */
  | {stopReason: 'max_tokens'; cutBy: string; maxTokens: number}
  /** The model ended its turn with nothing to say, again after a nudge to continue (a run's driver decides). */
  | {stopReason: 'no_result'}
  /** `--json-schema`: the model's result never matched the schema in its tries; `problem` is the newest try's. */
  | {stopReason: 'structured_output'; tries: number; problem: string}

/** What a session did, whichever way it ended: the totals every result and every failure reports. */
export interface SessionTotals {
  turns: number
  usage: TokenUsage
  /** What the session cost, or null when the model has no known price. */
  costUsd: number | null
}

export type AgentOutcome = Ending &
  SessionTotals & {
    /** How many times the conversation was compacted. */
    compactions: number
    finalText: string
    /** Real paths written by write tools. */
    changed: Set<string>
    denials: number
  }

/** Endings that are a finished session (exit 0); the others stopped it before it finished. */
export function finished(ending: Ending): boolean {
  return ending.stopReason === 'end_turn' || ending.stopReason === 'stop_sequence' || ending.stopReason === 'stop_requested'
}

/**
 * A run's own ending, after the loop's: the model finished, but the run did not meet its approved checks
 * (a check still failing, or a change outside a strict scope).
 */
interface UnmetEnding {
  stopReason: 'unmet'
  problem: string
}

/** Every ending a driver reports: the loop's, and a run's unmet checks. */
type DriverEnding = Ending | UnmetEnding

/** The endings that stopped a session before it finished (exit 5, 6 or 7). */
type StoppedEnding = Exclude<DriverEnding, {stopReason: 'end_turn' | 'stop_sequence' | 'stop_requested'}>

/**
 * A session that stopped before it finished, as a driver returns it (plan.ts, run.ts, task.ts): returned,
 * never thrown. How it ended, what it did (the details every failure reports), and what the driver adds
 * to the ending's line and hint (where the plan so far is; how to resume the run).
 */
export interface Stopped {
  kind: 'stopped'
  ending: StoppedEnding
  details: FailureDetails
  /** Said after the ending's message. */
  more?: string
  /** Said after the ending's hint. */
  next?: string
  /**
   * The command that goes on where the session stopped (a plan's `--resume`, a run's), which the hint of
   * a limit names with the limit raised; absent, nothing resumes the session, and the hint says so.
   */
  goOn?: Continuation
}

type EndingOf<R extends DriverEnding['stopReason']> = Extract<DriverEnding, {stopReason: R}>

/**
 * Every way a session ends without an error, mapped to its exit code (and, for a session stopped
 * before it finished, the one line and the hint the user gets). `awaiting_approval` is `run --task`'s
 * ending when the model planned: its plan waits for approval. This table is the one place an ending
 * becomes an exit code.
 */
export const ENDINGS: {
  [R in DriverEnding['stopReason']]: {
    exitCode: ExitCodeValue
    message?: (ending: EndingOf<R>) => string
    hint?: (ending: EndingOf<R>, goOn?: Continuation) => string
  }
} & {awaiting_approval: {exitCode: ExitCodeValue}} = {
  awaiting_approval: {exitCode: ExitCode.awaitsApproval},
  budget: {
    exitCode: ExitCode.limit,
    hint: ({maxBudgetUsd, source}, goOn) => capRaise({source, usd: maxBudgetUsd}, goOn),
    message: ({maxBudgetUsd, source, spentUsd}) =>
      spentUsd > maxBudgetUsd
        ? `Stopped at the budget: ${formatUsd(spentUsd)} spent, more than ${capName({source, usd: maxBudgetUsd})}, before the agent finished.`
        : `Stopped at the budget: ${formatUsd(spentUsd)} spent, and the next request could pass ${capName({source, usd: maxBudgetUsd})}, before the agent finished.`,
  },
  end_turn: {exitCode: ExitCode.ok},
  max_tokens: {
    exitCode: ExitCode.refused,
    hint: () => 'Ask for a shorter answer, or choose a model with a larger output limit (--model).',
    message: ({cutBy, maxTokens}) => `The model's answer stayed cut at the output limit (stop_reason ${cutBy}, max_tokens ${maxTokens}) after a continuation.`,
  },
  max_turns: {
    exitCode: ExitCode.limit,
    hint: ({maxTurns}, goOn) => turnsRaise(maxTurns, goOn),
    message: ({maxTurns}) => `Stopped at the turn limit (${maxTurns} turns) before the agent finished.`,
  },
  no_result: {
    exitCode: ExitCode.refused,
    hint: () => 'Nothing was reported as the result. Try again, or try another model (--model).',
    message: () => 'The model ended without a result: its final turn was empty, also after it was asked to continue.',
  },
  refusal: {
    exitCode: ExitCode.refused,
    hint: () => "None of the refused turn's tool calls ran. Rephrase the task, or try another model (--model).",
    message: ({category}) => `The model refused to go on (stop_reason refusal${category ? `, category ${category}` : ''}).`,
  },
  stop_requested: {exitCode: ExitCode.ok},
  structured_output: {
    exitCode: ExitCode.refused,
    hint: () => 'Check that the schema asks for what the task can give (a field it cannot fill, a type too narrow), or try another model (--model).',
    message: ({problem, tries}) => `The model's result never matched --json-schema in ${tries} tries: ${problem}.`,
  },
  stop_sequence: {exitCode: ExitCode.ok},
  unmet: {
    exitCode: ExitCode.unmet,
    message: ({problem}) => `The run did not meet its approved checks: ${problem}.`,
  },
}

/** What to do about a session stopped at its turn limit: as capRaise (model/budget.ts) for its budget. */
function turnsRaise(maxTurns: number, goOn: Continuation | undefined): string {
  if (!goOn) return 'This session is not resumed: raise --max-turns and start it again.'
  const how = goOn.takesFlags ? `${goOn.command} --max-turns <more than ${maxTurns}>` : `raise the job's --max-turns, then ${goOn.command}`
  return `To go on with ${goOn.kept} kept: ${how} (the limit counts the turns before).`
}

type Rule = {exitCode: ExitCodeValue; message?: (ending: DriverEnding) => string; hint?: (ending: DriverEnding, goOn?: Continuation) => string}

/** How a session ended, as a driver returns it: stopped (with `details`, what it did), or undefined for a finished one. */
export function stoppedBy(ending: Ending, details: FailureDetails): Stopped | undefined {
  if ((ENDINGS[ending.stopReason] as Rule).message === undefined) return undefined
  const budget = ending.stopReason === 'budget' ? {budget: {maxBudgetUsd: ending.maxBudgetUsd, source: ending.source, spentUsd: roundUsd(ending.spentUsd)}} : {}
  return {details: {...details, ...budget, stopReason: ending.stopReason}, ending: ending as StoppedEnding, kind: 'stopped'}
}

/** What a stopped session ends the command with: its exit code, one line, hint and details, from ENDINGS. */
export function failureOf(stopped: Stopped): {exitCode: ExitCodeValue; message: string; hint?: string; details: FailureDetails} {
  const rule = ENDINGS[stopped.ending.stopReason] as Rule
  const message = `${rule.message!(stopped.ending)}${stopped.more ?? ''}`
  const hint = [rule.hint?.(stopped.ending, stopped.goOn), stopped.next].filter(Boolean).join(' ') || undefined
  return {details: stopped.details, exitCode: rule.exitCode, hint, message}
}

/** A stopped session as an error, for a caller whose own outcome it fails (the forge review's step). */
export function stoppedError(stopped: Stopped): WaveError {
  const {details, exitCode, hint, message} = failureOf(stopped)
  return new WaveError(message, exitCode, hint, details)
}

/** Whether a driver's result is a stopped session. */
export const isStopped = (result: unknown): result is Stopped => (result as Stopped | undefined)?.kind === 'stopped'
