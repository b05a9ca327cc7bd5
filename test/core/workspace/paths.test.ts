import {mkdir, mkdtemp, realpath, rm, symlink, writeFile} from 'node:fs/promises'
import {homedir, tmpdir} from 'node:os'
import path from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {displayPath, isInside, resolvePath, workspaceRoot} from '../../../src/core/workspace/paths.js'

let base: string
let root: string
let outside: string

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'wave-ws-')))
  root = path.join(base, 'repo')
  outside = path.join(base, 'outside')
  await mkdir(path.join(root, 'src'), {recursive: true})
  await mkdir(outside)
  await writeFile(path.join(root, 'src/a.ts'), 'a')
  await writeFile(path.join(outside, 'secret.txt'), 's')
  await symlink(outside, path.join(root, 'out-dir'))
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'out-file'))
  await symlink(path.join(outside, 'not-yet.txt'), path.join(root, 'dangling'))
  await symlink('src/a.ts', path.join(root, 'in-link'))
})

afterAll(async () => {
  await rm(base, {force: true, recursive: true})
})

describe('resolvePath', () => {
  it.each<[string, (r: string, o: string) => string, string]>([
    ['src/a.ts', (r) => `${r}/src/a.ts`, 'file'],
    ['./src/../src/a.ts', (r) => `${r}/src/a.ts`, 'file'],
    ['src', (r) => `${r}/src`, 'directory'],
    ['src/new/file.ts', (r) => `${r}/src/new/file.ts`, 'missing'],
    ['../outside/secret.txt', (_r, o) => `${o}/secret.txt`, 'file'],
    ['out-dir/secret.txt', (_r, o) => `${o}/secret.txt`, 'file'],
    ['out-dir/new.txt', (_r, o) => `${o}/new.txt`, 'missing'],
    ['out-file', (_r, o) => `${o}/secret.txt`, 'file'],
    ['dangling', (_r, o) => `${o}/not-yet.txt`, 'missing'],
    ['in-link', (r) => `${r}/src/a.ts`, 'file'],
  ])('%s', async (input, expected, kind) => {
    const resolved = await resolvePath(root, input)
    expect(resolved.real).toBe(expected(root, outside))
    expect(resolved.kind).toBe(kind)
  })

  it('takes absolute paths as they are', async () => {
    const resolved = await resolvePath(root, path.join(outside, 'secret.txt'))
    expect(resolved.real).toBe(path.join(outside, 'secret.txt'))
  })

  it('expands ~ to the home directory', async () => {
    const resolved = await resolvePath(root, '~/x-wave-test')
    expect(resolved.absolute).toBe(path.join(homedir(), 'x-wave-test'))
  })

  it('marks symlinks', async () => {
    expect((await resolvePath(root, 'out-file')).symlink).toBe(true)
    expect((await resolvePath(root, 'src/a.ts')).symlink).toBe(false)
  })
})

describe('isInside', () => {
  it.each<[string, string, boolean]>([
    ['/a/b', '/a/b', true],
    ['/a/b', '/a/b/c', true],
    ['/a/b', '/a/bc', false],
    ['/a/b', '/a', false],
    ['/', '/x', true],
  ])('%s contains %s: %s', (parent, child, expected) => {
    expect(isInside(parent, child)).toBe(expected)
  })
})

describe('workspaceRoot', () => {
  it('rejects a missing directory and a file with a usage error', async () => {
    await expect(workspaceRoot(path.join(base, 'nope'))).rejects.toMatchObject({exitCode: 2})
    await expect(workspaceRoot(path.join(root, 'src/a.ts'))).rejects.toMatchObject({exitCode: 2})
  })

  it('displays paths relative to the root', async () => {
    expect(displayPath(root, path.join(root, 'src/a.ts'))).toBe('src/a.ts')
    expect(displayPath(root, '/etc/passwd')).toBe('/etc/passwd')
  })
})
