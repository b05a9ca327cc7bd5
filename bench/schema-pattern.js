#!/usr/bin/env node
/**
 * A `--json-schema` pattern on text the model chooses (issue 48): the issue's `^(\w+\s?)*$` against n `a`s
 * and a `!`, checked by wave's compiled schema (src/base/json-schema.ts: re2js) and, as the baseline in
 * the same run, by JavaScript's own RegExp, which backtracks: its time doubles with each `a` (the issue's
 * 36 would take hours, so the baseline stops at `--max=24`). Printed: each length's times and the ratio
 * of RegExp's to wave's, then wave alone at 36 and at 100,000 characters.
 *
 *   node bench/schema-pattern.js             # n = 16 … 24
 *   node bench/schema-pattern.js --max=26
 *
 * Runs against the compiled code (dist/, built by `npm run build`).
 */
import {existsSync} from 'node:fs'
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {pathToFileURL} from 'node:url'

import {PROJECT_ROOT} from './lib/sandbox.js'
import {ms, ratio} from './lib/stats.js'

const compiled = path.join(PROJECT_ROOT, 'dist', 'base', 'json-schema.js')
if (!existsSync(compiled)) {
  console.error('bench: dist/ is missing: run `npm run build` first.')
  process.exit(2)
}

const max = Number(process.argv.find((arg) => arg.startsWith('--max='))?.split('=')[1] ?? 24)
const PATTERN = String.raw`^(\w+\s?)*$`
const {compileOutputSchema} = await import(pathToFileURL(compiled).href)
const schema = await compileOutputSchema({properties: {words: {pattern: PATTERN, type: 'string'}}, type: 'object'}, 'bench')
const native = new RegExp(PATTERN, 'u')

/** Wall time of one call, in ms. */
function timed(run) {
  const start = performance.now()
  run()
  return performance.now() - start
}

console.log(`pattern ${PATTERN}, value: n × "a" then "!"`)
for (let n = 16; n <= max; n += 2) {
  const value = `${'a'.repeat(n)}!`
  const wave = timed(() => schema.problems({words: value}))
  const baseline = timed(() => native.test(value))
  console.log(`  n=${n}: RegExp ${ms(baseline)}, wave ${ms(wave)}, RegExp/wave ${ratio(baseline, wave)}`)
}

for (const n of [36, 100_000]) {
  const value = `${'a'.repeat(n)}!`
  console.log(`  n=${n.toLocaleString('en')}: wave ${ms(timed(() => schema.problems({words: value})))} (RegExp not run: it would not end)`)
}
