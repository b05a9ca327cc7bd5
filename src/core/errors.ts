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

/**
 * An error meant for the user: one clear line, an optional hint, and the exit code it maps to.
 * `details` says what a session did before it failed (stop reason, turns, usage, cost, ...): error JSON
 * carries them, so a CI job knows what it paid for and where things stand.
 */
export class WaveError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue = ExitCode.runtime,
    readonly hint?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
    this.name = 'WaveError'
  }

  /** The same error with `details` added (over any it had), e.g. what the session did before it failed. */
  withDetails(details: Record<string, unknown>): WaveError {
    const copy = new WaveError(this.message, this.exitCode, this.hint, {...this.details, ...details})
    copy.stack = this.stack
    return copy
  }
}

export const usageError = (message: string, hint?: string) => new WaveError(message, ExitCode.usage, hint)

/** The first line of an error's message (or of what was thrown): what a one-line report shows. */
export function errorLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]
}
