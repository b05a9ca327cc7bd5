/**
 * Protected paths: what the model may not write in any mode, whatever the scope enforcement, unless the
 * approved Scope names the path plainly. A run's change there is code that runs later with more trust
 * than the run had (a CI workflow with the job's secrets, a settings file or hook the next session
 * obeys, the owners who must review the next change): a scope that warns would only report it after
 * it is written. The policy refuses file tools' writes (decide() in policy.ts, again at the real path in
 * tools/dispatch.ts); the run's after-command comparison (plans/enforcement.ts) fails a run whose
 * commands changed one (exit 7). The list is docs/reference.md's; settings add to it
 * (`protectedPaths`), and the approval record binds the list the approver was shown.
 */
import path from 'node:path'

import picomatch from 'picomatch'

import {isInside} from '../base/workspace/paths.js'
import {scopeEntry, scopeMatcher} from './scope.js'

/**
 * Workspace-relative, as a scope's entries read (scope.ts): a plain path is itself and everything below
 * it, a glob as picomatch reads it. `.git` and `.wave` are refused to file tools even when a scope names
 * them (policy.ts); they are listed here so that a command's change there fails the run too.
 */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = [
  // CI configuration: runs in the pipeline with its secrets.
  '.github/workflows',
  '.github/actions',
  '.gitlab-ci.yml',
  '.gitlab',
  '.circleci',
  '.buildkite',
  '.travis.yml',
  'azure-pipelines.yml',
  'bitbucket-pipelines.yml',
  'Jenkinsfile',
  // Who must review a change.
  'CODEOWNERS',
  '.github/CODEOWNERS',
  'docs/CODEOWNERS',
  // Git's own files, and hooks git runs on a developer's machine.
  '.git',
  '.husky',
  // The agents' settings, hooks, skills and MCP servers, which the next session reads and obeys.
  '.wave',
  '.claude',
  '.agents',
  '.mcp.json',
]

/** The list in force: the defaults and what settings or a record add, each once, in order. */
export function protectedPathsWith(...lists: ReadonlyArray<readonly string[] | undefined>): string[] {
  return [...new Set([...DEFAULT_PROTECTED_PATHS, ...lists.flatMap((list) => list ?? [])])]
}

const clean = (entry: string) => scopeEntry(entry).replace(/\/+$/, '')

/**
 * Which workspace-relative paths (`/`-separated) are protected, and not named by the scope: a function
 * answering the protected entry that holds the path, or undefined. A scope names a protected path only
 * with a plain entry (no glob) that covers the path and is itself inside the protected area: `**`,
 * `.github/**` or `.github` do not name `.github/workflows/ci.yml`; `.github/workflows/ci.yml` and
 * `.github/workflows` do.
 */
export function protectedMatcher(list: readonly string[], scopePaths: readonly string[] = []): ProtectedMatcher {
  const entries = list.map((entry) => ({entry, matches: scopeMatcher([entry])}))
  const named = scopeMatcher(
    scopePaths
      .map((entry) => clean(entry))
      .filter((entry) => entry !== '' && entry !== '.' && !picomatch.scan(entry).isGlob)
      .filter((entry) => entries.some(({matches}) => matches(entry))),
  )
  return (relative) => {
    const holder = entries.find(({matches}) => matches(relative))
    if (!holder) return undefined
    return named(relative) ? undefined : holder.entry
  }
}

/**
 * The protected entries as the plain workspace-relative paths a reading of the work tree can be limited to
 * (worktree.ts), or undefined when one is a glob or leaves the plain form (`..`, absolute, the whole
 * workspace): then only a reading of the whole tree sees every change the list covers.
 */
export function protectedPlainPaths(list: readonly string[]): string[] | undefined {
  const plain = list.map((entry) => clean(entry))
  const whole = (entry: string) => entry === '' || entry === '.' || entry.startsWith('/') || entry.split('/').includes('..')
  return plain.some((entry) => whole(entry) || picomatch.scan(entry).isGlob) ? undefined : plain
}

type ProtectedMatcher = (relative: string) => string | undefined

/** Compiled once per list and scope, as inScope's matcher is (scope.ts): the policy asks about every write, twice. */
const compiled = new WeakMap<readonly string[], WeakMap<readonly string[], ProtectedMatcher>>()
const NO_SCOPE: readonly string[] = []

function compiledMatcher(list: readonly string[], scopePaths: readonly string[] = NO_SCOPE): ProtectedMatcher {
  let byScope = compiled.get(list)
  if (!byScope) {
    byScope = new WeakMap()
    compiled.set(list, byScope)
  }

  let matcher = byScope.get(scopePaths)
  if (!matcher) {
    matcher = protectedMatcher(list, scopePaths)
    byScope.set(scopePaths, matcher)
  }

  return matcher
}

/** A real path's protected entry (undefined: not protected, or named by the scope, or outside the workspace). */
export function protectedEntry(root: string, real: string, list: readonly string[], scopePaths?: readonly string[]): string | undefined {
  if (!isInside(root, real) || real === root) return undefined
  return compiledMatcher(list, scopePaths)(path.relative(root, real).split(path.sep).join('/'))
}

/** Why a file tool's write to a protected path is refused: the entry named, and how an approver allows it. */
export function protectedReason(input: string, entry: string): string {
  return (
    `${input} is a protected path (${entry}): CI configuration, CODEOWNERS, git's files and the agents' settings, hooks and skills are never written ` +
    'by the model unless the approved Scope names the path itself (a glob such as ** does not). Do not work around this: stop, and report the change you needed in your final answer.'
  )
}

/**
 * The list as `wave approve` shows it: every entry, and the scope's entries that name a protected path
 * (the writes the approval lets through).
 */
export function describeProtected(list: readonly string[], scopePaths: readonly string[] = []): string {
  const allows = protectedMatcher(list)
  const named = scopePaths.filter((entry) => !picomatch.scan(clean(entry)).isGlob && allows(clean(entry)) !== undefined)
  const unlocked = named.length > 0 ? `; the Scope names ${named.join(', ')}, which the run may write` : ''
  return `Protected paths (never written unless the Scope names them): ${list.join(', ')}${unlocked}.`
}
