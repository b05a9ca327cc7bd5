/**
 * The lanes of src/ as docs/architecture.md's matrix states them: each folder imports only its own folder
 * and the folders its row names (type-only imports included, since a type is a dependency a reader must
 * follow too), a "types only" cell lends types and never a value, no module imports itself around a
 * circle, and every `import()` names its module literally (but in the files the document lists, each with
 * its reason). The matrix is read from the document, so the map and the code cannot drift apart.
 */
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {parseSync, Visitor} from 'oxc-parser'
import {describe, expect, it} from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const src = path.join(root, 'src')

/** What one folder may import: each allowed folder, and whether only its types. */
type Lanes = Map<string, Map<string, 'all' | 'types'>>

interface Edge {
  from: string
  to: string
  typeOnly: boolean
}

interface Graph {
  /** Every module of src/, src-relative, with the relative imports it makes. */
  modules: Map<string, Edge[]>
  /** Modules whose `import()` takes an expression the map cannot read. */
  opaqueImports: string[]
}

function layersSection(): string {
  const doc = readFileSync(path.join(root, 'docs/architecture.md'), 'utf8')
  const section = doc.split(/^## /m).find((part) => part.startsWith('Layers'))
  if (!section) throw new Error('docs/architecture.md has no "## Layers" section')
  return section
}

/** The rows of the matrix: `| \`src/folder/\` | \`a\`, \`b\` (types only) | … |`. */
function lanesFromDocument(section: string): Lanes {
  const lanes: Lanes = new Map()
  for (const line of section.split('\n')) {
    const row = /^\|\s*`src\/([^`]+?)\/?`\s*\|([^|]*)\|/.exec(line)
    if (!row) continue
    const allowed = new Map<string, 'all' | 'types'>()
    for (const cell of row[2].split(',')) {
      const named = /`([^`]+)`\s*(\(types only\))?/.exec(cell)
      if (named) allowed.set(named[1].replace(/\/$/, ''), named[2] ? 'types' : 'all')
    }
    lanes.set(row[1], allowed)
  }
  return lanes
}

/** The files the document lets take a non-literal `import()`: the list's `- \`src/…\`:` items. */
function opaqueExceptions(section: string): string[] {
  const list = section.split('Non-literal `import()`')[1] ?? ''
  return [...list.matchAll(/^- `src\/([^`]+)`:/gm)].map((match) => match[1])
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : []
  })
}

const isLiteral = (text: string) => /^(['"])[^'"]*\1$/.test(text) || /^`[^`$]*`$/.test(text)

/** Every relative import of a module (static, dynamic, re-export, type-only, a type's `import('…')`), typed or not. */
function importsOf(file: string, text = readFileSync(file, 'utf8')): {edges: Edge[]; opaque: boolean} {
  const {errors, module, program} = parseSync(file, text)
  if (errors.length > 0) throw new Error(`${file}: ${errors[0].message}`)
  const found: Array<[string, boolean]> = []
  for (const imported of module.staticImports) {
    const typeOnly =
      /^import\s+type\b/.test(text.slice(imported.start, imported.end)) || (imported.entries.length > 0 && imported.entries.every((entry) => entry.isType))
    found.push([imported.moduleRequest.value, typeOnly])
  }
  for (const exported of module.staticExports) {
    for (const entry of exported.entries) if (entry.moduleRequest) found.push([entry.moduleRequest.value, entry.isType])
  }
  let opaque = false
  for (const {moduleRequest} of module.dynamicImports) {
    const specifier = text.slice(moduleRequest.start, moduleRequest.end)
    if (isLiteral(specifier)) found.push([specifier.slice(1, -1), false])
    else opaque = true
  }
  new Visitor({TSImportType: (node) => void found.push([node.source.value, true])}).visit(program)
  const from = path.relative(src, file)
  const edges = found
    .filter(([name]) => name.startsWith('.'))
    .map(([name, typeOnly]) => ({from, to: path.relative(src, path.resolve(path.dirname(file), name)).replace(/\.js$/, '.ts'), typeOnly}))
  return {edges, opaque}
}

function graphOfSource(): Graph {
  const modules = new Map<string, Edge[]>()
  const opaqueImports: string[] = []
  for (const file of sourceFiles(src)) {
    const {edges, opaque} = importsOf(file)
    modules.set(path.relative(src, file), edges)
    if (opaque) opaqueImports.push(path.relative(src, file))
  }
  return {modules, opaqueImports}
}

/** The folder a module belongs to: its longest listed folder (`forges/github` before `forges`). */
function folderOf(lanes: Lanes, file: string): string | undefined {
  let best: string | undefined
  for (const folder of lanes.keys()) {
    if ((file === folder || file.startsWith(`${folder}/`)) && (!best || folder.length > best.length)) best = folder
  }
  return best
}

/** Every fault of a graph against the lanes, one line each: the checker the tests below run. */
function faults(graph: Graph, lanes: Lanes, exceptions: string[]): string[] {
  const found: string[] = []
  for (const file of graph.modules.keys()) if (!folderOf(lanes, file)) found.push(`unplaced: ${file}`)
  for (const edges of graph.modules.values()) {
    for (const edge of edges) {
      const from = folderOf(lanes, edge.from)
      const to = folderOf(lanes, edge.to)
      if (!from || !to || from === to) continue
      const cell = lanes.get(from)?.get(to)
      if (!cell) found.push(`not in ${from}'s lane: ${edge.from} → ${edge.to} (${to})`)
      else if (cell === 'types' && !edge.typeOnly) found.push(`types only: ${edge.from} → ${edge.to} imports a value of ${to}`)
    }
  }
  for (const file of graph.opaqueImports) if (!exceptions.includes(file)) found.push(`non-literal import(): ${file}`)
  found.push(...cycles(graph).map((cycle) => `cycle: ${cycle}`))
  return found
}

function cycles(graph: Graph): string[] {
  const found: string[] = []
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const visit = (file: string) => {
    state.set(file, 'open')
    stack.push(file)
    for (const {to} of graph.modules.get(file) ?? []) {
      if (!graph.modules.has(to)) continue
      if (state.get(to) === 'open') found.push([...stack.slice(stack.indexOf(to)), to].join(' → '))
      else if (!state.has(to)) visit(to)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of graph.modules.keys()) if (!state.has(file)) visit(file)
  return found
}

const section = layersSection()
const lanes = lanesFromDocument(section)
const exceptions = opaqueExceptions(section)
const graph = graphOfSource()

describe('layers', () => {
  it('reads the matrix and its exceptions from docs/architecture.md', () => {
    expect(lanes.size).toBeGreaterThan(12)
    expect(lanes.get('agent')?.get('tools')).toBe('types')
    expect(lanes.get('tools')?.has('plans')).toBe(false)
    expect(exceptions).toEqual(['base/bundles.ts'])
  })

  it('holds src/ to the matrix: every module placed, every import in its lane, no cycle, every import() literal', () => {
    expect(faults(graph, lanes, exceptions)).toEqual([])
  })

  it('resolves every relative import to a module that exists', () => {
    const missing = [...graph.modules.values()].flat().filter(({to}) => !graph.modules.has(to) && !to.startsWith('..'))
    expect(missing.map(({from, to}) => `${from} → ${to}`)).toEqual([])
  })

  it('keeps no folder wider than 26 modules side by side', () => {
    const counts = new Map<string, number>()
    for (const file of graph.modules.keys()) counts.set(path.dirname(file), (counts.get(path.dirname(file)) ?? 0) + 1)
    expect([...counts].filter(([, count]) => count > 26)).toEqual([])
  })

  // The checker itself can fail: each kind of fault in a made-up graph is found, and a clean one passes.
  it('finds each kind of fault in a made-up graph', () => {
    const made = (edges: Array<[string, string, boolean?]>, opaque: string[] = []): Graph => {
      const modules = new Map<string, Edge[]>()
      for (const [from, to, typeOnly = false] of edges) {
        modules.set(from, [...(modules.get(from) ?? []), {from, to, typeOnly}])
        if (!modules.has(to)) modules.set(to, [])
      }
      return {modules, opaqueImports: opaque}
    }
    const clean = made([
      ['agent/loop.ts', 'tools/tool.ts', true],
      ['tools/bash.ts', 'base/errors.ts'],
      ['flows/run.ts', 'plans/store.ts'],
    ])
    expect(faults(clean, lanes, exceptions)).toEqual([])

    expect(faults(made([['base/errors.ts', 'flows/run.ts']]), lanes, exceptions)).toEqual([`not in base's lane: base/errors.ts → flows/run.ts (flows)`])
    expect(faults(made([['tools/exit-plan-mode.ts', 'plans/lifecycle.ts']]), lanes, exceptions)).toEqual([
      `not in tools's lane: tools/exit-plan-mode.ts → plans/lifecycle.ts (plans)`,
    ])
    expect(faults(made([['agent/loop.ts', 'tools/turn.ts', false]]), lanes, exceptions)).toEqual([
      'types only: agent/loop.ts → tools/turn.ts imports a value of tools',
    ])
    expect(
      faults(
        made([
          ['flows/a.ts', 'flows/b.ts'],
          ['flows/b.ts', 'flows/a.ts'],
        ]),
        lanes,
        exceptions,
      ),
    ).toEqual(['cycle: flows/a.ts → flows/b.ts → flows/a.ts'])
    expect(faults(made([['flows/run.ts', 'base/errors.ts']], ['flows/run.ts']), lanes, exceptions)).toEqual(['non-literal import(): flows/run.ts'])
    expect(faults(made([['nowhere/x.ts', 'base/errors.ts']]), lanes, exceptions)).toEqual(['unplaced: nowhere/x.ts'])
  })

  it('reads a non-literal import() and a type-only import as such', () => {
    const text =
      "import type {Tool} from '../tools/tool.js'\nimport {readPlan} from '../plans/store.js'\nexport const load = (name: string) => import(`../flows/${name}.js`)\n"
    const {edges, opaque} = importsOf(path.join(src, 'tools/sample.ts'), text)
    expect(opaque).toBe(true)
    expect(edges).toEqual([
      {from: 'tools/sample.ts', to: 'tools/tool.ts', typeOnly: true},
      {from: 'tools/sample.ts', to: 'plans/store.ts', typeOnly: false},
    ])
    const injected: Graph = {modules: new Map([...graph.modules, ['tools/sample.ts', edges]]), opaqueImports: [...graph.opaqueImports, 'tools/sample.ts']}
    expect(faults(injected, lanes, exceptions)).toEqual([
      `not in tools's lane: tools/sample.ts → plans/store.ts (plans)`,
      'non-literal import(): tools/sample.ts',
    ])
  })
})
