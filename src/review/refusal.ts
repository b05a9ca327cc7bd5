/**
 * A refusal is an answer: a comment wave replied to in its thread (a typo, a self-approval, a stale plan)
 * fails with its exit code as before, and says so in its failure's details (`refused: true` in the error
 * JSON), so a CI job can tell it from a failure of wave's and end green on it (the Action's
 * `fail-on-refusal`, the GitLab recipe's WAVE_FAIL_ON_REFUSAL).
 */
import {WaveError} from '../base/errors.js'

/** The error, marked as answered in the thread; anything that is no WaveError is a failure, left as it is. */
export function answered(error: unknown): unknown {
  return error instanceof WaveError ? error.withDetails({refused: true}) : error
}
