/**
 * The approved checks (the record's `verify`), run by wave itself when the model ends its work: each
 * command in the run's sandbox, as the Bash tool runs a command (the same spawn, the approval's network
 * setting), with a timeout, keeping the tail of its output. The approval is their grant: no allow rule
 * is asked for. The model does not get to say they passed; their exit codes do.
 */
import {runCommand, spawnFor} from '../base/process/runner.js'
import type {SandboxSettings} from '../base/process/sandbox.js'
import {type CheckResult, checkOutcome, checkPassed} from './report.js'

/** How long one check may run before it is killed (and fails). `WAVE_CHECK_TIMEOUT_MS` sets it. */
const CHECK_TIMEOUT_MS = 600_000
/** How much of a check's output is kept (its end: where a test runner says what failed). */
const OUTPUT_TAIL_CHARS = 4000

export interface CheckOptions {
  /** The workspace root, a real path: the checks start there, and it is the one writable tree. */
  root: string
  sandbox?: SandboxSettings
  signal: AbortSignal
  timeoutMs?: number
  /** Before each check starts, and after it ends: progress on stderr. */
  onCheck?(event: {command: string; result?: CheckResult}): void
}

/** Runs every check, in order, each whatever the one before did: the report shows them all. */
export async function runChecks(commands: ReadonlyArray<{command: string}>, options: CheckOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = []
  for (const {command} of commands) {
    options.signal.throwIfAborted()
    options.onCheck?.({command})
    const result = await runCheck(command, options)
    options.onCheck?.({command, result})
    results.push(result)
  }

  return results
}

async function runCheck(command: string, options: CheckOptions): Promise<CheckResult> {
  const started = performance.now()
  const timeout = options.timeoutMs ?? (Number(process.env.WAVE_CHECK_TIMEOUT_MS) || CHECK_TIMEOUT_MS)
  // The same choice as Bash's (base/process/runner.ts): a check that cannot be contained does not run, and fails.
  const spawn = spawnFor(command, {root: options.root}, options.sandbox)
  if ('problem' in spawn) return {command, durationMs: 0, exitCode: null, outputTail: `Not run: ${spawn.problem}`}

  let result: Awaited<ReturnType<typeof runCommand>>
  try {
    result = await runCommand(spawn.plan, options.root, timeout, options.signal)
  } catch (error) {
    return {command, durationMs: Math.round(performance.now() - started), exitCode: null, outputTail: (error as Error).message}
  }

  options.signal.throwIfAborted()
  const notes = [
    result.timedOut ? `(killed after ${timeout} ms: the check timed out)` : '',
    result.signal && !result.timedOut ? `(killed by ${result.signal})` : '',
  ]
  const output = [result.output.replace(/\s+$/, ''), ...notes].filter(Boolean).join('\n')
  return {
    command,
    durationMs: Math.round(performance.now() - started),
    exitCode: result.timedOut ? null : result.code,
    outputTail: tail(output, OUTPUT_TAIL_CHARS),
  }
}

function tail(text: string, cap: number): string {
  if (text.length <= cap) return text
  return `[... ${text.length - cap} characters cut ...]\n${text.slice(-cap)}`
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/**
 * What the model is told when checks fail: each failing command with the tail of its output, and that
 * wave runs them again when it ends its turn. `retry`: which retry this turn is; absent, the run ended
 * with these failures (the message `--resume` goes on with).
 */
export function failedChecksMessage(results: CheckResult[], retry?: {attempt: number; of: number}): string {
  const failing = results.filter((check) => !checkPassed(check))
  const blocks = failing.map((check) => `$ ${check.command}\n(${checkOutcome(check)}, ${seconds(check.durationMs)})\n${check.outputTail || '(no output)'}`)
  const next = retry
    ? `Fix the cause (not the checks), then end your turn: wave runs every check again (retry ${retry.attempt} of ${retry.of}).`
    : 'The run stopped with these checks failing. Fix the cause (not the checks), then end your turn: wave runs every check again.'
  return `wave ran the approved checks when you ended your turn, and ${failing.length} of ${results.length} failed:\n\n${blocks.join('\n\n')}\n\n${next}`
}
