import {chmod, mkdtemp, readFile, rm, stat, symlink, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import edit from '../../../src/tools/edit.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

type EditInput = Parameters<typeof edit.run>[0]
async function runEdit(root: string, input: EditInput): Promise<string> {
  return edit.run(input, await contextFor(root, input))
}

const contentOf = (root: string, file: string) => readFile(path.join(root, file), 'utf8')

describe('Edit', () => {
  it('replaces a unique occurrence', async () => {
    const root = await workspace({'a.ts': 'const a = 1\nconst b = 2\n'})
    expect(await runEdit(root, {file_path: 'a.ts', new_string: 'const b = 3', old_string: 'const b = 2'})).toBe('Edited a.ts: replaced 1 occurrence.')
    expect(await contentOf(root, 'a.ts')).toBe('const a = 1\nconst b = 3\n')
  })

  it('refuses an ambiguous old_string unless replace_all is set', async () => {
    const root = await workspace({'a.ts': 'x = 1\nx = 1\nx = 1\n'})
    await expect(runEdit(root, {file_path: 'a.ts', new_string: 'x = 2', old_string: 'x = 1'})).rejects.toThrow(
      /occurs 3 times in a\.ts.*more surrounding lines.*replace_all/,
    )
    expect(await contentOf(root, 'a.ts')).toBe('x = 1\nx = 1\nx = 1\n')
    expect(await runEdit(root, {file_path: 'a.ts', new_string: 'x = 2', old_string: 'x = 1', replace_all: true})).toBe('Edited a.ts: replaced 3 occurrences.')
    expect(await contentOf(root, 'a.ts')).toBe('x = 2\nx = 2\nx = 2\n')
  })

  it('says when old_string is not found', async () => {
    const root = await workspace({'a.ts': 'hello\n'})
    await expect(runEdit(root, {file_path: 'a.ts', new_string: 'b', old_string: 'absent'})).rejects.toThrow(/old_string was not found in a\.ts/)
  })

  it('refuses identical strings and a missing file, suggesting Write', async () => {
    const root = await workspace({'a.ts': 'same\n'})
    await expect(runEdit(root, {file_path: 'a.ts', new_string: 'same', old_string: 'same'})).rejects.toThrow(/the same/)
    await expect(runEdit(root, {file_path: 'new.ts', new_string: 'x', old_string: 'y'})).rejects.toThrow(
      'File does not exist: new.ts. Use Write to create a new file.',
    )
  })

  it('keeps $ patterns in new_string literal', async () => {
    const root = await workspace({'a.js': 'price = X\n'})
    await runEdit(root, {file_path: 'a.js', new_string: "'$&' + $1 + $$", old_string: 'X'})
    expect(await contentOf(root, 'a.js')).toBe("price = '$&' + $1 + $$\n")
  })

  it('keeps CRLF line endings when the strings use LF', async () => {
    const root = await workspace({'win.txt': 'one\r\ntwo\r\nthree\r\n'})
    await runEdit(root, {file_path: 'win.txt', new_string: 'TWO\nand a half', old_string: 'one\ntwo'})
    expect(await contentOf(root, 'win.txt')).toBe('TWO\r\nand a half\r\nthree\r\n')
  })

  it('falls back to the strings as given in a file with mixed line endings', async () => {
    const root = await workspace({'mixed.txt': 'a\r\nb\r\nc\nd\r\n'})
    await runEdit(root, {file_path: 'mixed.txt', new_string: 'C\nD', old_string: 'c\nd'})
    expect(await contentOf(root, 'mixed.txt')).toBe('a\r\nb\r\nC\nD\r\n')
  })

  it('keeps the file mode and a byte order mark', async () => {
    const root = await workspace({'bom.txt': '\uFEFFfirst line\n'})
    await chmod(path.join(root, 'bom.txt'), 0o640)
    await runEdit(root, {file_path: 'bom.txt', new_string: 'second', old_string: 'first'})
    const bytes = await readFile(path.join(root, 'bom.txt'))
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    expect(bytes.subarray(3).toString('utf8')).toBe('second line\n')
    expect((await stat(path.join(root, 'bom.txt'))).mode & 0o777).toBe(0o640)
  })

  it('fills an empty file from an empty old_string, and refuses that on a non-empty one', async () => {
    const root = await workspace({'empty.txt': '', 'full.txt': 'content\n'})
    await runEdit(root, {file_path: 'empty.txt', new_string: 'now filled\n', old_string: ''})
    expect(await contentOf(root, 'empty.txt')).toBe('now filled\n')
    await expect(runEdit(root, {file_path: 'full.txt', new_string: 'x', old_string: ''})).rejects.toThrow(/old_string is empty/)
    expect(await contentOf(root, 'full.txt')).toBe('content\n')
  })

  it('refuses binary files and files that are not valid UTF-8, leaving them unchanged', async () => {
    const latin1 = Buffer.from('caf\u00e9 au lait, a long enough text\n', 'latin1')
    const root = await workspace({'bin.dat': Buffer.from([0x61, 0, 0x62]), 'latin1.txt': latin1})
    await expect(runEdit(root, {file_path: 'bin.dat', new_string: 'c', old_string: 'a'})).rejects.toThrow(/binary file/)
    await expect(runEdit(root, {file_path: 'latin1.txt', new_string: 'tea', old_string: 'lait'})).rejects.toThrow(/not valid UTF-8/)
    expect(await readFile(path.join(root, 'latin1.txt'))).toEqual(latin1)
  })

  it('edits the file a symlink leads to', async () => {
    const root = await workspace({'real.txt': 'old\n'})
    await symlink('real.txt', path.join(root, 'link.txt'))
    expect(await runEdit(root, {file_path: 'link.txt', new_string: 'new', old_string: 'old'})).toBe('Edited real.txt: replaced 1 occurrence.')
    expect(await contentOf(root, 'real.txt')).toBe('new\n')
  })

  it("refuses when the file's directory is swapped for a link after the call was checked", async () => {
    const root = await workspace({'src/a.ts': 'const a = 1\n'})
    const outside = await mkdtemp(path.join(tmpdir(), 'wave-outside-'))
    try {
      await writeFile(path.join(outside, 'a.ts'), 'const a = 1\n')
      const input = {file_path: 'src/a.ts', new_string: 'const a = 2', old_string: 'const a = 1'}
      const ctx = await contextFor(root, input)
      await rm(path.join(root, 'src'), {recursive: true})
      await symlink(outside, path.join(root, 'src'))
      await expect(edit.run(input, ctx)).rejects.toThrow(/src became a symbolic link after it was checked/)
      expect(await readFile(path.join(outside, 'a.ts'), 'utf8')).toBe('const a = 1\n')
    } finally {
      await rm(outside, {force: true, recursive: true})
    }
  })
})
