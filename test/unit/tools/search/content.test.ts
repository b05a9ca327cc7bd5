import {mkdir, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import {listFiles, searchFiles} from '../../../../src/tools/search/engine.js'
import {type ContentQuery, DEFERRED, requiredLiterals, Searcher} from '../../../../src/tools/search/content.js'
import glob from '../../../../src/tools/glob.js'
import grep from '../../../../src/tools/grep.js'
import {contextFor, useWorkspaces} from '../context.js'

// The shortcuts the search takes for speed (bench/RESULTS.md) must give the answers the plain way gives.

const workspace = useWorkspaces()

type GrepInput = Parameters<typeof grep.run>[0]
async function runGrep(root: string, input: GrepInput): Promise<string> {
  return grep.run(input, await contextFor(root, input))
}

async function list(root: string, pattern?: string): Promise<string[]> {
  return (await listFiles(root, root, {pattern})).map((file) => path.relative(root, file)).sort()
}

describe('requiredLiterals', () => {
  it('finds the runs of plain characters every match contains', () => {
    expect(requiredLiterals('needle')).toEqual(['needle'])
    expect(requiredLiterals(String.raw`TODO\(perf\)`)).toEqual(['TODO(perf)'])
    expect(requiredLiterals(String.raw`function \w+_handler\(`)).toEqual(['_handler(', 'function '])
    expect(requiredLiterals(String.raw`^export \{\w+\}$`)).toEqual(['export {'])
  })

  it('leaves out what may be missing or is not one plain character', () => {
    expect(requiredLiterals('foo|bar')).toEqual([])
    expect(requiredLiterals('(foo|bar)baz')).toEqual(['baz'])
    expect(requiredLiterals('colou?r')).toEqual(['colo'])
    expect(requiredLiterals('ab*cd')).toEqual(['cd'])
    expect(requiredLiterals('xa{2,3}yz')).toEqual(['yz'])
    expect(requiredLiterals('ab+cd')).toEqual(['ab', 'cd'])
    expect(requiredLiterals('abc.X_')).toEqual(['X_', 'abc'])
    expect(requiredLiterals(String.raw`\u0041BC\d\x41yz`)).toEqual(['BC', 'yz'])
    expect(requiredLiterals(String.raw`(a)\1bc\cJde\k<n>fg`)).toEqual(['bc', 'de', 'fg'])
    expect(requiredLiterals('[abc]de.fg')).toEqual(['de', 'fg'])
    expect(requiredLiterals('a\uD83D\uDE00?bc')).toEqual(['bc'])
  })
})

describe('Grep shortcuts', () => {
  it('matches line by line where a whole-text scan would not', async () => {
    const root = await workspace({
      'crlf.txt': 'one foo\r\ntwo\r\n',
      'end.txt': 'foo\nbar\n',
      'span.txt': 'a\nb\n',
    })
    // At the end of a line, what may follow sees the end of the line, not the CR or the line break.
    expect(await runGrep(root, {pattern: String.raw`foo\s*$`})).toBe('crlf.txt\nend.txt')
    expect(await runGrep(root, {pattern: String.raw`foo[\s\S]`})).toBe('No files found')
    // `$` before the CR of a CRLF line break.
    expect(await runGrep(root, {output_mode: 'content', pattern: 'foo$'})).toBe('crlf.txt:1:one foo\nend.txt:1:foo')
    // A match may not span lines.
    expect(await runGrep(root, {pattern: 'a[^z]*b'})).toBe('No files found')
  })

  it('settles a line by the scan only where the line alone would match', async () => {
    const root = await workspace({'mid.txt': 'a\rb\nc\u2028d\n', 'two.txt': 'ab\ncd\n'})
    // For the m flag a lone CR and U+2028 end lines; for Grep they do not.
    expect(await runGrep(root, {output_mode: 'count', pattern: '^b'})).toBe('No files found')
    expect(await runGrep(root, {output_mode: 'count', pattern: 'c$'})).toBe('No files found')
    expect(await runGrep(root, {output_mode: 'count', pattern: String.raw`b\s*c`})).toBe('No files found')
    expect(await runGrep(root, {output_mode: 'content', pattern: String.raw`\w\b`})).toBe('mid.txt:1:a\rb\nmid.txt:2:c\u2028d\ntwo.txt:1:ab\ntwo.txt:2:cd')
  })

  it('counts lines as the plain split does, empty matches included', async () => {
    const root = await workspace({'a.txt': 'x\n\ny\n', 'b.txt': 'x\ny', 'c.txt': '', 'd.txt': '\n'})
    expect(await runGrep(root, {output_mode: 'count', pattern: '^'})).toBe('a.txt:3\nb.txt:2\nd.txt:1')
    expect(await runGrep(root, {output_mode: 'count', pattern: 'y*'})).toBe('a.txt:3\nb.txt:2\nd.txt:1')
    expect(await runGrep(root, {output_mode: 'content', pattern: '^$'})).toBe('a.txt:2:\nd.txt:1:')
  })

  it('finds a case-insensitive literal in any case, and non-ASCII text', async () => {
    const root = await workspace({'a.txt': 'the NeEdLe here\n', 'b.txt': 'none\n', 'c.txt': 'ÉCOLE\n'})
    expect(await runGrep(root, {'-i': true, pattern: 'needle'})).toBe('a.txt')
    expect(await runGrep(root, {pattern: '(?i)NEEDLE here'})).toBe('a.txt')
    expect(await runGrep(root, {'-i': true, pattern: 'école'})).toBe('c.txt')
  })

  it('rules files out by the caseless part of a case-insensitive literal, and finds the rest in any case', async () => {
    const root = await workspace({
      'a.txt': 'const USER_ID_42 = 1\n',
      'b.txt': 'const user_id_42 = 2\n',
      'c.txt': 'const user-id-42 = 3\n',
      'd.txt': 'const user_id_43 = 4\n',
    })
    expect(await runGrep(root, {'-i': true, pattern: 'User_Id_42'})).toBe('a.txt\nb.txt')
    expect(await runGrep(root, {'-i': true, output_mode: 'count', pattern: 'id_4'})).toBe('a.txt:1\nb.txt:1\nd.txt:1')
  })

  it('decodes as before: no byte order mark, invalid bytes replaced, binary skipped', async () => {
    const root = await workspace({
      'bom.txt': '\uFEFFhello\n',
      'latin1.txt': Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' hit, and enough text to stay under a tenth\n')]),
      'nul.bin': Buffer.from([0x68, 0x69, 0x74, 0x00]),
    })
    expect(await runGrep(root, {output_mode: 'content', pattern: '^hello'})).toBe('bom.txt:1:hello')
    expect(await runGrep(root, {output_mode: 'content', pattern: 'hit'})).toBe('latin1.txt:1:caf\uFFFD hit, and enough text to stay under a tenth')
  })
})

describe('reading files', () => {
  it('reads a file whole whatever its size against the read buffer (256 KB): the needle at its very end', async () => {
    const sizes = [0, 1, 256 * 1024 - 7, 256 * 1024 - 6, 256 * 1024 - 5, 1024 * 1024 + 3]
    const tree: Record<string, string> = {}
    for (const size of sizes) tree[`f${size}.txt`] = size < 6 ? 'x'.repeat(size) : `${'x'.repeat(size - 6)}needle`
    const root = await workspace(tree)
    // One Searcher, as a search reuses it: its buffer grows on the large file, and smaller ones after it still read whole.
    const searcher = new Searcher()
    const query: ContentQuery = {flags: '', maxFileBytes: 10 * 1024 * 1024, maxLineChars: 100, maxLines: 10, mode: 'files_with_matches', source: 'needle'}
    const found = [...sizes, ...sizes].map((size) => Boolean(searcher.search(path.join(root, `f${size}.txt`), query)))
    expect(found).toEqual([...sizes, ...sizes].map((size) => size >= 6))
  })
})

describe('the main thread keeps to cheap files', () => {
  const query = (source: string, mode: ContentQuery['mode'] = 'count'): ContentQuery => ({
    flags: '',
    maxFileBytes: 10 << 20,
    maxLineChars: 500,
    maxLines: 500,
    mode,
    source,
  })

  it('leaves a file whose worst-case matching work is over its budget to a worker', async () => {
    const root = await workspace({'big.txt': `${'ab'.repeat(500_000)}\n`, 'small.txt': 'ab\n'})
    const searcher = new Searcher()
    // About 1 MB times the program of [ab]{500}c: far over a budget of a million.
    expect(searcher.search(path.join(root, 'big.txt'), query('[ab]{500}c'), 1_000_000)).toBe(DEFERRED)
    expect(searcher.search(path.join(root, 'small.txt'), query('[ab]{500}c'), 1_000_000)).toBeUndefined()
    // A plain string costs one unit per byte; files without the literal are ruled out before any cost.
    expect(searcher.search(path.join(root, 'big.txt'), query('ba'), 2_000_000)).toMatchObject({count: 1})
    expect(searcher.search(path.join(root, 'big.txt'), query(String.raw`zz\d{500}`), 1)).toBeUndefined()
  })

  it('still answers for deferred files where no worker can be started (a TypeScript loader)', async () => {
    const root = await workspace({'big.txt': `${'ab'.repeat(2_000_000)}c\n`, 'other.txt': 'abc\n'})
    const result = await searchFiles([path.join(root, 'big.txt'), path.join(root, 'other.txt')], query('[ab]{200}c', 'files_with_matches'))
    expect(result.matches.map((match) => path.basename(match.file))).toEqual(['big.txt'])
  })
})

describe('ignore files, read quickly', () => {
  it('applies prefix, suffix, negated, anchored and CRLF rules as before', async () => {
    const root = await workspace({
      '.gitignore': '\uFEFF# build output\r\nnpm-debug.log*\r\n*.log\r\n!keep.log\r\n/out\r\nsrc/generated/\r\n',
      'a.log': '',
      'keep.log': '',
      'npm-debug.log.1': '',
      'out/x.ts': '',
      'src/generated/g.ts': '',
      'src/out/y.ts': '',
      'src/z.ts': '',
    })
    expect(await list(root)).toEqual(['.gitignore', 'keep.log', 'src/out/y.ts', 'src/z.ts'])
  })

  it('asks the rules about every name when one is not simple', async () => {
    const root = await workspace({'.gitignore': '[ab].txt\nfoo/**/bar\n', 'a.txt': '', 'c.txt': '', 'foo/x/bar': '', 'foo/x/baz': ''})
    expect(await list(root)).toEqual(['.gitignore', 'c.txt', 'foo/x/baz'])
  })
})

describe('glob patterns, crawled selectively', () => {
  it('matches as tinyglobby did: directories expand, top-level patterns stay top-level', async () => {
    const root = await workspace({
      'README.md': '',
      'a/b/c.ts': '',
      'a/d.ts': '',
      'docs/x.md': '',
      'lib/e.js': '',
      'src/f.ts': '',
      'src/sub/g.ts': '',
    })
    expect(await list(root, 'src')).toEqual(['src/f.ts', 'src/sub/g.ts'])
    expect(await list(root, 'src/')).toEqual(['src/f.ts', 'src/sub/g.ts'])
    expect(await list(root, '*.md')).toEqual(['README.md'])
    expect(await list(root, '*/*.ts')).toEqual(['a/d.ts', 'src/f.ts'])
    expect(await list(root, '{a,lib}/**/*.{ts,js}')).toEqual(['a/b/c.ts', 'a/d.ts', 'lib/e.js'])
    expect(await list(root, '**/b/*.ts')).toEqual(['a/b/c.ts'])
    expect(await list(root, './src/*.ts')).toEqual(['src/f.ts'])
    // A pattern naming a file lists it; one naming a directory lists what it holds.
    expect(await list(root, 'README.md')).toEqual(['README.md'])
    expect(await list(root, 'a/d.ts')).toEqual(['a/d.ts'])
    expect(await list(root, 'a/b')).toEqual(['a/b/c.ts'])
    expect(await list(root, 'src/**')).toEqual(['src/f.ts', 'src/sub/g.ts'])
  })

  it('finds nothing below a literal prefix that is ignored', async () => {
    const root = await workspace({'.gitignore': 'vendor/\n', 'vendor/lib/a.ts': ''})
    expect(await list(root, 'vendor/lib/*.ts')).toEqual([])
    const output = await glob.run({pattern: '*.ts', path: 'vendor/lib'}, await contextFor(root, {path: 'vendor/lib'}))
    expect(output).toBe('vendor/lib/a.ts')
  })

  it('lists a large tree in full', async () => {
    const root = await workspace({})
    for (let d = 0; d < 30; d++) {
      await mkdir(path.join(root, `d${d}`))
      await Promise.all(Array.from({length: 100}, (_, f) => writeFile(path.join(root, `d${d}`, `f${f}.txt`), f % 10 === 0 ? 'hit\n' : 'miss\n')))
    }

    expect(await list(root)).toHaveLength(3000)
    const count = (await runGrep(root, {output_mode: 'count', pattern: 'hit'})).split('\n')
    expect(count).toHaveLength(251)
    expect(count[0]).toBe('d0/f0.txt:1')
    expect(count[250]).toBe('(more: showing files 1-250 of 300; pass offset: 250 for the next page, or narrow the pattern, path, glob or type)')
    // One line in each of 300 files: content mode pages by lines (head_limit 300 shows them all), not files.
    const content = (await runGrep(root, {head_limit: 300, output_mode: 'content', pattern: 'hit'})).split('\n')
    expect(content).toHaveLength(300)
    expect(content[0]).toBe('d0/f0.txt:1:hit')
    // Ten times more lines than can be shown: the first 500 in path order, and the total.
    const every = (await runGrep(root, {head_limit: 500, output_mode: 'content', pattern: 'i'})).split('\n')
    expect(every).toHaveLength(501)
    expect(every[0]).toBe('d0/f0.txt:1:hit')
    expect(every[500]).toBe('(more: showing lines 1-500 of 3000; pass offset: 500 for the next page, or narrow the pattern, path, glob or type)')
  })
})
