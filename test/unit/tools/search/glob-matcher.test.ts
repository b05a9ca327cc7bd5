import picomatch from 'picomatch'
import {describe, expect, it} from 'vitest'

import {globMatcher, MAX_GLOB_LENGTH} from '../../../../src/tools/search/glob-matcher.js'
import {PatternError} from '../../../../src/tools/search/linear-regex.js'

const paths = [
  'a.ts',
  'README.md',
  '.env',
  '.github/workflows/ci.yml',
  'src/a.ts',
  'src/a.test.ts',
  'src/deep/er/b.tsx',
  'src/deep/.hidden/c.ts',
  'src/x.js',
  'lib/index.d.ts',
  'docs/a b/c [1].md',
  'weird\nname.ts',
  'pkg/node_modules/m/index.js',
  'a/b/c/d/e/f/g.ts',
  'file{1}.txt',
]

describe('globMatcher answers as picomatch does for crawled paths', () => {
  it.each([
    '**/*.ts',
    '*.ts',
    '*.md',
    'src/**',
    'src/**/*.{ts,tsx}',
    '**/*.test.*',
    '**/.*',
    '.github/**/*.yml',
    'src/*/er/*.tsx',
    'src/?.ts',
    '[a-c]*.ts',
    '**/[!a]*.ts',
    'docs/**/*.md',
    '**/node_modules/**',
    'a/**/g.ts',
    '@(src|lib)/**/*.ts',
    '*(a|b).ts',
    '+(a).ts',
    'file{1}.txt',
    '!*.ts',
    'lib/index.d.ts',
  ])('%s', (glob) => {
    const expected = picomatch(glob, {dot: true, posix: true})
    const actual = globMatcher(glob, {posix: true})
    for (const path of paths) expect(actual(path), `${glob} on ${JSON.stringify(path)}`).toBe(expected(path))
  })
})

describe('globMatcher cannot hang', () => {
  // picomatch's regex for these backtracks for hours on the names below.
  it.each<[string, string]>([
    ['*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(250)],
    ['**/*a*a*a*a*a*a*a*a*a*a*b', `${'a/'.repeat(100)}${'a'.repeat(250)}`],
    ['*?*?*?*?*?*?*?*?*?*?*?*?x', 'y'.repeat(250)],
    ['**/**/**/**/**/**/**/**/**/**/x', 'a/'.repeat(2000)],
    ['@(a|aa)@(a|aa)@(a|aa)*@(a|aa)*@(a|aa)*@(a|aa)*b', 'a'.repeat(250)],
  ])('%s on a long name', (glob, path) => {
    const started = performance.now()
    expect(globMatcher(glob)(path)).toBe(false)
    expect(performance.now() - started).toBeLessThan(1000)
  })

  it('refuses a negated extglob, which needs lookaround', () => {
    expect(() => globMatcher('!(foo)*.js')).toThrow(PatternError)
    expect(() => globMatcher('src/!(foo).js')).toThrow(/negated extglob !\(\.\.\.\), which Grep and Glob do not support/)
  })

  it(`refuses a glob longer than ${MAX_GLOB_LENGTH} characters`, () => {
    expect(() => globMatcher(`${'{a,b}'.repeat(1000)}`)).toThrow(/at most 4096 are allowed/)
  })
})
