import {symlink, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import grep, {searchWithin} from '../../../src/tools/grep.js'
import {ToolError} from '../../../src/tools/tool.js'
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

  it('shows 250 entries by default (head_limit), and pages on with offset until the last page', async () => {
    const many: Record<string, string> = {}
    for (let i = 0; i < 260; i++) many[`f${String(i).padStart(3, '0')}.txt`] = 'hit\nhit\n'
    const root = await workspace(many)
    const list = (await runGrep(root, {pattern: 'hit'})).split('\n')
    expect(list).toHaveLength(251)
    expect(list[250]).toBe('(more: showing files 1-250 of 260; pass offset: 250 for the next page, or narrow the pattern, path, glob or type)')
    // The next page: the rest, and no note, for there is nothing after it.
    const rest = (await runGrep(root, {offset: 250, pattern: 'hit'})).split('\n')
    expect(rest).toEqual(Array.from({length: 10}, (_, i) => `f${250 + i}.txt`))
    const content = (await runGrep(root, {output_mode: 'content', pattern: 'hit'})).split('\n')
    expect(content).toHaveLength(251)
    expect(content[0]).toBe('f000.txt:1:hit')
    expect(content[250]).toBe('(more: showing lines 1-250 of 520; pass offset: 250 for the next page, or narrow the pattern, path, glob or type)')
    const second = (await runGrep(root, {head_limit: 100, offset: 250, output_mode: 'content', pattern: 'hit'})).split('\n')
    expect(second[0]).toBe('f125.txt:1:hit')
    expect(second).toHaveLength(101)
    expect(second[100]).toMatch(/^\(more: showing lines 251-350 of 520; pass offset: 350/)
    expect((await runGrep(root, {head_limit: 0, output_mode: 'count', pattern: 'hit'})).split('\n')).toHaveLength(260)
    expect(await runGrep(root, {offset: 600, output_mode: 'count', pattern: 'hit'})).toBe('No files past offset 600: there are 260 in all.')
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
    expect(await runGrep(root, {output_mode: 'content', pattern: '^(a+)+$'})).toBe(
      `evil.txt:2:${'a'.repeat(60)}\nlong.txt:1:${'a'.repeat(500)}… [999500 more characters]`,
    )
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
    await expect(searchWithin(1, await contextFor(root, {}), {}, query)).rejects.toThrow(
      /^Grep timed out after 0\.001 s and was stopped\. Narrow path or glob, or simplify the pattern/,
    )
  })

  it('shows context lines as ripgrep does: -A, -B, -C and context, groups split by --, -n false', async () => {
    const root = await workspace({'a.txt': 'one\ntwo\nhit three\nfour\nfive\nsix\nseven\nhit eight\nnine\n', 'b.txt': 'hit b\n'})
    expect(await runGrep(root, {'-A': 1, output_mode: 'content', pattern: 'hit'})).toBe(
      ['a.txt:3:hit three', 'a.txt-4-four', '--', 'a.txt:8:hit eight', 'a.txt-9-nine', '--', 'b.txt:1:hit b'].join('\n'),
    )
    expect(await runGrep(root, {'-B': 2, output_mode: 'content', path: 'a.txt', pattern: 'hit'})).toBe(
      ['a.txt-1-one', 'a.txt-2-two', 'a.txt:3:hit three', '--', 'a.txt-6-six', 'a.txt-7-seven', 'a.txt:8:hit eight'].join('\n'),
    )
    // Groups that touch are one group; -C and context are the same; -A over -C.
    const both = [
      'a.txt-1-one',
      'a.txt-2-two',
      'a.txt:3:hit three',
      'a.txt-4-four',
      'a.txt-5-five',
      'a.txt-6-six',
      'a.txt-7-seven',
      'a.txt:8:hit eight',
      'a.txt-9-nine',
    ]
    expect(await runGrep(root, {'-C': 2, output_mode: 'content', path: 'a.txt', pattern: 'hit'})).toBe(both.join('\n'))
    expect(await runGrep(root, {context: 2, output_mode: 'content', path: 'a.txt', pattern: 'hit'})).toBe(both.join('\n'))
    expect(await runGrep(root, {'-A': 0, '-C': 1, output_mode: 'content', path: 'a.txt', pattern: 'hit'})).toBe(
      ['a.txt-2-two', 'a.txt:3:hit three', '--', 'a.txt-7-seven', 'a.txt:8:hit eight'].join('\n'),
    )
    expect(await runGrep(root, {'-n': false, output_mode: 'content', path: 'a.txt', pattern: 'hit'})).toBe('a.txt:hit three\na.txt:hit eight')
    // Context belongs to content mode only.
    expect(await runGrep(root, {'-C': 3, output_mode: 'count', pattern: 'hit'})).toBe('a.txt:2\nb.txt:1')
  })

  it('filters by type as ripgrep does, with glob too, and names the known types for an unknown one', async () => {
    const root = await workspace({Makefile: 'hit\n', 'a.ts': 'hit\n', 'b.tsx': 'hit\n', 'c.js': 'hit\n', 'd.py': 'hit\n', 'src/e.ts': 'hit\n'})
    expect(await runGrep(root, {pattern: 'hit', type: 'ts'})).toBe('a.ts\nb.tsx\nsrc/e.ts')
    expect(await runGrep(root, {pattern: 'hit', type: 'make'})).toBe('Makefile')
    expect(await runGrep(root, {glob: 'src/**', pattern: 'hit', type: 'ts'})).toBe('src/e.ts')
    await expect(runGrep(root, {pattern: 'hit', type: 'cobol'})).rejects.toThrow(/^Unknown file type "cobol"\. Known types: .*\bpy\b/)
  })

  it('matches across lines with multiline, where a line-by-line search finds nothing', async () => {
    const root = await workspace({
      'a.ts': 'interface Props {\n  name: string\n}\nconst x = 1\n',
      'b.ts': 'struct Point {\n  x: i32,\n}\n',
      'c.ts': 'interface Other {}\n',
    })
    expect(await runGrep(root, {pattern: String.raw`interface \w+ \{\n\s+name`})).toBe('No files found')
    expect(await runGrep(root, {multiline: true, pattern: String.raw`interface \w+ \{\n\s+name`})).toBe('a.ts')
    // . matches line breaks; every line a match spans is shown, and counted.
    expect(await runGrep(root, {multiline: true, output_mode: 'content', pattern: String.raw`\{.*?\}`})).toBe(
      [
        'a.ts:1:interface Props {',
        'a.ts:2:  name: string',
        'a.ts:3:}',
        'b.ts:1:struct Point {',
        'b.ts:2:  x: i32,',
        'b.ts:3:}',
        'c.ts:1:interface Other {}',
      ].join('\n'),
    )
    expect(await runGrep(root, {multiline: true, output_mode: 'count', pattern: String.raw`\{.*?\}`})).toBe('a.ts:3\nb.ts:3\nc.ts:1')
    // ^ and $ still anchor at line ends; context works too; -i as well.
    expect(await runGrep(root, {'-A': 1, multiline: true, output_mode: 'content', path: 'a.ts', pattern: String.raw`^\}\nCONST`, '-i': true})).toBe(
      'a.ts:3:}\na.ts:4:const x = 1',
    )
    expect(await runGrep(root, {multiline: true, output_mode: 'content', pattern: 'ü|Point'})).toBe('b.ts:1:struct Point {')
  })

  it('numbers multiline matches right after non-ASCII text', async () => {
    const root = await workspace({'u.txt': 'héllo wörld 🎉\nnext\nend 🎉 here\nlast\n'})
    expect(await runGrep(root, {multiline: true, output_mode: 'content', pattern: String.raw`🎉 here\nla`})).toBe('u.txt:3:end 🎉 here\nu.txt:4:last')
  })
})
