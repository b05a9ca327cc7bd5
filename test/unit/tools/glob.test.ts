import {mkdir, symlink, utimes} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import glob from '../../../src/tools/glob.js'
import {ToolError} from '../../../src/tools/tool.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

async function runGlob(root: string, input: {pattern: string; path?: string}): Promise<string> {
  return glob.run(input, await contextFor(root, input))
}

/** Sets a file's modification time to `secondsAgo` before now. */
async function age(root: string, file: string, secondsAgo: number): Promise<void> {
  const when = new Date(Date.now() - secondsAgo * 1000)
  await utimes(path.join(root, file), when, when)
}

describe('Glob', () => {
  it('lists matches relative to the workspace root, newest first', async () => {
    const root = await workspace({'src/new.ts': '', 'src/old.ts': '', 'src/deep/mid.ts': '', 'README.md': ''})
    await age(root, 'src/old.ts', 300)
    await age(root, 'src/deep/mid.ts', 200)
    await age(root, 'src/new.ts', 100)
    expect(await runGlob(root, {pattern: '**/*.ts'})).toBe('src/new.ts\nsrc/deep/mid.ts\nsrc/old.ts')
  })

  it('searches below path, still printing root-relative paths', async () => {
    const root = await workspace({'a.ts': '', 'pkg/b.ts': '', 'pkg/sub/c.ts': ''})
    await age(root, 'pkg/b.ts', 10)
    expect(await runGlob(root, {path: 'pkg', pattern: '**/*.ts'})).toBe('pkg/sub/c.ts\npkg/b.ts')
    expect(await runGlob(root, {path: 'pkg', pattern: '*.ts'})).toBe('pkg/b.ts')
  })

  it('respects .gitignore and skips .git', async () => {
    const root = await workspace({'.git/x.ts': '', '.gitignore': 'dist/\n', 'dist/out.ts': '', 'src/in.ts': ''})
    expect(await runGlob(root, {pattern: '**/*.ts'})).toBe('src/in.ts')
  })

  it('says so when nothing matches', async () => {
    const root = await workspace({'a.ts': ''})
    expect(await runGlob(root, {pattern: '**/*.py'})).toBe('No files found')
  })

  it('caps the list at 500 with a visible note', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 520; i++) files[`f/${String(i).padStart(3, '0')}.txt`] = ''
    const root = await workspace(files)
    const lines = (await runGlob(root, {pattern: 'f/*.txt'})).split('\n')
    expect(lines).toHaveLength(501)
    expect(lines[500]).toBe('(truncated: showing 500 of 520 matches; narrow the pattern or path)')
  })

  it('leaves out what the context says is not readable', async () => {
    const root = await workspace({'a.ts': '', 'b.ts': ''})
    const ctx = await contextFor(root, {})
    const output = await glob.run({pattern: '*.ts'}, {...ctx, readable: async (file) => !file.endsWith('b.ts')})
    expect(output).toBe('a.ts')
  })

  it('does not follow a symlink that leads out of the workspace', async () => {
    const root = await workspace({'in.ts': ''})
    const outside = await workspace({'secret.ts': ''})
    await symlink(outside, path.join(root, 'escape'))
    await symlink(path.join(outside, 'secret.ts'), path.join(root, 'leak.ts'))
    expect(await runGlob(root, {pattern: '**/*.ts'})).toBe('in.ts')
  })

  it('rejects a path that is not a directory', async () => {
    const root = await workspace({'a.ts': ''})
    await expect(runGlob(root, {path: 'a.ts', pattern: '*'})).rejects.toThrow(/not a directory/)
    await expect(runGlob(root, {path: 'missing', pattern: '*'})).rejects.toThrow('Directory does not exist: missing')
  })

  it('handles an empty directory', async () => {
    const root = await workspace({})
    await mkdir(path.join(root, 'empty'))
    expect(await runGlob(root, {path: 'empty', pattern: '**/*'})).toBe('No files found')
  })

  it('answers a catastrophic glob over long names at once', async () => {
    // picomatch's regex for this pattern backtracks for hours on a long name of a's without a b.
    const long = 'a'.repeat(200)
    const root = await workspace({[long]: '', [`dir/${long}.txt`]: '', [`${long}b`]: ''})
    const started = performance.now()
    expect(await runGlob(root, {pattern: '*a*a*a*a*a*a*a*a*a*a*b'})).toBe(`${long}b`)
    expect(await runGlob(root, {pattern: '**/*a*a*a*a*a*a*a*a*a*a*t'})).toBe(`dir/${long}.txt`)
    expect(performance.now() - started).toBeLessThan(2000)
  })

  it('refuses a negated extglob with the reason', async () => {
    const root = await workspace({'a.ts': '', 'b.ts': ''})
    await expect(runGlob(root, {pattern: '!(a).ts'})).rejects.toThrow(ToolError)
    await expect(runGlob(root, {pattern: '!(a).ts'})).rejects.toThrow(/negated extglob !\(\.\.\.\)/)
  })
})
