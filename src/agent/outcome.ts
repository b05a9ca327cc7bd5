/**
 * How a session ended, typed: every normal ending is an outcome the loop returns (errors.ts maps each to
 * its exit code, message and hint in one table); only API failures and interrupts are thrown.
 */
import type {TokenUsage} from '../model/pricing.js'

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
  | 'api_error'
  | 'interrupted'

/** Every ending the loop returns rather than throws, with what its message needs. */
export type Ending =
  /** The model ended its turn without tool calls: the session's answer is its text. */
  | {stopReason: 'end_turn' | 'stop_sequence'}
  /** A control tool asked the session to end after its round of calls (ExitPlanMode). */
  | {stopReason: 'stop_requested'}
  | {stopReason: 'max_turns'; maxTurns: number}
  | {stopReason: 'budget'; spentUsd: number; maxBudgetUsd: number}
  | {stopReason: 'refusal'; category?: string | null}
  /** The final answer stayed cut after its one continuation (at max_tokens, or the window full). */
  | {stopReason: 'max_tokens'; cutBy: string; maxTokens: number}
  /** The model ended its turn with nothing to say, again after a nudge to continue (a run's driver decides). */
  | {stopReason: 'no_result'}

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
