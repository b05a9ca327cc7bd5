/**
 * The repository as a session finds it when it starts: its top, HEAD and branch, recent commit subjects,
 * the short status the environment block shows, whether the work tree has changes, and (for a run) the
 * changed paths "files changed" is measured from. Read once per session, and as early as possible:
 * bin/run.js begins the reads at process start (`beginStartupSnapshot`), so that git runs on another
 * core while node loads oclif and the command, and the session takes them over (`sessionSnapshot`).
 *
 * Two rules keep the first model request independent of the repository's size. The reads are one `sh`
 * running the git commands one after another: from node, each process costs a fork of the whole node
 * process on the main thread (2–8 ms here), from sh a fraction of that. And `git status`, which stats
 * every file of the work tree, runs before the first request only in a work tree of at most
 * LARGE_WORK_TREE files (the index's entry count, read from its header): in a larger one the environment
 * block says the status was not read, and what needs it (the plan's `dirty`, a run's starting changes)
 * gets it from a status started on demand at a lower priority, awaited before it is needed (before
 * the first tool call for a run's changes), never before the first request.
 *
 * Every git here runs as git-safety.ts says: no program the repository's config names, no credentials.
 *
 * This module imports nothing but node's own modules and git-safety.ts (which imports only node's):
 * bin/run.js loads it before anything else.
 */
import {type ChildProcess, spawn} from 'node:child_process'
import {realpathSync} from 'node:fs'
import {open} from 'node:fs/promises'
import {setPriority} from 'node:os'

import {gitEnvironment, SAFE_GIT_SHELL, safeGitCommand} from './git-safety.js'

/** Above this many files in the index, `git status` is not awaited before the first request. */
export const LARGE_WORK_TREE = 20_000

/** Recent commit subjects the environment block shows. */
const RECENT_COMMITS = 5

/** The git state a plan was made against, so `run` can tell whether the plan went stale. */
export interface RepositoryHead {
  root: string
  head: string | null
  branch: string | null
}

export interface RepositoryState extends RepositoryHead {
  /** Whether the work tree had changes (absent: not known yet, in a large work tree). */
  dirty?: boolean
}

/** What a session's environment block says of the repository: the short status with its branch line, and recent subjects. */
export interface RepositorySummary {
  /** `git status --short --branch`: `## branch...upstream [ahead n]`, then one `XY path` line per change. */
  status: string[]
  /** Subjects of the newest commits, newest first (none in a repository without commits). */
  subjects: string[]
  /** Set when the work tree was too large to read its status before the first request: its file count. */
  unread?: number
}

/**
 * The status the environment block shows, and whose changes make a work tree dirty. --no-optional-locks:
 * a status that refreshes the index must not take its lock from a git command the user (or a tool) runs.
 */
const SUMMARY_STATUS = [
  '--no-optional-locks',
  '-c',
  'color.status=false',
  '-c',
  'core.quotepath=off',
  'status',
  '--short',
  '--branch',
  '--untracked-files=normal',
]
/** Paths that differ from HEAD or are untracked, each file listed: what "files changed" compares. */
const CHANGES_STATUS = ['--no-optional-locks', 'status', '--porcelain=v1', '-z', '--untracked-files=all']

type ReadName = 'top' | 'files' | 'head' | 'branch' | 'subjects' | 'status' | 'changes'

/**
 * The reads, in order, each to its own file descriptor (so that outputs need no framing), its exit status
 * on stdout; `$1` (limit) is LARGE_WORK_TREE, `$2` (changes) is 1 to read the changes too. Each descriptor is closed as
 * soon as its read is done, which is when node sees it end. Outside a work tree it stops after the first.
 */
const BATCH: Array<{name: ReadName; script: string}> = [
  {name: 'top', script: 'top=$(git rev-parse --show-toplevel) || exit 0; printf "%s" "$top" >&3; echo top 0; cd "$top" || exit 0'},
  // The index header: "DIRC", a version, then the entry count, four bytes big-endian.
  {
    name: 'files',
    script:
      'set -- $(od -An -tu1 -j8 -N4 "$(git rev-parse --git-path index)" 2>/dev/null) 0 0 0 0; files=$(( ($1 << 24) + ($2 << 16) + ($3 << 8) + $4 )); printf "%s" "$files" >&4; echo files 0',
  },
  {name: 'head', script: 'git rev-parse --verify --quiet HEAD >&5; echo head $?'},
  {name: 'branch', script: 'git symbolic-ref --quiet --short HEAD >&6; echo branch $?'},
  {name: 'subjects', script: `git log -n${RECENT_COMMITS} --format=%s >&7; echo subjects $?`},
  // Filters the config names are emptied (git-safety.ts) before the first read of work-tree files.
  {
    name: 'status',
    script: `if [ "$files" -le "$limit" ]; then emptyFilters; fi; if [ "$files" -le "$limit" ]; then git ${SUMMARY_STATUS.join(' ')} >&8; echo status $?; fi`,
  },
  {name: 'changes', script: `if [ "$files" -le "$limit" ] && [ "$changes" = 1 ]; then git ${CHANGES_STATUS.join(' ')} >&9; echo changes $?; fi`},
]
/** Every git in the batch is the hardened one; emptyFilters adds the filter keys to GIT_CONFIG_* (git-safety.ts). */
const SCRIPT = [SAFE_GIT_SHELL, 'limit=$1; changes=$2', ...BATCH.map(({script}, index) => `${script}; exec ${index + 3}>&-`)].join('\n')

/** What a read gave: its output, or undefined when it failed or did not run. */
type Output = string | undefined

export class RepositorySnapshot {
  private readonly reads: Map<ReadName, Promise<Output>>
  private onDemand = new Map<ReadName, Promise<Output>>()

  /** `dir`: where the session works (its workspace), or where wave started (bin/run.js). */
  constructor(
    readonly dir: string,
    options: {changes?: boolean} = {},
  ) {
    this.reads = process.platform === 'win32' ? readOneByOne(dir, Boolean(options.changes)) : readInOneShell(dir, Boolean(options.changes))
  }

  /** The top of the work tree holding `dir`, as git prints it; undefined outside a work tree. */
  toplevel(): Promise<string | undefined> {
    return this.read('top').then((top) => top?.trim() || undefined)
  }

  /** Root, HEAD and branch; null outside a work tree. Cheap: no `git status`. */
  async head(): Promise<RepositoryHead | null> {
    const root = await this.toplevel()
    if (!root) return null
    const [head, branch] = await Promise.all([this.read('head'), this.read('branch')])
    return {branch: branch?.trim() || null, head: head?.trim() || null, root}
  }

  /** Whether the index lists more than LARGE_WORK_TREE files: then `git status` is not read before the first request. */
  async large(): Promise<boolean> {
    return Number(await this.read('files')) > LARGE_WORK_TREE
  }

  /** The head, with `dirty` when it is known before the first request (not in a large work tree). */
  async state(): Promise<RepositoryState | null> {
    const head = await this.head()
    if (!head || (await this.large())) return head
    return {...head, dirty: await this.dirty()}
  }

  /** Whether the work tree has changes (staged, unstaged or untracked), undefined if git could not tell; in a large one, this reads its status. */
  async dirty(): Promise<boolean | undefined> {
    const status = await this.status()
    return status?.some((line) => !line.startsWith('## '))
  }

  /** What the environment block says of the repository; null outside a work tree. */
  async summary(): Promise<RepositorySummary | null> {
    const root = await this.toplevel()
    if (!root) return null
    const subjects = (await this.read('subjects'))?.trim()
    const summary = {status: [] as string[], subjects: subjects ? subjects.split('\n') : []}
    if (!(await this.large())) return {...summary, status: (await this.status()) ?? []}
    const branch = (await this.read('branch'))?.trim()
    return {...summary, status: [`## ${branch || 'HEAD (no branch)'}`], unread: Number(await this.read('files'))}
  }

  /** Paths (relative to the repository root) that differ from HEAD or are untracked, with their status codes. */
  async changes(): Promise<Map<string, string>> {
    if (!(await this.toplevel())) return new Map()
    const status = (await this.large())
      ? await this.later('changes', CHANGES_STATUS)
      : ((await this.read('changes')) ?? (await this.later('changes', CHANGES_STATUS)))
    return parseChanges(status)
  }

  /** The short status's lines, header first (undefined if it failed); in a large work tree read now, at a lower priority. */
  private async status(): Promise<string[] | undefined> {
    const status = (await this.large()) ? await this.later('status', SUMMARY_STATUS) : await this.read('status')
    return status?.split('\n').filter(Boolean)
  }

  private read(name: ReadName): Promise<Output> {
    return this.reads.get(name) ?? Promise.resolve(undefined)
  }

  /**
   * A read the batch left out, run in the work tree's top once asked for. In a large work tree it runs
   * while the session makes its first request: at a lower priority, so that it takes the CPU wave does not.
   */
  private later(name: ReadName, args: string[]): Promise<Output> {
    let pending = this.onDemand.get(name)
    if (!pending) {
      pending = this.toplevel().then(async (top) => {
        if (!top) return undefined
        if (!(await this.large())) return git(top, args)
        // One thread (git stats files on several by default) at the lowest priority: wave's own start takes precedence.
        return git(top, ['-c', 'core.preloadIndex=false', ...args], (child) => {
          if (child.pid) lowerPriority(child.pid)
        })
      })
      this.onDemand.set(name, pending)
    }

    return pending
  }
}

/** The batch as one `sh`: see BATCH. */
function readInOneShell(dir: string, changes: boolean): Map<ReadName, Promise<Output>> {
  const child = spawn('/bin/sh', ['-c', SCRIPT, 'sh', String(LARGE_WORK_TREE), changes ? '1' : '0'], {
    cwd: dir,
    env: gitEnvironment(),
    stdio: ['ignore', 'pipe', 'ignore', ...BATCH.map(() => 'pipe' as const)],
  })
  const exited = new Promise<void>((resolve) => {
    child.on('error', () => resolve())
    child.on('close', () => resolve())
  })
  // `name code` lines, one per read that ran.
  const codes = new Map<string, (code: number | undefined) => void>()
  const codeOf = new Map(BATCH.map(({name}) => [name, new Promise<number | undefined>((resolve) => codes.set(name, resolve))]))
  let lines = ''
  child.stdout?.setEncoding('utf8')
  child.stdout?.on('data', (chunk: string) => {
    lines += chunk
    for (let end = lines.indexOf('\n'); end !== -1; end = lines.indexOf('\n')) {
      const [name, code] = lines.slice(0, end).split(' ')
      codes.get(name)?.(Number(code))
      lines = lines.slice(end + 1)
    }
  })
  void exited.then(() => {
    for (const resolve of codes.values()) resolve(undefined)
  })

  return new Map(
    BATCH.map(({name}, index) => {
      const stream = child.stdio[index + 3] as NodeJS.ReadableStream
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      const ended = new Promise<void>((resolve) => {
        stream.on('end', resolve)
        stream.on('close', resolve)
        stream.on('error', () => resolve())
      })
      const output = Promise.all([ended, codeOf.get(name)]).then(([, code]) => (code === 0 ? Buffer.concat(chunks).toString('utf8') : undefined))
      return [name, output]
    }),
  )
}

/** The batch one git process at a time, where there is no `sh` (Windows). */
function readOneByOne(dir: string, changes: boolean): Map<ReadName, Promise<Output>> {
  const top = git(dir, ['rev-parse', '--show-toplevel'])
  const inTop = (args: string[]) => top.then((root) => (root?.trim() ? git(root.trim(), args) : undefined))
  const files = inTop(['rev-parse', '--git-path', 'index']).then((index) => indexEntries(index?.trim()))
  const small = files.then((count) => Number(count) <= LARGE_WORK_TREE)
  return new Map<ReadName, Promise<Output>>([
    ['top', top],
    ['files', files],
    ['head', inTop(['rev-parse', '--verify', '--quiet', 'HEAD'])],
    ['branch', inTop(['symbolic-ref', '--quiet', '--short', 'HEAD'])],
    ['subjects', inTop(['log', `-n${RECENT_COMMITS}`, '--format=%s'])],
    ['status', small.then((yes) => (yes ? inTop(SUMMARY_STATUS) : undefined))],
    ['changes', small.then((yes) => (yes && changes ? inTop(CHANGES_STATUS) : undefined))],
  ])
}

/** The entry count in an index file's header, as a string; "0" when there is none. */
async function indexEntries(file: string | undefined): Promise<string> {
  if (!file) return '0'
  try {
    const handle = await open(file, 'r')
    try {
      const header = Buffer.alloc(12)
      const {bytesRead} = await handle.read(header, 0, 12, 0)
      return bytesRead === 12 ? String(header.readUInt32BE(8)) : '0'
    } finally {
      await handle.close()
    }
  } catch {
    return '0'
  }
}

/** One hardened git command's stdout, or undefined when it fails (or git is missing). */
async function git(cwd: string, args: string[], started?: (child: ChildProcess) => void): Promise<Output> {
  const command = await safeGitCommand(cwd, args)
  return new Promise((resolve) => {
    const child = spawn(command.file, command.args, {cwd, env: command.env, stdio: ['ignore', 'pipe', 'ignore']})
    started?.(child)
    const chunks: Buffer[] = []
    child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk))
    child.on('error', () => resolve(undefined))
    child.on('close', (code) => resolve(code === 0 ? Buffer.concat(chunks).toString('utf8') : undefined))
  })
}

function lowerPriority(pid: number): void {
  try {
    setPriority(pid, 19)
  } catch {} // gone already, or not allowed: it runs at the normal priority
}

// ---------------------------------------------------------------------------------------------- at process start

const STARTUP = Symbol.for('wave.startupSnapshot')
type Startup = {dir: string; snapshot: RepositorySnapshot}
const registry = globalThis as typeof globalThis & {[STARTUP]?: Startup}

/**
 * bin/run.js, for a command that starts a session: begins reading the repository around `dir` (the
 * directory wave starts in) at once. The registry is process-wide because bin/run.js and the command's
 * bundle each hold their own copy of this module.
 */
export function beginStartupSnapshot(dir: string, options: {changes?: boolean} = {}): void {
  registry[STARTUP] = {dir, snapshot: new RepositorySnapshot(dir, options)}
}

/** The top of the work tree holding `dir`, from the reads begun at start in that directory; undefined if none were. */
export function startupToplevel(dir: string): Promise<string | undefined> | undefined {
  const startup = registry[STARTUP]
  return startup?.dir === dir ? startup.snapshot.toplevel() : undefined
}

/**
 * The repository as the session working in `workspace` (a real path) finds it: the reads begun at
 * process start when they are of this workspace (taken once: a second session in the same process, a
 * plan run after `run --task` planned it, reads its own), else reads begun now.
 */
export async function sessionSnapshot(workspace: string, options: {changes?: boolean} = {}): Promise<RepositorySnapshot> {
  const startup = registry[STARTUP]
  if (startup) {
    registry[STARTUP] = undefined
    const top = await startup.snapshot.toplevel()
    if (top && realPath(top) === workspace) return startup.snapshot
  }

  return new RepositorySnapshot(workspace, options)
}

function realPath(file: string): string | undefined {
  try {
    return realpathSync(file)
  } catch {
    return undefined
  }
}

/** `git status --porcelain=v1 -z` as path → status code (a rename or copy under its new path). */
export function parseChanges(status: string | null | undefined): Map<string, string> {
  const changed = new Map<string, string>()
  if (!status) return changed
  const entries = status.split('\0')
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]
    if (entry.length < 4) continue
    const code = entry.slice(0, 2)
    changed.set(entry.slice(3), code)
    if (code.startsWith('R') || code.startsWith('C')) i++ // the rename's source follows
  }

  return changed
}
