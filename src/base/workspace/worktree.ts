/**
 * What changed in the work tree between two readings, as a run's contract needs it: every change, not
 * only those `git status` shows by default. A reading (WorkTreeWatch.read) is:
 * - wave's hardened `git status` with the untracked files one by one and the ignored ones too
 *   (`--ignored=matching`: an ignored file is listed, an ignored directory is listed once, unwalked),
 *   so a `.gitignore` the run writes (one that ignores itself included) hides nothing;
 * - inside each ignored directory, the paths commands are run from (`node_modules/.bin`, a virtualenv's
 *   `bin`), each entry fingerprinted by the content of the file it names: a test runner replaced shows;
 * - each submodule read the same way by its own hardened git (wave's git runs with
 *   `diff.ignoreSubmodules=dirty`, so the superproject's status says nothing of a submodule's files);
 * - each untracked nested repository walked file by file (git lists it as one directory; no git runs
 *   in it, since its config is whatever a command wrote).
 * Each listed file is fingerprinted by its content (sha-1) up to HASHED_BYTES, else by size, mtime and
 * ctime (which no command can set back): a file dirty before the run, changed and then given back its
 * size and mtime, still shows. Hashes are kept per path with the stat they were taken at, so a reading
 * hashes only what changed since the last.
 */
import {createHash} from 'node:crypto'
import {lstat, open, readdir, readlink, stat} from 'node:fs/promises'
import path from 'node:path'

import {gitlinks, workTreeStatus} from './git.js'
import {parseChanges} from './snapshot.js'

/** Path relative to the workspace (`/`-separated) → status code and fingerprint. */
export type WorkTreeState = Map<string, string>

export interface WorkTreePlace {
  /** The workspace root, a real path. */
  workspace: string
  /** The top of its git repository: git's paths are relative to it. */
  top: string
  /** Absolute paths that are wave's own (the plan's sidecars, when the plan lives in the workspace). */
  own?: ReadonlySet<string>
}

/** Files up to this size are fingerprinted by their content; larger ones by size, mtime and ctime. */
const HASHED_BYTES = 1024 * 1024
/** Inside an ignored directory named as the key, the directory commands are run from. */
const EXECUTED_FROM: Record<string, string> = {'.venv': 'bin', node_modules: '.bin', vendor: 'bin', venv: 'bin'}
/** Files walked in one untracked nested repository at most; past it the rest is fingerprinted as a count. */
const NESTED_FILES = 50_000

/** Readings of one work tree: the hashes of one reading are reused by the next for files whose stat did not change. */
export class WorkTreeWatch {
  private readonly hashes = new Map<string, {stat: string; hash: string}>()
  private submodules?: Promise<string[]>

  constructor(readonly place: WorkTreePlace) {}

  async read(): Promise<WorkTreeState> {
    const state: WorkTreeState = new Map()
    await this.readRepository(this.place.top, state, true)
    return state
  }

  /**
   * Every file at or below `paths` (plain, workspace-relative), walked without git, each by its content
   * and mode: a reading of a few paths, such as the protected ones (policy/protected.ts), that costs
   * what they hold rather than what the work tree holds. It sees more there than a reading of the whole
   * tree does (unchanged tracked files too), and is compared only with readings of the same paths.
   * `.git` is git's own, never walked, as git's status never lists it.
   */
  async readPaths(paths: readonly string[]): Promise<WorkTreeState> {
    const state: WorkTreeState = new Map()
    await Promise.all(
      paths.map(async (entry) => {
        if (entry.split('/')[0] === '.git') return
        const absolute = path.join(this.place.workspace, entry)
        const info = await lstat(absolute).catch(() => undefined)
        const key = info && this.keyOf(absolute)
        if (key === undefined) return
        if (info!.isDirectory()) await this.walk(absolute, 'p', state, true)
        else state.set(key, `p:${await this.fingerprint(absolute, false, true)}`)
      }),
    )
    return state
  }

  /** One repository's entries into `state`: `top` is the superproject's, or a submodule's work tree. */
  private async readRepository(repository: string, state: WorkTreeState, superproject: boolean): Promise<void> {
    // A submodule is a gitlink in the index, which no sandboxed command can write (.git is read-only): listed once.
    if (superproject) this.submodules ??= gitlinks(repository)
    const submodules = superproject ? this.submodules! : gitlinks(repository)
    const [status, links] = await Promise.all([workTreeStatus(repository), submodules])
    const work: Array<Promise<void>> = []
    for (const [file, code] of parseChanges(status)) {
      const absolute = path.join(repository, file)
      const key = this.keyOf(absolute)
      if (key === undefined) continue
      if (file.endsWith('/')) {
        // A directory: an ignored one (its executed-from paths read), or an untracked nested repository (walked).
        state.set(key, `${code}:dir`)
        if (code === '!!') work.push(this.readExecutedFrom(absolute, state))
        else work.push(this.walk(absolute, code, state))
      } else {
        work.push(this.fingerprint(absolute).then((print) => void state.set(key, `${code}:${print}`)))
      }
    }

    for (const link of links) work.push(this.readSubmodule(path.join(repository, link), state))
    await Promise.all(work)
  }

  /** A submodule checked out (one that is not has no `.git`, and git there would read the superproject). */
  private async readSubmodule(dir: string, state: WorkTreeState): Promise<void> {
    if (await lstat(path.join(dir, '.git')).catch(() => undefined)) await this.readRepository(dir, state, false)
  }

  /** The workspace-relative key of an absolute path, or undefined when it is outside the workspace or wave's own. */
  private keyOf(absolute: string): string | undefined {
    const relative = path.relative(this.place.workspace, absolute.replace(/\/$/, ''))
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative) || this.place.own?.has(absolute)) return undefined
    return relative.split(path.sep).join('/') + (absolute.endsWith('/') ? '/' : '')
  }

  /** `node_modules/.bin` and the like: each entry by what it runs. */
  private async readExecutedFrom(dir: string, state: WorkTreeState): Promise<void> {
    const sub = EXECUTED_FROM[path.basename(dir)]
    if (!sub) return
    const bin = path.join(dir, sub)
    const names = await readdir(bin).catch(() => [] as string[])
    await Promise.all(
      names.map(async (name) => {
        const file = path.join(bin, name)
        const key = this.keyOf(file)
        if (key === undefined) return
        const link = await readlink(file).catch(() => undefined)
        // What the entry runs: a link's target's content, or its own.
        const print = await this.fingerprint(file, true)
        state.set(key, `!!:${link === undefined ? '' : `->${link}:`}${print}`)
      }),
    )
  }

  /** Every file under a directory (an untracked nested repository, its `.git` included; a protected path), `withMode` as readPaths takes it. */
  private async walk(dir: string, code: string, state: WorkTreeState, withMode = false): Promise<void> {
    const entries = await readdir(dir, {recursive: true, withFileTypes: true}).catch(() => [])
    const files = entries.filter((entry) => !entry.isDirectory())
    if (files.length > NESTED_FILES) state.set(this.keyOf(dir)!, `${code}:dir:${files.length} files`)
    await Promise.all(
      files.slice(0, NESTED_FILES).map(async (entry) => {
        const file = path.join(entry.parentPath, entry.name)
        const key = this.keyOf(file)
        if (key !== undefined) state.set(key, `${code}:${await this.fingerprint(file, false, withMode)}`)
      }),
    )
  }

  /**
   * A file's content hash (up to HASHED_BYTES), else its stat; a link's target; `gone` when it is not there.
   * `withMode`: a hashed file's mode too (a status shows a tracked file's mode change; a walk has no status).
   */
  private async fingerprint(file: string, follow = false, withMode = false): Promise<string> {
    const info = await (follow ? stat(file) : lstat(file)).catch(() => undefined)
    if (!info) return 'gone'
    if (info.isSymbolicLink()) return `link:${await readlink(file).catch(() => '')}`
    const stamp = `${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.mode}:${info.ino}`
    if (!info.isFile() || info.size > HASHED_BYTES) return `stat:${stamp}`
    const mode = withMode ? `:${info.mode}` : ''
    const known = this.hashes.get(file)
    if (known?.stat === stamp) return known.hash + mode
    const hash = await hashFile(file)
    if (!hash) return `stat:${stamp}`
    this.hashes.set(file, {hash, stat: stamp})
    return hash + mode
  }
}

async function hashFile(file: string): Promise<string | undefined> {
  try {
    const handle = await open(file, 'r')
    try {
      return `sha1:${createHash('sha1')
        .update(await handle.readFile())
        .digest('hex')}`
    } finally {
      await handle.close()
    }
  } catch {
    return undefined
  }
}

/** The paths whose state differs between two readings: changed, created, deleted, or back to what HEAD has. */
export function changedBetween(before: WorkTreeState, after: WorkTreeState): string[] {
  const files = new Set<string>()
  for (const [file, state] of after) if (before.get(file) !== state) files.add(file)
  for (const file of before.keys()) if (!after.has(file)) files.add(file)
  return [...files].map((file) => file.replace(/\/$/, '')).sort()
}
