import {readFile, rm, writeFile} from 'node:fs/promises'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {applyPatches, workTreePatch} from '../../../../src/base/workspace/patch.js'
import {git, put, useRepositories} from '../../../support/repository.js'

const {repository, tempDir} = useRepositories('patch')

const BINARY = Buffer.from([0, 1, 2, 255, 254, 10, 0, 13])
const status = (root: string) => git(root, 'status', '--porcelain', '--untracked-files=all')

describe('workTreePatch', () => {
  it('is the work tree against the commit: edits, new files, binary files and deletions; excluded files left out; nothing staged', async () => {
    const {head, root} = await repository({'a.txt': 'a\n', 'gone.txt': 'bye\n', 'sub/b.txt': 'b\n'})
    await put(root, {'a.txt': 'a2\n', 'bin/logo.bin': BINARY, 'new.txt': 'new\n', 'plans/p.state.json': '{}'})
    await rm(path.join(root, 'gone.txt'))
    const before = status(root)
    const patch = await workTreePatch(root, head, ['plans/p.state.json'])
    expect(status(root)).toBe(before)
    const text = patch.toString('latin1')
    expect(text).toContain('GIT binary patch')
    expect(text).not.toContain('p.state.json')

    // Applied at the commit in a clone, it makes the same tree.
    const clone = await tempDir()
    git(clone, 'clone', '-q', root, '.')
    await writeFile(path.join(clone, '..', path.basename(clone) + '.patch'), patch)
    git(clone, 'apply', path.join(clone, '..', path.basename(clone) + '.patch'))
    expect(await readFile(path.join(clone, 'bin/logo.bin'))).toEqual(BINARY)
    expect(await readFile(path.join(clone, 'a.txt'), 'utf8')).toBe('a2\n')
    expect(await readFile(path.join(clone, 'new.txt'), 'utf8')).toBe('new\n')
    await expect(readFile(path.join(clone, 'gone.txt'))).rejects.toThrow()
    await rm(path.join(clone, '..', path.basename(clone) + '.patch'))
  })

  it('is empty for an unchanged work tree', async () => {
    const {head, root} = await repository({'a.txt': 'a\n'})
    expect((await workTreePatch(root, head)).length).toBe(0)
  })
})

describe('applyPatches', () => {
  /** The patch of one change to a fresh copy of `files`, made as a unit's job would. */
  async function patchOf(files: Record<string, string>, change: Record<string, string | Buffer>, remove: string[] = []): Promise<Buffer> {
    const {head, root} = await repository(files)
    await put(root, change)
    for (const file of remove) await rm(path.join(root, file))
    return workTreePatch(root, head)
  }

  const FILES = {'api/a.ts': 'a\n', 'web/w.ts': 'w\n'}
  const api = (file: string) => file.startsWith('api/')
  const web = (file: string) => file.startsWith('web/')

  it('applies patches in order and answers the files each changed', async () => {
    const {head, root} = await repository(FILES)
    const one = await patchOf(FILES, {'api/a.ts': 'a2\n', 'api/new.ts': 'n\n'})
    const two = await patchOf(FILES, {'web/logo.bin': BINARY})
    const applied = await applyPatches(root, head, [
      {allows: api, bytes: one, name: 'api'},
      {allows: web, bytes: two, name: 'web'},
      {allows: web, bytes: Buffer.alloc(0), name: 'empty'},
    ])
    expect(applied).toEqual({files: {api: ['api/a.ts', 'api/new.ts'], empty: [], web: ['web/logo.bin']}, ok: true})
    expect(await readFile(path.join(root, 'web/logo.bin'))).toEqual(BINARY)
    expect(await readFile(path.join(root, 'api/a.ts'), 'utf8')).toBe('a2\n')
  })

  it('refuses a patch outside what it may change, naming it, and writes nothing', async () => {
    const {head, root} = await repository(FILES)
    const one = await patchOf(FILES, {'api/a.ts': 'a2\n'})
    const sneaky = await patchOf(FILES, {'api/a.ts': 'a\n', 'web/w.ts': 'taken\n'})
    const applied = await applyPatches(root, head, [
      {allows: api, bytes: one, name: 'api'},
      {allows: api, bytes: sneaky, name: 'sneaky'},
    ])
    expect(applied).toEqual({name: 'sneaky', ok: false, problem: 'its patch changes files outside its scope: web/w.ts'})
    expect(status(root)).toBe('')
  })

  it("refuses a rename (git's numstat names only its destination) that takes another unit's file", async () => {
    const {head, root} = await repository(FILES)
    const rename = Buffer.from('diff --git a/web/w.ts b/api/w.ts\nsimilarity index 100%\nrename from web/w.ts\nrename to api/w.ts\n')
    const applied = await applyPatches(root, head, [{allows: api, bytes: rename, name: 'api'}])
    expect(applied).toEqual({name: 'api', ok: false, problem: "its patch renames or copies a file (rename from web/w.ts), which no unit's patch does"})
    expect(status(root)).toBe('')
    // Control: the move as wave writes it (a deletion and an addition) is refused for the file outside, and taken inside.
    const asWave = await patchOf(FILES, {'api/w.ts': 'w\n'}, ['web/w.ts'])
    expect(await applyPatches(root, head, [{allows: api, bytes: asWave, name: 'api'}])).toEqual({
      name: 'api',
      ok: false,
      problem: 'its patch changes files outside its scope: web/w.ts',
    })
    const copied = await patchOf(FILES, {'api/w.ts': 'w\n'})
    expect(await applyPatches(root, head, [{allows: api, bytes: copied, name: 'api'}])).toEqual({files: {api: ['api/w.ts']}, ok: true})
  })

  it('names the paths of git apply --numstat -z, a rename both sides', async () => {
    const {numstatPaths} = await import('../../../../src/base/workspace/patch.js')
    expect(numstatPaths('1\t0\ta b.ts\0-\t-\tlogo.bin\0' + '0\t0\t\0old.ts\0new.ts\0')).toEqual(['a b.ts', 'logo.bin', 'new.ts', 'old.ts'])
  })

  it('refuses a conflict (two patches changing one file) and a patch that is not one, writing nothing', async () => {
    const {head, root} = await repository(FILES)
    const one = await patchOf(FILES, {'api/a.ts': 'one\n'})
    const two = await patchOf(FILES, {'api/a.ts': 'two\n'})
    const conflict = await applyPatches(root, head, [
      {allows: api, bytes: one, name: 'first'},
      {allows: api, bytes: two, name: 'second'},
    ])
    expect(conflict).toMatchObject({name: 'second', ok: false, problem: expect.stringContaining('its patch does not apply')})
    expect(status(root)).toBe('')
    const garbage = await applyPatches(root, head, [{allows: api, bytes: Buffer.from('not a patch\n'), name: 'junk'}])
    expect(garbage).toMatchObject({name: 'junk', ok: false})
    expect(status(root)).toBe('')
  })
})
