import {mkdir, symlink} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import read from '../../../src/tools/read.js'
import {ToolError} from '../../../src/tools/tool.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

async function runRead(root: string, input: {file_path: string; offset?: number; limit?: number}): Promise<string> {
  return read.run(input, await contextFor(root, input))
}

const numbered = (count: number) => Array.from({length: count}, (_, i) => `line ${i + 1}`).join('\n') + '\n'

describe('Read', () => {
  it('numbers lines as Claude Code does: the number flush left, a tab, the line (no cat -n padding)', async () => {
    const root = await workspace({'a.txt': 'alpha\nbeta\n\tgamma\n', 'n.txt': numbered(12)})
    expect(await runRead(root, {file_path: 'a.txt'})).toBe('1\talpha\n2\tbeta\n3\t\tgamma')
    // Across a change of width, as on every page past line 9: no number is padded to the widest.
    expect(await runRead(root, {file_path: 'n.txt', limit: 3, offset: 8})).toBe(
      '8\tline 8\n9\tline 9\n10\tline 10\n\n(Showing lines 8-10 of 12. To read on, call Read with offset=11.)',
    )
  })

  it('reads a last line without a line break, and strips CR of CRLF lines', async () => {
    const root = await workspace({'crlf.txt': 'one\r\ntwo\r\nthree'})
    expect(await runRead(root, {file_path: 'crlf.txt'})).toBe('1\tone\n2\ttwo\n3\tthree')
  })

  it('starts at the 1-based offset, reads limit lines, and says how to read on', async () => {
    const root = await workspace({'n.txt': numbered(10)})
    const output = await runRead(root, {file_path: 'n.txt', limit: 3, offset: 4})
    expect(output).toBe('4\tline 4\n5\tline 5\n6\tline 6\n\n(Showing lines 4-6 of 10. To read on, call Read with offset=7.)')
    expect(await runRead(root, {file_path: 'n.txt', offset: 0, limit: 1})).toContain('1\tline 1')
  })

  it('reads at most 2000 lines by default', async () => {
    const root = await workspace({'big.txt': Array.from({length: 2500}, (_, i) => `${i + 1}`).join('\n')})
    const output = await runRead(root, {file_path: 'big.txt'})
    expect(output).toContain('\n2000\t2000\n')
    expect(output).not.toContain('\t2001')
    expect(output).toContain('(Showing lines 1-2000 of 2500. To read on, call Read with offset=2001.)')
  })

  it('stops early enough for the result cap and points at the next line', async () => {
    const long = 'x'.repeat(1500)
    const root = await workspace({'wide.txt': Array.from({length: 100}, () => long).join('\n')})
    const output = await runRead(root, {file_path: 'wide.txt'})
    expect(output.length).toBeLessThanOrEqual(36_200)
    const shown = output.split('\n').filter((line) => line.includes('\t')).length
    expect(output).toContain(`To read on, call Read with offset=${shown + 1}.`)
  })

  it('cuts lines longer than 2000 characters with a marker', async () => {
    const root = await workspace({'min.js': 'a'.repeat(2500) + '\nshort\n'})
    const output = await runRead(root, {file_path: 'min.js'})
    expect(output).toContain(`1\t${'a'.repeat(2000)}… [line truncated: 500 more characters]`)
    expect(output).toContain('2\tshort')
  })

  it('stops at the end of the page in a large file, saying the file goes on', async () => {
    // 3 MB of 30-byte lines: past the page, more than the megabyte Read counts on before it stops.
    const content = numbered(100_000).replaceAll('line', 'line of a large log,')
    const root = await workspace({'big.log': content})
    const output = await runRead(root, {file_path: 'big.log', limit: 100, offset: 50})
    expect(output.split('\n').filter((line) => line.includes('\t'))).toHaveLength(100)
    expect(output).toContain('\n149\tline of a large log, 149\n')
    expect(output).toContain(`(Showing lines 50-149; the file goes on (${Buffer.byteLength(content)} bytes). To read on, call Read with offset=150.)`)
    // Read on from there: the next page starts where the note said.
    expect(await runRead(root, {file_path: 'big.log', limit: 1, offset: 150})).toMatch(/^150\tline of a large log, 150\n/)
  })

  it('cuts a line far longer than it keeps, counting the rest in bytes', async () => {
    // One 3 MB line, then a short one: only the start of the long line is kept, the rest is counted.
    const long = 'é'.repeat(10) + 'z'.repeat(3_000_000)
    const root = await workspace({'one-line.min.js': `${long}\r\nnext\n`})
    const output = await runRead(root, {file_path: 'one-line.min.js'})
    const shownPart = long.slice(0, 2000)
    expect(output).toBe(`1\t${shownPart}… [line truncated: ${Buffer.byteLength(long) - Buffer.byteLength(shownPart)} more bytes]\n2\tnext`)
  })

  it('says when the offset is past the end', async () => {
    const root = await workspace({'n.txt': numbered(3)})
    expect(await runRead(root, {file_path: 'n.txt', offset: 10})).toBe('n.txt has 3 lines; offset 10 is past the end.')
  })

  it('notes an empty file', async () => {
    const root = await workspace({'empty.txt': ''})
    expect(await runRead(root, {file_path: 'empty.txt'})).toBe('(empty.txt exists but is empty.)')
  })

  it('describes a binary file instead of dumping it', async () => {
    const root = await workspace({'img.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0xff])})
    expect(await runRead(root, {file_path: 'img.png'})).toBe('img.png: binary file, 8 bytes. Read shows text files only.')
  })

  it('shows text with a few invalid UTF-8 bytes, with replacement characters', async () => {
    const root = await workspace({'latin1.txt': Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' au lait, un texte assez long\n')])})
    expect(await runRead(root, {file_path: 'latin1.txt'})).toBe('1\tcaf\uFFFD au lait, un texte assez long')
  })

  it('keeps multi-byte characters that straddle read chunks', async () => {
    // The file is streamed in 64 KiB chunks: put a 4-byte emoji across the first boundary (byte 65536).
    const filler = ('x'.repeat(99) + '\n').repeat(655)
    const root = await workspace({'emoji.txt': filler + 'y'.repeat(35) + '😀 end\nlast\n'})
    expect(await runRead(root, {file_path: 'emoji.txt', offset: 656})).toBe(`656\t${'y'.repeat(35)}😀 end\n657\tlast`)
  })

  it('reads a file given by absolute path', async () => {
    const root = await workspace({'dir/a.txt': 'hello\n'})
    expect(await runRead(root, {file_path: path.join(root, 'dir', 'a.txt')})).toBe('1\thello')
  })

  it('refuses a directory, pointing at LS', async () => {
    const root = await workspace({})
    await mkdir(path.join(root, 'src'))
    const error = await runRead(root, {file_path: 'src'}).catch((error_: unknown) => error_)
    expect(error).toBeInstanceOf(ToolError)
    expect((error as Error).message).toMatch(/directory.*LS/)
  })

  it('reports a missing file', async () => {
    const root = await workspace({})
    await expect(runRead(root, {file_path: 'nope.txt'})).rejects.toThrow('File does not exist: nope.txt')
  })

  it('reads the file behind the checked real path', async () => {
    const root = await workspace({'real.txt': 'through the link\n'})
    await symlink(path.join(root, 'real.txt'), path.join(root, 'link.txt'))
    expect(await runRead(root, {file_path: 'link.txt'})).toBe('1\tthrough the link')
  })

  it('refuses what is not a regular file', async () => {
    const root = await workspace({})
    const ctx = await contextFor(root, {file_path: 'fifo'})
    const target = {...ctx.target!, kind: 'other' as const}
    await expect(read.run({file_path: 'fifo'}, {...ctx, target})).rejects.toThrow(/not a regular file/)
  })
})
