/**
 * A change as a patch, and patches applied, with wave's hardened git (git-safety.ts): what a plan unit's
 * job hands to the merge (`wave run --unit` writes one, `wave plans merge` applies them). Patches are
 * made and checked in a temporary index, never the repository's own, so neither a unit's run nor a
 * refused merge leaves anything staged; `git apply` runs nothing a patch says (it only writes files).
 */
import {execFile} from 'node:child_process'
import {copyFile, mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {SAFE_GIT_ARGS, safeGitEnvironment} from './git-safety.js'

/** Config every patch git here runs with: the patch's shape may not depend on the user's diff settings. */
const PATCH_CONFIG = ['-c', 'diff.noprefix=false', '-c', 'diff.mnemonicPrefix=false', '-c', 'core.quotePath=true', '-c', 'apply.whitespace=nowarn']

/** The largest patch wave reads or writes: a unit's change, not a data dump. */
export const MAX_PATCH_BYTES = 256 * 1024 ** 2

interface GitResult {
  code: number
  stdout: Buffer
  stderr: string
}

function gitRaw(cwd: string, args: string[], env: Record<string, string>, input?: Uint8Array): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      [...SAFE_GIT_ARGS, ...PATCH_CONFIG, ...args],
      {cwd, encoding: 'buffer', env, maxBuffer: MAX_PATCH_BYTES},
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as {code?: unknown}).code === 'number' ? ((error as {code: number}).code as number) : -1) : 0
        if (error && code === -1) {
          reject(error)
          return
        }

        resolve({code, stderr: stderr.toString('utf8'), stdout})
      },
    )
    if (input) child.stdin?.end(input)
    else child.stdin?.end()
  })
}

/** The first line git wrote on stderr, without its `error: ` prefix: what a refusal quotes. */
const firstLine = (stderr: string) => (stderr.split('\n').find((line) => line.trim() !== '') ?? 'git refused it').replace(/^(error|fatal): /, '').trim()

/** A temporary index for the repository at `top`: started from its own index (fast: stat data kept), else from `base`. */
async function withTemporaryIndex<T>(top: string, base: string, work: (env: Record<string, string>) => Promise<T>, fromOwn = true): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'wave-index-'))
  const index = path.join(dir, 'index')
  try {
    const env = await safeGitEnvironment(top, {GIT_INDEX_FILE: index})
    const own = fromOwn ? (await gitRaw(top, ['rev-parse', '--git-path', 'index'], env)).stdout.toString('utf8').trim() : ''
    const copied = own
      ? await copyFile(path.resolve(top, own), index).then(
          () => true,
          () => false,
        )
      : false
    if (!copied) {
      const read = await gitRaw(top, ['read-tree', base], env)
      if (read.code !== 0) throw new Error(`cannot read commit ${base.slice(0, 12)}: ${firstLine(read.stderr)}`)
    }

    return await work(env)
  } finally {
    await rm(dir, {force: true, recursive: true})
  }
}

/**
 * The work tree at `top` against commit `base`, as a binary-safe patch (`git diff --binary`, new files
 * included, renames as a deletion and an addition): what `git apply` at `base` turns into this tree.
 * Ignored files are not part of it; `exclude` (paths relative to `top`) are left out: wave's own files.
 */
export async function workTreePatch(top: string, base: string, exclude: readonly string[] = []): Promise<Buffer> {
  return withTemporaryIndex(top, base, async (env) => {
    const excluded = exclude.map((file) => `:(exclude,literal)${file}`)
    const added = await gitRaw(top, ['add', '--all', '--', '.', ...excluded], env)
    if (added.code !== 0) throw new Error(`cannot read the work tree: ${firstLine(added.stderr)}`)
    // What the own index held of an excluded path is put back as it is at base.
    if (excluded.length > 0) await gitRaw(top, ['reset', '--quiet', base, '--', ...exclude.map((file) => `:(literal)${file}`)], env)
    const diff = await gitRaw(
      top,
      ['diff', '--cached', '--binary', '--full-index', '--no-renames', '--no-ext-diff', '--no-textconv', '--src-prefix=a/', '--dst-prefix=b/', base],
      env,
    )
    if (diff.code !== 0) throw new Error(`cannot diff against ${base.slice(0, 12)}: ${firstLine(diff.stderr)}`)
    return diff.stdout
  })
}

/** One patch to apply, and what it may change. */
interface PatchToApply {
  /** Who made it (a unit's name): refusals name it. */
  name: string
  bytes: Uint8Array
  /** Whether the patch may change this path (relative to the repository's top). */
  allows(file: string): boolean
}

type PatchesApplied = {ok: true; files: Record<string, string[]>} | {ok: false; name: string; problem: string}

/**
 * Applies `patches`, in order, onto commit `base` and then to the work tree at `top`, all or nothing:
 * each patch goes into a temporary index on top of those before it (one that does not apply is a
 * conflict), the files it changed are compared with what it may change, and only when every patch
 * passed is their sum written to the work tree, in one `git apply` (atomic: all of it or nothing). Answers the
 * files each patch changed, or the first patch refused and why; a refusal writes nothing.
 */
export async function applyPatches(top: string, base: string, patches: readonly PatchToApply[]): Promise<PatchesApplied> {
  return withTemporaryIndex(
    top,
    base,
    async (env): Promise<PatchesApplied> => {
      const files: Record<string, string[]> = {}
      for (const patch of patches) {
        // A unit that changed nothing hands over an empty patch: git apply calls that no patch at all.
        if (Buffer.from(patch.bytes).toString('latin1').trim() === '') {
          files[patch.name] = []
          continue
        }

        // wave's patches carry no renames or copies (--no-renames), and git's numstat names only a rename's destination.
        const renames = RENAME_OR_COPY.exec(Buffer.from(patch.bytes).toString('latin1'))
        if (renames) return {name: patch.name, ok: false, problem: `its patch renames or copies a file (${renames[0].trim()}), which no unit's patch does`}
        // Applied into the index on top of the patches before it, git answering the paths it changed (its own parse of the patch).
        const applied = await gitRaw(top, ['apply', '--cached', '--binary', '--whitespace=nowarn', '--numstat', '-z', '--apply', '-'], env, patch.bytes)
        if (applied.code !== 0) return {name: patch.name, ok: false, problem: `its patch does not apply: ${firstLine(applied.stderr)}`}
        const changed = numstatPaths(applied.stdout.toString('utf8'))
        const outside = changed.filter((file) => !patch.allows(file))
        if (outside.length > 0) return {name: patch.name, ok: false, problem: `its patch changes files outside its scope: ${outside.slice(0, 5).join(', ')}`}
        files[patch.name] = changed
      }

      const tree = await writeTree(top, env)
      // What the patches changed, by git's trees: every path must be one a patch named (so, checked against its unit's paths).
      const named = new Set(Object.values(files).flat())
      const unnamed = (await changedBetweenTrees(top, env, base, tree)).filter((file) => !named.has(file))
      if (unnamed.length > 0) return {name: 'the patches', ok: false, problem: `they changed files none of them names: ${unnamed.slice(0, 5).join(', ')}`}
      const combined = await gitRaw(
        top,
        ['diff-tree', '-r', '--binary', '--full-index', '--no-renames', '--no-ext-diff', '--no-textconv', '--src-prefix=a/', '--dst-prefix=b/', base, tree],
        env,
      )
      if (combined.code !== 0) throw new Error(`cannot diff the merged tree: ${firstLine(combined.stderr)}`)
      if (combined.stdout.length === 0) return {files, ok: true}
      // The work tree, not the temporary index. git apply is atomic: a hunk that does not apply writes nothing at all.
      const {GIT_INDEX_FILE: _temporary, ...worktreeEnv} = env
      const written = await gitRaw(top, ['apply', '--binary', '--whitespace=nowarn', '-'], worktreeEnv, combined.stdout)
      if (written.code !== 0) return {name: 'the work tree', ok: false, problem: `the merged change does not apply to it: ${firstLine(written.stderr)}`}
      return {files, ok: true}
    },
    false,
  )
}

async function writeTree(top: string, env: Record<string, string>): Promise<string> {
  const written = await gitRaw(top, ['write-tree'], env)
  if (written.code !== 0) throw new Error(`cannot write a tree: ${firstLine(written.stderr)}`)
  return written.stdout.toString('utf8').trim()
}

/** A rename or copy in a git patch's extended header (apply.c's names for them); never inside a hunk or binary data, whose lines start otherwise. */
const RENAME_OR_COPY = /^(?:rename|copy) (?:from|to|old|new) .*$/m

/** The paths that differ between two trees, relative to the top. */
async function changedBetweenTrees(top: string, env: Record<string, string>, from: string, to: string): Promise<string[]> {
  const diff = await gitRaw(top, ['diff-tree', '-r', '--name-only', '-z', '--no-renames', from, to], env)
  if (diff.code !== 0) throw new Error(`cannot compare trees: ${firstLine(diff.stderr)}`)
  return diff.stdout.toString('utf8').split('\0').filter(Boolean)
}

/**
 * The paths `git apply --numstat -z` names, relative to the top: `added TAB deleted TAB path NUL`, or for
 * a rename or copy `added TAB deleted TAB NUL source NUL destination NUL` (both sides count).
 */
export function numstatPaths(output: string): string[] {
  const fields = output.split('\0')
  const paths: string[] = []
  for (let index = 0; index < fields.length; index++) {
    const field = fields[index]
    if (field === '') continue
    const counts = /^(?:\d+|-)\t(?:\d+|-)\t/.exec(field)
    if (!counts) continue
    const rest = field.slice(counts[0].length)
    if (rest !== '') paths.push(rest)
    else {
      paths.push(fields[index + 1] ?? '', fields[index + 2] ?? '')
      index += 2
    }
  }

  return [...new Set(paths.filter(Boolean))].sort()
}

/** Whether `commit` names a commit of the repository at `top`. */
export async function hasCommit(top: string, commit: string): Promise<boolean> {
  const env = await safeGitEnvironment(top)
  return (await gitRaw(top, ['cat-file', '-e', `${commit}^{commit}`], env)).code === 0
}
