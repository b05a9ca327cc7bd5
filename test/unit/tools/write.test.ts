import {chmod, lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import write from '../../../src/tools/write.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

async function runWrite(root: string, input: {file_path: string; content: string}): Promise<string> {
  return write.run(input, await contextFor(root, input))
}

describe('Write', () => {
  it('creates a file and its missing parent directories', async () => {
    const root = await workspace({})
    expect(await runWrite(root, {content: 'héllo\n', file_path: 'a/b/c.txt'})).toBe('Wrote 7 bytes to a/b/c.txt')
    expect(await readFile(path.join(root, 'a', 'b', 'c.txt'), 'utf8')).toBe('héllo\n')
  })

  it('overwrites an existing file, keeping its mode', async () => {
    const root = await workspace({'run.sh': 'old'})
    await chmod(path.join(root, 'run.sh'), 0o751)
    await runWrite(root, {content: '#!/bin/sh\necho new\n', file_path: 'run.sh'})
    expect(await readFile(path.join(root, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho new\n')
    expect((await stat(path.join(root, 'run.sh'))).mode & 0o777).toBe(0o751)
  })

  it('writes content byte for byte, CRLF and empty content included', async () => {
    const root = await workspace({})
    await runWrite(root, {content: 'a\r\nb\r\n', file_path: 'crlf.txt'})
    expect(await readFile(path.join(root, 'crlf.txt'), 'utf8')).toBe('a\r\nb\r\n')
    expect(await runWrite(root, {content: '', file_path: 'empty.txt'})).toBe('Wrote 0 bytes to empty.txt')
    expect(await readFile(path.join(root, 'empty.txt'), 'utf8')).toBe('')
  })

  it('writes through a symlink to its real target, leaving the link in place', async () => {
    const root = await workspace({'real.txt': 'old'})
    await symlink('real.txt', path.join(root, 'link.txt'))
    expect(await runWrite(root, {content: 'new', file_path: 'link.txt'})).toBe('Wrote 3 bytes to real.txt')
    expect(await readFile(path.join(root, 'real.txt'), 'utf8')).toBe('new')
    expect((await lstat(path.join(root, 'link.txt'))).isSymbolicLink()).toBe(true)
  })

  it('refuses when a directory on the way is swapped for a link after the call was checked', async () => {
    const root = await workspace({'work/keep.txt': 'k'})
    const outside = await mkdtemp(path.join(tmpdir(), 'wave-outside-'))
    try {
      const deep = Array.from({length: 45}, (_, i) => `d${i}`).join('/')
      const input = {content: 'pwned', file_path: `work/${deep}/f.txt`}
      const ctx = await contextFor(root, input)
      // Between the decision and the write: work/ becomes a link out of the workspace.
      await rm(path.join(root, 'work'), {recursive: true})
      await symlink(outside, path.join(root, 'work'))
      await expect(write.run(input, ctx)).rejects.toThrow(/work became a symbolic link after it was checked; nothing was written/)
      expect(await readdir(outside)).toEqual([])
    } finally {
      await rm(outside, {force: true, recursive: true})
    }
  })

  it('refuses a directory', async () => {
    const root = await workspace({})
    await mkdir(path.join(root, 'dir'))
    await expect(runWrite(root, {content: 'x', file_path: 'dir'})).rejects.toThrow('dir is a directory; give the path of a file to write.')
  })
})
