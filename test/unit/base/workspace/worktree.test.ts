import {mkdir, rm, stat, symlink, utimes, writeFile} from 'node:fs/promises'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {changedBetween, WorkTreeWatch} from '../../../../src/base/workspace/worktree.js'
import {git, put, useRepositories} from '../../../support/repository.js'

const repositories = useRepositories('worktree')
/** A repository with one commit of `files`, as a real path. */
const repository = async (files: Record<string, string>) => (await repositories.repository(files)).root

/** What `change` changed, by two readings of one watch around it. */
async function changedBy(root: string, change: () => Promise<unknown>, own?: Set<string>): Promise<string[]> {
  const watch = new WorkTreeWatch({own, top: root, workspace: root})
  const before = await watch.read()
  await change()
  return changedBetween(before, await watch.read())
}

describe('WorkTreeWatch', () => {
  it('sees tracked edits, new files and deletions, and nothing when nothing changed', async () => {
    const root = await repository({'a.txt': 'a\n', 'b.txt': 'b\n'})
    expect(await changedBy(root, async () => {})).toEqual([])
    expect(
      await changedBy(root, async () => {
        await writeFile(path.join(root, 'a.txt'), 'changed\n')
        await writeFile(path.join(root, 'new.txt'), 'new\n')
        await rm(path.join(root, 'b.txt'))
      }),
    ).toEqual(['a.txt', 'b.txt', 'new.txt'])
  })

  it('sees ignored files by content, new ignored directories, and what node_modules/.bin runs, not the rest of node_modules', async () => {
    const root = await repository({'.gitignore': '*.log\nnode_modules/\n'})
    await put(root, {'debug.log': 'one\n', 'node_modules/runner/cli.js': 'real\n', 'node_modules/other/index.js': 'x\n'})
    await mkdir(path.join(root, 'node_modules/.bin'))
    await symlink('../runner/cli.js', path.join(root, 'node_modules/.bin/runner'))
    expect(await changedBy(root, () => writeFile(path.join(root, 'debug.log'), 'two\n'))).toEqual(['debug.log'])
    expect(await changedBy(root, () => writeFile(path.join(root, 'node_modules/runner/cli.js'), 'fake\n'))).toEqual(['node_modules/.bin/runner'])
    // A cache a tool writes inside node_modules is not a change anyone runs.
    expect(await changedBy(root, () => put(root, {'node_modules/.cache/x': 'cache\n', 'node_modules/other/index.js': 'y\n'}))).toEqual([])
    expect(await changedBy(root, () => put(root, {'build/out.log': 'built\n'}))).toEqual(['build/out.log'])
  })

  it('sees a directory that ignores itself, and a .gitignore that hides an untracked file', async () => {
    const root = await repository({'README.md': '# r\n'})
    expect(await changedBy(root, () => put(root, {'hidden/.gitignore': '*\n', 'hidden/run.sh': 'payload\n'}))).toEqual(['hidden/.gitignore', 'hidden/run.sh'])
    await put(root, {'tool.sh': 'one\n'})
    // The file is hidden and changed in one go: it is still listed (as ignored), by its new content.
    expect(await changedBy(root, () => put(root, {'.gitignore': 'tool.sh\n', 'tool.sh': 'two\n'}))).toEqual(['.gitignore', 'tool.sh'])
  })

  it('compares a file dirty before by its content: changed and put back to its size and mtime shows; touched alone does not', async () => {
    const root = await repository({'notes.md': 'aaaa\n'})
    const file = path.join(root, 'notes.md')
    await writeFile(file, 'dirty aaaa\n')
    const {atime, mtime} = await stat(file)
    expect(
      await changedBy(root, async () => {
        await writeFile(file, 'dirty bbbb\n')
        await utimes(file, atime, mtime)
      }),
    ).toEqual(['notes.md'])
    expect(await changedBy(root, () => utimes(file, new Date(), new Date()))).toEqual([])
  })

  it('walks submodules and untracked nested repositories', async () => {
    const library = await repository({'lib.sh': 'echo lib\n'})
    const root = await repository({'README.md': '# r\n'})
    git(root, 'submodule', 'add', '-q', library, 'vendor/lib')
    git(root, 'commit', '-q', '-m', 'submodule')
    const nested = path.join(root, 'tools/nested')
    await put(nested, {'t.sh': 'echo t\n'})
    git(nested, 'init', '-q')
    expect(await changedBy(root, () => writeFile(path.join(root, 'vendor/lib/lib.sh'), 'changed\n'))).toEqual(['vendor/lib/lib.sh'])
    expect(await changedBy(root, () => writeFile(path.join(root, 'vendor/lib/new.sh'), 'new\n'))).toEqual(['vendor/lib/new.sh'])
    expect(await changedBy(root, () => writeFile(path.join(nested, 't.sh'), 'changed\n'))).toEqual(['tools/nested/t.sh'])
  })

  it("leaves out wave's own files and what lies outside the workspace", async () => {
    const root = await repository({'README.md': '# r\n', 'sub/a.txt': 'a\n'})
    const own = new Set([path.join(root, 'sub/plan.state.json')])
    const watch = new WorkTreeWatch({own, top: root, workspace: path.join(root, 'sub')})
    const before = await watch.read()
    await put(root, {'README.md': 'changed\n', 'sub/a.txt': 'changed\n', 'sub/plan.state.json': '{}'})
    expect(changedBetween(before, await watch.read())).toEqual(['a.txt'])
  })
})
