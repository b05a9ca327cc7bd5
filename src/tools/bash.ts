import {spawn} from 'node:child_process'
import {z} from 'zod'

import {DEFAULT_SANDBOX, type SpawnPlan, sandboxedCommand, sandboxStatus, unsandboxedCommand} from '../base/process/sandbox.js'
import {defineTool, ToolError} from './tool.js'

const DEFAULT_TIMEOUT_MS = 120_000
const MAX_TIMEOUT_MS = 600_000
/** After SIGTERM, how long the process group gets to exit before SIGKILL. */
const KILL_GRACE_MS = 2000
/** After bash exits, how long a background process may keep its output pipes open before we stop reading. */
const DRAIN_GRACE_MS = 500
/** Each stream keeps its head and tail within this, below the declared cap, so that the notes after it survive. */
const MAX_OUTPUT_CHARS = 30_000
const RESULT_CAP = 40_000

export default defineTool({
  access: 'execute',
  description:
    'Run a bash command in the workspace root; returns stdout and stderr combined, and the exit code when nonzero. No stdin; each call is a new shell (cd and variables do not persist). ' +
    'Runs in a sandbox: the file system is read-only but for the workspace (its .git/ and .wave/ read-only), /tmp and $HOME are private, no network unless the approval allows it. ' +
    `Timeout ${DEFAULT_TIMEOUT_MS} ms by default, at most ${MAX_TIMEOUT_MS}, then the command is killed. Output over ${MAX_OUTPUT_CHARS} characters keeps its head and tail. ` +
    'Runs only where the permission mode or an allow rule such as Bash(npm test:*) allows the command; a refused one returns "Permission denied" and why: do not retry it unchanged. ' +
    'Use Read, Glob, Grep, LS, Edit and Write, not cat, find, grep, sed or echo. ' +
    'With run_in_background: true the command starts in the same sandbox and the call returns its task_id at once (no timeout applies): read its output with TaskOutput, end it with TaskStop; ' +
    'every background command is ended when the session ends. Use it for servers and watchers, not for commands whose result you need now.',
  input: z.object({
    command: z.string().describe('The bash command to run'),
    timeout: z.number().int().positive().max(MAX_TIMEOUT_MS).optional().describe('Timeout in milliseconds (default 120000, max 600000)'),
    description: z.string().optional().describe('What the command does, in 5-10 words (shown in progress)'),
    run_in_background: z
      .boolean()
      .optional()
      .describe('Start the command in the background and return its task_id at once; read it with TaskOutput, end it with TaskStop'),
  }),
  name: 'Bash',
  resultCap: RESULT_CAP,
  async run(input, ctx) {
    if (ctx.signal.aborted) throw new ToolError('The command was not started: the session was interrupted.')
    const timeout = Math.min(input.timeout ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
    const sandbox = ctx.sandbox ?? DEFAULT_SANDBOX
    const request = {command: input.command, cwd: ctx.root, env: sandbox.env, network: sandbox.network, root: ctx.root, tmpSize: sandbox.tmpSize}
    let plan: SpawnPlan
    if (sandbox.enabled) {
      // Fail closed: without a sandbox the command does not run, and the line says what fixes that.
      const status = sandboxStatus()
      if (!status.available) throw new ToolError(`Command not run: ${status.problem}`)
      plan = sandboxedCommand(request, status.bwrap)
    } else {
      plan = unsandboxedCommand(request)
    }

    if (input.run_in_background) {
      if (!ctx.tasks) throw new ToolError('Background commands are not available here: run the command without run_in_background.')
      const task = ctx.tasks.start(plan, ctx.root, {command: input.command, description: input.description})
      return (
        `Started in the background as task ${task.id}. Read its output with TaskOutput (task_id "${task.id}"); end it with TaskStop. ` +
        'It is ended when the session ends.'
      )
    }

    const result = await runCommand(plan, ctx.root, timeout, ctx.signal)
    return formatResult(result, timeout)
  },
})

/** What a finished command left: its output (head and tail), how it ended. wave's own checks (src/plans/checks.ts) read it too. */
export interface CommandResult {
  output: string
  code: number | null
  signal: NodeJS.Signals | null
  timedOut: boolean
  aborted: boolean
  /** A background process still held stdout or stderr when bash exited. */
  detachedOutput: boolean
}

/** The process groups Bash started. Whatever is left of them (a job put in the background) dies with wave. */
const groups = new Set<number>()
let exitHookInstalled = false

function killGroupsOnExit(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // Detached groups would outlive wave: a CI job would keep a stray server or watcher running.
  process.once('exit', () => {
    for (const pid of groups) signalGroup(pid, 'SIGKILL')
  })
}

/** Runs a planned spawn (sandboxed or not) in its own process group, killed at the timeout or the abort. */
export function runCommand(plan: SpawnPlan, cwd: string, timeout: number, abort: AbortSignal): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    // detached: the command (or bwrap, whose sandbox dies with it) leads its own process group, so a
    // timeout kills its children too.
    const child = spawn(plan.file, plan.args, {cwd, detached: true, env: plan.env, stdio: ['ignore', 'pipe', 'pipe']})
    const pid = child.pid
    if (pid !== undefined) {
      groups.add(pid)
      killGroupsOnExit()
    }

    const output = new OutputCollector(MAX_OUTPUT_CHARS)
    // One decoder per stream: a chunk may end inside a multi-byte character.
    const stdout = new TextDecoder('utf-8')
    const stderr = new TextDecoder('utf-8')
    child.stdout.on('data', (chunk: Buffer) => output.append(stdout.decode(chunk, {stream: true})))
    child.stderr.on('data', (chunk: Buffer) => output.append(stderr.decode(chunk, {stream: true})))

    let timedOut = false
    let aborted = false
    let exit: {code: number | null; signal: NodeJS.Signals | null} | undefined
    let killTimer: NodeJS.Timeout | undefined
    let drainTimer: NodeJS.Timeout | undefined

    const killGroup = () => {
      signalGroup(pid, 'SIGTERM')
      killTimer ??= setTimeout(() => signalGroup(pid, 'SIGKILL'), KILL_GRACE_MS)
    }

    const timer = setTimeout(() => {
      timedOut = true
      killGroup()
    }, timeout)
    const onAbort = () => {
      aborted = true
      killGroup()
    }

    abort.addEventListener('abort', onAbort, {once: true})

    let done = false
    const finish = (detachedOutput: boolean) => {
      if (done) return
      done = true
      // Forget an empty group at once: its number could later lead an unrelated group.
      if (pid !== undefined && !groupAlive(pid)) groups.delete(pid)
      clearTimeout(timer)
      clearTimeout(drainTimer)
      // The SIGKILL timer stays armed: it must still reach a group that ignored SIGTERM.
      killTimer?.unref()
      abort.removeEventListener('abort', onAbort)
      output.append(stdout.decode() + stderr.decode())
      resolve({aborted, code: exit?.code ?? null, detachedOutput, output: output.text(), signal: exit?.signal ?? null, timedOut})
    }

    child.on('error', (error) => {
      clearTimeout(timer)
      abort.removeEventListener('abort', onAbort)
      reject(new ToolError(`Could not run the command: ${error.message}`))
    })
    child.on('exit', (code, signal) => {
      exit = {code, signal}
      // A background job (`server &`) inherits the pipes and may hold them open for good: read what
      // arrives shortly, then stop waiting.
      drainTimer = setTimeout(() => {
        child.stdout.destroy()
        child.stderr.destroy()
        finish(true)
      }, DRAIN_GRACE_MS)
    })
    child.on('close', () => {
      if (exit) finish(false)
    })
  })
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}

function formatResult(result: CommandResult, timeout: number): string {
  const notes: string[] = []
  if (result.timedOut) notes.push(`Command timed out after ${timeout} ms and was killed.`)
  else if (result.aborted) notes.push('Command was interrupted and killed.')
  else if (result.signal) notes.push(`Command was killed by ${result.signal}.`)
  if (result.code !== null && result.code !== 0) notes.push(`Exit code: ${result.code}`)
  if (result.detachedOutput) notes.push('(A background process still holds the output open; later output is not captured. Redirect it to a file.)')

  const output = result.output.replace(/\n+$/, '')
  if (notes.length === 0) return output || '(no output)'
  return [output, ...notes].filter(Boolean).join('\n')
}

/**
 * Keeps the first and last `cap / 2` characters of a stream of text, however long it grows, and counts
 * what falls in between: a command that prints gigabytes costs no more memory than one that prints 30 KB.
 * A background command's unread output (background.ts) is one too, emptied at each read.
 */
export class OutputCollector {
  private head = ''
  private tail = ''
  private total = 0

  constructor(private readonly cap: number) {}

  append(text: string): void {
    if (!text) return
    this.total += text.length
    const half = Math.floor(this.cap / 2)
    const room = half - this.head.length
    if (room > 0) {
      this.head += text.slice(0, room)
      text = text.slice(room)
    }

    this.tail += text
    // Trim only now and then, so that appending stays linear.
    if (this.tail.length > 2 * half) this.tail = this.tail.slice(-half)
  }

  text(): string {
    const half = Math.floor(this.cap / 2)
    const tail = this.tail.slice(-half)
    const cut = this.total - this.head.length - tail.length
    if (cut <= 0) return this.head + tail
    return `${this.head}\n\n[... ${cut} characters of output cut from the middle ...]\n\n${tail}`
  }

  /** text(), then empty: what arrived since the last call. */
  take(): string {
    const text = this.text()
    this.head = ''
    this.tail = ''
    this.total = 0
    return text
  }
}
