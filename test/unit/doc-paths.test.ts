/**
 * The files docs/architecture.md and docs/design.md name exist: a map that names a file that was renamed
 * or removed sends its reader nowhere, and nothing else would notice. Every path in backticks that starts
 * at the repository's top (`src/...`, `test/...`, `bench/...`, `scripts/...`, `examples/...`, `docs/...`,
 * `bin/...`), every one the architecture page writes from inside src/ (`session/context.ts`,
 * `base/process/`), and every file the diagram of a session's flow names must be there. A `<name>` in a
 * path is a placeholder and `*` a glob: some file must match. A bare file name on the architecture page
 * (`gates.ts`, which a table row writes inside its folder) must be a file somewhere in the repository's
 * code; design.md's bare names may be other projects' files (Claude Code's `sdk-tools.d.ts`).
 */
import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const TOP = /^(?:src|test|bench|scripts|examples|docs|bin)\//
const srcFolders = new Set(
  readdirSync(path.join(root, 'src'), {withFileTypes: true})
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name),
)

/** Every file below `dir` (relative to the repository), node_modules and dist aside. */
function filesBelow(dir: string): string[] {
  return readdirSync(path.join(root, dir), {withFileTypes: true}).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) return []
    const relative = path.posix.join(dir, entry.name)
    return entry.isDirectory() ? [relative + '/', ...filesBelow(relative)] : [relative]
  })
}

const repositoryFiles = ['src', 'test', 'bench', 'scripts', 'examples', 'docs', 'bin'].flatMap((dir) => filesBelow(dir))
const baseNames = new Set(repositoryFiles.map((file) => path.posix.basename(file)))

/** A path as a pattern: `<name>` and `*` match within one folder, a trailing `...` or `**` anything below. */
function pattern(spelled: string): RegExp {
  const source = spelled
    .replace(/\/?\.\.\.$/, '/**')
    .split(/(<[^>]+>|\*\*|\*)/)
    .map((part) => (part === '**' ? '.*' : part === '*' || part.startsWith('<') ? '[^/]*' : part.replaceAll(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('')
  return new RegExp(`^${source}/?$`)
}

function exists(spelled: string): boolean {
  if (!/[<*]|\.\.\.$/.test(spelled)) return existsSync(path.join(root, spelled))
  const wanted = pattern(spelled)
  return repositoryFiles.some((file) => wanted.test(file))
}

/** The paths a document names: in backticks, and (for the flow's diagram) in its code blocks. */
function namedPaths(text: string): {topLevel: string[]; inSrc: string[]; bare: string[]} {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((match) => match[1].trim())
  const blocks = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].flatMap((match) =>
    [...match[1].matchAll(/[\w./-]+\.(?:ts|js|md)\b/g)].map((found) => found[0]),
  )
  const topLevel = new Set<string>()
  const inSrc = new Set<string>()
  const bare = new Set<string>()
  for (const candidate of [...spans, ...blocks]) {
    // One token only: a command line (`npm run bench -- --only=x`) or an import names no file.
    if (/\s/.test(candidate) || candidate.startsWith('#')) continue
    if (TOP.test(candidate)) topLevel.add(candidate)
    else if (srcFolders.has(candidate.split('/')[0]) && candidate.includes('/')) inSrc.add(candidate)
    else if (/^[\w.-]+\.(?:ts|js)$/.test(candidate)) bare.add(candidate)
  }

  return {bare: [...bare], inSrc: [...inSrc], topLevel: [...topLevel]}
}

describe.each(['docs/architecture.md', 'docs/design.md'])('the files %s names', (doc) => {
  const named = namedPaths(readFileSync(path.join(root, doc), 'utf8'))

  it('exist, from the top of the repository', () => {
    if (doc === 'docs/architecture.md') expect(named.topLevel.length).toBeGreaterThan(10)
    expect(named.topLevel.filter((spelled) => !exists(spelled))).toEqual([])
  })

  it('exist, from inside src/', () => {
    expect(named.inSrc.filter((spelled) => !exists(`src/${spelled}`))).toEqual([])
  })
})

it('the architecture page names by their file name alone only files that exist somewhere', () => {
  const named = namedPaths(readFileSync(path.join(root, 'docs/architecture.md'), 'utf8'))
  expect(named.bare.length).toBeGreaterThan(10)
  expect(named.bare.filter((name) => !baseNames.has(name))).toEqual([])
})

// The check can fail: a renamed file, a placeholder nothing matches and a bare name nowhere are caught.
describe('the check', () => {
  it('finds a path that is not there, and accepts one that is', () => {
    const named = namedPaths(
      '`src/plans/gates.ts`, `src/plans/gone.ts`, `plans/store.ts`, `plans/nothing.ts`, `bench/<name>.js`, `test/<x>/none.md`, `gone-away.ts`, `npm run bench -- --only=<name>`\n```\nx (session/context.ts, flows/missing.ts)\n```\n',
    )
    expect(named.topLevel.filter((spelled) => !exists(spelled))).toEqual(['src/plans/gone.ts', 'test/<x>/none.md'])
    expect(named.inSrc.filter((spelled) => !exists(`src/${spelled}`))).toEqual(['plans/nothing.ts', 'flows/missing.ts'])
    expect(named.bare.filter((name) => !baseNames.has(name))).toEqual(['gone-away.ts'])
    expect(statSync(path.join(root, 'src/plans/gates.ts')).isFile()).toBe(true)
  })
})
