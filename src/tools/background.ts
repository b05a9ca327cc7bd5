/**
 * The background commands of one session (Bash with `run_in_background`): started in the same sandbox
 * as any Bash command, their output kept within a cap, read with TaskOutput, ended with TaskStop, and
 * every one still running ended when the session's tool set closes (toolset.ts), in the session's
 * `finally`. A dev server the model starts never outlives the session that started it.
 */
import {randomBytes} from 'node:crypto'
import {type ChildProcess, spawn} from 'node:child_process'
import {closeSync, mkdirSync, openSync, rmSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import type {SpawnPlan} from '../base/process/sandbox.js'
import {OutputCollector} from '../base/process/runner.js'
import {ToolError} from './tool-error.js'

/** What one read of a task returns at most, and what a task keeps of its unread output. */
export const TASK_OUTPUT_CAP = 30_000
/** Commands one session may have running in the background at once. */
export const MAX_RUNNING_TASKS = 8
/** After SIGTERM, how long a task's process group gets to exit before SIGKILL. */
const KILL_GRACE_MS = 2000

export type TaskStatus = 'running' | 'completed' | 'failed' | 'killed'

/** What TaskOutput reports of a task. */
export interface TaskReading {
  id: string
  command: string
  description?: string
  status: TaskStatus
  exitCode: number | null
  signal: NodeJS.Signals | null
  /** The output since the previous reading, cut in the middle past the cap. */
  output: string
}

/** Every background process group wave started, killed if wave exits without closing its sessions. */
const liveGroups = new Set<number>()
let exitHookInstalled = false

function killOnExit(pid: number): void {
  liveGroups.add(pid)
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once('exit', () => {
    for (const group of liveGroups) signalGroup(group, 'SIGKILL')
  })
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}

/** One background command: its process group, its unread output, and how it ended. */
export class BackgroundTask {
  status: TaskStatus = 'running'
  exitCode: number | null = null
  signal: NodeJS.Signals | null = null
  /** Output not yet read, within a cap however much arrives: a server that logs for an hour costs no more than one line. */
  private unread = new OutputCollector(TASK_OUTPUT_CAP)
  private stopping = false
  private readonly ended: Promise<void>
  private fd: number | undefined

  constructor(
    readonly id: string,
    readonly command: string,
    readonly description: string | undefined,
    private readonly child: ChildProcess,
    /** Where the whole output goes too, as it arrives: a file the Read tool may read (Claude Code's way now). */
    readonly outputFile?: string,
  ) {
    const stdout = new TextDecoder('utf-8')
    const stderr = new TextDecoder('utf-8')
    // Written synchronously as each chunk arrives: a Read right after a reading sees every byte it reported.
    this.fd = outputFile ? openSync(outputFile, 'a', 0o600) : undefined
    child.stdout?.on('data', (chunk: Buffer) => {
      this.keep(chunk)
      this.unread.append(stdout.decode(chunk, {stream: true}))
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      this.keep(chunk)
      this.unread.append(stderr.decode(chunk, {stream: true}))
    })
    this.ended = new Promise((resolve) => {
      child.once('error', (error) => {
        this.unread.append(`Could not run the command: ${error.message}\n`)
        this.finish(null, null)
        resolve()
      })
      // 'close' waits for the pipes: every line the command wrote is read before it counts as ended.
      child.once('close', (code, signal) => {
        this.unread.append(stdout.decode() + stderr.decode())
        this.finish(code, signal)
        resolve()
      })
    })
  }

  private finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child.pid !== undefined) liveGroups.delete(this.child.pid)
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
    this.exitCode = code
    this.signal = signal
    this.status = this.stopping ? 'killed' : code === 0 ? 'completed' : 'failed'
  }

  /** A chunk of output into the output file; a full disk loses the file's copy, never the task. */
  private keep(chunk: Buffer): void {
    if (this.fd === undefined) return
    try {
      writeSync(this.fd, chunk)
    } catch {}
  }

  /** The output since the last reading, and the task's state. */
  read(): TaskReading {
    const output = this.unread.take()
    return {command: this.command, description: this.description, exitCode: this.exitCode, id: this.id, output, signal: this.signal, status: this.status}
  }

  /** Resolves true once the task has ended, false when `timeoutMs` passed first or `abort` fired. */
  async waitForEnd(timeoutMs: number, abort?: AbortSignal): Promise<boolean> {
    if (this.status !== 'running') return true
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const gaveUp = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
      onAbort = () => resolve(false)
      abort?.addEventListener('abort', onAbort, {once: true})
    })
    try {
      return await Promise.race([this.ended.then(() => true as const), gaveUp])
    } finally {
      clearTimeout(timer)
      if (onAbort) abort?.removeEventListener('abort', onAbort)
    }
  }

  /** Ends the task's whole process group (the sandbox and everything in it): SIGTERM, then SIGKILL. */
  async stop(): Promise<void> {
    if (this.status !== 'running') return
    this.stopping = true
    const pid = this.child.pid
    if (pid === undefined) return
    signalGroup(pid, 'SIGTERM')
    if (await this.waitForEnd(KILL_GRACE_MS)) return
    signalGroup(pid, 'SIGKILL')
    // The pipes may be held by a process that escaped the group; a killed group's leader still closes.
    if (await this.waitForEnd(KILL_GRACE_MS)) return
    this.child.stdout?.destroy()
    this.child.stderr?.destroy()
    await this.ended
  }
}

/** The background tasks of one session. Closed once, with the session: no task starts after that. */
export class BackgroundTasks {
  private readonly tasks = new Map<string, BackgroundTask>()
  private count = 0
  private closed = false
  /**
   * The directory of the tasks' output files (`<task_id>.output`), outside the workspace and private to
   * this user; made with the first task, removed when the tasks close. The policy lets read tools read
   * in it (`taskOutputs`).
   */
  readonly outputDir = path.join(tmpdir(), `wave-tasks-${process.pid}-${randomBytes(6).toString('hex')}`)
  private madeDir = false

  /** Starts `plan` (a sandboxed or plain bash command) in its own process group. */
  start(plan: SpawnPlan, cwd: string, info: {command: string; description?: string}): BackgroundTask {
    if (this.closed) throw new ToolError('The session is ending: no background command can start now.')
    const running = [...this.tasks.values()].filter((task) => task.status === 'running')
    if (running.length >= MAX_RUNNING_TASKS) {
      throw new ToolError(
        `${running.length} background commands are running already (${running.map((task) => task.id).join(', ')}), the most one session may have: end one with TaskStop first.`,
      )
    }

    // detached: the command (or bwrap, whose sandbox dies with it) leads its own process group, so
    // stopping it ends its children too.
    if (!this.madeDir) {
      mkdirSync(this.outputDir, {mode: 0o700, recursive: true})
      this.madeDir = true
    }

    const child = spawn(plan.file, plan.args, {cwd, detached: true, env: plan.env, stdio: ['ignore', 'pipe', 'pipe']})
    if (child.pid !== undefined) killOnExit(child.pid)
    const id = `bash_${++this.count}`
    const task = new BackgroundTask(id, info.command, info.description, child, path.join(this.outputDir, `${id}.output`))
    this.tasks.set(id, task)
    return task
  }

  get(id: string): BackgroundTask {
    const task = this.tasks.get(id)
    if (task) return task
    const known = [...this.tasks.keys()]
    throw new ToolError(
      `No background task ${JSON.stringify(id)} in this session. ${known.length > 0 ? `Its tasks: ${known.join(', ')}.` : 'None was started: Bash with run_in_background: true starts one and returns its task_id.'}`,
    )
  }

  /** The tasks still running. */
  running(): BackgroundTask[] {
    return [...this.tasks.values()].filter((task) => task.status === 'running')
  }

  /** Ends every task still running and refuses new ones. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.all(this.running().map((task) => task.stop()))
    if (this.madeDir) rmSync(this.outputDir, {force: true, recursive: true})
  }
}
