/**
 * How wave runs a shell command, whoever asks (Bash, a background task, the approved checks): the one
 * choice of sandbox for it (`spawnFor`: bubblewrap with the session's settings, or unsandboxed only
 * when the approval says so; never unsandboxed because bubblewrap is missing), then the spawn in its own
 * process group, killed at the timeout or the abort, with its output kept head and tail. And the gate
 * before a run (`assertSandboxForCommands`): an approval that grants commands needs that sandbox to start.
 */
import {type ChildProcessByStdio, spawn} from 'node:child_process'
import {closeSync, mkdtempSync, openSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import type {Readable} from 'node:stream'

import {usageError} from '../errors.js'
import {type NetworkProxy, startNetworkProxy} from './proxy.js'
import {
  DEFAULT_SANDBOX,
  type SandboxChoice,
  type SandboxSettings,
  type SpawnPlan,
  sandboxedCommand,
  sandboxStatus,
  throwawayStatus,
  unsandboxedCommand,
} from './sandbox.js'

/**
 * The filtering proxy for an approval that opens the sandbox's network to named hosts only, started
 * before the run's first command; undefined when the approval names none. A proxy that cannot start
 * refuses the run (exit 2): the network is never opened instead.
 */
export async function openSandboxNetwork(grant: SandboxChoice, onRefused?: (host: string) => void): Promise<NetworkProxy | undefined> {
  const hosts = grant.networkAllow ?? []
  if (!grant.enabled || grant.network || hosts.length === 0) return undefined
  try {
    return await startNetworkProxy(hosts, onRefused)
  } catch (error) {
    throw usageError(
      `The approval lets commands reach ${hosts.join(', ')} through wave's network proxy, and the proxy cannot start here, so the run does not start: ${(error as Error).message}.`,
      'wave doctor checks the proxy; the network is never opened without it.',
    )
  }
}

/** After SIGTERM, how long the process group gets to exit before SIGKILL. */
const KILL_GRACE_MS = 2000
/** After bash exits, how long a background process may keep its output pipes open before we stop reading. */
const DRAIN_GRACE_MS = 500
/** Each stream keeps its head and tail within this, below the Bash tool's declared cap, so that the notes after it survive. */
export const MAX_OUTPUT_CHARS = 30_000

/**
 * The spawn of `command` under `sandbox` (absent: enabled, no network), every field of the settings
 * applied (network, extra environment, the private /tmp's size, a throwaway command's containment); or
 * why it cannot run contained. The
 * caller words the refusal; nothing runs unsandboxed unless `sandbox.enabled` is false.
 */
export function spawnFor(
  command: string,
  where: {root: string; cwd?: string},
  sandbox: SandboxSettings = DEFAULT_SANDBOX,
): {plan: SpawnPlan} | {problem: string} {
  const request = {
    command,
    cwd: where.cwd ?? where.root,
    env: sandbox.env,
    frozen: typeof sandbox.frozen === 'function' ? sandbox.frozen() : sandbox.frozen,
    hidden: sandbox.hidden,
    network: sandbox.network,
    proxy: sandbox.proxy,
    readOnly: sandbox.readOnly,
    root: where.root,
    tmpSize: sandbox.tmpSize,
  }
  if (sandbox.throwaway) {
    // Plan mode: contained whatever the session's sandbox setting, never with the network (nor its proxy).
    const status = throwawayStatus()
    if (!status.available) return {problem: status.problem}
    return {plan: sandboxedCommand({...request, network: false, proxy: undefined, throwaway: status.kind}, status.bwrap)}
  }

  if (!sandbox.enabled) return {plan: unsandboxedCommand(request)}
  // Fail closed: without a sandbox the command does not run, and the problem says what fixes that.
  const status = sandboxStatus()
  if (!status.available) return {problem: status.problem}
  // Hosts allowed but no proxy to reach them through: the command does not run, rather than get all or none of the network silently.
  if (!sandbox.network && sandbox.networkAllow?.length && !sandbox.proxy) {
    return {problem: `The network proxy for the allowed hosts (${sandbox.networkAllow.join(', ')}) is not running, so the command cannot reach them.`}
  }
  return {plan: sandboxedCommand(request, status.bwrap)}
}

/** What an approval lets a run execute, as far as the sandbox is concerned. */
interface CommandGrant {
  mode: string
  allow: readonly string[]
  sandbox?: {enabled: boolean}
  /** The approved checks, which wave runs in the sandbox itself. */
  verify?: readonly unknown[]
}

/** Whether the approval lets commands run: Bash rules, bypassPermissions (every tool), or checks. */
export function grantsCommands(grant: CommandGrant): boolean {
  return grant.mode === 'bypassPermissions' || grant.allow.some((rule) => /^Bash(\(|$)/.test(rule.trim())) || (grant.verify?.length ?? 0) > 0
}

/**
 * A run whose approval grants commands refuses to start (exit 2, before any model request) when the
 * sandbox they would run in cannot start: else every command would be refused one by one and the run
 * would still end "successfully", with the approved tests never run. An approval with `sandbox: off`
 * asked for commands unsandboxed and is not refused.
 */
export function assertSandboxForCommands(grant: CommandGrant): void {
  if (grant.sandbox?.enabled === false || !grantsCommands(grant)) return
  const status = sandboxStatus()
  if (status.available) return
  const what = (grant.verify?.length ?? 0) > 0 ? 'commands and checks' : 'commands'
  throw usageError(
    `The approval grants ${what}, and the sandbox they would run in cannot start here, so the run does not start: ${status.problem}`,
    'wave doctor shows the sandbox check; in CI, prepare the sandbox as the wave Action does (scripts/ci/prepare-sandbox.sh).',
  )
}

/** What a finished command left: its output (head and tail), how it ended. the Bash tool and wave's own checks read it. */
export interface FinishedCommand {
  output: string
  code: number | null
  signal: NodeJS.Signals | null
  timedOut: boolean
  aborted: boolean
  /** A background process still held stdout or stderr when bash exited. */
  detachedOutput: boolean
  /** stdout and stderr apart (head and tail each), for callers that read one as data: a hook's JSON answer. */
  stdout: string
  stderr: string
}

/** What a command may be given beyond its spawn: text on its stdin (a hook's JSON input), closed after it. */
interface RunExtras {
  input?: string
  /** Sees all of the output as it arrives (a check's whole output goes to its file). */
  observe?(text: string): void
}

/**
 * A descriptor reading `input` from a file already removed. Not a pipe: Node's pipes are sockets, and
 * bash on a socket for stdin takes itself for a remote shell and sources ~/.bashrc (hundreds of
 * milliseconds, and whatever it prints lands in the output a hook answers with).
 */
function inputFile(input: string): number {
  const dir = mkdtempSync(path.join(tmpdir(), 'wave-input-'))
  const file = path.join(dir, 'stdin')
  try {
    writeFileSync(file, input, {mode: 0o600})
    return openSync(file, 'r')
  } finally {
    rmSync(dir, {force: true, recursive: true})
  }
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

/**
 * Runs a planned spawn (sandboxed or not) in its own process group, killed at the timeout or the abort.
 * `extras.observe` sees all of the output as it arrives (stdout and stderr interleaved), beyond what is kept.
 */
export function runCommand(plan: SpawnPlan, cwd: string, timeout: number, abort: AbortSignal, extras: RunExtras = {}): Promise<FinishedCommand> {
  return new Promise((resolve, reject) => {
    const child = spawnGrouped(plan, cwd, extras.input)
    const pid = child.pid
    const output = new KeptOutput(extras.observe)
    child.stdout.on('data', (chunk: Buffer) => output.take('stdout', chunk))
    child.stderr.on('data', (chunk: Buffer) => output.take('stderr', chunk))

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
      resolve({aborted, code: exit?.code ?? null, detachedOutput, signal: exit?.signal ?? null, timedOut, ...output.end()})
    }

    child.on('error', (error) => {
      clearTimeout(timer)
      abort.removeEventListener('abort', onAbort)
      reject(new Error(`Could not run the command: ${error.message}`))
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

/**
 * The command spawned leading its own process group (detached: the command, or bwrap, whose sandbox dies
 * with it), so a timeout kills its children too; the group is killed with wave if still there at exit.
 */
function spawnGrouped(plan: SpawnPlan, cwd: string, input: string | undefined): ChildProcessByStdio<null, Readable, Readable> {
  const stdin = input === undefined ? 'ignore' : inputFile(input)
  let child: ChildProcessByStdio<null, Readable, Readable>
  try {
    child = spawn(plan.file, plan.args, {cwd, detached: true, env: plan.env, stdio: [stdin, 'pipe', 'pipe']}) as ChildProcessByStdio<null, Readable, Readable>
  } finally {
    // The child holds its own copy of the descriptor.
    if (typeof stdin === 'number') closeSync(stdin)
  }

  if (child.pid !== undefined) {
    groups.add(child.pid)
    killGroupsOnExit()
  }

  return child
}

/** A command's output as it arrives: kept head and tail, interleaved and each stream apart, all of it shown to `observe`. */
class KeptOutput {
  private readonly both = new OutputCollector(MAX_OUTPUT_CHARS)
  private readonly apart = {stderr: new OutputCollector(MAX_OUTPUT_CHARS), stdout: new OutputCollector(MAX_OUTPUT_CHARS)}
  // One decoder per stream: a chunk may end inside a multi-byte character.
  private readonly decoders = {stderr: new TextDecoder('utf-8'), stdout: new TextDecoder('utf-8')}

  constructor(private readonly observe: ((text: string) => void) | undefined) {}

  take(stream: 'stderr' | 'stdout', chunk: Buffer): void {
    this.append(stream, this.decoders[stream].decode(chunk, {stream: true}))
  }

  /** What the decoders still held, then the output kept. */
  end(): {output: string; stderr: string; stdout: string} {
    this.append('stdout', this.decoders.stdout.decode())
    this.append('stderr', this.decoders.stderr.decode())
    return {output: this.both.text(), stderr: this.apart.stderr.text(), stdout: this.apart.stdout.text()}
  }

  private append(stream: 'stderr' | 'stdout', text: string): void {
    this.both.append(text)
    if (text) this.observe?.(text)
    this.apart[stream].append(text)
  }
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
