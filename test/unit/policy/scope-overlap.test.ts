import {describe, expect, it} from 'vitest'

import {covers, mayOverlap} from '../../../src/policy/scope-overlap.js'
import {scopeMatcher} from '../../../src/policy/scope.js'

// Entries of the kinds plans write: directories, files, globs by directory, by depth and by extension.
const ENTRIES = [
  'src',
  'src/',
  'src/api',
  'src/api/',
  'src/web',
  'src/a.ts',
  'src/api/index.ts',
  'docs',
  'README.md',
  '.github',
  '**',
  '*.md',
  '**/*.md',
  'src/**',
  'src/**/*.ts',
  'src/**/*.css',
  'src/*.ts',
  'src/*',
  'src/*/index.ts',
  'src/api/**',
  'src/api/**/*.ts',
  'src/api/*.ts',
  'src/web/**',
  'src/{api,web}/**',
  'src/a?.ts',
  'src/[ab].ts',
  'test/**/*.test.ts',
  'test/api/**',
  '!src/**',
  'src/**/*.d.ts',
]

// Paths to try every entry on: below, beside and at each entry's base, at several depths, with several names.
const DIRS = ['', 'src', 'src/api', 'src/api/deep', 'src/web', 'src/a.ts', 'src/api/index.ts', 'docs', 'test', 'test/api', '.github', 'lib']
const NAMES = ['a.ts', 'ab.ts', 'b.ts', 'x.css', 'index.ts', 'README.md', 'x.d.ts', 'api', 'web', 'src', 'x.test.ts', 'ci.yml']
const PATHS = DIRS.flatMap((dir) => NAMES.map((name) => (dir ? `${dir}/${name}` : name)))
// Each entry's matches, once: the pairs below ask of them 900 times.
const MATCHES = new Map(ENTRIES.map((entry) => [entry, new Set(PATHS.filter((file) => scopeMatcher([entry])(file)))]))
const matches = (entry: string, file: string) => MATCHES.get(entry)!.has(file)

describe('mayOverlap', () => {
  it('is never false where some path matches both entries (sound over every pair)', () => {
    for (const a of ENTRIES) {
      for (const b of ENTRIES) {
        if (mayOverlap(a, b)) continue
        const both = PATHS.find((file) => matches(a, file) && matches(b, file))
        expect(both, `${a} and ${b} were said apart, yet both match ${both}`).toBeUndefined()
      }
    }
  })

  it('tells apart what is apart: sibling directories, other extensions, other depths, other files', () => {
    expect(mayOverlap('src/api/**', 'src/web/**')).toBe(false)
    expect(mayOverlap('src/api', 'src/web')).toBe(false)
    expect(mayOverlap('src/**/*.ts', 'src/**/*.css')).toBe(false)
    expect(mayOverlap('src/*.ts', 'src/api')).toBe(false)
    expect(mayOverlap('docs', 'src/**')).toBe(false)
  })

  it('says overlap where a file can match both, and where it cannot be shown apart', () => {
    expect(mayOverlap('src/**', 'src/api/**')).toBe(true)
    expect(mayOverlap('src/api', 'src/api/')).toBe(true)
    expect(mayOverlap('src/a.ts', 'src/*.ts')).toBe(true)
    expect(mayOverlap('**/*.md', 'docs')).toBe(true)
    expect(mayOverlap('src/**/*.ts', 'src/**/*.d.ts')).toBe(true)
    expect(mayOverlap('src/{api,web}/**', 'src/web')).toBe(true)
    expect(mayOverlap('!src/**', 'lib')).toBe(true)
  })
})

describe('covers', () => {
  it('is never true where a path matches the inner entry and not the outer (sound over every pair)', () => {
    for (const outer of ENTRIES) {
      for (const inner of ENTRIES) {
        if (!covers(outer, inner)) continue
        const outside = PATHS.find((file) => matches(inner, file) && !matches(outer, file))
        expect(outside, `${outer} was said to cover ${inner}, yet ${outside} is only in the latter`).toBeUndefined()
      }
    }
  })

  it('shows the usual containments', () => {
    expect(covers('src/**', 'src/api/**')).toBe(true)
    expect(covers('src', 'src/api/**/*.ts')).toBe(true)
    expect(covers('src/**/*.ts', 'src/api/**/*.ts')).toBe(true)
    expect(covers('src/**/*.ts', 'src/api/*.ts')).toBe(true)
    expect(covers('**', 'anything/at/all')).toBe(true)
  })

  it('refuses what reaches out', () => {
    expect(covers('src/**', 'lib/**')).toBe(false)
    expect(covers('src/**/*.ts', 'src/api')).toBe(false)
    expect(covers('src/api/**', 'src/**')).toBe(false)
    expect(covers('src/*.ts', 'src/api/*.ts')).toBe(false)
    // A plain path is itself and what lies below it: src/api/index.ts/x.css is not a .ts file.
    expect(covers('src/**/*.ts', 'src/api/index.ts')).toBe(false)
  })
})
