import {execFile} from 'node:child_process'
import {promisify} from 'node:util'

const run = promisify(execFile)

/** The git state a plan was made against, so `run` can tell whether the plan went stale. */
export interface RepositoryState {
  root: string
  head: string | null
  branch: string | null
  dirty: boolean
}

async function git(cwd: string, args: string[], raw = false): Promise<string | undefined> {
  try {
    const {stdout} = await run('git', args, {cwd, maxBuffer: 16 * 1024 * 1024})
    return raw ? stdout : stdout.trim()
  } catch {
    return undefined
  }
}

/** The repository around `cwd`, or null when it is not in a git work tree (or git is missing). */
export async function repositoryState(cwd: string): Promise<RepositoryState | null> {
  const root = await git(cwd, ['rev-parse', '--show-toplevel'])
  if (!root) return null
  const [head, branch, status] = await Promise.all([
    git(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD']),
    git(cwd, ['symbolic-ref', '--quiet', '--short', 'HEAD']),
    git(cwd, ['status', '--porcelain', '--untracked-files=normal']),
  ])
  return {branch: branch || null, dirty: Boolean(status), head: head || null, root}
}

/** Paths (relative to the repository root) that differ from HEAD or are untracked, for "files changed". */
export async function changedPaths(cwd: string): Promise<Map<string, string>> {
  // Raw output: the status code's leading space is significant.
  const status = await git(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=all'], true)
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
