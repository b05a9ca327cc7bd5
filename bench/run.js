#!/usr/bin/env node
/**
 * wave's benchmarks (issue 6): each figure beside a baseline measured in the same run, medians of
 * several runs, and the results written into bench/RESULTS.md (between its generated-results markers).
 * Each benchmark is its own module, bench/<name>.js (what they share is bench/lib/harness.js); this
 * runs the ones asked for, in the table's order, and writes the table.
 *
 *   npm run bench                  # full: a 50,000-file, 500 MB search tree; a few minutes on 2 cores
 *   npm run bench -- --quick       # a 5,000-file tree and fewer runs (or WAVE_BENCH_QUICK=1)
 *   npm run bench -- --only=cold,first,turn,weight,search,memory,sandbox,read,compaction,install,parallel,snapshot,grammar,http,watch
 *   npm run bench -- --no-write    # print only (a --quick run never writes unless --write)
 *   npm run bench -- --no-rg       # as if ripgrep were not installed (its comparison is skipped)
 *   npm run bench -- --keep-tree   # leave the generated search tree in the temporary directory
 *
 * Runs against the compiled CLI (bin/run.js and dist/, built by `npm ci` or `npm run build`). The scripted
 * Messages API server is the test suite's (src/testing/), compiled on the fly (bench/lib/server.js).
 */
import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {cpus, loadavg, totalmem} from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {PROJECT_ROOT} from './lib/sandbox.js'

/** The benchmarks, in the table's order: each `bench/<name>.js` exports `title` and `run(context)`. */
const BENCHMARKS = [
  'cold',
  'first',
  'turn',
  'weight',
  'search',
  'memory',
  'sandbox',
  'read',
  'compaction',
  'install',
  'parallel',
  'snapshot',
  'grammar',
  'http',
  'watch',
]

if (!existsSync(path.join(PROJECT_ROOT, 'dist', 'commands'))) {
  console.error('bench: dist/ is missing: run `npm run build` (npm ci runs it) first.')
  process.exit(2)
}

const {flag, notes, option, QUICK, results, which} = await import('./lib/harness.js')
const WRITE = flag('write') || (!QUICK && !flag('no-write'))
const only = option('only')?.split(',') ?? BENCHMARKS
const unknown = only.filter((name) => !BENCHMARKS.includes(name))
if (unknown.length > 0) {
  console.error(`bench: no benchmark named ${unknown.join(', ')}; the benchmarks are ${BENCHMARKS.join(', ')}.`)
  process.exit(2)
}

const started = performance.now()
const info = machine()
const loadAtStart = loadavg()[0]
const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
console.log(`wave bench (${QUICK ? 'quick' : 'full'}): ${date}; ${info.nproc} cores (${info.cpu}), ${info.memory}; node ${info.node}; ${info.rg}; ${info.git}`)
/** What one benchmark measured that a later one reports (the RSS of the per-turn and search runs, for memory). */
const context = {}
/** Each section's title, by the name its rows carry. */
const titles = {}
for (const name of BENCHMARKS) {
  const {run, title} = await import(`./${name}.js`)
  titles[name] = title
  if (only.includes(name)) Object.assign(context, await run(context))
}

const seconds = (performance.now() - started) / 1000
const load = `load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`
const missed = results.filter((row) => row.ok === false)
console.log(
  `\n${results.filter((row) => row.ok).length} targets met, ${missed.length} missed${missed.length > 0 ? ` (${missed.map((row) => row.figure).join('; ')})` : ''}; ${seconds.toFixed(0)} s; ${load}`,
)
for (const note of notes) console.log(`note: ${note}`)
if (WRITE) writeResults()

function machine() {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  const nproc = (() => {
    try {
      return execFileSync('nproc').toString().trim()
    } catch {
      return String(cpus().length)
    }
  })()
  const rgVersion = which('rg') ? execFileSync('rg', ['--version']).toString().split('\n')[0] : 'not installed'
  const gitVersion = which('git') ? execFileSync('git', ['--version']).toString().trim() : 'not installed'
  return {
    cpu,
    git: gitVersion,
    memory: `${(totalmem() / 1024 ** 3).toFixed(0)} GB`,
    node: process.version,
    nproc,
    platform: `${process.platform} ${process.arch}`,
    rg: rgVersion,
  }
}

/** The table between RESULTS.md's generated-results markers. */
function writeResults() {
  const file = path.join(PROJECT_ROOT, 'bench', 'RESULTS.md')
  const BEGIN = '<!-- bench:results:begin (written by `npm run bench`; edit outside these markers) -->'
  const END = '<!-- bench:results:end -->'
  const cell = (text) => String(text ?? '').replaceAll('|', '\\|')
  const table = [
    '| | figure | wave | baseline (same run) | ratio | target | |',
    '|---|---|---|---|---|---|---|',
    ...results.map(
      (row) =>
        `| ${titles[row.section].split('.')[0]} | ${cell(row.figure)}${row.note ? `<br><sub>${cell(row.note)}</sub>` : ''} | ${cell(row.value)} | ${cell(row.baseline)} | ${cell(row.ratio)} | ${cell(row.target)} | ${row.ok === undefined ? '' : row.ok ? 'met' : '**missed**'} |`,
    ),
  ]
  const block = [
    BEGIN,
    '',
    `Run of ${date} (${QUICK ? 'quick' : 'full'}, ${seconds.toFixed(0)} s, ${load}): ${info.nproc} cores, ${info.cpu}, ${info.memory} RAM, ${info.platform}; node ${info.node}; ${info.rg}; ${info.git}.`,
    '',
    ...table,
    '',
    ...notes.map((note) => `- ${note}`),
    '',
    END,
  ].join('\n')
  let text = existsSync(file) ? readFileSync(file, 'utf8') : `# Benchmark results\n\n${BEGIN}\n${END}\n`
  text =
    text.includes(BEGIN) && text.includes(END) ? text.slice(0, text.indexOf(BEGIN)) + block + text.slice(text.indexOf(END) + END.length) : `${text}\n${block}\n`
  mkdirSync(path.dirname(file), {recursive: true})
  writeFileSync(file, text)
  console.log(`wrote ${path.relative(process.cwd(), file)}`)
}
