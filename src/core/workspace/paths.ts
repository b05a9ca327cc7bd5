import {lstat, readlink, realpath, stat} from 'node:fs/promises'
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

const MAX_LINKS = 40

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

/** Where the workspace-relative or absolute `input` leads. Never throws for missing paths. */
export async function resolvePath(root: string, input: string): Promise<ResolvedPath> {
  const absolute = path.resolve(root, expandHome(input))
  const real = await realPathOf(absolute)
  let symlink = false
  try {
    symlink = (await lstat(absolute)).isSymbolicLink()
  } catch {}

  return {absolute, input, kind: await kindOf(real), real, symlink}
}

async function kindOf(real: string): Promise<PathKind> {
  try {
    const info = await stat(real)
    if (info.isFile()) return 'file'
    if (info.isDirectory()) return 'directory'
    return 'other'
  } catch {
    return 'missing'
  }
}

/**
 * realpath(3) that also works for paths that do not exist yet: the existing prefix is resolved by the
 * OS, dangling symlinks are followed by hand, and the missing tail is appended. A new file's real
 * path is therefore where a write would land.
 */
export async function realPathOf(absolute: string, depth = 0): Promise<string> {
  try {
    return await realpath(absolute)
  } catch {}

  if (depth > MAX_LINKS) return absolute
  try {
    const info = await lstat(absolute)
    if (info.isSymbolicLink()) {
      // A dangling link: where it points is where a write through it would go.
      const target = await readlink(absolute)
      return realPathOf(path.resolve(path.dirname(absolute), target), depth + 1)
    }
  } catch {}

  const parent = path.dirname(absolute)
  if (parent === absolute) return absolute
  return path.join(await realPathOf(parent, depth + 1), path.basename(absolute))
}

/** Workspace-relative spelling for messages and rules; absolute when outside. */
export function displayPath(root: string, real: string): string {
  if (!isInside(root, real)) return real
  return path.relative(root, real) || '.'
}

/** The workspace root as a real path; a missing directory or a file is a usage error. */
export async function workspaceRoot(cwd: string): Promise<string> {
  let info
  try {
    info = await stat(cwd)
  } catch {
    throw usageError(`Workspace directory not found: ${cwd}`)
  }

  if (!info.isDirectory()) throw usageError(`Not a directory: ${cwd}`)
  return realpath(path.resolve(cwd))
}
