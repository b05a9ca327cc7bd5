/**
 * No function in src/ longer than 100 lines (issue 46): a function, a method or an arrow, counted from the
 * line it starts on to the line its body closes on, nested ones measured on their own too. A longer one is
 * split into named steps; this test names each that is not, with where it starts.
 */
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {parseSync} from 'oxc-parser'
import {describe, expect, it} from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const src = path.join(root, 'src')
const MAX_LINES = 100

interface Measured {
  name: string
  line: number
  lines: number
}

interface Node {
  type?: string
  start?: number
  end?: number
  [key: string]: unknown
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression'])

function keyName(key: unknown): string | undefined {
  const node = key as Node | undefined
  if (!node) return undefined
  if (typeof node.name === 'string') return node.name
  if (typeof node.value === 'string') return node.value
  return undefined
}

/** The name a reader would look for: the function's own, or the method, property or variable holding it. */
function nameHint(node: Node): string | undefined {
  switch (node.type) {
    case 'MethodDefinition':
    case 'Property':
    case 'PropertyDefinition':
      return keyName(node.key)
    case 'VariableDeclarator':
      return keyName(node.id)
    default:
      return undefined
  }
}

/** Every function of one module with its length in lines, in source order. */
function measure(file: string, text: string): Measured[] {
  const {errors, program} = parseSync(file, text)
  if (errors.length > 0) throw new Error(`${file}: ${errors[0].message}`)
  const starts = [0]
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1)
  const lineOf = (offset: number) => {
    let low = 0
    let high = starts.length - 1
    while (low < high) {
      const mid = (low + high + 1) >> 1
      if (starts[mid] <= offset) low = mid
      else high = mid - 1
    }
    return low + 1
  }
  const found: Measured[] = []
  const walk = (value: unknown, hint: string | undefined, enclosing: string | undefined): void => {
    if (Array.isArray(value)) {
      for (const item of value) walk(item, hint, enclosing)
      return
    }
    if (!value || typeof value !== 'object') return
    const node = value as Node
    const own = nameHint(node) ?? hint
    const isFunction = node.type !== undefined && FUNCTIONS.has(node.type)
    let inside = enclosing
    if (isFunction && typeof node.start === 'number' && typeof node.end === 'number') {
      const line = lineOf(node.start)
      inside = keyName(node.id) ?? own ?? (enclosing ? `(anonymous in ${enclosing})` : '(anonymous)')
      found.push({line, lines: lineOf(node.end - 1) - line + 1, name: inside})
    }
    for (const [key, child] of Object.entries(node)) {
      if (key !== 'parent' && child && typeof child === 'object') walk(child, isFunction ? undefined : own, inside)
    }
  }
  walk(program, undefined, undefined)
  return found
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : []
  })
}

function tooLong(file: string, text: string): string[] {
  return measure(file, text)
    .filter(({lines}) => lines > MAX_LINES)
    .map(({line, lines, name}) => `${path.relative(src, file)}:${line} ${name} (${lines} lines)`)
}

describe('function length', () => {
  it(`keeps every function, method and arrow of src/ at most ${MAX_LINES} lines`, () => {
    const found = sourceFiles(src).flatMap((file) => tooLong(file, readFileSync(file, 'utf8')))
    expect(found).toEqual([])
  })

  // The measurer itself can fail: a made-up module with one function of each kind over the line, one at it.
  it('measures a made-up module: each kind of function named, the one at the limit passes', () => {
    const body = (lines: number) => Array.from({length: lines - 2}, (_, index) => `  const v${index} = ${index}`).join('\n')
    const text = [
      `export function declared() {\n${body(101)}\n}`,
      `export const arrow = () => {\n${body(102)}\n}`,
      `class Shape {\n  method() {\n${body(103)}\n  }\n  short() { return 1 }\n}`,
      `export const table = {entry: function () {\n${body(104)}\n}}`,
      `export function atLimit() {\n${body(100)}\n}`,
      `export function outer() {\n  const inner = () => {\n${body(105)}\n  }\n  return inner\n}`,
      'export {Shape}',
    ].join('\n')
    const file = path.join(src, 'made-up.ts')
    const measured = measure(file, text)
    expect(measured.find(({line}) => line === 515)?.name).toBe('inner')
    expect(measured.find(({name}) => name === 'atLimit')?.lines).toBe(100)
    expect(measured.find(({name}) => name === 'short')?.lines).toBe(1)
    expect(tooLong(file, text)).toEqual([
      'made-up.ts:1 declared (101 lines)',
      'made-up.ts:102 arrow (102 lines)',
      'made-up.ts:205 method (103 lines)',
      'made-up.ts:310 entry (104 lines)',
      'made-up.ts:514 outer (108 lines)',
      'made-up.ts:515 inner (105 lines)',
    ])
  })
})
