/**
 * The project's dependencies as a run's contract knows them: the git-ignored directories that hold
 * programs a check runs (`node_modules/`, a virtualenv, vendored tools). Writes to ignored paths by the
 * approved checks are their outputs (caches, reports), not the model's changes; writes to these are
 * never outputs: what lies there is what a later check executes. A check's verdict must rest on what
 * the approval can see, so the dependencies present when the run began are held as they were:
 * - read-only to the checks (the sandbox binds them so: `CommandRequest.frozen`), but for the caches
 *   runners keep inside node_modules (`.vite`, `.cache`, `.vitest`), which stay writable (made when
 *   missing) and are not held: what a check writes there is its output;
 * - fingerprinted whole when the run begins, and again before the checks run: what the model changed
 *   there (its commands, its file tools, its background commands) fails the run, named.
 * A fingerprint is each entry's size, mtime, ctime, inode and mode: ctime is set by the kernel on every
 * change and no unprivileged command can set it back, so a rewritten file shows without reading it
 * (hashing a real node_modules, hundreds of megabytes, before every round would cost seconds).
 */
import type {Dirent} from 'node:fs'
import {lstat, mkdir, readdir} from 'node:fs/promises'
import path from 'node:path'

/** Ignored directories known by their name to hold what checks run. */
const DEPENDENCY_NAMES = new Set(['node_modules', '.venv', 'venv', 'vendor', 'bower_components', '__pypackages__'])
/** Inside a node_modules, the caches test runners and build tools write (vitest's `.vite`, find-cache-dir's `.cache`). */
const RUNNER_CACHES = ['.vite', '.cache', '.vitest']
/** Entries stat'ed at once while fingerprinting. */
const STAT_BATCH = 256

/** Whether a workspace-relative path (`/`-separated, a directory with or without its trailing `/`) lies in a dependency directory named so. */
export function isDependencyPath(relative: string): boolean {
  return relative.split('/').some((segment) => DEPENDENCY_NAMES.has(segment))
}

/** The project's dependencies in a workspace: the directories (workspace-relative) and the runner caches inside them. */
export interface Dependencies {
  dirs: string[]
  /** Workspace-relative caches inside each node_modules of `dirs` (there or not): writable to the checks, and not fingerprinted. */
  caches: string[]
}

/**
 * The dependency directories among the ignored directories of a work-tree reading (keys ending in `/`
 * with status `!!`): those named as dependencies are, and any holding a `pyvenv.cfg` (a virtualenv by any name).
 */
export async function findDependencies(workspace: string, state: ReadonlyMap<string, string>): Promise<Dependencies> {
  const ignoredDirs = [...state].filter(([key, value]) => key.endsWith('/') && value.startsWith('!!:')).map(([key]) => key.slice(0, -1))
  const found = await Promise.all(
    ignoredDirs.map(async (dir) => {
      if (DEPENDENCY_NAMES.has(path.posix.basename(dir))) return dir
      return (await lstat(path.join(workspace, dir, 'pyvenv.cfg')).catch(() => undefined))?.isFile() ? dir : undefined
    }),
  )
  const dirs = found.filter((dir): dir is string => dir !== undefined).sort()
  const caches = dirs.filter((dir) => path.posix.basename(dir) === 'node_modules').flatMap((dir) => RUNNER_CACHES.map((cache) => `${dir}/${cache}`))
  return {caches, dirs}
}

/**
 * Makes each runner cache a directory where none is, so that the checks can be given it writable (a
 * runner that cannot write its cache may fail). One that is there as anything else (a symlink the model
 * made) is left alone: the sandbox binds writable only a real directory (sandbox.ts, frozenArgs).
 */
export async function makeRunnerCaches(workspace: string, caches: string[]): Promise<void> {
  await Promise.all(caches.map((cache) => mkdir(path.join(workspace, cache)).catch(() => undefined)))
}

/** Workspace-relative path → fingerprint, for every entry below the dependency directories but their caches. */
export type DependencyPrints = Map<string, string>

/** Every entry of the dependencies, fingerprinted (see the module's comment). A directory gone reads as `gone`. */
export async function fingerprintDependencies(workspace: string, dependencies: Dependencies): Promise<DependencyPrints> {
  const prints: DependencyPrints = new Map()
  const caches = RUNNER_CACHES.map((cache) => `/${cache}`)
  for (const dir of dependencies.dirs) {
    const root = path.join(workspace, dir)
    const entries = await readdir(root, {recursive: true, withFileTypes: true}).catch(() => undefined)
    if (!entries) {
      prints.set(dir, 'gone')
      continue
    }

    const kept = entries.filter((entry) => {
      const below = `/${path.relative(root, entryPath(entry)).split(path.sep).join('/')}`
      return !(path.posix.basename(dir) === 'node_modules' && caches.some((cache) => below === cache || below.startsWith(`${cache}/`)))
    })
    for (let start = 0; start < kept.length; start += STAT_BATCH) {
      await Promise.all(
        kept.slice(start, start + STAT_BATCH).map(async (entry) => {
          const absolute = entryPath(entry)
          const info = await lstat(absolute).catch(() => undefined)
          const key = path.relative(workspace, absolute).split(path.sep).join('/')
          // A directory by its being there: what was added or removed in it shows by its own entry.
          prints.set(key, !info ? 'gone' : info.isDirectory() ? `dir:${info.mode}` : `${info.mode}:${info.size}:${info.mtimeMs}:${info.ctimeMs}:${info.ino}`)
        }),
      )
    }
  }

  return prints
}

const entryPath = (entry: Dirent) => path.join(entry.parentPath, entry.name)
