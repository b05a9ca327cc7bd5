#!/usr/bin/env node
/**
 * Plan units (issue 36): four `wave run --unit` jobs as concurrent processes against one unit alone, and
 * `wave plans merge` of 20 unit results.
 *
 *   node bench/unit-jobs.js        # prints the figures; --write puts them in bench/RESULTS.md's units section
 *
 * Each job is its own machine: a clone of the repository and a HOME holding a copy of the plan and its
 * approval record. Two workloads of the same length per unit, reported apart:
 * - I/O-bound: the scripted model takes WAVE_BENCH_UNIT_LATENCY_MS (default 1,500 ms) to answer each of
 *   the unit's two turns, as a real model's latency would; wave waits.
 * - CPU-bound: the unit's check burns one core for about as long (a shell loop, calibrated first).
 * Target: four at once within 1.5x one alone, on this 2-core machine (the CPU-bound case cannot meet it
 * with four CPU-bound jobs on two cores: it is reported for what it is). The merge: 20 results with a
 * small patch each, applied and reported, no plan checks; target under 1 s (the process's whole wall time).
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {copyFileSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {createHash} from 'node:crypto'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {messagesServerModule} from './lib/server.js'
import {makeSandbox, runWave} from './lib/sandbox.js'
import {median} from './lib/stats.js'

const LATENCY = Number(process.env.WAVE_BENCH_UNIT_LATENCY_MS) || 1500
const WRITE = process.argv.includes('--write')
const {reply, startMessagesServer, toolUse} = await messagesServerModule()
const sha256 = (bytes) => createHash('sha256').update(bytes).digest('hex')
const git = (cwd, ...args) =>
  execFileSync('git', args, {cwd, encoding: 'utf8', env: {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1'}}).trim()

/** A plan with `count` units u1..uN, each with its own folder, approved by a record as `wave approve` writes it. */
function unitsRepository(count, unitCheck) {
  const files = {'.gitignore': 'ignored/\n'}
  for (let i = 1; i <= count; i++) files[`u${i}/index.txt`] = `unit ${i}\n`
  const sandbox = makeSandbox(files)
  const units = Array.from({length: count}, (_, index) => `u${index + 1}`)
  const plan = `# Plan: ${count} parts\n\n## Scope\n- u*/**\n\n## Units\n\n${units.map((unit) => `### ${unit}\n\n#### Scope\n- ${unit}/**\n`).join('\n')}`
  const plans = path.join(sandbox.home, '.wave', 'plans')
  mkdirSync(plans, {recursive: true})
  const planPath = path.join(plans, 'bench-units.md')
  writeFileSync(planPath, plan)
  const decidedAt = new Date().toISOString()
  const record = {
    allow: [],
    decidedAt,
    decision: 'approved',
    history: [],
    mode: 'bypassPermissions',
    plan: {name: 'bench-units', sha256: sha256(plan)},
    repository: {head: git(sandbox.repo, 'rev-parse', 'HEAD')},
    sandbox: {enabled: true, network: false},
    units: units.map((unit) => ({name: unit, paths: [`${unit}/**`], verify: unitCheck ? [{command: unitCheck}] : []})),
    version: 1,
  }
  writeFileSync(planPath.replace(/\.md$/, '.approval.json'), JSON.stringify(record, null, 2))
  return {head: record.repository.head, planPath, record, sandbox, units}
}

let jobs = 0
function cloneJob(made) {
  const root = path.join(made.sandbox.root, `job-${++jobs}`)
  const repo = path.join(root, 'repo')
  const home = path.join(root, 'home')
  mkdirSync(path.join(home, '.wave', 'plans'), {recursive: true})
  git(made.sandbox.root, 'clone', '-q', made.sandbox.repo, repo)
  const planPath = path.join(home, '.wave', 'plans', path.basename(made.planPath))
  copyFileSync(made.planPath, planPath)
  copyFileSync(made.planPath.replace(/\.md$/, '.approval.json'), planPath.replace(/\.md$/, '.approval.json'))
  return {home, planPath, repo}
}

/** Every request of a unit's job: its write, then done; `latency` ms before each answer. */
function unitTurn(latency) {
  return async (request) => {
    if (latency) await new Promise((resolve) => setTimeout(resolve, latency))
    const first = JSON.stringify(request.body.messages[0].content)
    const unit = /This job is unit \\?"([^"\\]+)/.exec(first)?.[1]
    const turns = request.body.messages.filter((message) => message.role === 'assistant').length
    return turns === 0 ? reply(toolUse('Write', {content: `changed by ${unit}\n`, file_path: `${unit}/index.txt`})) : reply(`${unit} done.`)
  }
}

async function runUnits(made, server, units) {
  const started = performance.now()
  const runs = await Promise.all(
    units.map((unit) => {
      const job = cloneJob(made)
      return runWave(['run', job.planPath, '--unit', unit], {cwd: job.repo, home: job.home, server, timeoutMs: 300_000})
    }),
  )
  for (const run of runs) if (run.code !== 0) throw new Error(`a unit's run failed (${run.code}): ${run.stderr.slice(-800)}`)
  return performance.now() - started
}

/** One unit alone (median of three), then four at once (median of three). */
async function concurrency(label, latency, unitCheck) {
  const made = unitsRepository(4, unitCheck)
  const server = await startMessagesServer(Array.from({length: 100}, () => unitTurn(latency)))
  try {
    // A first run warms the code cache as a CI runner's second job would find it.
    await runUnits(made, server, ['u1'])
    const alone = []
    const together = []
    for (let round = 0; round < 3; round++) {
      alone.push(await runUnits(made, server, ['u1']))
      together.push(await runUnits(made, server, made.units))
    }

    const one = median(alone)
    const four = median(together)
    return {four, label, one, ratio: four / one}
  } finally {
    await server.close()
    made.sandbox.cleanup()
  }
}

/** A shell loop's count that keeps one core busy for about `ms` (in the sandbox as on the host: the same shell). */
function calibratedLoop(ms) {
  const probe = 200_000
  const at = performance.now()
  spawnSync('sh', ['-c', `i=0; while [ $i -lt ${probe} ]; do i=$((i+1)); done`])
  const per = (performance.now() - at) / probe
  return Math.round(ms / per)
}

/** 20 unit results with a small patch each, written as `wave run --unit` writes them; the merge timed (median of five). */
async function mergeOfTwenty() {
  const made = unitsRepository(20)
  const results = path.join(made.sandbox.root, 'results')
  mkdirSync(results)
  const scratch = cloneJob(made)
  for (const unit of made.units) {
    writeFileSync(path.join(scratch.repo, unit, 'index.txt'), `changed by ${unit}\n`)
    writeFileSync(path.join(scratch.repo, unit, 'new.txt'), `new in ${unit}\n`)
    git(scratch.repo, 'add', '-A')
    const patch = execFileSync('git', ['diff', '--cached', '--binary', '--full-index', made.head], {cwd: scratch.repo})
    git(scratch.repo, 'reset', '-q', '--hard', made.head)
    git(scratch.repo, 'clean', '-qfd')
    writeFileSync(path.join(results, `${unit}.patch`), patch)
    const result = {
      approvalDecidedAt: made.record.decidedAt,
      base: made.head,
      costUsd: 0.01,
      endedAt: new Date().toISOString(),
      exitCode: 0,
      outcome: 'succeeded',
      patch: {bytes: patch.length, file: `${unit}.patch`, sha256: sha256(patch)},
      plan: {name: 'bench-units', sha256: made.record.plan.sha256},
      report: {
        changed: [`${unit}/index.txt`, `${unit}/new.txt`],
        checks: [],
        denials: [],
        enforce: 'strict',
        outOfScope: [],
        scope: [`${unit}/**`],
        untouched: [],
      },
      startedAt: new Date().toISOString(),
      turns: 2,
      unit,
      version: 1,
    }
    writeFileSync(path.join(results, `${unit}.result.json`), JSON.stringify(result))
  }

  const times = []
  try {
    for (let round = 0; round < 6; round++) {
      const job = cloneJob(made)
      const run = await runWave(['plans', 'merge', job.planPath, results, '--json'], {cwd: job.repo, home: job.home})
      if (run.code !== 0) throw new Error(`the merge failed (${run.code}): ${run.stderr}`)
      if (JSON.parse(run.stdout).units.some((unit) => unit.status !== 'merged')) throw new Error('a unit was not merged')
      // The first warms the code cache.
      if (round > 0) times.push(run.endedAt - run.startedAt)
    }

    return median(times)
  } finally {
    made.sandbox.cleanup()
  }
}

const rows = []
const io = await concurrency('I/O-bound (model latency)', LATENCY, undefined)
rows.push(io)
const loop = calibratedLoop(2 * LATENCY)
const cpu = await concurrency('CPU-bound (the check burns a core)', 0, `i=0; while [ $i -lt ${loop} ]; do i=$((i+1)); done`)
rows.push(cpu)
const merge = await mergeOfTwenty()
// Beside it, node's start and wave's fast path on this machine now: what any wave command costs before its work.
const versions = []
for (let round = 0; round < 5; round++) {
  const made = makeSandbox({'README.md': '#\n'})
  const run = await runWave(['--version'], {cwd: made.repo, home: made.home})
  versions.push(run.endedAt - run.startedAt)
  made.cleanup()
}
const version = median(versions)

const lines = [
  '| workload | one unit alone | four units at once | ratio | target |',
  '|---|---|---|---|---|',
  ...rows.map(
    (row) =>
      `| ${row.label} | ${Math.round(row.one)} ms | ${Math.round(row.four)} ms | ${row.ratio.toFixed(2)}x | ≤ 1.5x${row.ratio <= 1.5 ? ' ok' : ' MISSED'} |`,
  ),
  '',
  `\`wave plans merge\` of 20 unit results (small patches, no plan checks), the process's wall time: ${Math.round(merge)} ms (target < 1,000 ms${merge < 1000 ? ', ok' : ', MISSED'}); \`wave --version\` in the same run: ${Math.round(version)} ms.`,
]
console.log(lines.join('\n'))

if (WRITE) {
  const file = path.join(path.dirname(new URL(import.meta.url).pathname), 'RESULTS.md')
  const text = readFileSync(file, 'utf8')
  const start = '<!-- units:start -->'
  const end = '<!-- units:end -->'
  const section = `${start}\n${lines.join('\n')}\n${end}`
  writeFileSync(
    file,
    text.includes(start)
      ? text.replace(new RegExp(`${start}[\\s\\S]*?${end}`), section)
      : `${text.trimEnd()}\n\n## Plan units (\`node bench/unit-jobs.js\`)\n\n${section}\n`,
  )
}
