import {execFileSync} from 'node:child_process'
import {mkdir, writeFile} from 'node:fs/promises'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {beginStartupSnapshot, LARGE_WORK_TREE, RepositorySnapshot, sessionSnapshot, startupToplevel} from '../../../../src/base/workspace/snapshot.js'
import {git, useRepositories} from '../../../support/repository.js'

const repositories = useRepositories('snapshot')
const {tempDir} = repositories
/** A repository with one commit of `files`, as a real path. */
const repository = async (files: Record<string, string>) => (await repositories.repository(files)).root

describe('RepositorySnapshot', () => {
  it('reads what git says of a small work tree: head, branch, short status, subjects, changes', async () => {
    const root = await repository({'README.md': '# r\n', 'src/a.ts': 'a\n'})
    await writeFile(path.join(root, 'README.md'), '# changed\n')
    await mkdir(path.join(root, 'new dir'))
    await writeFile(path.join(root, 'new dir', 'b é.ts'), 'b\n')
    const head = git(root, 'rev-parse', 'HEAD').trim()

    const snapshot = new RepositorySnapshot(root, {changes: true})
    expect(await snapshot.head()).toEqual({branch: 'main', head, root})
    expect(await snapshot.state()).toEqual({branch: 'main', dirty: true, head, root})
    // The environment block's view: untracked directories collapsed, as `git status --short` shows them.
    expect(await snapshot.summary()).toEqual({status: ['## main', ' M README.md', '?? "new dir/"'], subjects: ['first commit']})
    // The "files changed" baseline: every untracked file, paths as they are.
    expect(await snapshot.changes()).toEqual(
      new Map([
        ['README.md', ' M'],
        ['new dir/b é.ts', '??'],
      ]),
    )
  })

  it('reads a clean tree as clean, and a work tree without commits', async () => {
    const root = await repository({'a.txt': 'a\n'})
    expect(await new RepositorySnapshot(root).dirty()).toBe(false)

    const empty = await tempDir()
    git(empty, '-c', 'init.defaultBranch=trunk', 'init', '-q')
    const snapshot = new RepositorySnapshot(empty)
    expect(await snapshot.head()).toEqual({branch: 'trunk', head: null, root: empty})
    expect(await snapshot.summary()).toEqual({status: ['## No commits yet on trunk'], subjects: []})
  })

  it('is empty outside a work tree', async () => {
    const dir = await tempDir()
    const snapshot = new RepositorySnapshot(dir, {changes: true})
    expect(await snapshot.toplevel()).toBeUndefined()
    expect(await snapshot.head()).toBeNull()
    expect(await snapshot.summary()).toBeNull()
    expect(await snapshot.changes()).toEqual(new Map())
  })

  it("leaves the status out of a large work tree's summary, and reads it when asked", async () => {
    // More index entries than LARGE_WORK_TREE, none of them in the work tree: cheap to make, and all changes.
    const root = await repository({'a.txt': 'a\n'})
    const blob = git(root, 'hash-object', '-w', 'a.txt').trim()
    const entries = Array.from({length: LARGE_WORK_TREE + 1}, (_, i) => `100644 ${blob}\tgone/${i}.txt\n`).join('')
    execFileSync('git', ['update-index', '--index-info'], {cwd: root, input: entries})

    const snapshot = new RepositorySnapshot(root, {changes: true})
    expect(await snapshot.large()).toBe(true)
    expect(await snapshot.summary()).toEqual({status: ['## main'], subjects: ['first commit'], unread: LARGE_WORK_TREE + 2})
    // Not known before the first request, read on demand.
    expect((await snapshot.state())?.dirty).toBeUndefined()
    expect(await snapshot.dirty()).toBe(true)
    const changes = await snapshot.changes()
    expect(changes.size).toBe(LARGE_WORK_TREE + 1)
    expect(changes.get('gone/0.txt')).toBe('AD')
  })
})

describe('the snapshot begun at process start', () => {
  it("is the session's when its workspace is the top of the tree wave started in, and only once", async () => {
    const root = await repository({'src/a.ts': 'a\n'})
    const sub = path.join(root, 'src')
    beginStartupSnapshot(sub)
    expect(await startupToplevel(sub)).toBe(root)
    expect(startupToplevel(root)).toBeUndefined()

    const first = await sessionSnapshot(root)
    expect(first.dir).toBe(sub)
    expect(await first.head()).toMatchObject({branch: 'main', root})
    // A second session in the same process reads the repository afresh.
    const second = await sessionSnapshot(root)
    expect(second).not.toBe(first)
    expect(second.dir).toBe(root)
  })

  it('is not used for another workspace', async () => {
    const started = await repository({'a.txt': 'a\n'})
    const other = await repository({'b.txt': 'b\n'})
    beginStartupSnapshot(started)
    const snapshot = await sessionSnapshot(other)
    expect(snapshot.dir).toBe(other)
    expect(await snapshot.head()).toMatchObject({root: other})
  })
})
