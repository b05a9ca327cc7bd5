/**
 * What every benchmark module (bench/<name>.js) shares: the command line (--quick and the run counts),
 * the rows recorded for the table and RESULTS.md (a row of wave's V8 flags against V8's defaults among
 * them), the scripted Messages API server and a plan-writing turn for it, the bare SDK script's
 * environment, and the small process helpers.
 */
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {buildFloorSdk} from './floor-sdk.js'
import {PROJECT_ROOT} from './sandbox.js'
import {messagesServerModule} from './server.js'
import {median, ms, ratio} from './stats.js'

const argv = process.argv.slice(2)
export const flag = (/** @type {string} */ name) => argv.includes(`--${name}`)
export const option = (/** @type {string} */ name) => argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1]
export const QUICK = flag('quick') || process.env.WAVE_BENCH_QUICK === '1'
export const RUNS = {cold: QUICK ? 8 : 20, first: QUICK ? 4 : 10, sandbox: QUICK ? 30 : 100, turn: QUICK ? 2 : 5, search: QUICK ? 3 : 5}
/** bench/lib: the helper scripts the benchmarks spawn or preload. */
export const LIB = path.join(PROJECT_ROOT, 'bench', 'lib')

/** @type {Array<{section: string, figure: string, value: string, baseline?: string, ratio?: string, target?: string, ok?: boolean, note?: string}>} */
export const results = []
/** Lines printed after the table, and listed under it in RESULTS.md. */
export const notes = []

export function record(row) {
  results.push(row)
  const verdict = row.ok === undefined ? '' : row.ok ? '  ok' : '  MISSED'
  const against = row.baseline ? `   vs ${row.baseline}${row.ratio ? ` (${row.ratio})` : ''}` : ''
  console.log(`  ${row.figure.padEnd(44)} ${String(row.value).padStart(10)}${against}${row.target ? `   target ${row.target}` : ''}${verdict}`)
  if (row.note) console.log(`      ${row.note}`)
}

/**
 * One row of wave's V8 flags against V8's defaults: `measure(true)` (as wave runs) and `measure(false)`,
 * interleaved so that the machine's load weighs on both alike (3 pairs quick, 7 full), the medians recorded,
 * the target met at `factor` times the defaults or less.
 * @param {{factor: number, figure: string, measure: (wave: boolean) => number | Promise<number>, note: string, section: string}} row
 */
export async function recordAgainstDefaults({factor, figure, measure, note, section}) {
  /** @type {Record<'defaults' | 'wave', number[]>} */
  const times = {defaults: [], wave: []}
  for (let run = 0; run < (QUICK ? 3 : 7); run++) {
    times.wave.push(await measure(true))
    times.defaults.push(await measure(false))
  }

  const [wave, defaults] = [median(times.wave), median(times.defaults)]
  record({
    baseline: `V8's defaults ${ms(defaults)}`,
    figure,
    note,
    ok: wave <= factor * defaults,
    ratio: ratio(wave, defaults),
    section,
    target: `≤ ${factor}× V8's defaults`,
    value: ms(wave),
  })
}

export function heading(title) {
  console.log(`\n${title}`)
}

export const {reply, startMessagesServer, systemText, text, toolResults, toolUse} = await messagesServerModule()

export const planPathOf = (request) => {
  const system = systemText(request)
  return /create your plan at (\S+) using/.exec(system)?.[1] ?? /already exists at (\S+)\. /.exec(system)?.[1]
}

/** A turn that writes a one-line plan to the session's plan file. */
export const writePlan = (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Do the thing.\n', file_path: planPathOf(request)}))

/** @type {Promise<string> | undefined} */
let floorSdk
/**
 * The environment of the bare SDK script (bench/lib/sdk-floor.js) against `server`: its SDK is one ES
 * module, built once per run (bench/lib/floor-sdk.js), on first use.
 */
export async function floorEnv(server, sandbox) {
  if (!floorSdk) {
    const dir = mkdtempSync(path.join(tmpdir(), 'wave-bench-floor-'))
    process.once('exit', () => rmSync(dir, {force: true, recursive: true}))
    floorSdk = buildFloorSdk(dir)
  }

  return {ANTHROPIC_API_KEY: 'sk-bench', ANTHROPIC_BASE_URL: server.url, HOME: sandbox.home, PATH: process.env.PATH, WAVE_BENCH_SDK_BUNDLE: await floorSdk}
}

/** Spawns node with `args` and returns the wall time in ms (and the result), stdout not a terminal. */
export function timeNode(args, env) {
  const at = performance.now()
  const result = spawnSync(process.execPath, args, {env, stdio: ['ignore', 'pipe', 'pipe']})
  return {ms: performance.now() - at, result}
}

export function cleanEnv(home, extra = {}) {
  const env = {CI: '1', HOME: home, NO_COLOR: '1', PATH: process.env.PATH}
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR
  return {...env, ...extra}
}

/** Runs a command to its end without blocking this process (whose scripted server may be what answers it). */
export function spawnAsync(command, args, env) {
  return new Promise((/** @type {(value?: unknown) => void} */ resolve, reject) => {
    const child = spawn(command, args, {env, stdio: ['ignore', 'ignore', 'pipe']})
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${args[0]} exited ${code}: ${stderr}`))))
  })
}

export function which(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
}

/** Runs a command, returns wall ms and stdout. */
export function timeCommand(command, args, cwd) {
  const at = performance.now()
  // stdin is /dev/null: ripgrep reads a piped stdin instead of the directory.
  const result = spawnSync(command, args, {cwd, maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe']})
  return {ms: performance.now() - at, stdout: result.stdout?.toString() ?? ''}
}

/** One call of a search tool (or Read) through the dispatcher, in a fresh process (bench/lib/search-child.js). */
export function waveSearch(tool, root, input, env = {}) {
  const result = spawnSync(process.execPath, [path.join(LIB, 'search-child.js'), tool, root, JSON.stringify(input)], {
    env: {...process.env, ...env},
    maxBuffer: 64 * 1024 * 1024,
  })
  if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr}`)
  return JSON.parse(result.stdout.toString())
}

/** The number a wave result reports: its truncation note's total, else its line count. */
export function waveTotal(output) {
  const note = /\(truncated: showing \d+ of (\d+) /.exec(output.tail ?? '')
  if (note) return Number(note[1])
  if (output.head?.[0]?.startsWith('No ')) return 0
  return output.lines
}
