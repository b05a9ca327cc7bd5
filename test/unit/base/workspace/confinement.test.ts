import {chmod, lstat, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {ConfinementError, writableRoot, writeFileWithin} from '../../../../src/base/workspace/confinement.js'

let base: string
let root: string
let outside: string

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'wave-confined-')))
  root = path.join(base, 'repo')
  outside = path.join(base, 'outside')
  await mkdir(path.join(root, 'src'), {recursive: true})
  await mkdir(path.join(root, '.git'))
  await mkdir(outside)
  await writeFile(path.join(outside, 'secret.txt'), 'outside secret\n')
})

afterEach(async () => {
  await rm(base, {force: true, recursive: true})
})

/** Every path below `dir`, for "nothing changed there". */
async function listing(dir: string): Promise<string[]> {
  return (await readdir(dir, {recursive: true})).sort()
}

const deep = Array.from({length: 45}, (_, i) => `d${i}`).join('/')

describe('writeFileWithin', () => {
  it('creates 45 missing directories, one level at a time, and writes the file', async () => {
    const file = path.join(root, 'src', deep, 'f.txt')
    await writeFileWithin(root, file, 'héllo\n', {createDirectories: true})
    expect(await readFile(file, 'utf8')).toBe('héllo\n')
    expect(await listing(path.join(root, 'src', 'd0', 'd1'))).toContain(path.join(...deep.split('/').slice(2), 'f.txt'))
  })

  it('replaces an existing file keeping its mode, and leaves no temporary file', async () => {
    const file = path.join(root, 'src', 'run.sh')
    await writeFile(file, 'old')
    await chmod(file, 0o751)
    await writeFileWithin(root, file, 'new')
    expect(await readFile(file, 'utf8')).toBe('new')
    expect((await stat(file)).mode & 0o777).toBe(0o751)
    expect(await readdir(path.join(root, 'src'))).toEqual(['run.sh'])
  })

  it('refuses when a directory on the way became a link out after the check', async () => {
    // Checked as root/src/<deep>/f.txt; then src is swapped for a link to the outside directory.
    const file = path.join(root, 'src', deep, 'f.txt')
    await rm(path.join(root, 'src'), {recursive: true})
    await symlink(outside, path.join(root, 'src'))
    const before = await listing(outside)
    await expect(writeFileWithin(root, file, 'x', {createDirectories: true})).rejects.toThrow(ConfinementError)
    await expect(writeFileWithin(root, file, 'x', {createDirectories: true})).rejects.toThrow(
      /src became a symbolic link after it was checked; nothing was written/,
    )
    expect(await listing(outside)).toEqual(before)
  })

  it('refuses when a directory it is about to create appears as a link into .git', async () => {
    const file = path.join(root, 'new', deep, 'hooks', 'pre-commit')
    await symlink(path.join(root, '.git'), path.join(root, 'new'))
    await expect(writeFileWithin(root, file, '#!/bin/sh\n', {createDirectories: true})).rejects.toThrow(ConfinementError)
    expect(await readdir(path.join(root, '.git'))).toEqual([])
  })

  it('refuses when a link to .. was swapped in deep down', async () => {
    const levels = deep.split('/')
    const parent = path.join(root, 'src', ...levels.slice(0, 30))
    await mkdir(parent, {recursive: true})
    await symlink(base, path.join(parent, levels[30]))
    // A write through the link would land at base/d31/...: base itself must not change.
    const before = await readdir(base)
    await expect(writeFileWithin(root, path.join(root, 'src', deep, 'f'), 'x', {createDirectories: true})).rejects.toThrow(ConfinementError)
    expect(await readdir(base)).toEqual(before)
  })

  it('refuses when the file itself became a link out, leaving its target alone', async () => {
    const file = path.join(root, 'src', 'a.txt')
    await symlink(path.join(outside, 'secret.txt'), file)
    await expect(writeFileWithin(root, file, 'pwned')).rejects.toThrow(/became a symbolic link/)
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside secret\n')
    expect((await lstat(file)).isSymbolicLink()).toBe(true)
    expect(await readdir(path.join(root, 'src'))).toEqual(['a.txt'])
  })

  it('does not create missing directories unless asked (Edit)', async () => {
    await expect(writeFileWithin(root, path.join(root, 'nope', 'f.txt'), 'x')).rejects.toThrow(/ENOENT|no such file/)
    expect(await readdir(root)).toEqual(['.git', 'src'])
  })

  it('refuses a file that is not below the root', async () => {
    await expect(writeFileWithin(root, path.join(outside, 'x.txt'), 'x', {createDirectories: true})).rejects.toThrow(ConfinementError)
    await expect(writeFileWithin(root, root, 'x')).rejects.toThrow(ConfinementError)
    expect(await readdir(outside)).toEqual(['secret.txt'])
  })
})

describe('writableRoot', () => {
  it("is the workspace for a path inside it, and the file's directory for the plan file outside", () => {
    expect(writableRoot('/w', '/w/src/a.ts')).toBe('/w')
    expect(writableRoot('/w', '/home/u/.wave/plans/p.md')).toBe('/home/u/.wave/plans')
  })
})
