import {execFile} from 'node:child_process'
import {realpath} from 'node:fs/promises'
import {promisify} from 'node:util'

import {safeGitCommand} from './git-safety.js'
import {workspaceRoot} from './paths.js'
import {parseChanges, RepositorySnapshot, type RepositorySummary, startupToplevel} from './snapshot.js'

export type {RepositorySummary} from './snapshot.js'

const run = promisify(execFile)

/** A hardened git (git-safety.ts): no program the repository's config names, no credentials in its environment. */
async function git(cwd: string, args: string[], raw = false, maxBuffer = 16 * 1024 * 1024): Promise<string | undefined> {
  try {
    const command = await safeGitCommand(cwd, args)
    const {stdout} = await run(command.file, command.args, {cwd, env: command.env, maxBuffer})
    return raw ? stdout : stdout.trim()
  } catch {
    return undefined
  }
}

/** The commit checked out in `cwd`, or null (no commits, not a repository, no git): one rev-parse, no status scan. */
export async function headOf(cwd: string): Promise<string | null> {
  return (await git(cwd, ['rev-parse', '--verify', '--quiet', 'HEAD'])) || null
}

/** Where a session works, and where it was started. */
export interface SessionPlace {
  /** The workspace root, a real path: `--cwd`, else the top of the git repository holding the directory. */
  workspace: string
  /** The directory the command was started in (or `--cwd`), a real path: repository instructions are read down to it. */
  cwd: string
  /** The top of the git repository holding the workspace (a real path), or null outside any. */
  repository: string | null
}

/**
 * The workspace of a session started in `dir`. Given explicitly (`--cwd`) it is that directory; else
 * it is the top of the git repository holding `dir`, never a subdirectory of it, so a plan runs where
 * it was made wherever in the repository the command starts. Outside any repository the workspace is
 * `dir` itself with `repository` null: each driver decides whether that is enough.
 */
export async function sessionWorkspace(dir: string, explicit: boolean): Promise<SessionPlace> {
  const cwd = await workspaceRoot(dir)
  // bin/run.js began reading the repository around the directory wave started in: its top is known.
  const top = await (startupToplevel(cwd) ?? git(cwd, ['rev-parse', '--show-toplevel']))
  const repository = top ? await realpath(top).catch(() => top) : null
  return {cwd, repository, workspace: explicit || !repository ? cwd : repository}
}

/** The repository around `cwd` as the model is told of it (snapshot.ts), or null outside a git work tree. */
export async function repositorySummary(cwd: string): Promise<RepositorySummary | null> {
  return new RepositorySnapshot(cwd).summary()
}

/** Paths (relative to the repository root) that differ from HEAD or are untracked, for "files changed". */
export async function changedPaths(cwd: string): Promise<Map<string, string>> {
  // Raw output: the status code's leading space is significant.
  return parseChanges(await git(cwd, ['status', '--porcelain=v1', '-z', '--untracked-files=all'], true))
}

/**
 * What a run's contract compares (worktree.ts): every path that differs from HEAD, is untracked, or is
 * ignored (an ignored directory once, unwalked), `git status --porcelain=v1 -z` as it prints them.
 */
export async function workTreeStatus(cwd: string): Promise<string | undefined> {
  return git(cwd, ['--no-optional-locks', 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching'], true, 256 * 1024 * 1024)
}

/** The submodules of the repository at `cwd` (gitlinks in its index), relative to its top. */
export async function gitlinks(cwd: string): Promise<string[]> {
  const staged = (await git(cwd, ['ls-files', '--stage', '-z'], true, 1024 * 1024 * 1024)) ?? ''
  const links: string[] = []
  for (const entry of staged.split('\0')) if (entry.startsWith('160000 ')) links.push(entry.slice(entry.indexOf('\t') + 1))
  return [...new Set(links)]
}
