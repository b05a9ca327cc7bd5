import {realpath} from 'node:fs/promises'
import path from 'node:path'

import {changedPaths} from '../base/workspace/git.js'
import {displayPath} from '../base/workspace/paths.js'
import {planSidecars} from '../plans/store.js'

/**
 * Files a session changed: what write tools touched plus what git sees newly changed (Bash included).
 * wave's own files beside the plan (state, transcript, lock) are not the run's changes, even when the
 * plan travels inside the workspace.
 */
export async function filesChangedBy(
  workspace: string,
  before: Map<string, string>,
  written: Set<string>,
  top: string | undefined,
  planPath?: string,
): Promise<string[]> {
  const files = new Set([...written].map((real) => displayPath(workspace, real)))
  // `top`, the repository's root, is where git's paths are relative to; outside a repository only the writes count.
  if (top) {
    const own = planPath ? await sidecarsOf(planPath) : new Set<string>()
    const after = await changedPaths(workspace)
    for (const [file, code] of after) {
      const absolute = path.join(top, file)
      if (before.get(file) !== code && !own.has(absolute)) files.add(path.relative(workspace, absolute))
    }
  }

  return [...files].sort()
}

/** The real paths of the files wave keeps beside a plan. */
export async function sidecarsOf(planPath: string): Promise<Set<string>> {
  const dir = await realpath(path.dirname(planPath)).catch(() => path.dirname(planPath))
  return new Set(Object.values(planSidecars(path.join(dir, path.basename(planPath)))))
}

export const union = (a: string[], b: string[]): string[] => [...new Set([...a, ...b])].sort()
