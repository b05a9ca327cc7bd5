/**
 * What the approved checks wrote, told apart from what the model wrote. Real test runners write caches
 * and reports where git ignores them (`.pytest_cache/`, `__pycache__/`, `coverage/`): those are the
 * checks' outputs, listed on their own and never counted against the scope (nor delivered: git adds no
 * ignored file). Everything else a check changed is the model's, since the checks run the model's code:
 * a tracked or untracked file, a file that was tracked or untracked before (hidden by a `.gitignore` the
 * check wrote), and anything in the project's dependencies, which a later check would run.
 */
import type {WorkTreeState} from '../base/workspace/worktree.js'

/** How the paths changed while the checks ran divide. */
export interface ChecksWrites {
  /** Ignored paths the checks wrote (workspace-relative; a directory with its trailing `/`). */
  outputs: string[]
  /** The rest: the model's changes, made through the checks (workspace-relative, no trailing `/`). */
  changes: string[]
}

const ignored = (state: string | undefined) => state === undefined || state.startsWith('!!:')

/**
 * Divides what changed between two readings around the checks. `isDependency` says whether a path lies
 * in the project's dependencies (base/workspace/dependencies.ts): never an output.
 */
export function divideChecksWrites(before: WorkTreeState, after: WorkTreeState, isDependency: (relative: string) => boolean): ChecksWrites {
  const outputs: string[] = []
  const changes: string[] = []
  for (const key of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(key)
    const now = after.get(key)
    if (was === now) continue
    const file = key.replace(/\/$/, '')
    if (ignored(was) && ignored(now) && !isDependency(file)) outputs.push(key)
    else changes.push(file)
  }

  return {changes: changes.sort(), outputs: outputs.sort()}
}

/**
 * The checks' outputs as a person reads them: by directory. git lists an ignored directory once
 * (`.pytest_cache/`); ignored files listed one by one (a `*.pyc` rule) are shown as their directory
 * (`calc/__pycache__/`) where it holds more than one, else by their name.
 */
export function outputsByDirectory(outputs: Iterable<string>): string[] {
  const byParent = new Map<string, string[]>()
  for (const output of outputs) {
    const slash = output.endsWith('/') ? -1 : output.lastIndexOf('/')
    const parent = slash === -1 ? output : `${output.slice(0, slash)}/`
    byParent.set(parent, [...(byParent.get(parent) ?? []), output])
  }

  const shown = [...byParent].flatMap(([parent, files]) => (files.length > 1 ? [parent] : files)).sort()
  // A directory shown drops what lies inside it.
  return shown.filter((entry) => !shown.some((other) => other !== entry && other.endsWith('/') && entry.startsWith(other)))
}
