import {mkdir, symlink} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import ls from '../../../src/tools/ls.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

async function runLs(root: string, dir: string): Promise<string> {
  return ls.run({path: dir}, await contextFor(root, {path: dir}))
}

describe('LS', () => {
  it('lists entries sorted, directories with a trailing slash, without .git', async () => {
    const root = await workspace({'.env': '', '.git/HEAD': '', 'b.txt': '', 'a.txt': '', 'src/x.ts': '', 'Zeta/y': ''})
    expect(await runLs(root, '.')).toBe('.env\nZeta/\na.txt\nb.txt\nsrc/')
  })

  it('lists a subdirectory, and shows symlinks with their target', async () => {
    const root = await workspace({'src/a.ts': ''})
    await symlink('a.ts', path.join(root, 'src', 'alias.ts'))
    expect(await runLs(root, 'src')).toBe('a.ts\nalias.ts -> a.ts')
  })

  it('notes an empty directory', async () => {
    const root = await workspace({})
    await mkdir(path.join(root, 'empty'))
    expect(await runLs(root, 'empty')).toBe('(empty is empty)')
  })

  it('caps at 1000 entries with a note', async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 1005; i++) files[`d/${String(i).padStart(4, '0')}`] = ''
    const root = await workspace(files)
    const lines = (await runLs(root, 'd')).split('\n')
    expect(lines).toHaveLength(1001)
    expect(lines[999]).toBe('0999')
    expect(lines[1000]).toBe('(truncated: showing 1000 of 1005 entries; use Glob to narrow down)')
  })

  it('refuses a file or a missing path', async () => {
    const root = await workspace({'a.txt': ''})
    await expect(runLs(root, 'a.txt')).rejects.toThrow('a.txt is not a directory: use Read for files.')
    await expect(runLs(root, 'nope')).rejects.toThrow('Directory does not exist: nope')
  })
})
