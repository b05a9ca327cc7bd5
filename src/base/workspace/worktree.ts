/**
 * What a command changed in the work tree, found from git: `git status` (wave's own git helper,
 * changedPaths) before and after, each changed path fingerprinted by its size and modification time so
 * that a second change to a file already changed shows too. Ignored files are not listed by git status,
 * so they never count.
 */
import {lstat} from 'node:fs/promises'
import path from 'node:path'

import {changedPaths} from './git.js'

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

export async function workTreeState(place: WorkTreePlace): Promise<WorkTreeState> {
  const status = await changedPaths(place.workspace)
  const entries = await Promise.all(
    [...status].map(async ([file, code]): Promise<[string, string] | undefined> => {
      const absolute = path.join(place.top, file)
      const relative = path.relative(place.workspace, absolute)
      if (relative.startsWith('..') || path.isAbsolute(relative) || place.own?.has(absolute)) return undefined
      const info = await lstat(absolute).catch(() => undefined)
      return [relative.split(path.sep).join('/'), `${code}:${info ? `${info.size}:${info.mtimeMs}` : 'gone'}`]
    }),
  )
  return new Map(entries.filter((entry): entry is [string, string] => entry !== undefined))
}

/** The paths whose state differs between two readings: changed, created, deleted, or back to what HEAD has. */
export function changedBetween(before: WorkTreeState, after: WorkTreeState): string[] {
  const files = new Set<string>()
  for (const [file, state] of after) if (before.get(file) !== state) files.add(file)
  for (const file of before.keys()) if (!after.has(file)) files.add(file)
  return [...files].sort()
}
