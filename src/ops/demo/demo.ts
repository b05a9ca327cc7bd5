/**
 * `wave demo`: the whole workflow, plan → approve → run, on a tiny project in a new git repository,
 * against the scripted model of scenario.ts served on 127.0.0.1. Each step is the real CLI, spawned as a
 * user would run it; the SDK reaches the local server through ANTHROPIC_BASE_URL, so every step goes
 * through the code paths of a real session. No key, no network; nothing is left behind unless kept.
 */
import {execFile, spawn} from 'node:child_process'
import {mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {ExitCode, usageError, WaveError} from '../../base/errors.js'
import {sandboxStatus} from '../../base/process/sandbox.js'
import {type RunReport, runReportSchema} from '../../plans/report.js'
import {startMessagesServer} from '../../testing/server.js'
import {DEMO_TASK, PLAN_TURNS, PROJECT_FILES, RUN_TURNS, scriptedTurn} from './scenario.js'

interface DemoOptions {
  /** The CLI to run each step with (the package's bin/run.js). */
  cli: string
  /** Keep the repository and the plans in this directory (new or empty) instead of a temporary one. */
  keep?: string
  /** Progress lines, for stderr. */
  progress(line: string): void
  signal: AbortSignal
}

interface DemoStep {
  name: 'plan' | 'approve' | 'run'
  /** The command as it ran (its `--json` or `--output-format stream-json` aside). */
  command: string
  exitCode: number
  durationMs: number
  /** The command's own JSON result. */
  result: Record<string, unknown>
  /** The tool calls of a session step, in order, with what each returned. */
  toolCalls: DemoToolCall[]
  /** The approved checks wave ran in a run step, each time they ran, in order. */
  checks: DemoCheck[]
}

export interface DemoCheck {
  command: string
  exitCode: number | null
  durationMs: number
  /** How many of the step's tool calls came before it: where it falls among them. */
  afterCalls: number
}

export interface DemoToolCall {
  name: string
  input: unknown
  isError: boolean
  denied: boolean
  /** The tool result as the model got it (as stream-json carries it, capped). */
  content: string
  /** What the model wrote in the same turn before the call, if anything. */
  said?: string
}

export interface DemoOutcome {
  task: string
  steps: DemoStep[]
  plan: {name: string; path: string; text: string}
  approval: {path: string; record: Record<string, unknown>}
  run: {result: string; filesChanged: string[]; report: RunReport}
  /** `git diff` of the run's change, new files included. */
  diff: string
  /** Whether the checks could run in the OS sandbox here (if not, the demo approved them with --sandbox off). */
  sandbox: {available: true} | {available: false; problem: string}
  /** Where the repository and plans are, when kept; else everything is gone. */
  kept: {directory: string; repository: string; waveHome: string} | null
  /** The same workflow with a real key. */
  withRealKey: string[]
  durationMs: number
}

/** However slow the machine, a step that takes this long is stuck. */
const STEP_TIMEOUT_MS = 60_000
/** A key for the local server only: the children never see the user's own. */
const DEMO_API_KEY = 'wave-demo-scripted-model-no-key'
/** What the children may take from the user's environment: nothing that configures wave or the SDK. */
const PASSED_ON = ['PATH', 'LANG', 'TZ', 'TMPDIR', 'USER', 'SHELL', 'TERM']

export async function runDemo(options: DemoOptions): Promise<DemoOutcome> {
  const started = performance.now()
  const root = options.keep ? await keptDirectory(options.keep) : await realpath(await mkdtemp(path.join(tmpdir(), 'wave-demo-')))
  const dirs = {home: path.join(root, 'home'), repository: path.join(root, 'repo'), waveHome: path.join(root, 'wave-home')}
  const server = await startMessagesServer(Array.from({length: PLAN_TURNS + RUN_TURNS}, () => scriptedTurn)).catch(async (error: unknown) => {
    if (!options.keep) await rm(root, {force: true, recursive: true})
    throw error
  })
  try {
    await Promise.all([mkdir(dirs.home), mkdir(dirs.waveHome)])
    await createProject(dirs.repository, dirs.home)
    const sandbox = sandboxStatus()
    options.progress(`wave demo: a tiny project in ${dirs.repository}, a scripted model at ${server.url} (no network, no key)`)
    // An approved check that cannot be contained does not run, and fails (fail closed). Where the sandbox cannot
    // start, the demo's approver decides as a person would have to: its own tiny project's tests run unsandboxed,
    // and the record says so.
    if (!sandbox.available) options.progress(`wave demo: the sandbox cannot start here, so the demo approves its check with --sandbox off: ${sandbox.problem}`)

    const env = stepEnvironment({...dirs, baseUrl: server.url})
    const step = (name: DemoStep['name'], args: string[], index: number) =>
      runStep({args, cli: options.cli, cwd: dirs.repository, env, index, name, progress: options.progress, signal: options.signal})
    const planned = await step('plan', ['plan', '--task', DEMO_TASK], 1)
    const planPath = String(planned.result.planPath)
    const approved = await step('approve', ['approve', planPath, ...(sandbox.available ? [] : ['--sandbox', 'off'])], 2)
    const recordPath = String(approved.result.recordPath)
    const ran = await step('run', ['run', planPath], 3)

    return {
      approval: {path: recordPath, record: JSON.parse(await readFile(recordPath, 'utf8'))},
      diff: await workingTreeDiff(dirs.repository, dirs.home),
      durationMs: Math.round(performance.now() - started),
      kept: options.keep ? {directory: root, repository: dirs.repository, waveHome: dirs.waveHome} : null,
      plan: {name: String(planned.result.name), path: planPath, text: await readFile(planPath, 'utf8')},
      run: {
        filesChanged: (ran.result.filesChanged as string[] | undefined) ?? [],
        report: runReportSchema.parse(ran.result.report),
        result: String(ran.result.result ?? ''),
      },
      sandbox: sandbox.available ? {available: true} : {available: false, problem: sandbox.problem},
      steps: [planned, approved, ran],
      task: DEMO_TASK,
      withRealKey: ['export ANTHROPIC_API_KEY=sk-ant-...', `PLAN=$(wave plan --task ${shellWord(DEMO_TASK)})`, 'wave approve "$PLAN"', 'wave run "$PLAN"'],
    }
  } finally {
    await server.close()
    if (!options.keep) await rm(root, {force: true, recursive: true})
  }
}

/** `--keep DIR`: a new or empty directory, so the demo never mixes its files with someone's own. */
async function keptDirectory(dir: string): Promise<string> {
  const absolute = path.resolve(dir)
  try {
    await mkdir(absolute, {recursive: true})
    if ((await readdir(absolute)).length > 0)
      throw usageError(
        `--keep needs a new or empty directory, and ${absolute} holds files.`,
        'Name a directory that does not exist yet, e.g. --keep ./wave-demo.',
      )
  } catch (error) {
    if (error instanceof WaveError) throw error
    throw usageError(`Cannot keep the demo in ${absolute}: ${(error as Error).message}`)
  }

  return realpath(absolute)
}

/** Git run with no user or system configuration: the user's hooks, signing or templates play no part. */
function gitEnvironment(home: string): NodeJS.ProcessEnv {
  return {GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: home, LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin'}
}

function git(repository: string, home: string, args: string[], okExitCodes: number[] = [0]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, {cwd: repository, encoding: 'utf8', env: gitEnvironment(home), maxBuffer: 16 * 1024 * 1024}, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0
      if (okExitCodes.includes(code)) resolve(stdout)
      else reject(new WaveError(`The demo needs git, and git ${args[0]} failed: ${(stderr || error?.message || '').trim().split('\n')[0]}`, ExitCode.runtime))
    })
  })
}

/** The project of scenario.ts, committed as the repository's first commit. */
async function createProject(repository: string, home: string): Promise<void> {
  for (const [file, content] of Object.entries(PROJECT_FILES)) {
    const absolute = path.join(repository, file)
    await mkdir(path.dirname(absolute), {recursive: true})
    await writeFile(absolute, content)
  }

  await git(repository, home, ['-c', 'init.defaultBranch=main', 'init', '-q'])
  for (const [key, value] of [
    ['user.name', 'wave demo'],
    ['user.email', 'demo@wave.invalid'],
    ['commit.gpgsign', 'false'],
  ]) {
    await git(repository, home, ['config', key, value])
  }

  await git(repository, home, ['add', '-A'])
  await git(repository, home, ['commit', '-q', '-m', 'A greeting and its test'])
}

/**
 * The steps' environment: the demo's server, a key that only it accepts, the demo's WAVE_HOME and HOME,
 * and from the user's environment only what a shell needs. No ANTHROPIC_* or WAVE_* of the user's
 * reaches a step, so the user's key goes nowhere and their settings change nothing.
 */
function stepEnvironment(input: {baseUrl: string; home: string; waveHome: string}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && (PASSED_ON.includes(name) || name.startsWith('LC_'))) env[name] = value
  }

  return {
    ...env,
    ...gitEnvironment(input.home),
    ANTHROPIC_API_KEY: DEMO_API_KEY,
    ANTHROPIC_BASE_URL: input.baseUrl,
    CI: '1',
    NO_COLOR: '1',
    WAVE_HOME: input.waveHome,
  }
}

interface StepInput {
  name: DemoStep['name']
  index: number
  args: string[]
  cli: string
  cwd: string
  env: NodeJS.ProcessEnv
  progress(line: string): void
  signal: AbortSignal
}

/**
 * One step: the CLI with its result as JSON (a session's as stream-json, for its tool calls), parsed; a
 * failed step ends the demo with its own error line.
 */
async function runStep(input: StepInput): Promise<DemoStep> {
  const command = ['wave', ...input.args].map(shellWord).join(' ')
  input.progress(`[${input.index}/3] ${command}`)
  const started = performance.now()
  const format = input.name === 'approve' ? ['--json'] : ['--output-format', 'stream-json']
  const {code, stderr, stdout} = await spawnCli({...input, args: [...input.args, ...format]})
  const durationMs = Math.round(performance.now() - started)
  const events = jsonLines(stdout)
  const last = events.at(-1)
  const result = last && (input.name === 'approve' || last.type === 'result') ? withoutType(last) : undefined
  if (code !== 0 || !result) {
    const error = (result?.error ?? {}) as {message?: string; hint?: string}
    const said = error.message ?? stderr.trim().split('\n').at(-1) ?? 'no output'
    throw new WaveError(`The demo's "wave ${input.name}" step failed (exit ${code ?? 'by signal'}): ${said}`, ExitCode.runtime, error.hint, {
      step: input.name,
      stderr: stderr.trim().split('\n').slice(-20).join('\n'),
    })
  }

  input.progress(`      exit 0 in ${(durationMs / 1000).toFixed(1)} s`)
  const toolCalls = toolCallsIn(events)
  return {checks: checksIn(events), command, durationMs, exitCode: code, name: input.name, result, toolCalls}
}

/** The tool calls of a stream-json session, each joined with its result. */
function toolCallsIn(events: Array<Record<string, unknown>>): DemoToolCall[] {
  const calls = new Map<string, DemoToolCall>()
  let said: string | undefined
  for (const event of events) {
    const id = String(event.id)
    if (event.type === 'assistant' && typeof event.text === 'string') said = event.text.trim() || undefined
    if (event.type === 'tool_call') {
      calls.set(id, {content: '', denied: false, input: event.input, isError: false, name: String(event.name), ...(said ? {said} : {})})
      said = undefined
    }

    const call = calls.get(id)
    if (event.type === 'tool_result' && call)
      Object.assign(call, {content: String(event.content ?? ''), denied: event.denied === true, isError: event.is_error === true})
  }

  return [...calls.values()]
}

/** The checks of a stream-json run as they ended (a check event without an exit code is its start). */
function checksIn(events: Array<Record<string, unknown>>): DemoCheck[] {
  const checks: DemoCheck[] = []
  let calls = 0
  for (const event of events) {
    if (event.type === 'tool_call') calls++
    if (event.type === 'check' && 'exitCode' in event && event.durationMs !== undefined)
      checks.push({
        afterCalls: calls,
        command: String(event.command),
        durationMs: Number(event.durationMs),
        exitCode: (event.exitCode as number | null) ?? null,
      })
  }

  return checks
}

function withoutType({type: _type, ...rest}: Record<string, unknown>): Record<string, unknown> {
  return rest
}

function spawnCli(input: StepInput): Promise<{code: number | null; stdout: string; stderr: string}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [input.cli, ...input.args], {
      cwd: input.cwd,
      env: input.env,
      signal: input.signal,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: STEP_TIMEOUT_MS,
    })
    const [stdout, stderr]: Buffer[][] = [[], []]
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    let failed: Error | undefined
    child.on('error', (error) => {
      failed =
        input.signal.aborted && input.signal.reason instanceof Error
          ? input.signal.reason
          : new WaveError(`Could not start wave for the demo: ${error.message}`, ExitCode.runtime)
      // A step that started is waited for, so that nothing writes into the demo's directory once it is removed.
      if (child.pid === undefined) reject(failed)
    })
    child.on('close', (code) => {
      if (failed) reject(failed)
      else resolve({code, stderr: Buffer.concat(stderr).toString('utf8'), stdout: Buffer.concat(stdout).toString('utf8')})
    })
  })
}

/** The JSON objects of a command's stdout, one a line (a line that is not one is skipped). */
function jsonLines(stdout: string): Array<Record<string, unknown>> {
  const objects: Array<Record<string, unknown>> = []
  for (const line of stdout.split('\n')) {
    try {
      const parsed: unknown = JSON.parse(line)
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) objects.push(parsed as Record<string, unknown>)
    } catch {}
  }

  return objects
}

/** The change as `git diff` shows it, with the files the run created (untracked) shown as new. */
async function workingTreeDiff(repository: string, home: string): Promise<string> {
  const tracked = await git(repository, home, ['diff', '--no-color', 'HEAD'])
  const untracked = (await git(repository, home, ['ls-files', '--others', '--exclude-standard', '-z'])).split('\0').filter(Boolean)
  const created: string[] = []
  // --no-index exits 1 when the files differ, which they always do here.
  for (const file of untracked.sort()) created.push(await git(repository, home, ['diff', '--no-color', '--no-index', '--', '/dev/null', file], [0, 1]))
  return [tracked, ...created].filter(Boolean).join('')
}

/** An argument as a user would type it in a POSIX shell. */
function shellWord(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word
  if (!/[$`"\\!]/.test(word)) return `"${word}"`
  return `'${word.replaceAll("'", `'\\''`)}'`
}
