/**
 * Whether two scope entries can match the same file, and whether one entry's files all lie inside
 * another's: what a plan's units are checked with (plans/units.ts), so that no two units' jobs can change
 * the same file and no unit reaches outside the plan's scope.
 *
 * Both answers are conservative in the direction that keeps units apart: `mayOverlap` says true unless
 * the entries are shown apart, `covers` says false unless the entry is shown inside. The proofs, each
 * sound for the entries as scopeMatcher reads them (a glob as picomatch reads it, a plain path as itself
 * and what lies below it):
 * - literal bases: a glob matches only paths below its literal base (picomatch's scan: `src/api` for
 *   `src/api/**\/*.ts`), a plain path only itself and what lies below; bases where neither is the other
 *   or an ancestor of it keep two entries apart (a plain path names a file or a directory alike:
 *   `src/a.ts` covers `src/a.ts/x` as scopeMatcher reads it, so `src/**\/*.ts` is not shown to cover it);
 * - depth: a glob without `**`, braces or parentheses matches paths of one depth only; depths that cannot
 *   meet keep two entries apart;
 * - file names: the literal text after a glob's last special character in its last segment (`.ts` in
 *   `*.ts`) ends every name it matches; two such endings of which neither ends the other keep two
 *   entries apart.
 */
import picomatch from 'picomatch'

import {scopeEntry, scopeMatcher} from './scope.js'

interface Shape {
  /** The entry as scopeMatcher reads it. */
  entry: string
  /** The literal directory every match lies in or is (`''`: the workspace root). */
  base: string
  /** The glob after the base; absent for a plain path. */
  glob?: string
  /** Path depths (segments) a match can have: max Infinity when unbounded. */
  depth: {min: number; max: number}
  /** The literal ending of every matched file name, '' when none is known. */
  ending: string
  /** A negated glob (`!src/*`): everything but some paths, nothing can be shown of it. */
  negated: boolean
}

/** picomatch's special characters: the literal ending of a segment starts after the last of them. */
const SPECIAL = /[*?[\]{}()!+@|]/

const segments = (path: string) => (path === '' ? 0 : path.split('/').length)

function shapeOf(raw: string): Shape {
  const entry = scopeEntry(raw)
  const scan = picomatch.scan(entry)
  if (!scan.isGlob) {
    // Itself and whatever lies below it: a file's name, too, may be a directory's by the time a run writes.
    const base = entry.replace(/\/+$/, '')
    return {base, depth: {max: Infinity, min: segments(base)}, ending: '', entry, negated: false}
  }

  const base = scan.base.replace(/\/+$/, '')
  const glob = scan.glob
  if (scan.negated) return {base: '', depth: {max: Infinity, min: 0}, ending: '', entry, glob, negated: true}
  const parts = glob.split('/')
  // Braces and parentheses may hold a `/` or match nothing: their depth is not counted.
  const countable = !/[{}()]/.test(glob)
  const globstars = parts.filter((part) => part === '**').length
  const depth = {
    max: countable && !glob.includes('**') ? segments(base) + parts.length : Infinity,
    min: countable ? segments(base) + parts.length - globstars : segments(base),
  }
  const last = parts.at(-1) ?? ''
  let ending = ''
  if (last !== '**' && !/[{}()]/.test(last)) {
    let special = last.length - 1
    while (special >= 0 && !SPECIAL.test(last[special])) special--
    ending = last.slice(special + 1)
  }

  return {base, depth, ending, entry, glob, negated: false}
}

/** `a` is `b` or an ancestor of it (the root is everyone's). */
const within = (inner: string, outer: string) => outer === '' || inner === outer || inner.startsWith(outer + '/')

/** Whether some file can match both entries: false only when shown apart (see the module's comment). */
export function mayOverlap(first: string, second: string): boolean {
  const a = shapeOf(first)
  const b = shapeOf(second)
  if (a.negated || b.negated) return true
  if (!within(a.base, b.base) && !within(b.base, a.base)) return false
  if (a.depth.max < b.depth.min || b.depth.max < a.depth.min) return false
  if (a.ending && b.ending && !a.ending.endsWith(b.ending) && !b.ending.endsWith(a.ending)) return false
  // A plain directory against a glob that can only reach its own depth: they share at most the directory itself.
  for (const [plain, glob] of [
    [a, b],
    [b, a],
  ]) {
    if (plain.glob === undefined && glob.glob !== undefined && glob.depth.max === plain.depth.min) return scopeMatcher([glob.entry])(plain.base)
  }

  return true
}

/** Whether every file `inner` matches is matched by `outer`: true only when shown (see the module's comment). */
export function covers(outer: string, inner: string): boolean {
  const o = shapeOf(outer)
  const i = shapeOf(inner)
  if (o.negated || i.negated) return false
  if (o.entry === i.entry) return true
  // A plain directory, or a glob of everything below its base, holds whatever lies below that base.
  if (o.glob === undefined || o.glob === '**') return within(i.base, o.base)
  // `base/**/<name>`: any path below base whose last segment matches <name>; an inner glob ending in that same segment, below base, is inside.
  const tail = o.glob?.startsWith('**/') ? o.glob.slice(3) : undefined
  if (tail && !tail.includes('/') && !tail.includes('**') && i.glob !== undefined && within(i.base, o.base)) {
    return i.glob.split('/').at(-1) === tail
  }

  return false
}

/** Whether every file `inner` matches is matched by one of `outer`'s entries (a file matched by two of them together is not shown). */
export function coveredBy(outer: readonly string[], inner: string): boolean {
  return outer.some((entry) => covers(entry, inner))
}
