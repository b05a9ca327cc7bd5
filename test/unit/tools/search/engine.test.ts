import {mkdir, symlink} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import {listFiles} from '../../../../src/tools/search/engine.js'
import {useWorkspaces} from '../context.js'

const workspace = useWorkspaces()

/** listFiles as sorted paths relative to `root`. */
async function list(root: string, base = root, pattern?: string): Promise<string[]> {
  const files = await listFiles(root, base, {pattern})
  return files.map((file) => path.relative(root, file)).sort()
}

describe('listFiles', () => {
  it('lists every file, dotfiles included, and never .git', async () => {
    const root = await workspace({
      '.env.example': 'A=1',
      '.git/HEAD': 'ref: refs/heads/main',
      '.git/config': '',
      'a.txt': 'a',
      'src/b.ts': 'b',
      'src/deep/c.ts': 'c',
    })

    expect(await list(root)).toEqual(['.env.example', 'a.txt', 'src/b.ts', 'src/deep/c.ts'])
  })

  it('skips a .git file (worktree or submodule) in a subdirectory', async () => {
    const root = await workspace({'sub/.git': 'gitdir: ../.git/modules/sub', 'sub/x.ts': 'x'})
    expect(await list(root)).toEqual(['sub/x.ts'])
  })

  it('respects the root .gitignore: file patterns, directory patterns, anchored patterns', async () => {
    const root = await workspace({
      '.gitignore': 'node_modules/\n*.log\n/build\n',
      'build/out.js': '',
      'debug.log': '',
      'keep.ts': '',
      'node_modules/pkg/index.js': '',
      'src/build/keep.js': '',
      'src/nested/trace.log': '',
    })

    expect(await list(root)).toEqual(['.gitignore', 'keep.ts', 'src/build/keep.js'])
  })

  it('applies a nested .gitignore to its own subtree only, and lets it re-include', async () => {
    const root = await workspace({
      '.gitignore': '*.log\n',
      'a/.gitignore': 'generated/\n!important.log\n',
      'a/generated/x.ts': '',
      'a/important.log': '',
      'a/other.log': '',
      'b/generated/y.ts': '',
      'b/important.log': '',
    })

    expect(await list(root)).toEqual(['.gitignore', 'a/.gitignore', 'a/important.log', 'b/generated/y.ts'])
  })

  it('cannot re-include a file whose directory is ignored, as in git', async () => {
    const root = await workspace({'.gitignore': 'vendor/\n!vendor/keep.ts\n', 'vendor/keep.ts': ''})
    expect(await list(root)).toEqual(['.gitignore'])
  })

  it('reads .git/info/exclude, with .gitignore taking precedence', async () => {
    const root = await workspace({
      '.git/info/exclude': 'secret.txt\nnotes.md\n',
      '.gitignore': '!notes.md\n',
      'notes.md': '',
      'secret.txt': '',
    })

    expect(await list(root)).toEqual(['.gitignore', 'notes.md'])
  })

  it('matches a glob pattern relative to the base', async () => {
    const root = await workspace({'README.md': '', 'src/a.ts': '', 'src/a.test.ts': '', 'src/deep/b.ts': '', 'test/c.ts': ''})
    expect(await list(root, root, '**/*.ts')).toEqual(['src/a.test.ts', 'src/a.ts', 'src/deep/b.ts', 'test/c.ts'])
    expect(await list(root, root, '*.md')).toEqual(['README.md'])
    expect(await list(root, root, 'src/**/*.test.ts')).toEqual(['src/a.test.ts'])
    expect(await list(root, path.join(root, 'src'), '*.ts')).toEqual(['src/a.test.ts', 'src/a.ts'])
  })

  it('applies ignore files of directories the crawl starts below', async () => {
    // For `sub/deep/*` tinyglobby starts crawling at sub/deep: sub/.gitignore must still count.
    const root = await workspace({'sub/.gitignore': '*.log\n', 'sub/deep/a.log': '', 'sub/deep/b.ts': ''})
    expect(await list(root, root, 'sub/deep/*')).toEqual(['sub/deep/b.ts'])
  })

  it('applies the ignore files above a base inside the workspace', async () => {
    const root = await workspace({'.gitignore': '*.log\n', 'pkg/.gitignore': 'tmp/\n', 'pkg/src/a.log': '', 'pkg/src/a.ts': '', 'pkg/src/tmp/t.ts': ''})
    expect(await list(root, path.join(root, 'pkg', 'src'))).toEqual(['pkg/src/a.ts'])
  })

  it('searches a base that is itself ignored, since it was named on purpose', async () => {
    const root = await workspace({'.gitignore': 'node_modules/\n', 'node_modules/pkg/index.js': '', 'node_modules/pkg/lib/util.js': ''})
    expect(await list(root)).toEqual(['.gitignore'])
    expect(await list(root, path.join(root, 'node_modules', 'pkg'))).toEqual(['node_modules/pkg/index.js', 'node_modules/pkg/lib/util.js'])
  })

  it('neither follows nor lists symbolic links', async () => {
    const root = await workspace({'real/a.ts': ''})
    const outside = await workspace({'secret.ts': ''})
    await symlink(outside, path.join(root, 'out'))
    await symlink(path.join(root, 'real', 'a.ts'), path.join(root, 'link.ts'))
    expect(await list(root)).toEqual(['real/a.ts'])
  })

  it('returns nothing for an empty directory', async () => {
    const root = await workspace({})
    await mkdir(path.join(root, 'empty'))
    expect(await list(root)).toEqual([])
  })

  it('stops when aborted', async () => {
    const root = await workspace({'a.ts': ''})
    const controller = new AbortController()
    controller.abort()
    await expect(listFiles(root, root, {signal: controller.signal})).rejects.toThrow()
  })
})
