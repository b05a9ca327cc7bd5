/**
 * One meaning per name (issue 46): no two modules of the product export the same name, so a reader who
 * meets `Decision` or `CommandResult` knows which one it is without following the import. The scripted
 * Messages API (src/testing/) is not the product: it names what the API names (`StopReason`, `reply`).
 * A name exported twice by one module (an overloaded function) is one name.
 */
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {parseSync} from 'oxc-parser'
import {describe, expect, it} from 'vitest'

const src = fileURLToPath(new URL('../../src/', import.meta.url))

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === 'testing' && dir === src.replace(/\/$/, '') ? [] : sourceFiles(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : []
  })
}

/** The names a module declares and exports itself (re-exports and the default left out). */
function exportedNames(file: string, text: string): string[] {
  const names = parseSync(file, text)
    .module.staticExports.flatMap((exported) => exported.entries)
    .filter((entry) => !entry.moduleRequest && entry.exportName.kind === 'Name')
    .map((entry) => entry.exportName.name as string)
  return [...new Set(names)]
}

/** Each name exported by more than one module, with the modules. */
function collisions(modules: Array<[string, string[]]>): string[] {
  const owners = new Map<string, string[]>()
  for (const [file, names] of modules) for (const name of names) owners.set(name, [...(owners.get(name) ?? []), file])
  return [...owners].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(', ')}`)
}

describe('exported names', () => {
  it('gives each exported name of the product one meaning', () => {
    const modules = sourceFiles(src.replace(/\/$/, '')).map((file): [string, string[]] => [
      path.relative(src, file),
      exportedNames(file, readFileSync(file, 'utf8')),
    ])
    expect(modules.length).toBeGreaterThan(100)
    expect(collisions(modules)).toEqual([])
  })

  // The check itself can fail: two made-up modules exporting one name are found; an overload is one name.
  it('finds a name two made-up modules export, and counts an overload once', () => {
    const a = exportedNames(
      'a.ts',
      'export interface Decision {a: 1}\nexport function read(x: string): string\nexport function read(x: unknown) { return x }\n',
    )
    const b = exportedNames('b.ts', "export type Decision = 'allow' | 'deny'\nexport {read as readB} from './a.js'\n")
    expect(a).toEqual(['Decision', 'read'])
    expect(
      collisions([
        ['a.ts', a],
        ['b.ts', b],
      ]),
    ).toEqual(['Decision: a.ts, b.ts'])
    expect(collisions([['a.ts', a]])).toEqual([])
  })
})
