/** The one exit-code table, and the error every layer throws for the user: one line, a hint, a code. */
/** Exit codes of the design's table; scripts branch on them, so they never change meaning. */
export const ExitCode = {
  ok: 0,
  runtime: 1,
  usage: 2,
  notApproved: 3,
  mismatch: 4,
  limit: 5,
  /**
   * The result is not as asked: the model refused, ended without a result, its answer stayed cut at the
   * output limit (max_tokens), or its result never matched `--json-schema`.
   */
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
 * What a failed command reports besides its line: what its session did before it stopped (error JSON
 * and the job summary carry these, so a CI job knows what it paid for and where things stand). The
 * fields that name a session's types (how it stopped, its usage, the run's report) are added where those
 * types live (agent/outcome.ts), so this layer knows nothing of sessions.
 */
export interface FailureDetails {
  turns?: number
  costUsd?: number | null
  /** The workspace's files the session changed (real paths from the loop, workspace paths from a driver). */
  filesChanged?: string[]
  /** The plan the session worked on, when there is one. */
  planPath?: string | null
  /** `wave demo`: the step that failed, and the end of its stderr. */
  step?: string
  stderr?: string
  /**
   * A forge's review answered the comment with this error in its thread (an unknown command, a
   * self-approval, a stale plan): a refusal the person reads there, not a failure of wave's, which a CI
   * job may end green on (the Action's `fail-on-refusal`).
   */
  refused?: boolean
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

export const usageError = (message: string, hint?: string) => new WaveError(message, ExitCode.usage, hint)

/** The first line of an error's message (or of what was thrown): what a one-line report shows. */
export function errorLine(error: unknown): string {
  return String((error as Error)?.message ?? error).split('\n')[0]
}
