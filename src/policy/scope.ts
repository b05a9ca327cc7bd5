/**
 * The approved scope of a run: the workspace paths or globs the plan said it would change (its
 * `## Scope`, or the approver's `--scope`), and how it is held to. The policy asks it of every write
 * (decide() in policy.ts), the run asks it of every change a command made (git status before and after).
 */
import path from 'node:path'

import picomatch from 'picomatch'

import {isInside} from '../base/workspace/paths.js'

/** `strict`: a write outside is refused and a command's change outside fails the run; `warn`: allowed and reported; `off`: not checked. */
export const SCOPE_ENFORCEMENTS = ['warn', 'strict', 'off'] as const
export type ScopeEnforcement = (typeof SCOPE_ENFORCEMENTS)[number]

export interface Scope {
  /** Workspace-relative paths or globs. A plain path also covers everything below it (a directory). */
  paths: string[]
  enforce: ScopeEnforcement
}

/** A scope entry as written (`./src`, `docs\\x.md`) in the form it matches by: `/`-separated, no leading `./`. */
export const scopeEntry = (raw: string): string => raw.replaceAll('\\', '/').replace(/^(?:\.\/)+/, '')

/**
 * Whether a workspace-relative path (`/`-separated) is in scope. A glob matches as picomatch reads it
 * (dot files included); a plain path matches itself and what lies below it, so `docs` and `docs/`
 * both cover `docs/x.md`.
 */
export function scopeMatcher(paths: readonly string[]): (relative: string) => boolean {
  const tests = paths.map((entry) => {
    const clean = scopeEntry(entry)
    if (picomatch.scan(clean).isGlob) {
      const glob = picomatch(clean, {dot: true})
      return (file: string) => glob(file)
    }

    const plain = clean.replace(/\/+$/, '')
    return (file: string) => file === plain || file.startsWith(plain + '/')
  })
  return (relative) => tests.some((matches) => matches(relative))
}

/** Compiled once per scope: the policy asks about every write. */
const compiled = new WeakMap<Scope, (relative: string) => boolean>()

/** Whether an absolute real path is in scope (a path outside the workspace never is). */
export function inScope(scope: Scope, root: string, real: string): boolean {
  let matches = compiled.get(scope)
  if (!matches) {
    matches = scopeMatcher(scope.paths)
    compiled.set(scope, matches)
  }

  return isInside(root, real) && matches(path.relative(root, real).split(path.sep).join('/'))
}

export function describeScope(paths: readonly string[]): string {
  if (paths.length === 0) return 'no paths'
  const shown = paths.slice(0, 8).join(', ')
  return paths.length > 8 ? `${shown}, and ${paths.length - 8} more` : shown
}

/** Why a write outside a strict scope is refused: the scope named, and what the model should do instead. */
export function outsideScopeReason(input: string, scope: Scope): string {
  return (
    `${input} is outside the approved scope (${describeScope(scope.paths)}): the approval holds this run to those paths, strictly. ` +
    'Do not work around this: stop, and report the deviation (which file you needed to change, and why) in your final answer.'
  )
}
