/** Exit codes of the design's table; scripts branch on them, so they never change meaning. */
export const ExitCode = {
  ok: 0,
  runtime: 1,
  usage: 2,
  notApproved: 3,
  mismatch: 4,
  limit: 5,
  awaitsApproval: 10,
  /** 128 + the signal's number, as shells report it. */
  interrupted: 130,
  terminated: 143,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

/** An error meant for the user: one clear line, an optional hint, and the exit code it maps to. */
export class WaveError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCodeValue = ExitCode.runtime,
    readonly hint?: string,
  ) {
    super(message)
    this.name = 'WaveError'
  }
}

export const usageError = (message: string, hint?: string) => new WaveError(message, ExitCode.usage, hint)
