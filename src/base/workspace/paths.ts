import {lstatSync, readlinkSync, realpathSync, type Stats, statSync} from 'node:fs'
import {realpath, stat} from 'node:fs/promises'
import {homedir} from 'node:os'
import path from 'node:path'

import {usageError} from '../errors.js'

export type PathKind = 'file' | 'directory' | 'other' | 'missing'

/** A path as the model spelled it, and where it really leads once `~`, `..` and every symlink are resolved. */
export interface ResolvedPath {
  /** The spelling the model gave. */
  input: string
  /** Absolute, normalised, symlinks not followed. */
  absolute: string
  /** Absolute with every symlink resolved, including dangling ones and the missing tail of a new file. */
  real: string
  /** What is at `real`. */
  kind: PathKind
  /** Whether `absolute` itself is a symlink. */
  symlink: boolean
}

export function expandHome(input: string): string {
  if (input === '~') return homedir()
  if (input.startsWith('~/')) return path.join(homedir(), input.slice(2))
  return input
}

/** True when `child` is `parent` or lies below it. Both must be absolute and normalised. */
export function isInside(parent: string, child: string): boolean {
  if (child === parent) return true
  const prefix = parent.endsWith(path.sep) ? parent : parent + path.sep
  return child.startsWith(prefix)
}

/**
 * Where the workspace-relative or absolute `input` leads. Missing paths resolve; a path that cannot be
 * resolved (a loop, too many links, an unreadable directory) throws PathResolutionError.
 */
export async function resolvePath(root: string, input: string): Promise<ResolvedPath> {
  const absolute = path.resolve(root, expandHome(input))
  const real = await realPathOf(absolute)
  // Every tool call with a path makes these calls: run synchronously they take microseconds, where a
  // promise-based call costs a trip through libuv's thread pool (bench/RESULTS.md, per-turn overhead).
  let symlink = false
  try {
    symlink = lstatSync(absolute, {throwIfNoEntry: false})?.isSymbolicLink() ?? false
  } catch {}

  return {absolute, input, kind: kindOf(real), real, symlink}
}

function kindOf(real: string): PathKind {
  try {
    const info = statSync(real, {throwIfNoEntry: false})
    if (!info) return 'missing'
    if (info.isFile()) return 'file'
    if (info.isDirectory()) return 'directory'
    return 'other'
  } catch {
    return 'missing'
  }
}

/**
 * A path wave will not follow: a symbolic link loop, more links than the OS itself would follow, or a
 * component it cannot inspect. A path that cannot be resolved is never taken for what it spells: the
 * call that named it is refused.
 */
export class PathResolutionError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PathResolutionError'
  }
}

/**
 * realpath(3) that also works for paths that do not exist yet: a missing path is resolved through its
 * deepest existing ancestor, component by component (lstat, readlink), following dangling symlinks,
 * with the missing tail appended. A new file's real path is therefore where a write would land.
 * Throws PathResolutionError rather than return a path it could not resolve.
 */
export async function realPathOf(absolute: string): Promise<string> {
  try {
    // realpath(3) itself, synchronously (see resolvePath); the same errors as the promise-based call.
    return realpathSync.native(absolute)
  } catch (error) {
    const code = errorCode(error)
    if (code === 'ELOOP') throw new PathResolutionError(`${absolute} cannot be resolved: it runs into a symbolic link loop.`)
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw unresolvable(absolute, error)
  }

  return resolveComponents(absolute)
}

/** The OS's own limit on the links followed while resolving one path (Linux's MAXSYMLINKS). */
const MAX_LINKS = 40

/**
 * Synchronous, as realpath(3) above: a new file's path takes a few lstat calls, each a trip through the
 * thread pool and round the event loop when asynchronous (a Write's path checks took ~2 ms that way).
 */
function resolveComponents(absolute: string): string {
  const {root} = path.parse(absolute)
  // Components still to resolve, the next one last: a link's target is pushed in place of the link.
  const pending = components(absolute)
  let real = root
  let links = 0
  // Below a component that does not exist nothing can be a link: the rest is appended as spelled.
  let missing = false
  while (pending.length > 0) {
    const part = pending.pop()!
    if (part === '.') continue
    if (part === '..') {
      // `real` has no links in it, so its parent is the parent.
      real = path.dirname(real)
      continue
    }

    const next = path.join(real, part)
    if (!missing) {
      let info: Stats | undefined
      try {
        info = lstatSync(next)
      } catch (error) {
        const code = errorCode(error)
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw unresolvable(absolute, error)
        missing = true
      }

      if (info?.isSymbolicLink()) {
        if (++links > MAX_LINKS) {
          throw new PathResolutionError(`${absolute} cannot be resolved: it goes through more than ${MAX_LINKS} symbolic links (a loop?).`)
        }

        let target: string
        try {
          target = readlinkSync(next)
        } catch (error) {
          throw unresolvable(absolute, error) // Replaced since the lstat: resolving again is the caller's call.
        }

        if (path.isAbsolute(target)) real = path.parse(target).root
        pending.push(...components(target))
        continue
      }
    }

    real = next
  }

  return real
}

/** The components of a path, the first one last (a stack). */
function components(spelled: string): string[] {
  return spelled
    .split(path.sep)
    .filter((part) => part !== '')
    .reverse()
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code
}

function unresolvable(absolute: string, error: unknown): PathResolutionError {
  const reason = errorCode(error) === 'EACCES' ? 'permission denied' : (error as Error).message
  return new PathResolutionError(`${absolute} cannot be resolved: ${reason}.`)
}

/** Workspace-relative spelling for messages and rules; absolute when outside. */
export function displayPath(root: string, real: string): string {
  if (!isInside(root, real)) return real
  return path.relative(root, real) || '.'
}

/** The workspace root as a real path; a missing directory or a file is a usage error. */
export async function workspaceRoot(cwd: string): Promise<string> {
  let info: Stats
  try {
    info = await stat(cwd)
  } catch {
    throw usageError(`Workspace directory not found: ${cwd}`)
  }

  if (!info.isDirectory()) throw usageError(`Not a directory: ${cwd}`)
  return realpath(path.resolve(cwd))
}
