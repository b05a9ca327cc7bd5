/**
 * Real git repositories for the in-process tests of the workspace (base/workspace/: the snapshot, the
 * work tree's readings, patches): each in a temporary directory of its own, as a real path, with one
 * commit of the files given, removed after each test. git runs with no user or system config, a fixed
 * identity and no signing, so the machine's own config changes nothing; `protocol.file.allow` lets a test
 * add a local submodule. (The e2e tier's `makeSandbox`, test/support/cli.ts, makes a HOME and one
 * repository holding an ignored secret, for a spawned wave.)
 */
import {execFileSync} from 'node:child_process'
import {mkdir, mkdtemp, realpath, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach} from 'vitest'

const IDENTITY = ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', '-c', 'protocol.file.allow=always']

/** git in `cwd`, its output trimmed. */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', [...IDENTITY, ...args], {cwd, env: {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1'}, input: ''})
    .toString()
    .trim()

/** Writes `files` (path → content) below `root`, making their folders. */
export async function put(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), {recursive: true})
    await writeFile(path.join(root, name), content)
  }
}

/** What a test file makes, removed after each test. */
export interface Repositories {
  /** A repository on branch main with one commit ("first commit") of `files`: its real path and that commit. */
  repository(files: Record<string, string>): Promise<{root: string; head: string}>
  /** An empty temporary directory, as a real path. */
  tempDir(): Promise<string>
}

/** Registers the clean-up after each test, and returns the makers; `prefix` names the directories. */
export function useRepositories(prefix: string): Repositories {
  const made: string[] = []
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, {force: true, recursive: true})))
  })
  const tempDir = async () => {
    const dir = await realpath(await mkdtemp(path.join(tmpdir(), `wave-${prefix}-`)))
    made.push(dir)
    return dir
  }

  return {
    async repository(files) {
      const root = await tempDir()
      await put(root, files)
      // No template: git's sample hooks are files each test would write and remove (cli.ts).
      git(root, '-c', 'init.defaultBranch=main', 'init', '-q', '--template=')
      git(root, 'add', '-A')
      git(root, 'commit', '-q', '-m', 'first commit')
      return {head: git(root, 'rev-parse', 'HEAD'), root}
    },
    tempDir,
  }
}
