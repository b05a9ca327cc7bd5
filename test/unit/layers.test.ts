/**
 * The layers of src/ as docs/architecture.md's table states them: each folder imports only the folders
 * below it (type-only imports included, since a type is a dependency a reader must follow too), and no
 * two modules import each other, directly or around a circle. The table is read from the document, so
 * the map and the code cannot drift apart; there is no list of exceptions.
 */
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {parseSync, Visitor} from 'oxc-parser'
import {describe, expect, it} from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const src = path.join(root, 'src')

/** The rows of the "Layers" table: `| n | \`folder/\`, \`folder/\` | ... |`, lowest first. */
function layersFromDocument(): Map<string, number> {
  const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8')
  const section = doc.split(/^## /m).find((part) => part.startsWith('Layers'))
  if (!section) throw new Error('docs/architecture.md has no "## Layers" section')
  const layers = new Map<string, number>()
  for (const line of section.split('\n')) {
    const row = /^\|\s*(\d+)\s*\|([^|]+)\|/.exec(line)
    if (!row) continue
    for (const folder of row[2].matchAll(/`src\/([^`]+?)\/?`/g)) layers.set(folder[1], Number(row[1]))
  }
  return layers
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : []
  })
}

/** Every relative import of a module (static, dynamic, re-export, type-only, a type's `import('…')`), as src-relative paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8')
  const {errors, module, program} = parseSync(file, text)
  if (errors.length > 0) throw new Error(`${file}: ${errors[0].message}`)
  const names = [
    ...module.staticImports.map((imported) => imported.moduleRequest.value),
    ...module.staticExports.flatMap((exported) => exported.entries.flatMap((entry) => (entry.moduleRequest ? [entry.moduleRequest.value] : []))),
    // A dynamic import's specifier is an expression: its text, when that is a plain string.
    ...module.dynamicImports.flatMap(({moduleRequest}) => /^(['"`])([^'"`$]*)\1$/.exec(text.slice(moduleRequest.start, moduleRequest.end))?.[2] ?? []),
  ]
  new Visitor({TSImportType: (node) => void names.push(node.source.value)}).visit(program)
  return names.filter((name) => name.startsWith('.')).map((name) => path.relative(src, path.resolve(path.dirname(file), name)).replace(/\.js$/, '.ts'))
}

const layers = layersFromDocument()
const files = sourceFiles(src).map((file) => path.relative(src, file))
const graph = new Map(files.map((file) => [file, importsOf(path.join(src, file))]))

/** The layer a module belongs to: its longest listed folder (`forges/github` before `forges`). */
function layerOf(file: string): {folder: string; level: number} | undefined {
  let best: {folder: string; level: number} | undefined
  for (const [folder, level] of layers) {
    if ((file === folder || file.startsWith(`${folder}/`)) && (!best || folder.length > best.folder.length)) best = {folder, level}
  }
  return best
}

describe('layers', () => {
  it('places every module of src/ in a layer of the table', () => {
    expect(layers.size).toBeGreaterThan(8)
    expect(files.filter((file) => !layerOf(file))).toEqual([])
  })

  it('imports only from the same layer or below', () => {
    const upward: string[] = []
    for (const [file, imports] of graph) {
      const from = layerOf(file)
      for (const target of imports) {
        const to = layerOf(target)
        if (from && to && to.level > from.level) upward.push(`${file} (${from.folder}, ${from.level}) → ${target} (${to.folder}, ${to.level})`)
        // Two folders sharing a level are peers that must not know each other (github and gitlab).
        if (from && to && to.level === from.level && to.folder !== from.folder) upward.push(`${file} (${from.folder}) → ${target} (${to.folder}): same level`)
      }
    }
    expect(upward).toEqual([])
  })

  it('has no import cycle', () => {
    const cycles: string[] = []
    const state = new Map<string, 'open' | 'done'>()
    const stack: string[] = []
    const visit = (file: string) => {
      state.set(file, 'open')
      stack.push(file)
      for (const next of graph.get(file) ?? []) {
        if (!graph.has(next)) continue
        if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '))
        else if (!state.has(next)) visit(next)
      }
      stack.pop()
      state.set(file, 'done')
    }
    for (const file of graph.keys()) if (!state.has(file)) visit(file)
    expect(cycles).toEqual([])
  })

  it('resolves every relative import to a module that exists', () => {
    const missing = [...graph].flatMap(([file, imports]) =>
      imports.filter((target) => !graph.has(target) && !target.startsWith('..')).map((target) => `${file} → ${target}`),
    )
    expect(missing).toEqual([])
  })

  // The check itself can fail: an upward import in a made-up graph is found.
  it('finds an upward import when there is one', () => {
    const base = layerOf('base/errors.ts')
    const app = layerOf('app/session.ts')
    expect(base && app && app.level > base.level).toBe(true)
  })
})
