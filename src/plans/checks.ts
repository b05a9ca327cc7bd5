/**
 * The approved checks (the record's `verify`), run by wave itself when the model ends its work: each
 * command in the run's sandbox, as the Bash tool runs a command (the same spawn, the approval's network
 * setting), with a timeout, keeping what its output says (evidence.ts: head, tail, the lines that look
 * like failures) and all of it in a file beside the plan's transcript. The approval is their grant: no
 * allow rule is asked for. The model does not get to say they passed; their exit codes do.
 */
import {createWriteStream, type WriteStream} from 'node:fs'

import {runCommand, spawnFor} from '../base/process/runner.js'
import type {SandboxSettings} from '../base/process/sandbox.js'
import {OutputEvidence} from './evidence.js'
import {OfflineWatch} from './offline-evidence.js'
import {type CheckResult, checkOutcome, checkPassed} from './report.js'

/** How long one check may run before it is killed (and fails). `WAVE_CHECK_TIMEOUT_MS` sets it. */
const CHECK_TIMEOUT_MS = 600_000
/** The most of one check's output its file keeps: a check printing without end must not fill the disk. */
const MAX_FILE_BYTES = 64 * 1024 ** 2

export interface CheckOptions {
  /** The workspace root, a real path: the checks start there, and it is the one writable tree. */
  root: string
  sandbox?: SandboxSettings
  signal: AbortSignal
  timeoutMs?: number
  /** Where the whole output of the `index`th check goes (store.ts, checkLogPath); absent, only the kept output is. */
  outputFile?(index: number): string
  /** Before each check starts, and after it ends: progress on stderr. */
  onCheck?(event: {command: string; result?: CheckResult}): void
  /** Before each check: why it may not run (then neither it nor any after it runs), or undefined. */
  guard?(): Promise<string | undefined>
}

/** Runs every check, in order, each whatever the one before did: the report shows them all. */
export async function runChecks(commands: ReadonlyArray<{command: string}>, options: CheckOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = []
  for (const [index, {command}] of commands.entries()) {
    options.signal.throwIfAborted()
    const refused = await options.guard?.()
    if (refused) return [...results, ...notRun(commands.slice(index), refused)]
    options.onCheck?.({command})
    const result = await runCheck(command, options, options.outputFile?.(index))
    options.onCheck?.({command, result})
    results.push(result)
  }

  return results
}

/** Checks that did not run, and why: each failed, never passed. */
export function notRun(commands: ReadonlyArray<{command: string}>, why: string): CheckResult[] {
  return commands.map(({command}) => ({command, durationMs: 0, exitCode: null, outputTail: `Not run: ${why}.`}))
}

async function runCheck(command: string, options: CheckOptions, file?: string): Promise<CheckResult> {
  const started = performance.now()
  const timeout = options.timeoutMs ?? (Number(process.env.WAVE_CHECK_TIMEOUT_MS) || CHECK_TIMEOUT_MS)
  // The same choice as Bash's (base/process/runner.ts): a check that cannot be contained does not run, and fails.
  const spawn = spawnFor(command, {root: options.root}, options.sandbox)
  if ('problem' in spawn) return {command, durationMs: 0, exitCode: null, outputTail: `Not run: ${spawn.problem}`}

  const evidence = new OutputEvidence()
  const offline = new OfflineWatch(options.sandbox)
  const whole = file ? new OutputFile(file) : undefined
  let result: Awaited<ReturnType<typeof runCommand>>
  try {
    result = await runCommand(spawn.plan, options.root, timeout, options.signal, {
      observe(text) {
        evidence.append(text)
        offline.observe(text)
        whole?.write(text)
      },
    })
  } catch (error) {
    await whole?.close()
    return {command, durationMs: Math.round(performance.now() - started), exitCode: null, outputTail: (error as Error).message}
  }

  const notes = [
    result.timedOut ? `(killed after ${timeout} ms: the check timed out)` : '',
    result.signal && !result.timedOut ? `(killed by ${result.signal})` : '',
    offline.note(result.timedOut ? null : result.code) ?? '',
  ].filter(Boolean)
  if (notes.length > 0) evidence.append(`\n${notes.join('\n')}\n`)
  const written = await whole?.close()
  options.signal.throwIfAborted()
  return {
    command,
    durationMs: Math.round(performance.now() - started),
    exitCode: result.timedOut ? null : result.code,
    ...(written ? {outputFile: written} : {}),
    // The file's path is not in it: the model could not read it (it lies outside the workspace).
    outputTail: evidence.render(),
  }
}

/** The whole output on disk, up to MAX_FILE_BYTES; close() answers its path, or undefined when it could not be written. */
class OutputFile {
  private readonly stream: WriteStream
  private bytes = 0
  private failed = false

  constructor(private readonly file: string) {
    this.stream = createWriteStream(file, {mode: 0o600})
    this.stream.on('error', () => {
      this.failed = true
    })
  }

  write(text: string): void {
    if (this.failed || this.bytes > MAX_FILE_BYTES) return
    this.bytes += Buffer.byteLength(text)
    this.stream.write(this.bytes > MAX_FILE_BYTES ? `${text}\n[wave: the rest of the output was not kept: over ${MAX_FILE_BYTES} bytes]\n` : text)
  }

  async close(): Promise<string | undefined> {
    await new Promise<void>((resolve) => {
      this.stream.end(() => resolve())
      this.stream.once('error', () => resolve())
    })
    return this.failed ? undefined : this.file
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/**
 * What the model is told when checks fail: each failing command with its kept output, and that
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
