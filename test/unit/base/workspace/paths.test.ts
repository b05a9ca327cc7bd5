import {mkdir, mkdtemp, realpath, rm, symlink, writeFile} from 'node:fs/promises'
import {homedir, tmpdir} from 'node:os'
import path from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {displayPath, isInside, PathResolutionError, realPathOf, resolvePath, workspaceRoot} from '../../../../src/base/workspace/paths.js'

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

describe('resolvePath fails closed', () => {
  // Deeper than any cut-off a resolver might have had (it gave up at 40 and returned the path unresolved).
  const deep = Array.from({length: 45}, (_, i) => `d${i}`).join('/')

  beforeAll(async () => {
    await mkdir(path.join(root, '.git', 'hooks'), {recursive: true})
    await symlink('src', path.join(root, 'src-link'))
    await symlink('.git', path.join(root, 'git-link'))
    await symlink('..', path.join(root, 'up-link'))
    await symlink('up-link', path.join(root, 'link-to-up-link'))
    await symlink('../outside/new-dir/../other', path.join(root, 'dangling-climb'))
    await symlink('loop-b', path.join(root, 'loop-a'))
    await symlink('loop-a', path.join(root, 'loop-b'))
    await symlink('self/x', path.join(root, 'self'))
    // A chain of 45 links, none a loop: more than the OS (or wave) follows for one path.
    for (let i = 0; i < 45; i++) await symlink(i === 44 ? 'src' : `chain${i + 1}`, path.join(root, `chain${i}`))
  })

  it.each<[string, (r: string, o: string) => string]>([
    [`src-link/${deep}/f.ts`, (r) => `${r}/src/${deep}/f.ts`],
    [`git-link/${deep}/f`, (r) => `${r}/.git/${deep}/f`],
    [`git-link/hooks/${deep}/pre-commit`, (r) => `${r}/.git/hooks/${deep}/pre-commit`],
    [`up-link/${deep}/f`, (r) => `${path.dirname(r)}/${deep}/f`],
    [`link-to-up-link/${deep}/f`, (r) => `${path.dirname(r)}/${deep}/f`],
    [`up-link/outside/${deep}/f`, (_r, o) => `${o}/${deep}/f`],
    [`out-dir/${deep}/f`, (_r, o) => `${o}/${deep}/f`],
    [`dangling/${deep}/f`, (_r, o) => `${o}/not-yet.txt/${deep}/f`],
    [`dangling-climb/${deep}/f`, (_r, o) => `${o}/other/${deep}/f`],
    [`src/${deep}/../../../f`, (r) => `${r}/src/${deep.split('/').slice(0, -3).join('/')}/f`],
    ['src/a.ts/below-a-file', (r) => `${r}/src/a.ts/below-a-file`],
  ])('resolves %s through every link, however deep the missing tail', async (input, expected) => {
    const resolved = await resolvePath(root, input)
    expect(resolved.real).toBe(expected(root, outside))
    expect(resolved.kind).toBe('missing')
  })

  it.each(['loop-a', 'loop-a/x', `loop-b/${deep}/f`, 'self', 'self/y', 'chain0/a.ts', `chain0/${deep}/f`])(
    'refuses %s: a loop or too many links',
    async (input) => {
      const error = await resolvePath(root, input).catch((error_: unknown) => error_)
      expect(error).toBeInstanceOf(PathResolutionError)
      expect((error as Error).message).toMatch(/symbolic link/)
      expect((error as Error).message).toContain(path.join(root, input.split('/')[0]))
    },
  )

  it('follows a chain of links within the limit', async () => {
    expect((await resolvePath(root, 'chain10/a.ts')).real).toBe(`${root}/src/a.ts`)
    expect((await resolvePath(root, `chain10/${deep}/f`)).real).toBe(`${root}/src/${deep}/f`)
  })

  it('resolves a link swapped between two calls to where it leads now', async () => {
    const dir = path.join(root, 'swapped')
    await mkdir(dir)
    const before = await realPathOf(path.join(dir, `${deep}/f`))
    await rm(dir, {recursive: true})
    await symlink(outside, dir)
    const after = await realPathOf(path.join(dir, `${deep}/f`))
    expect(before).toBe(`${root}/swapped/${deep}/f`)
    expect(after).toBe(`${outside}/${deep}/f`)
    await rm(dir)
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
