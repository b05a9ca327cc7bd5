#!/usr/bin/env node
/**
 * What holding the project's dependencies costs a run (issue 47, item 2: src/plans/dependency-guard.ts),
 * against the reading the run already takes (src/base/workspace/worktree.ts), in the same run, on a tree
 * with a real node_modules: this repository's own (hard-linked: the same entries, no copy of its
 * megabytes) beside 2,000 committed source files.
 * - in the sandbox (the default): the run's start finds the dependencies in its first reading (a few
 *   lstat calls), and nothing more is read: they are bound read-only, and a file tool's write into them
 *   is known from its path. Today's first reading against it plus finding them;
 * - with --sandbox off: every entry fingerprinted at the start, and again before every check, against a
 *   round's two readings (when the model's work ends, after the checks).
 * Medians of interleaved runs. Prints the figures and the ratios.
 *
 *   node bench/dependencies.js [--runs=N]      # against the compiled modules (npm run build first)
 */
import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {PROJECT_ROOT} from './lib/sandbox.js'
import {median, ms, ratio} from './lib/stats.js'

const runs = Number(process.argv.find((arg) => arg.startsWith('--runs='))?.split('=')[1] ?? 9)
const dist = (...parts) => path.join(PROJECT_ROOT, 'dist', ...parts)
const {WorkTreeWatch} = await import(dist('base', 'workspace', 'worktree.js'))
const {changedDependencies, findDependencies, fingerprintDependencies} = await import(dist('base', 'workspace', 'dependencies.js'))

const root = mkdtempSync(path.join(tmpdir(), 'wave-bench-dependencies-'))
try {
  const git = (...args) => execFileSync('git', ['-c', 'user.email=b@example.com', '-c', 'user.name=b', ...args], {cwd: root, stdio: 'ignore'})
  for (let dir = 0; dir < 40; dir++) {
    mkdirSync(path.join(root, 'src', `mod${dir}`), {recursive: true})
    for (let file = 0; file < 50; file++)
      writeFileSync(path.join(root, 'src', `mod${dir}`, `file${file}.ts`), `export const value${file} = ${dir * 50 + file}\n`)
  }

  writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n')
  git('init', '-q')
  git('add', '-A')
  git('commit', '-q', '-m', 'source')
  const source = path.join(PROJECT_ROOT, 'node_modules')
  if (!existsSync(source)) throw new Error('bench/dependencies.js needs this repository installed (npm ci): its node_modules is the tree measured.')
  // Hard links where the file system allows them (the same entries, nothing copied), else a copy.
  try {
    execFileSync('cp', ['-al', source, path.join(root, 'node_modules')])
  } catch {
    execFileSync('cp', ['-a', source, path.join(root, 'node_modules')])
  }

  const place = {top: root, workspace: root}
  const watch = new WorkTreeWatch(place)
  const state = await watch.read()
  const found = await findDependencies(root, state)
  const baseline = await fingerprintDependencies(root, found)

  /** @type {Record<'start' | 'startNow' | 'round' | 'perCheck', number[]>} */
  const times = {perCheck: [], round: [], start: [], startNow: []}
  const timed = async (/** @type {keyof typeof times} */ name, /** @type {() => Promise<unknown>} */ work) => {
    const at = performance.now()
    await work()
    times[name].push(performance.now() - at)
  }

  for (let run = 0; run < runs; run++) {
    // Interleaved, so that the machine's load weighs on each alike.
    await timed('start', () => new WorkTreeWatch(place).read())
    await timed('startNow', async () => findDependencies(root, await new WorkTreeWatch(place).read()))
    await timed('round', async () => {
      await watch.read()
      await watch.read()
    })
    await timed('perCheck', async () => {
      if (changedDependencies(baseline, await fingerprintDependencies(root, found)).length > 0) throw new Error('the dependencies changed')
    })
  }

  const [start, startNow, round, perCheck] = [times.start, times.startNow, times.round, times.perCheck].map(median)
  console.log(`node_modules: ${baseline.size.toLocaleString('en')} entries (${found.dirs.join(', ')}); 2,000 committed files; medians of ${runs}`)
  console.log(`in the sandbox, the run's start: ${ms(startNow)} against ${ms(start)} (${ratio(startNow, start)}); nothing more per round or check`)
  console.log(`with --sandbox off, each check's verification: ${ms(perCheck)}, against a round's two readings ${ms(round)} (${ratio(perCheck, round)})`)
} finally {
  rmSync(root, {force: true, maxRetries: 5, recursive: true})
}
