import {symlink, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import grep, {searchWithin} from '../../src/plugins/grep.js'
import {ToolError} from '../../src/plugins/tool.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

type GrepInput = Parameters<typeof grep.run>[0]
async function runGrep(root: string, input: GrepInput): Promise<string> {
  return grep.run(input, await contextFor(root, input))
}

const files = {
  'README.md': 'TODO: write docs\n',
  'src/a.ts': 'const a = 1\n// TODO fix a\nexport {a}\n',
  'src/deep/b.ts': 'todo lower case\nTODO upper\r\nTODO again\n',
  'src/c.js': 'nothing here\n',
}

describe('Grep', () => {
  it('lists files with matches by default, sorted, relative to the root', async () => {
    const root = await workspace(files)
    expect(await runGrep(root, {pattern: 'TODO'})).toBe('README.md\nsrc/a.ts\nsrc/deep/b.ts')
  })

  it('shows path:line:text in content mode, without the CR of CRLF lines', async () => {
    const root = await workspace(files)
    expect(await runGrep(root, {output_mode: 'content', pattern: 'TODO'})).toBe(
      'README.md:1:TODO: write docs\nsrc/a.ts:2:// TODO fix a\nsrc/deep/b.ts:2:TODO upper\nsrc/deep/b.ts:3:TODO again',
    )
  })

  it('counts matching lines per file', async () => {
    const root = await workspace(files)
    expect(await runGrep(root, {output_mode: 'count', pattern: 'TODO'})).toBe('README.md:1\nsrc/a.ts:1\nsrc/deep/b.ts:2')
  })

  it('searches case-insensitively with -i or a leading (?i)', async () => {
    const root = await workspace(files)
    expect(await runGrep(root, {'-i': true, output_mode: 'count', pattern: 'todo'})).toBe('README.md:1\nsrc/a.ts:1\nsrc/deep/b.ts:3')
    expect(await runGrep(root, {output_mode: 'count', pattern: '(?i)todo', path: 'src/deep'})).toBe('src/deep/b.ts:3')
  })

  it('finds plain text, non-ASCII included, and a slash in the pattern', async () => {
    const root = await workspace({'a.txt': 'un café\n', 'b.txt': 'cafe\n', 'c.txt': 'see src/a.ts\n'})
    expect(await runGrep(root, {output_mode: 'content', pattern: 'café'})).toBe('a.txt:1:un café')
    expect(await runGrep(root, {pattern: 'src/a.ts'})).toBe('c.txt')
  })

  it('takes JavaScript regex syntax, with anchors per line', async () => {
    const root = await workspace(files)
    expect(await runGrep(root, {output_mode: 'content', pattern: String.raw`^export \{\w+\}$`})).toBe('src/a.ts:3:export {a}')
  })

  it('filters by glob at any depth, relative to the searched directory', async () => {
    const root = await workspace(files)
    expect(await runGrep(root, {glob: '*.ts', pattern: 'TODO'})).toBe('src/a.ts\nsrc/deep/b.ts')
    expect(await runGrep(root, {glob: 'deep/**', path: 'src', pattern: 'TODO'})).toBe('src/deep/b.ts')
    expect(await runGrep(root, {glob: '*.{md,js}', pattern: '.'})).toBe('README.md\nsrc/c.js')
  })

  it('searches only the file that path names', async () => {
    const root = await workspace(files)
    expect(await runGrep(root, {output_mode: 'content', path: 'src/a.ts', pattern: 'a'})).toBe(
      'src/a.ts:1:const a = 1\nsrc/a.ts:2:// TODO fix a\nsrc/a.ts:3:export {a}',
    )
  })

  it('respects .gitignore and skips binary files', async () => {
    const root = await workspace({
      '.gitignore': 'dist/\n',
      'bin.dat': Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2])]),
      'dist/out.js': 'TODO\n',
      'src.ts': 'TODO\n',
    })
    expect(await runGrep(root, {pattern: 'TODO'})).toBe('src.ts')
  })

  it('skips files over 10 MB', async () => {
    const root = await workspace({'small.txt': 'needle\n'})
    await writeFile(path.join(root, 'huge.txt'), 'needle\n' + 'x'.repeat(10 * 1024 * 1024))
    expect(await runGrep(root, {pattern: 'needle'})).toBe('small.txt')
  })

  it('reports no match in each mode', async () => {
    const root = await workspace(files)
    expect(await runGrep(root, {pattern: 'absent'})).toBe('No files found')
    expect(await runGrep(root, {output_mode: 'content', pattern: 'absent'})).toBe('No matches found')
    expect(await runGrep(root, {output_mode: 'count', pattern: 'absent'})).toBe('No files found')
  })

  it('rejects an invalid regex with the regex error', async () => {
    const root = await workspace(files)
    const error = await runGrep(root, {pattern: 'foo('}).catch((error_: unknown) => error_)
    expect(error).toBeInstanceOf(ToolError)
    expect((error as Error).message).toBe('Invalid regular expression: missing closing ): `foo(`.')
  })

  it('caps files at 250 and content lines at 500, with visible notes', async () => {
    const many: Record<string, string> = {}
    for (let i = 0; i < 260; i++) many[`f${String(i).padStart(3, '0')}.txt`] = 'hit\nhit\n'
    const root = await workspace(many)
    const list = (await runGrep(root, {pattern: 'hit'})).split('\n')
    expect(list).toHaveLength(251)
    expect(list[250]).toBe('(truncated: showing 250 of 260 files; narrow the pattern, path or glob)')
    const content = (await runGrep(root, {output_mode: 'content', pattern: 'hit'})).split('\n')
    expect(content).toHaveLength(501)
    expect(content[0]).toBe('f000.txt:1:hit')
    expect(content[500]).toBe('(truncated: showing 500 of 520 matching lines; narrow the pattern, path or glob)')
  })

  it('cuts very long matching lines', async () => {
    const root = await workspace({'min.js': 'x'.repeat(600) + 'needle\n'})
    const output = await runGrep(root, {output_mode: 'content', pattern: 'needle'})
    expect(output).toBe(`min.js:1:${'x'.repeat(500)}… [106 more characters]`)
  })

  it('leaves out files the context says are not readable, and symlinks out of the workspace', async () => {
    const root = await workspace({'a.txt': 'hit\n', 'b.txt': 'hit\n'})
    const outside = await workspace({'secret.txt': 'hit\n'})
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'leak.txt'))
    await symlink(outside, path.join(root, 'escape'))
    const ctx = await contextFor(root, {})
    expect(await grep.run({pattern: 'hit'}, ctx)).toBe('a.txt\nb.txt')
    expect(await grep.run({pattern: 'hit'}, {...ctx, readable: async (file) => !file.endsWith('b.txt')})).toBe('a.txt')
  })

  it('rejects a missing path', async () => {
    const root = await workspace(files)
    await expect(runGrep(root, {path: 'nope', pattern: 'x'})).rejects.toThrow('Path does not exist: nope')
  })

  it('answers catastrophic patterns on long lines at once, in every mode', async () => {
    // Each pattern takes V8's backtracking engine minutes or more on these lines.
    const root = await workspace({
      'evil.txt': `${'a'.repeat(50)}b\n${'a'.repeat(60)}\n`,
      'long.txt': `${'a'.repeat(1_000_000)}\n`,
      'words.txt': `${'word '.repeat(5000)}!\n`,
    })
    const started = performance.now()
    expect(await runGrep(root, {output_mode: 'content', pattern: '^(a+)+$'})).toBe(`evil.txt:2:${'a'.repeat(60)}\nlong.txt:1:${'a'.repeat(500)}… [999500 more characters]`)
    expect(await runGrep(root, {output_mode: 'count', pattern: '(a|aa)+b'})).toBe('evil.txt:1')
    expect(await runGrep(root, {pattern: String.raw`(\w+\s?)+$`})).toBe('evil.txt\nlong.txt')
    expect(await runGrep(root, {pattern: String.raw`\w+_\d+ =`})).toBe('No files found')
    expect(await runGrep(root, {glob: '*a*a*a*a*a*a*a*a*a*a*b', pattern: 'a'})).toBe('No files found')
    expect(performance.now() - started).toBeLessThan(5000)
  })

  it('refuses what a linear-time engine cannot do, naming it', async () => {
    const root = await workspace(files)
    await expect(runGrep(root, {pattern: String.raw`(TODO)\1`})).rejects.toThrow(/^Backreferences \(\\1\) are not supported/)
    await expect(runGrep(root, {pattern: 'TODO(?= fix)'})).rejects.toThrow(/^Lookahead \(\?=\.\.\.\) is not supported/)
    await expect(runGrep(root, {pattern: '(?<!a )TODO'})).rejects.toThrow(/^Lookbehind \(\?<!\.\.\.\) is not supported/)
    await expect(runGrep(root, {glob: '!(a).ts', pattern: 'TODO'})).rejects.toThrow(ToolError)
  })

  it('stops a search that outlasts its time limit with an error result', async () => {
    const many: Record<string, string> = {}
    for (let i = 0; i < 3000; i++) many[`d${i % 30}/f${i}.txt`] = 'x\n'.repeat(50)
    const root = await workspace(many)
    const query = {flags: '', maxFileBytes: 1 << 20, maxLineChars: 500, maxLines: 500, mode: 'count' as const, source: 'x+'}
    await expect(searchWithin(1, await contextFor(root, {}), undefined, query)).rejects.toThrow(
      /^Grep timed out after 0\.001 s and was stopped\. Narrow path or glob, or simplify the pattern/,
    )
  })
})
