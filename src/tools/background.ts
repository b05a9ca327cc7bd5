/**
 * The background commands of one session (Bash with `run_in_background`): started in the same sandbox
 * as any Bash command, their output kept within a cap, read with TaskOutput, ended with TaskStop, and
 * every one still running ended when the session's tool set closes (toolset.ts), in the session's
 * `finally`. A dev server the model starts never outlives the session that started it.
 */
import {type ChildProcess, spawn} from 'node:child_process'
import {readdir, readFile} from 'node:fs/promises'

import type {SpawnPlan} from '../base/process/sandbox.js'
import {OutputCollector} from '../base/process/runner.js'
import {ToolError} from './tool-error.js'

/** What one read of a task returns at most, and what a task keeps of its unread output. */
export const TASK_OUTPUT_CAP = 30_000
/** Commands one session may have running in the background at once. */
const MAX_RUNNING_TASKS = 8
/** After SIGTERM, how long a task's process group gets to exit before SIGKILL. */
const KILL_GRACE_MS = 2000
/** After SIGKILL, how long wave waits for a group's last process to be gone before it says so. */
const GONE_WAIT_MS = 5000

type TaskStatus = 'running' | 'completed' | 'failed' | 'killed'

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

interface ProcessEntry {
  pid: number
  ppid: number
  pgrp: number
  /** A zombie (Z) or dead (X) process runs nothing. */
  alive: boolean
}

/** Every process /proc shows (Linux); empty elsewhere. */
async function processTable(): Promise<ProcessEntry[]> {
  if (process.platform !== 'linux') return []
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((pid) => /^\d+$/.test(pid))
  const entries = await Promise.all(
    pids.map(async (pid): Promise<ProcessEntry | undefined> => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
      if (!stat) return undefined
      // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so the fields after its last ')'.
      const [state, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return {alive: state !== 'Z' && state !== 'X', pgrp: Number(pgrp), pid: Number(pid), ppid: Number(ppid)}
    }),
  )
  return entries.filter((entry): entry is ProcessEntry => entry !== undefined)
}

/**
 * The processes descended from `pid`. A sandboxed command runs in bwrap's own session and PID namespace,
 * not in the group wave kills: it dies with bwrap (--die-with-parent), a moment after. Its processes are
 * found by descent, before any signal, so that wave can wait for them too.
 */
async function descendants(pid: number): Promise<Set<number>> {
  const table = await processTable()
  const family = new Set([pid])
  for (let grew = true; grew; ) {
    grew = false
    for (const entry of table) {
      if (family.has(entry.ppid) && !family.has(entry.pid)) {
        family.add(entry.pid)
        grew = true
      }
    }
  }

  family.delete(pid)
  return family
}

/**
 * Whether any process of group `pgid`, or of `family`, is still alive. On Linux from /proc, since
 * `kill(-pgid, 0)` succeeds for a group of zombies no one has reaped yet.
 */
async function stillAlive(pgid: number, family: ReadonlySet<number>): Promise<boolean> {
  if (process.platform !== 'linux') {
    try {
      process.kill(-pgid, 0)
      return true
    } catch {
      return false
    }
  }

  return (await processTable()).some((entry) => entry.alive && (entry.pgrp === pgid || family.has(entry.pid)))
}

/**
 * Kills what is left of a group (a command's `writer &` outlives its shell) and of the processes found
 * below its leader, and resolves once none runs, or false after GONE_WAIT_MS. Polled: the kernel says
 * nothing when a group empties.
 */
async function endGroup(pgid: number, family: ReadonlySet<number>): Promise<boolean> {
  const deadline = performance.now() + GONE_WAIT_MS
  for (let wait = 5; await stillAlive(pgid, family); wait = Math.min(wait * 2, 100)) {
    signalGroup(pgid, 'SIGKILL')
    for (const pid of family) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {} // gone already
    }

    if (performance.now() > deadline) return false
    await new Promise((resolve) => setTimeout(resolve, wait))
  }

  liveGroups.delete(pgid)
  return true
}

/** One background command: its process group, its unread output, and how it ended. */
class BackgroundTask {
  status: TaskStatus = 'running'
  exitCode: number | null = null
  signal: NodeJS.Signals | null = null
  /** Output not yet read, within a cap however much arrives: a server that logs for an hour costs no more than one line. */
  private unread = new OutputCollector(TASK_OUTPUT_CAP)
  private stopping = false
  /** Once no process of the group is left, it is not looked for again (its id could be another group's by then). */
  private groupGone = false
  private readonly ended: Promise<void>

  constructor(
    readonly id: string,
    readonly command: string,
    readonly description: string | undefined,
    private readonly child: ChildProcess,
  ) {
    const stdout = new TextDecoder('utf-8')
    const stderr = new TextDecoder('utf-8')
    child.stdout?.on('data', (chunk: Buffer) => this.unread.append(stdout.decode(chunk, {stream: true})))
    child.stderr?.on('data', (chunk: Buffer) => this.unread.append(stderr.decode(chunk, {stream: true})))
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
    this.exitCode = code
    this.signal = signal
    this.status = this.stopping ? 'killed' : code === 0 ? 'completed' : 'failed'
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

  /**
   * Ends the task's whole process group (the sandbox and everything in it): SIGTERM, then SIGKILL; and
   * whatever of the group outlived its leader (a task that "completed" may have left `writer &` behind).
   * Resolves false when a process of the group was still alive GONE_WAIT_MS after SIGKILL.
   */
  async stop(): Promise<boolean> {
    const pid = this.child.pid
    if (pid === undefined || this.groupGone) return true
    const family = await descendants(pid)
    if (this.status === 'running') {
      this.stopping = true
      signalGroup(pid, 'SIGTERM')
      if (!(await this.waitForEnd(KILL_GRACE_MS))) {
        signalGroup(pid, 'SIGKILL')
        // The pipes may be held by a process that escaped the group; a killed group's leader still closes.
        if (!(await this.waitForEnd(KILL_GRACE_MS))) {
          this.child.stdout?.destroy()
          this.child.stderr?.destroy()
          await this.ended
        }
      }
    }

    this.groupGone ||= await endGroup(pid, family)
    return this.groupGone
  }
}

/** The background tasks of one session. Closed once, with the session: no task starts after that. */
export class BackgroundTasks {
  private readonly tasks = new Map<string, BackgroundTask>()
  private count = 0
  private closed = false

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
    const child = spawn(plan.file, plan.args, {cwd, detached: true, env: plan.env, stdio: ['ignore', 'pipe', 'pipe']})
    if (child.pid !== undefined) killOnExit(child.pid)
    const id = `bash_${++this.count}`
    const task = new BackgroundTask(id, info.command, info.description, child)
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

  /**
   * Ends every task and whatever its process group left running, as the model's work ends (before a
   * run's checks: enforcement.ts). New tasks may start after it (a turn after failing checks). Returns
   * the ids of the tasks that were still running, and of any whose group would not die.
   */
  async endAll(): Promise<{ended: string[]; survived: string[]}> {
    const tasks = [...this.tasks.values()]
    const running = new Set(this.running().map((task) => task.id))
    const gone = await Promise.all(tasks.map((task) => task.stop()))
    return {ended: [...running], survived: tasks.filter((_, index) => !gone[index]).map((task) => task.id)}
  }

  /** Ends every task and refuses new ones. Safe to call twice. */
  async close(): Promise<void> {
    this.closed = true
    await this.endAll()
  }
}
