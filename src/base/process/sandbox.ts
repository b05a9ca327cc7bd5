/**
 * The OS sandbox every Bash command runs in (bubblewrap on Linux): the filesystem read-only but the
 * workspace (its `.git/` and `.wave/` read-only too), private empty `/tmp` and `$HOME`, no network
 * unless the approval allows it, its own PID namespace, and an environment built from an allowlist.
 * bwrap is called directly rather than through @anthropic-ai/sandbox-runtime: docs/reference.md's "Sandbox"
 * section says why.
 */
import {spawn, spawnSync} from 'node:child_process'
import {accessSync, constants, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmdirSync, rmSync} from 'node:fs'
import {mkdtemp, readdir, realpath, rm} from 'node:fs/promises'
import {homedir, tmpdir} from 'node:os'
import path from 'node:path'

import {OFFLINE_ENV} from './offline.js'
import {PROXY_SOCKET, RELAY_PORT, RELAY_SOURCE} from './proxy.js'
import {waveHome} from '../home.js'
import {looksSecret} from '../workspace/git-safety.js'
import {isInside} from '../workspace/paths.js'

/**
 * Whether a run's commands are contained, and whether they reach the network: what an approval records
 * (`--sandbox`, `--sandbox-network`, `--sandbox-network-allow`) and a run reports. The one type every layer names it by.
 */
export interface SandboxChoice {
  enabled: boolean
  /** All of the network. */
  network: boolean
  /** The only hosts commands may reach, through wave's filtering proxy (proxy.ts); empty or absent, none. */
  networkAllow?: string[]
}

/** What a session allows: absent means enabled with no network (fail closed); the settings add the rest. */
export interface SandboxSettings extends SandboxChoice {
  /** The running proxy's socket directory for `networkAllow` (startNetworkProxy); without it, such a command does not run. */
  proxy?: string
  /** Further environment variables commands may see (settings' `sandbox.env`). */
  env?: string[]
  /** The size of the private /tmp (and $HOME) in bytes (settings' `sandbox.tmpSize`); DEFAULT_TMP_SIZE when absent. */
  tmpSize?: number
  /** Folders outside the workspace commands may read (the user's Agent Skills' folders), bound read-only where they are. */
  readOnly?: string[]
  /**
   * Folders commands must not see, each laid over with an empty tmpfs besides wave's home, which always
   * is: the plans directory the user's settings choose (other plans, their approvals and transcripts).
   */
  hidden?: string[]
  /**
   * Directories inside the workspace bound read-only, and those inside them left writable (the project's
   * dependencies). A function when they are known only once the run's first reading is done, before any
   * tool runs: asked at each command's spawn.
   */
  frozen?: Frozen | (() => Frozen | undefined)
  /**
   * Plan mode's commands: nothing they write survives them (see `Throwaway`). Always sandboxed, whatever
   * `enabled` says, and never with the network.
   */
  throwaway?: boolean
}

/**
 * Parts of the workspace a command may not write (base/workspace/dependencies.ts: the project's
 * dependencies, as the approved checks see them), absolute paths: `readOnly` bound read-only over the
 * writable workspace, then `writable` (inside them: runners' caches) bound writable again. bubblewrap
 * 0.8 has no overlay, so what is writable is written where it is.
 */
export interface Frozen {
  readOnly: string[]
  writable: string[]
}

/**
 * How a throwaway command (plan mode's Bash) keeps the workspace as it was:
 * - `overlay`: it sees the workspace writable, its writes going to a tmpfs layer dropped when it ends
 *   (bubblewrap 0.11's `--overlay-src`/`--tmp-overlay`, where the kernel allows it);
 * - `read-only`: the workspace bound read-only, so a write fails with the file system's own error.
 * Both: a private /tmp and $HOME emptied when the command ends, no network, its own PID namespace.
 */
export type Throwaway = 'overlay' | 'read-only'

/** The private /tmp's size when settings name none: a command filling it gets ENOSPC, not the host's memory. */
export const DEFAULT_TMP_SIZE = 1024 ** 3
/** The size of the empty directories laid over /run and the other shared ones: nothing needs to write there. */
const HIDDEN_SIZE = 1024 ** 2

export const DEFAULT_SANDBOX: SandboxSettings = {enabled: true, network: false}

/**
 * The one way a `SandboxChoice` (an approval's record, or --sandbox) becomes the `SandboxSettings` a
 * run's commands and checks, and the merge's checks, run in: the choice as it is, what the settings
 * add (config/settings.ts's merged `sandbox.env` and `sandbox.tmpSize`), and the running proxy its
 * `networkAllow` goes through. One builder, so no caller drops a field.
 */
export function sandboxSettings(
  choice: SandboxChoice,
  settings: {sandboxEnv: string[]; sandboxTmpSize?: number; plansDirectory?: string},
  proxy?: string,
): SandboxSettings {
  const hidden = settings.plansDirectory ? {hidden: [settings.plansDirectory]} : {}
  return {...choice, env: settings.sandboxEnv, proxy, tmpSize: settings.sandboxTmpSize, ...hidden}
}

type SandboxStatus = {available: true; bwrap: string} | {available: false; problem: string}

/** A command as the spawn of it: program, arguments, and the complete environment. */
export interface SpawnPlan {
  file: string
  args: string[]
  env: Record<string, string>
}

export interface CommandRequest {
  command: string
  /** Where the command starts (inside the workspace). */
  cwd: string
  /** The workspace root, as a real path: the one writable tree. */
  root: string
  network: boolean
  /** The directory of the filtering proxy's socket: commands reach the allowed hosts through it, and nothing else. */
  proxy?: string
  /** Names (or `PREFIX_*` patterns) from settings' `sandbox.env`. */
  env?: string[]
  /** Bytes for the private /tmp and $HOME (DEFAULT_TMP_SIZE when absent). */
  tmpSize?: number
  /** A throwaway command: the workspace behind an overlay, or read-only; absent, the workspace is writable. */
  throwaway?: Throwaway
  /** Folders bound read-only at their own paths, over the private $HOME and /tmp (SandboxSettings.readOnly). */
  readOnly?: string[]
  /** Folders laid over with an empty tmpfs besides wave's home (SandboxSettings.hidden). */
  hidden?: string[]
  /** Parts of the workspace bound read-only, and writable again inside them (SandboxSettings.frozen). */
  frozen?: Frozen
}

const SHELL = '/bin/bash'
const CANNOT_START = 'The sandbox cannot start'
const OR_OFF = 'or run unsandboxed with --sandbox off'
/** How long the preflight's trivial bwrap may take; it normally takes a few milliseconds. */
const PROBE_TIMEOUT_MS = 10_000

let cached: SandboxStatus | undefined

/** Whether the sandbox can start here (checked once per process by starting a trivial one), and if not, why and what fixes it. */
export function sandboxStatus(): SandboxStatus {
  cached ??= probeSandbox()
  return cached
}

/** The uncached check behind sandboxStatus(), for an environment given (tests pass a PATH without bwrap). */
export function probeSandbox(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): SandboxStatus {
  const bwrap = locateBwrap(env, platform)
  if (typeof bwrap !== 'string') return bwrap
  return sandboxVerdict(bwrap, runProbe(bwrap, sandboxProbe(), env))
}

/** Forget the cached status (tests that change PATH). */
export function resetSandboxStatus(): void {
  cached = undefined
  overlayCached = undefined
  priming = undefined
}

let overlayCached: Throwaway | undefined

/**
 * How throwaway commands are kept from changing anything here, or why they cannot run: the overlay where
 * bwrap and the kernel take one (probed once per process by starting one, never assumed from a version),
 * else the read-only workspace. Never "unsandboxed".
 */
export function throwawayStatus(): {available: true; bwrap: string; kind: Throwaway} | {available: false; problem: string} {
  const status = sandboxStatus()
  if (!status.available) return status
  overlayCached ??= probeOverlay(status.bwrap) ? 'overlay' : 'read-only'
  return {...status, kind: overlayCached}
}

let priming: Promise<void> | undefined

/**
 * Fills the caches of sandboxStatus() and throwawayStatus() without blocking: the two probes start at
 * once and run while the session loads, where the synchronous ones would hold up plan mode's first
 * request one after the other (~20 ms). Never rejects: a probe that cannot start is an unavailable sandbox.
 */
export function primeThrowawayStatus(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  priming ??= (async () => {
    if (cached && (overlayCached || !cached.available)) return
    const bwrap = cached?.available ? cached.bwrap : locateBwrap(env, process.platform)
    if (typeof bwrap !== 'string') {
      cached ??= bwrap
      return
    }

    const [probe, overlay] = await Promise.all([
      cached ? undefined : runProbeAsync(bwrap, sandboxProbe(), env),
      overlayCached || !readsOverlayOption(bwrap) ? undefined : withOverlayDir((real) => runProbeAsync(bwrap, overlayProbe(real), env)),
    ])
    cached ??= sandboxVerdict(bwrap, probe ?? {status: 0, stderr: ''})
    if (cached.available) overlayCached ??= overlay ? 'overlay' : 'read-only'
  })()
  return priming
}

/**
 * Whether bwrap here lays a tmpfs overlay over a directory (bubblewrap 0.11+, a kernel that allows
 * overlayfs in a user namespace): a file written through it inside must be there, and gone outside.
 */
export function probeOverlay(bwrap: string, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!readsOverlayOption(bwrap)) return false
  let dir: string | undefined
  try {
    dir = mkdtempSync(path.join(tmpdir(), 'wave-overlay-'))
    const real = realpathSync(dir)
    return runProbe(bwrap, overlayProbe(real), env).status === 0 && readdirSync(real).length === 0
  } catch {
    return false
  } finally {
    if (dir) rmSync(dir, {force: true, recursive: true})
  }
}

/**
 * Whether the bwrap program can take `--overlay-src` at all (bubblewrap 0.11+): a compiled bwrap lists its
 * options' names in its own bytes, so one that lacks the name refuses the overlay probe's first option,
 * whatever the kernel allows. Read from the file, that verdict costs no process (the probe's spawn held
 * plan mode's way to its first request); anything but a compiled program (a wrapper script) is probed.
 */
function readsOverlayOption(bwrap: string): boolean {
  try {
    const program = readFileSync(bwrap)
    return program.subarray(0, 4).toString('latin1') !== '\x7fELF' || program.includes('--overlay-src')
  } catch {
    return true
  }
}

/** The namespaces and mounts every command gets, around a command that does nothing. */
function sandboxProbe(): string[] {
  return [...isolationArgs(false, DEFAULT_TMP_SIZE), '--', SHELL, '-c', ':']
}

/** probeOverlay's bwrap arguments. /tmp is a tmpfs in the sandbox: the directory is bound in from the host first, then overlaid. */
function overlayProbe(real: string): string[] {
  return [
    ...isolationArgs(false, DEFAULT_TMP_SIZE),
    '--overlay-src',
    real,
    '--tmp-overlay',
    real,
    '--',
    SHELL,
    '-c',
    'echo x > "$1/probe" && test -s "$1/probe"',
    'probe',
    real,
  ]
}

/** The overlay probe's verdict on a fresh directory (`run` probes it), the directory removed after. */
async function withOverlayDir(run: (real: string) => Promise<ProbeRun>): Promise<boolean> {
  let dir: string | undefined
  try {
    dir = await mkdtemp(path.join(tmpdir(), 'wave-overlay-'))
    const real = await realpath(dir)
    return (await run(real)).status === 0 && (await readdir(real)).length === 0
  } catch {
    return false
  } finally {
    if (dir) await rm(dir, {force: true, recursive: true})
  }
}

/** bwrap's path, or why the sandbox cannot exist here at all. */
function locateBwrap(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | SandboxStatus {
  if (platform !== 'linux') {
    return unavailable(`wave's sandbox is built on Linux's bubblewrap, and none exists for ${platform} yet. Fix: run wave on Linux, ${OR_OFF}.`)
  }

  return (
    findOnPath('bwrap', env.PATH) ??
    unavailable(
      `bubblewrap (bwrap) is not installed or not on PATH. Fix: install it (sudo apt-get install bubblewrap; dnf, pacman and apk call it bubblewrap too), ${OR_OFF}.`,
    )
  )
}

/** How a probe's bwrap ended, as spawnSync says it. */
interface ProbeRun {
  status: number | null
  stderr: string
  error?: Error
}

function sandboxVerdict(bwrap: string, probe: ProbeRun): SandboxStatus {
  if (probe.status === 0) return {available: true, bwrap}
  const said = probe.error?.message ?? probe.stderr.trim().split('\n').at(-1) ?? `exit ${probe.status}`
  return unavailable(explainFailure(said, readSysctl))
}

function runProbe(bwrap: string, args: string[], env: NodeJS.ProcessEnv): ProbeRun {
  return spawnSync(bwrap, args, {encoding: 'utf8', env: {PATH: env.PATH ?? ''}, stdio: ['ignore', 'ignore', 'pipe'], timeout: PROBE_TIMEOUT_MS})
}

function runProbeAsync(bwrap: string, args: string[], env: NodeJS.ProcessEnv): Promise<ProbeRun> {
  return new Promise((resolve) => {
    const child = spawn(bwrap, args, {env: {PATH: env.PATH ?? ''}, stdio: ['ignore', 'ignore', 'pipe'], timeout: PROBE_TIMEOUT_MS})
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    child.once('error', (error) => resolve({error, status: null, stderr}))
    child.once('close', (status) => resolve({status, stderr}))
  })
}

/** How plan mode's commands are contained, in the words `wave doctor`, `wave tools` and `wave prompt` use. */
export function describeThrowaway(kind: Throwaway): string {
  return kind === 'overlay'
    ? 'throwaway sandbox (overlay): commands see the workspace writable, and whatever they write goes to a temporary layer dropped when each command ends'
    : "throwaway sandbox (read-only): the workspace is bound read-only, so a write fails with the file system's error; /tmp and $HOME are private and emptied when each command ends"
}

/**
 * Why bwrap could not start, read from the kernel's switches (its own message names none of them), and
 * the fix. `sysctl` reads a key below /proc/sys, such as `kernel/unprivileged_userns_clone`.
 */
export function explainFailure(bwrapSaid: string, sysctl: (key: string) => string | undefined): string {
  if (sysctl('kernel/apparmor_restrict_unprivileged_userns') === '1') {
    return (
      `AppArmor blocks unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1, as on Ubuntu 24.04). ` +
      `Fix: load an AppArmor profile for bwrap that allows them (docs/reference.md's Sandbox section has it), or sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0.`
    )
  }

  if (sysctl('kernel/unprivileged_userns_clone') === '0') {
    return 'unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0). Fix: sudo sysctl -w kernel.unprivileged_userns_clone=1.'
  }

  if (sysctl('user/max_user_namespaces') === '0') {
    return 'user namespaces are disabled (user.max_user_namespaces=0). Fix: sudo sysctl -w user.max_user_namespaces=15000.'
  }

  return (
    `bwrap failed: ${bwrapSaid.replace(/^bwrap: /, '').replace(/\.$/, '')}. ` +
    `Fix: allow user namespaces for this user (a container needs e.g. docker run --security-opt seccomp=unconfined --security-opt apparmor=unconfined), ${OR_OFF}.`
  )
}

/** bwrap, the command and the environment that run `request.command` inside the sandbox. */
export function sandboxedCommand(request: CommandRequest, bwrap: string): SpawnPlan {
  const {root} = request
  const home = privateHome(root)
  const tmpSize = request.tmpSize ?? DEFAULT_TMP_SIZE
  const args = isolationArgs(request.network, tmpSize)
  if (home !== '/tmp') args.push('--size', String(tmpSize), '--tmpfs', home)
  args.push(...hiddenArgs(request, home))
  if (request.throwaway) {
    // Nothing to guard inside: .git and .wave are as read-only, or as throwaway, as the rest.
    if (request.throwaway === 'overlay') args.push('--overlay-src', root, '--tmp-overlay', root)
    else args.push('--ro-bind', root, root)
    args.push(...readOnlyArgs(request))
    args.push('--chdir', request.cwd, '--', SHELL, '-c', request.command)
    return {args: ['-c', CLOSE_INHERITED, 'wave-sandbox', bwrap, ...args], env: commandEnvironment(request.env, {...OFFLINE_ENV, HOME: home}), file: SHELL}
  }

  args.push('--bind', root, root)
  // git hooks and config, and wave's own settings, would run or grant something later, outside this
  // command: read-only where they exist, and where they do not, an empty directory bound read-only in
  // their place, so that the command cannot create them (removed when wave exits).
  for (const name of ['.git', '.wave']) {
    const inside = path.join(root, name)
    const real = existing(inside) ?? placeholder(inside)
    if (real && isInside(root, real)) args.push('--ro-bind', real, real)
  }

  args.push(...frozenArgs(request))

  // No network at all: package managers fail at once rather than retry (offline.ts).
  const extra: Record<string, string> = {...(request.network || request.proxy ? {} : OFFLINE_ENV), HOME: home}
  let command = [SHELL, '-c', request.command]
  if (request.proxy && !request.network) {
    // The network stays unshared: the proxy's socket is bound in, and a relay (the node running wave,
    // bound in too in case it lives under a hidden directory) serves it on the sandbox's own loopback,
    // then runs the command. Every client that honours HTTP(S)_PROXY goes through it; nothing else gets out.
    args.push('--ro-bind', request.proxy, PROXY_DIRECTORY, '--ro-bind', process.execPath, process.execPath)
    command = [process.execPath, '-e', RELAY_SOURCE, '--', path.join(PROXY_DIRECTORY, PROXY_SOCKET), String(RELAY_PORT), ...command]
    const proxy = `http://127.0.0.1:${RELAY_PORT}`
    Object.assign(extra, {HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy, NO_PROXY: '', no_proxy: ''})
  }

  args.push(...readOnlyArgs(request), '--chdir', request.cwd, '--', ...command)
  // The environment goes to bwrap as its own, not through --clearenv/--setenv: values on the command
  // line would be readable by every process on the machine (ps). bwrap passes it on unchanged.
  // bash starts bwrap once it has closed every descriptor but 0-2: those wave inherited (a CI runner's
  // socket or pipe, not close-on-exec) would otherwise reach the command, through the sandbox's walls.
  return {args: ['-c', CLOSE_INHERITED, 'wave-sandbox', bwrap, ...args], env: commandEnvironment(request.env, extra), file: SHELL}
}

/**
 * wave's home and the folders the request hides, each under an empty tmpfs: read-only is not enough, as
 * plan-mode Bash would read other plans that plan mode's Read refuses, wherever `WAVE_HOME` lies (a CI
 * runner's temp directory, outside $HOME and /tmp, which are private already). One that holds the
 * workspace, or lies in it, is left alone: the workspace's own binds decide there.
 */
function hiddenArgs(request: CommandRequest, home: string): string[] {
  const args: string[] = []
  for (const dir of [waveHome(), ...(request.hidden ?? [])]) {
    const real = existing(dir)
    if (!real || real === '/' || isInside(real, request.root) || isInside(request.root, real)) continue
    if (isInside('/tmp', real) || isInside(home, real) || sharedDirectories().some((shared) => isInside(shared, real))) continue
    args.push('--size', String(HIDDEN_SIZE), '--tmpfs', real)
  }

  return args
}

/** The request's frozen parts of the workspace: each real directory inside it read-only, then its writable ones bound again. */
function frozenArgs(request: CommandRequest): string[] {
  const args: string[] = []
  const frozen = request.frozen
  for (const dir of frozen?.readOnly ?? []) {
    const real = existing(dir)
    if (real && real !== request.root && isInside(request.root, real)) args.push('--ro-bind', real, real)
  }

  // Writable again only where it is a real directory inside a read-only one, reached through no link:
  // a symlink put in a cache's place would otherwise make whatever it names writable (`.git/hooks`).
  for (const dir of frozen?.writable ?? []) {
    const real = existing(dir)
    const within = frozen?.readOnly.some((parent) => isInside(parent, dir))
    if (real && real === path.resolve(dir) && within && lstatSync(real).isDirectory()) args.push('--bind', real, real)
  }

  return args
}

/**
 * The read-only folders, each bound at the path the model was told (its real directory behind it), after
 * the private $HOME and /tmp that would hide it. One that no longer exists is left out; one inside the
 * workspace is there already.
 */
function readOnlyArgs(request: CommandRequest): string[] {
  const args: string[] = []
  for (const dir of request.readOnly ?? []) {
    const real = existing(dir)
    if (real && !isInside(request.root, real) && !isInside(request.root, dir)) args.push('--ro-bind', real, dir)
  }

  return args
}

/** Where the proxy's socket directory appears inside the sandbox (over the empty /run). */
const PROXY_DIRECTORY = '/run/wave-proxy'

/** Empty directories made to stand where `.git` or `.wave` was missing, removed at exit if still empty. */
const placeholders = new Set<string>()

function placeholder(dir: string): string | undefined {
  try {
    lstatSync(dir)
    return undefined // something is there (a dangling symlink): not ours to replace
  } catch {}

  try {
    mkdirSync(dir, {mode: 0o700})
  } catch {
    return undefined
  }

  if (placeholders.size === 0) {
    // After Bash's own exit hook (registered when the command is spawned, right after this returns),
    // which kills what is left of the sandboxes: a directory is removed only once nothing can write in it.
    setImmediate(() => process.once('exit', removePlaceholders))
  }

  placeholders.add(dir)
  return realpathSync(dir)
}

function removePlaceholders(): void {
  for (const dir of placeholders) {
    try {
      rmdirSync(dir)
    } catch {} // not empty (it can't be: it was read-only), or gone
  }

  placeholders.clear()
}

/** `--sandbox off`: the command as it is, but still with the allowlisted environment. */
export function unsandboxedCommand(request: CommandRequest): SpawnPlan {
  const extra: Record<string, string> = {HOME: process.env.HOME ?? homedir()}
  // Outside the sandbox /tmp is shared, and a CI job may have pointed TMPDIR elsewhere for a reason.
  if (process.env.TMPDIR) extra.TMPDIR = process.env.TMPDIR
  return {args: ['-c', request.command], env: commandEnvironment(request.env, extra), file: SHELL}
}

/** Closes every descriptor of the shell above 2, then runs its arguments (`{fd}>&-` takes the number from the variable). */
const CLOSE_INHERITED = 'for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && exec {fd}>&-; done; exec "$@"'

/** Namespaces, capabilities, and the mounts every sandbox has, before the workspace is bound in. */
function isolationArgs(network: boolean, tmpSize: number): string[] {
  const args = [
    '--unshare-all',
    ...(network ? ['--share-net'] : []),
    // Its own PID namespace (in --unshare-all): no process outside is visible, so no parent's
    // /proc/<pid>/environ can be read; when the command exits, whatever it left behind dies with it.
    '--die-with-parent',
    // No controlling terminal to push keystrokes into (TIOCSTI). The process group wave kills is
    // bwrap's; with it dies the namespace, and everything in it.
    '--new-session',
    // Run by root, the command would keep every capability inside its user namespace.
    '--cap-drop',
    'ALL',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    // bwrap leaves the new /proc/sys writable, and a root-owned command could set the host's sysctls through it.
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    '--size',
    String(tmpSize),
    '--tmpfs',
    '/tmp',
  ]
  // Sockets on a read-only mount still accept connections: /run holds docker's, D-Bus's, the user
  // session's; a directory anyone may write to (/var/tmp) holds whatever other programs put there.
  for (const dir of sharedDirectories()) args.push('--size', String(HIDDEN_SIZE), '--tmpfs', dir)

  // With the network on, name resolution must still work where /etc/resolv.conf lives under /run (systemd-resolved).
  if (network) {
    const resolv = existing('/etc/resolv.conf')
    if (resolv && (isInside('/run', resolv) || isInside('/var/run', resolv))) args.push('--ro-bind', resolv, resolv)
  }

  return args
}

/**
 * Where the command's empty `$HOME` is: over the real one's path (tools that read the home directory
 * from the password database land in it too), unless that would hide or be the workspace.
 */
function privateHome(root: string): string {
  const home = existing(process.env.HOME || homedir())
  if (!home || home === '/' || isInside(root, home) || isPseudoFilesystem(home)) return '/tmp'
  return home
}

function isPseudoFilesystem(dir: string): boolean {
  return ['/proc', '/dev', '/sys'].some((pseudo) => isInside(pseudo, dir))
}

const ALWAYS = new Set(['PATH', 'LANG', 'TERM', 'CI', 'TZ', 'USER', 'SHELL'])
/** wave's own model credentials: no listing passes them on. */
const NEVER = new Set(['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_IDENTITY_TOKEN'])
/** Names that look like credentials (git-safety.ts keeps the list): passed only when listed by their exact name, never by a pattern. */
export {looksSecret} from '../workspace/git-safety.js'

/**
 * The environment a command gets: PATH, LANG, LC_*, TERM, CI, TZ, USER and SHELL, the names the
 * settings list (`NAME`, or `PREFIX_*`), and `extra` (HOME). Never wave's credentials; a name that
 * looks like a credential only when listed exactly.
 */
export function commandEnvironment(
  listed: readonly string[] = [],
  extra: Record<string, string> = {},
  source: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const exact = new Set(listed.filter((entry) => !entry.endsWith('*')))
  const prefixes = listed.filter((entry) => entry.endsWith('*')).map((entry) => entry.slice(0, -1))
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || NEVER.has(name)) continue
    const base = ALWAYS.has(name) || name.startsWith('LC_')
    const byPattern = !looksSecret(name) && prefixes.some((prefix) => name.startsWith(prefix))
    if (base || exact.has(name) || byPattern) env[name] = value
  }

  return {...env, ...extra}
}

function unavailable(why: string): SandboxStatus {
  return {available: false, problem: `${CANNOT_START}: ${why}`}
}

function findOnPath(program: string, searchPath = ''): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue
    const candidate = path.join(dir, program)
    try {
      accessSync(candidate, constants.X_OK)
      if (lstatSync(candidate).isDirectory()) continue
      return candidate
    } catch {}
  }

  return undefined
}

function readSysctl(key: string): string | undefined {
  try {
    return readFileSync(path.join('/proc/sys', key), 'utf8').trim()
  } catch {
    return undefined
  }
}

/** The real path of what is at `file`, or undefined when nothing is. */
function existing(file: string): string | undefined {
  try {
    return realpathSync(file)
  } catch {
    return undefined
  }
}

let shared: string[] | undefined

/**
 * The directories hidden behind empty ones: /run and /var/run, and every directory directly below / and
 * /var that others may write to (/var/tmp, /var/crash ...; /tmp has its own): where programs put the
 * Unix sockets a command could otherwise connect to with the network off. Listed once per process.
 */
export function sharedDirectories(): string[] {
  if (shared) return shared
  const found = ['/run', '/var/run'].filter((dir) => isPlainDirectory(dir))
  for (const parent of ['/', '/var']) {
    let names: string[] = []
    try {
      names = readdirSync(parent)
    } catch {}

    for (const name of names) {
      const dir = path.join(parent, name)
      if (dir === '/tmp' || found.includes(dir) || isPseudoFilesystem(dir)) continue
      try {
        const stat = lstatSync(dir)
        if (stat.isDirectory() && (stat.mode & 0o002) !== 0) found.push(dir)
      } catch {}
    }
  }

  shared = found
  return shared
}

function isPlainDirectory(dir: string): boolean {
  try {
    return lstatSync(dir).isDirectory()
  } catch {
    return false
  }
}

/** How a run's sandbox reads wherever it is shown: "sandbox on", "sandbox on, network on", "sandbox on, network to a.org, b.org only", "sandbox OFF". */
export function describeSandbox(sandbox: SandboxChoice): string {
  if (!sandbox.enabled) return 'sandbox OFF (commands run unsandboxed)'
  if (sandbox.network) return 'sandbox on, network on'
  return sandbox.networkAllow?.length ? `sandbox on, network to ${sandbox.networkAllow.join(', ')} only` : 'sandbox on'
}
