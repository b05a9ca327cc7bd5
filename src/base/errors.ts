import type {Ending, StopReason} from '../agent/outcome.js'
import type {TokenUsage} from '../model/pricing.js'
import {formatUsd} from '../model/pricing.js'
import type {RunReport} from '../plans/report.js'

/** Exit codes of the design's table; scripts branch on them, so they never change meaning. */
export const ExitCode = {
  ok: 0,
  runtime: 1,
  usage: 2,
  notApproved: 3,
  mismatch: 4,
  limit: 5,
  /** The model refused, or its answer stayed cut at the output limit (max_tokens). */
  refused: 6,
  /** The run did not meet its approved checks: a check still failing, or a change outside a strict scope. */
  unmet: 7,
  awaitsApproval: 10,
  /** 128 + the signal's number, as shells report it. */
  interrupted: 130,
  terminated: 143,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

type EndingOf<R extends Ending['stopReason']> = Extract<Ending, {stopReason: R}>

/**
 * Every way a session ends without an error, mapped to its exit code (and, for a session stopped
 * before it finished, the one line and the hint the user gets). `awaiting_approval` is `run --task`'s
 * ending when the model planned: its plan waits for approval.
 */
export const ENDINGS: {
  [R in Ending['stopReason']]: {exitCode: ExitCodeValue; message?: (ending: EndingOf<R>) => string; hint?: (ending: EndingOf<R>) => string}
} & {awaiting_approval: {exitCode: ExitCodeValue}} = {
  awaiting_approval: {exitCode: ExitCode.awaitsApproval},
  budget: {
    exitCode: ExitCode.limit,
    hint: ({spentUsd}) => `${formatUsd(spentUsd)} spent so far; raise --max-budget-usd to let it go on.`,
    message: ({maxBudgetUsd, spentUsd}) =>
      `Stopped at the budget: ${formatUsd(spentUsd)} spent, more than --max-budget-usd ${maxBudgetUsd}, before the agent finished.`,
  },
  end_turn: {exitCode: ExitCode.ok},
  max_tokens: {
    exitCode: ExitCode.refused,
    hint: () => 'Ask for a shorter answer, or choose a model with a larger output limit (--model).',
    message: ({cutBy, maxTokens}) => `The model's answer stayed cut at the output limit (stop_reason ${cutBy}, max_tokens ${maxTokens}) after a continuation.`,
  },
  max_turns: {
    exitCode: ExitCode.limit,
    hint: () => 'Raise --max-turns to let it go on.',
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
  stop_sequence: {exitCode: ExitCode.ok},
}

/**
 * What a failed command reports besides its line: what its session did before it stopped (error JSON
 * and the job summary carry these, so a CI job knows what it paid for and where things stand).
 */
export interface FailureDetails {
  stopReason?: StopReason
  turns?: number
  usage?: TokenUsage
  costUsd?: number | null
  /** The workspace's files the session changed (real paths from the loop, workspace paths from a driver). */
  filesChanged?: string[]
  /** The plan the session worked on, when there is one. */
  planPath?: string | null
  /** A run of a plan: planned versus actual as it stopped (exit 7 above all: which checks failed). */
  report?: RunReport
  /** `wave demo`: the step that failed, and the end of its stderr. */
  step?: string
  stderr?: string
}

/**
 * An error meant for the user: one clear line, an optional hint, and the exit code it maps to.
 * `details` says what a session did before it failed.
 */
export class WaveError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue = ExitCode.runtime,
    readonly hint?: string,
    readonly details?: FailureDetails,
  ) {
    super(message)
    this.name = 'WaveError'
  }

  /** The same error with `details` added (over any it had), e.g. what the session did before it failed. */
  withDetails(details: FailureDetails): WaveError {
    const copy = new WaveError(this.message, this.exitCode, this.hint, {...this.details, ...details})
    copy.stack = this.stack
    return copy
  }
}

/** The error a session stopped before it finished becomes (exit 5 or 6), carrying `details`; undefined for a finished one. */
export function endingError(ending: Ending, details: FailureDetails): WaveError | undefined {
  const rule = ENDINGS[ending.stopReason] as {exitCode: ExitCodeValue; message?: (ending: Ending) => string; hint?: (ending: Ending) => string}
  if (!rule.message) return undefined
  return new WaveError(rule.message(ending), rule.exitCode, rule.hint?.(ending), {...details, stopReason: ending.stopReason})
}

export const usageError = (message: string, hint?: string) => new WaveError(message, ExitCode.usage, hint)

/** The first line of an error's message (or of what was thrown): what a one-line report shows. */
export function errorLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]
}
