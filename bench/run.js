#!/usr/bin/env node
/**
 * wave's benchmarks (issue 6): each figure beside a baseline measured in the same run, medians of
 * several runs, and the results written into bench/RESULTS.md (between its generated-results markers).
 *
 *   npm run bench                  # full: a 50,000-file, 500 MB search tree; a few minutes on 2 cores
 *   npm run bench -- --quick       # a 5,000-file tree and fewer runs (or WAVE_BENCH_QUICK=1)
 *   npm run bench -- --only=cold,first,turn,weight,search,memory,sandbox,read,compaction,install,parallel,snapshot
 *   npm run bench -- --no-write    # print only (a --quick run never writes unless --write)
 *   npm run bench -- --no-rg       # as if ripgrep were not installed (its comparison is skipped)
 *   npm run bench -- --keep-tree   # leave the generated search tree in the temporary directory
 *
 * Runs against the compiled CLI (bin/run.js and dist/, built by `npm ci` or `npm run build`). The scripted
 * Messages API server is the test suite's (test/support/messages-server.ts), compiled on the fly.
 */
import {execFileSync, spawn, spawnSync} from 'node:child_process'
import {closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync} from 'node:fs'
import {createServer} from 'node:http'
import {cpus, loadavg, tmpdir, totalmem} from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {buildFloorSdk} from './lib/floor-sdk.js'
import {messagesServerModule, responseEnds} from './lib/server.js'
import {BIN_RUN, makeSandbox, PROJECT_ROOT, runWave} from './lib/sandbox.js'
import {kb, mb, median, ms, ratio} from './lib/stats.js'
import {COMMON, generateTree, NEEDLE} from './lib/tree.js'

/** The SDK as a load trace sees it: the package, or the build's one-file bundle of it (dist/bundles/vendor). */
const SDK_MODULE = /\/@anthropic-ai\/sdk\/|\/dist\/bundles\/vendor\/anthropic-sdk\.cjs/

const argv = process.argv.slice(2)
const flag = (name) => argv.includes(`--${name}`)
const option = (name) => argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1]
const QUICK = flag('quick') || process.env.WAVE_BENCH_QUICK === '1'
const WRITE = flag('write') || (!QUICK && !flag('no-write'))
const ONLY = new Set((option('only') ?? 'cold,first,turn,weight,search,memory,sandbox,read,compaction,install,parallel,snapshot').split(','))
const RUNS = {cold: QUICK ? 8 : 20, first: QUICK ? 4 : 10, sandbox: QUICK ? 30 : 100, turn: QUICK ? 2 : 5, search: QUICK ? 3 : 5}
const LIB = path.join(PROJECT_ROOT, 'bench', 'lib')

if (!existsSync(path.join(PROJECT_ROOT, 'dist', 'commands'))) {
  console.error('bench: dist/ is missing: run `npm run build` (npm ci runs it) first.')
  process.exit(2)
}

const {reply, startMessagesServer, systemText, toolResults, toolUse} = await messagesServerModule()
const results = [] // {section, figure, value, baseline, ratio, target, ok, note}
const notes = []
const started = performance.now()

// The floor script's SDK: one ES module, built once per run (bench/lib/floor-sdk.js).
const floorDir = mkdtempSync(path.join(tmpdir(), 'wave-bench-floor-'))
process.once('exit', () => rmSync(floorDir, {force: true, recursive: true}))
const FLOOR_SDK = await buildFloorSdk(floorDir)
const floorEnv = (server, sandbox) => ({
  ANTHROPIC_API_KEY: 'sk-bench',
  ANTHROPIC_BASE_URL: server.url,
  HOME: sandbox.home,
  PATH: process.env.PATH,
  WAVE_BENCH_SDK_BUNDLE: FLOOR_SDK,
})

function record(row) {
  results.push(row)
  const verdict = row.ok === undefined ? '' : row.ok ? '  ok' : '  MISSED'
  const against = row.baseline ? `   vs ${row.baseline}${row.ratio ? ` (${row.ratio})` : ''}` : ''
  console.log(`  ${row.figure.padEnd(44)} ${String(row.value).padStart(10)}${against}${row.target ? `   target ${row.target}` : ''}${verdict}`)
  if (row.note) console.log(`      ${row.note}`)
}

function heading(title) {
  console.log(`\n${title}`)
}

/** Spawns node with `args` and returns the wall time in ms (and the result), stdout not a terminal. */
function timeNode(args, env) {
  const at = performance.now()
  const result = spawnSync(process.execPath, args, {env, stdio: ['ignore', 'pipe', 'pipe']})
  return {ms: performance.now() - at, result}
}

function cleanEnv(home, extra = {}) {
  const env = {CI: '1', HOME: home, NO_COLOR: '1', PATH: process.env.PATH}
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR
  return {...env, ...extra}
}

const planPathOf = (request) => {
  const system = systemText(request)
  return /create your plan at (\S+) using/.exec(system)?.[1] ?? /already exists at (\S+)\. /.exec(system)?.[1]
}

const writePlan = (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Do the thing.\n', file_path: planPathOf(request)}))

// ---------------------------------------------------------------------------------------------- 1. cold start

async function coldStart() {
  heading('1. Cold start (medians; stdout is a pipe, as in CI)')
  const sandbox = makeSandbox({'README.md': '# bench\n'})
  try {
    const env = cleanEnv(sandbox.home)
    const oclifEnv = {...env, WAVE_NO_FAST_START: '1'}
    const cases = {
      help: [[BIN_RUN, '--help'], env],
      helpOclif: [[BIN_RUN, '--help'], oclifEnv],
      node: [['-e', '0'], env],
      version: [[BIN_RUN, '--version'], env],
      versionOclif: [[BIN_RUN, '--version'], oclifEnv],
    }
    const times = Object.fromEntries(Object.keys(cases).map((name) => [name, /** @type {number[]} */ ([])]))
    for (const [args, caseEnv] of Object.values(cases)) timeNode(args, caseEnv) // warm the page cache
    for (let run = 0; run < RUNS.cold; run++) {
      for (const [name, [args, caseEnv]] of Object.entries(cases)) times[name].push(timeNode(args, caseEnv).ms)
    }

    const node = median(times.node)
    for (const [name, label] of [
      ['version', 'wave --version'],
      ['help', 'wave --help'],
    ]) {
      const value = median(times[name])
      record({
        baseline: `node -e 0 ${ms(node)}`,
        figure: label,
        ok: value <= 2 * node,
        ratio: ratio(value, node),
        section: 'cold',
        target: '≤ 2×',
        value: ms(value),
      })
    }

    for (const [flag, runs] of [
      ['--version', times.versionOclif],
      ['--help', times.helpOclif],
    ]) {
      const value = median(runs)
      record({
        baseline: `node -e 0 ${ms(node)}`,
        figure: `wave ${flag} through oclif (no fast path)`,
        ratio: ratio(value, node),
        section: 'cold',
        value: ms(value),
      })
    }

    // The fast path must print exactly what oclif prints.
    const same = [['--version'], ['--help'], []].every((args) => {
      const fast = spawnSync(process.execPath, [BIN_RUN, ...args], {env}).stdout.toString()
      const slow = spawnSync(process.execPath, [BIN_RUN, ...args], {env: oclifEnv}).stdout.toString()
      return fast === slow && fast.length > 0
    })
    record({figure: 'fast path output = oclif output', ok: same, section: 'cold', value: same ? 'identical' : 'DIFFERS'})

    // The SDK must not load for commands that do not call the model.
    const loadsFile = path.join(sandbox.root, 'loads.txt')
    const loaded = (args, extra = {}) => {
      rmSync(loadsFile, {force: true})
      spawnSync(process.execPath, ['--import', path.join(LIB, 'trace-loads.js'), BIN_RUN, ...args], {
        cwd: sandbox.repo,
        env: {...env, ...extra, WAVE_BENCH_LOADS_FILE: loadsFile},
      })
      return existsSync(loadsFile) ? readFileSync(loadsFile, 'utf8') : ''
    }

    const clean = []
    for (const [label, args, extra] of [
      ['--version', ['--version']],
      ['--help', ['--help']],
      ['--help (oclif)', ['--help'], {WAVE_NO_FAST_START: '1'}],
      ['tools', ['tools']],
      ['plans', ['plans']],
    ]) {
      if (SDK_MODULE.test(loaded(args, extra))) clean.push(`${label}: LOADS THE SDK`)
      else clean.push(`${label}: no`)
    }

    // Control: a command that calls the model does load it, so the trace works. (Spawned asynchronously:
    // the server answers from this process.)
    const server = await startMessagesServer([writePlan, reply('Done.')])
    rmSync(loadsFile, {force: true})
    await runWave(['plan', '--task', 'x'], {
      cwd: sandbox.repo,
      env: {WAVE_BENCH_LOADS_FILE: loadsFile},
      home: sandbox.home,
      nodeArgs: ['--import', path.join(LIB, 'trace-loads.js')],
      server,
    })
    const control = existsSync(loadsFile) && SDK_MODULE.test(readFileSync(loadsFile, 'utf8'))
    await server.close()
    const ok = clean.every((line) => line.endsWith(': no')) && control
    record({
      figure: 'SDK loaded by non-model commands',
      note: `${clean.join(', ')}; wave plan: ${control ? 'yes (control)' : 'NO (trace broken?)'}`,
      ok,
      section: 'cold',
      value: ok ? 'none' : 'see note',
    })
    return {node}
  } finally {
    sandbox.cleanup()
  }
}

// ---------------------------------------------------------------------------------------------- 2. time to first request

async function firstRequest() {
  heading('2. Time to first model request (process start → request at the server)')
  const sandbox = makeSandbox({'README.md': '# bench\n', 'src/app.ts': 'export const app = 1\n'})
  const files = QUICK ? 25_000 : 100_000
  const large = makeLargeRepository(files)
  const requestFile = path.join(sandbox.root, 'first-request.json')
  try {
    /** @type {Record<'cold' | 'floor' | 'large' | 'small', number[]>} */
    const times = {cold: [], floor: [], large: [], small: []}
    const firstRequestAt = async (/** @type {string} */ cwd, /** @type {Record<string, string>} */ env = {}) => {
      const server = await startMessagesServer([writePlan, reply('Done.')])
      const result = await runWave(['plan', '--task', 'Add a --verbose flag'], {cwd, env, home: sandbox.home, server})
      if (result.code !== 0) throw new Error(`wave plan failed (${result.code}): ${result.stderr}`)
      const request = server.messageRequests[0]
      await server.close()
      return {ms: request.receivedAt - result.startedAt, request}
    }

    for (let run = 0; run < RUNS.first; run++) {
      const small = await firstRequestAt(sandbox.repo)
      times.small.push(small.ms)
      times.large.push((await firstRequestAt(large.repo)).ms)
      // A first run: no code cache to start from (src/base/bundles.ts).
      times.cold.push((await firstRequestAt(sandbox.repo, {NODE_DISABLE_COMPILE_CACHE: '1'})).ms)
      // The floor sends the very request wave sent first.
      writeFileSync(requestFile, small.request.rawBody)
      const floorServer = await startMessagesServer([reply('Done.')])
      const at = performance.now()
      await spawnAsync(process.execPath, [path.join(LIB, 'sdk-floor.js'), sandbox.repo, requestFile], floorEnv(floorServer, sandbox))
      times.floor.push(floorServer.messageRequests[0].receivedAt - at)
      await floorServer.close()
    }

    const [small, floor, largeMs, cold] = [median(times.small), median(times.floor), median(times.large), median(times.cold)]
    record({
      baseline: `bare SDK script ${ms(floor)}`,
      figure: 'wave plan --task',
      note: 'the bare script: node, the SDK bundled into one ES module, and the same first request',
      ok: small <= 1.6 * floor,
      ratio: ratio(small, floor),
      section: 'first',
      target: '≤ 1.6× the bare script',
      value: ms(small),
    })
    record({
      baseline: `bare SDK script ${ms(floor)}`,
      figure: 'wave plan --task, first run (no code cache)',
      note: 'NODE_DISABLE_COMPILE_CACHE=1: the bundles compiled from source, as on the first run after an install',
      ratio: ratio(cold, floor),
      section: 'first',
      value: ms(cold),
    })
    record({
      baseline: `small repository ${ms(small)}`,
      figure: `wave plan --task, ${files.toLocaleString('en')}-file repository`,
      note: `${files.toLocaleString('en')} committed files: its git status is not awaited before the first request (src/base/workspace/snapshot.ts)`,
      ok: largeMs - small <= 20,
      section: 'first',
      target: '≤ +20 ms',
      value: `${largeMs < small ? '−' : '+'}${ms(Math.abs(largeMs - small))}`,
    })
  } finally {
    sandbox.cleanup()
    large.cleanup()
  }
}

/** A git repository of `files` small committed files (in 250 directories), for start-up in a large work tree. */
function makeLargeRepository(files) {
  const perDir = Math.ceil(files / 250)
  const tree = {}
  for (let i = 0; i < files; i++) tree[`src/m${Math.floor(i / perDir)}/f${i % perDir}.ts`] = `export const v${i} = ${i}\n`
  return makeSandbox(tree)
}

function spawnAsync(command, args, env) {
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

// ---------------------------------------------------------------------------------------------- 3. overhead per turn

const SMALL_FILES = Object.fromEntries(Array.from({length: 6}, (_, i) => [`src/file${i}.ts`, `export const value${i} = ${i}\n// a small file\n`]))

async function perTurn() {
  heading('3. Overhead per turn (end of a streamed response → next request; six turns, each reads one small file)')
  const sandbox = makeSandbox({'README.md': '# bench\n', ...SMALL_FILES})
  const rssFile = path.join(sandbox.root, 'rss.txt')
  try {
    const wave = []
    const floor = []
    const rss = []
    for (let run = 0; run < RUNS.turn; run++) {
      const script = Object.keys(SMALL_FILES).map((file) => reply(toolUse('Read', {file_path: file})))
      const server = await startMessagesServer([...script, writePlan, reply('Done.')])
      responseEnds.length = 0
      const result = await runWave(['plan', '--task', 'Read the six files, then plan'], {
        cwd: sandbox.repo,
        env: {WAVE_BENCH_RSS_FILE: rssFile},
        home: sandbox.home,
        nodeArgs: ['--import', path.join(LIB, 'rss-preload.js')],
        server,
      })
      if (result.code !== 0) throw new Error(`wave plan failed (${result.code}): ${result.stderr}`)
      const requests = server.messageRequests
      for (let i = 1; i <= 6; i++) {
        if (toolResults(requests[i])[0]?.is_error) throw new Error(`Read failed in the per-turn session: ${toolResults(requests[i])[0].text}`)
        wave.push(requests[i].receivedAt - responseEnds[i - 1].at)
      }

      await server.close()

      const floorServer = await startMessagesServer([...Object.keys(SMALL_FILES).map((file) => reply(toolUse('Read', {file_path: file}))), reply('Done.')])
      responseEnds.length = 0
      await spawnAsync(process.execPath, [path.join(LIB, 'sdk-floor.js'), sandbox.repo], floorEnv(floorServer, sandbox))
      for (let i = 1; i <= 6; i++) floor.push(floorServer.messageRequests[i].receivedAt - responseEnds[i - 1].at)
      await floorServer.close()
    }

    rss.push(...readFileSync(rssFile, 'utf8').trim().split('\n').map(Number))
    const value = median(wave)
    record({
      baseline: `bare SDK loop ${ms(median(floor))}`,
      figure: 'per turn (Read of a small file)',
      note: `${wave.length} turns; slowest ${ms(Math.max(...wave))}`,
      ok: value <= 5,
      section: 'turn',
      target: '≤ 5 ms',
      value: ms(value),
    })
    return {planRssKb: median(rss)}
  } finally {
    sandbox.cleanup()
  }
}

// ---------------------------------------------------------------------------------------------- 4. request weight

const bytes = (value) => Buffer.byteLength(JSON.stringify(value ?? null))

function cacheBreakpoints(request) {
  const {messages = [], system = [], tools = []} = request.body
  const last = messages.at(-1)
  const lastBlock = Array.isArray(last?.content) ? last.content.at(-1) : undefined
  return {
    messages: Boolean(lastBlock?.cache_control),
    system: Array.isArray(system) && Boolean(system.at(-1)?.cache_control),
    tools: Boolean(tools.at(-1)?.cache_control),
  }
}

async function requestWeight() {
  heading('4. Request weight (system prompt + tool definitions, JSON bytes)')
  const five = 'x'.repeat(60) + '\n'
  const bigFiles = Object.fromEntries(Array.from({length: 20}, (_, i) => [`docs/part${String(i).padStart(2, '0')}.md`, five.repeat(Math.round(5000 / 69))]))
  const sandbox = makeSandbox({'README.md': '# bench\n', ...bigFiles})
  try {
    const weights = {}
    const breakpoints = []
    // Plan mode.
    let server = await startMessagesServer([writePlan, reply('Done.')])
    let result = await runWave(['plan', '--task', 'Plan something'], {cwd: sandbox.repo, home: sandbox.home, server})
    if (result.code !== 0) throw new Error(`wave plan failed: ${result.stderr}`)
    weights.plan = server.messageRequests[0]
    breakpoints.push(...server.messageRequests.map(cacheBreakpoints))
    await server.close()
    // Run modes, with a task (the full tool set of the mode).
    for (const mode of ['acceptEdits', 'bypassPermissions']) {
      server = await startMessagesServer([reply('Nothing to do.')])
      result = await runWave(['run', '--task', 'Do something', '--mode', mode], {cwd: sandbox.repo, home: sandbox.home, server})
      if (result.code !== 0) throw new Error(`wave run --mode ${mode} failed (${result.code}): ${result.stderr}`)
      weights[mode] = server.messageRequests[0]
      breakpoints.push(...server.messageRequests.map(cacheBreakpoints))
      await server.close()
    }

    // Claude Code's first request in the same sandbox, mode and task: the baseline of issue 18's ≤ 0.15×.
    const claude = claudeCode()
    const baselines = {}
    for (const mode of Object.keys(weights))
      if (claude) baselines[mode] = await claudeCodeWeight(claude, mode, mode === 'plan' ? 'Plan something' : 'Do something', sandbox)
    if (!claude)
      notes.push(
        `Request weight: Claude Code not found (put claude on PATH or set WAVE_BENCH_CLAUDE), so no ratio; Claude Code 2.1.197 sent ${kb(CLAUDE_CODE_WEIGHT)} in every mode when last measured.`,
      )

    for (const [mode, request] of Object.entries(weights)) {
      const system = bytes(request.body.system)
      const tools = bytes(request.body.tools)
      const names = (request.body.tools ?? []).map((tool) => tool.name).join(', ')
      const baseline = baselines[mode]
      const share = baseline ? (system + tools) / baseline.bytes : undefined
      record({
        baseline: baseline ? `Claude Code ${baseline.version} ${kb(baseline.bytes)}` : undefined,
        figure: `${mode === 'plan' ? 'plan mode' : `run, ${mode}`}`,
        note: `system ${kb(system)} + ${request.body.tools?.length ?? 0} tools ${kb(tools)} (${names}); ${system + tools} bytes`,
        ok: system + tools <= 12 * 1024 && (share === undefined || share <= 0.15),
        ratio: share === undefined ? undefined : `${share.toFixed(3)}×`,
        section: 'weight',
        target: '≤ 12 KB, ≤ 0.15× Claude Code',
        value: kb(system + tools),
      })
    }

    // Growth over a 20-turn session whose tool results are about 5 KB each.
    const script = Object.keys(bigFiles).map((file) => reply(toolUse('Read', {file_path: file})))
    server = await startMessagesServer([...script, writePlan, reply('Done.')])
    result = await runWave(['plan', '--task', 'Read the docs, then plan', '--max-turns', '30'], {cwd: sandbox.repo, home: sandbox.home, server})
    if (result.code !== 0) throw new Error(`wave plan (20 turns) failed: ${result.stderr}`)
    const requests = server.messageRequests
    breakpoints.push(...requests.map(cacheBreakpoints))
    await server.close()
    const sizes = requests.map((request) => Buffer.byteLength(request.rawBody))
    const resultChars = requests.slice(1, 21).map((request) => toolResults(request)[0]?.text.length ?? 0)
    const growth = sizes.slice(1, 21).map((size, i) => size - sizes[i])
    const shown = [1, 2, 5, 10, 15, 20, 21].filter((turn) => turn <= sizes.length)
    record({
      figure: '20-turn session, 5 KB tool results',
      note: `request bytes by turn: ${shown.map((turn) => `${turn}: ${kb(sizes[turn - 1])}`).join(', ')}; tool results ${kb(median(resultChars))} each`,
      section: 'weight',
      value: `+${kb(median(growth))}/turn`,
    })
    const all = breakpoints.length
    const tally = (key) => breakpoints.filter((b) => b[key]).length
    const ok = tally('tools') === all && tally('system') === all && tally('messages') === all
    record({
      figure: 'cache_control breakpoints',
      note: `of ${all} recorded requests: tools ${tally('tools')}, system ${tally('system')}, newest turn ${tally('messages')}`,
      ok,
      section: 'weight',
      target: 'on every request',
      value: ok ? 'all three' : 'MISSING',
    })
  } finally {
    sandbox.cleanup()
  }
}

// ---------------------------------------------------------------------------------------------- 5. search at scale

/** Claude Code's system prompt and tools in its first request, as last measured (2.1.197, every mode). */
const CLAUDE_CODE_WEIGHT = 69_580

/** The Claude Code executable to measure against: WAVE_BENCH_CLAUDE, else `claude` on PATH, else none. */
function claudeCode() {
  if (process.env.WAVE_BENCH_CLAUDE) return process.env.WAVE_BENCH_CLAUDE
  return which('claude') ? 'claude' : undefined
}

/** Bytes of `system` plus `tools` in Claude Code's first request with tools, for one task in one mode. */
async function claudeCodeWeight(claude, mode, task, sandbox) {
  const version = spawnSync(claude, ['--version'], {encoding: 'utf8'}).stdout?.split(' ')[0] ?? '?'
  const server = await startMessagesServer(Array.from({length: 10}, () => reply('Nothing to do.')))
  try {
    const env = {
      ...cleanEnv(sandbox.home, {ANTHROPIC_API_KEY: 'sk-bench-not-a-real-key', ANTHROPIC_BASE_URL: server.url}),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      // Claude Code refuses bypassPermissions to root unless it is told it runs in a sandbox (CI containers).
      IS_SANDBOX: '1',
    }
    // Asynchronously: the scripted server answering it runs in this process.
    await new Promise((resolve) => {
      const child = spawn(claude, ['-p', task, '--permission-mode', mode], {cwd: sandbox.repo, env, stdio: 'ignore'})
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
      child.on('error', resolve).on('exit', () => resolve(clearTimeout(timer)))
    })
    const request = server.messageRequests.find((r) => (r.body?.tools ?? []).length > 0)
    if (!request) throw new Error(`Claude Code (${claude}) sent no request with tools in ${mode} mode`)
    return {bytes: bytes(request.body.system) + bytes(request.body.tools), version}
  } finally {
    await server.close()
  }
}

function which(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
}

/** Runs a command, returns wall ms and stdout. */
function timeCommand(command, args, cwd) {
  const at = performance.now()
  // stdin is /dev/null: ripgrep reads a piped stdin instead of the directory.
  const result = spawnSync(command, args, {cwd, maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe']})
  return {ms: performance.now() - at, stdout: result.stdout?.toString() ?? ''}
}

function waveSearch(tool, root, input, env = {}) {
  const result = spawnSync(process.execPath, [path.join(LIB, 'search-child.js'), tool, root, JSON.stringify(input)], {
    env: {...process.env, ...env},
    maxBuffer: 64 * 1024 * 1024,
  })
  if (result.status !== 0) throw new Error(`${tool} failed: ${result.stderr}`)
  return JSON.parse(result.stdout.toString())
}

/** The number a wave result reports: its truncation note's total, else its line count. */
function waveTotal(output) {
  const note = /\(truncated: showing \d+ of (\d+) /.exec(output.tail ?? '')
  if (note) return Number(note[1])
  if (output.head?.[0]?.startsWith('No ')) return 0
  return output.lines
}

async function search() {
  heading(`5. Search at scale (${QUICK ? 'quick tree: a smoke run, the targets are for the full tree' : 'full tree'})`)
  const tree = await generateTree(QUICK ? 'quick' : 'full')
  console.log(
    `  tree: ${tree.files.toLocaleString('en')} files, ${mb(tree.bytes / 1024)} searched; ${tree.ignoredFiles.toLocaleString('en')} files, ${mb(tree.ignoredBytes / 1024)} ignored (.gitignore, nested .gitignore files, node_modules/, build/) under ${tmpdir()}`,
  )
  const rg = !flag('no-rg') && which('rg')
  const gitGrep = which('git')
  if (!rg) notes.push('ripgrep (`rg`) was not found: the ripgrep comparison was skipped (Debian: apt-get install -y ripgrep).')
  if (!rg) console.log('  rg not found: skipping the ripgrep comparison (Debian: apt-get install -y ripgrep)')
  const cases = [
    {
      git: ['ls-files', '-co', '--exclude-standard', '--', '*.ts'],
      input: {pattern: '**/*.ts'},
      name: 'Glob `**/*.ts` (newest first, like rg --sortr modified)',
      rg: ['--files', '--sortr', 'modified', '-g', '*.ts'],
      rgPlain: ['--files', '-g', '*.ts'],
      tool: 'Glob',
    },
    {git: ['grep', '--untracked', '-l', NEEDLE], input: {pattern: NEEDLE}, name: 'Grep literal, files_with_matches', rg: ['-l', NEEDLE], tool: 'Grep'},
    {
      git: ['grep', '--untracked', '-n', 'TODO(perf)'],
      input: {output_mode: 'content', pattern: String.raw`TODO\(perf\)`},
      name: 'Grep `TODO\\(perf\\)`, content',
      rg: ['-n', String.raw`TODO\(perf\)`],
      tool: 'Grep',
    },
    {
      git: ['grep', '--untracked', '-c', '-E', String.raw`function [[:alnum:]_]+_handler\(`],
      input: {output_mode: 'count', pattern: String.raw`function \w+_handler\(`},
      name: 'Grep `function \\w+_handler\\(`, count',
      rg: ['-c', String.raw`function \w+_handler\(`],
      tool: 'Grep',
    },
    {
      git: ['grep', '--untracked', '-il', NEEDLE.toUpperCase()],
      input: {'-i': true, pattern: NEEDLE.toUpperCase()},
      name: 'Grep -i literal, files_with_matches',
      rg: ['-il', NEEDLE.toUpperCase()],
      tool: 'Grep',
    },
    // Letters only: no caseless run to rule files out by bytes, so every file is decoded (the hard case).
    {
      git: ['grep', '--untracked', '-il', 'BENCH'],
      input: {'-i': true, pattern: 'BENCH'},
      name: 'Grep -i letters-only literal, files_with_matches',
      rg: ['-il', 'BENCH'],
      tool: 'Grep',
    },
  ]
  let peakRss = 0
  try {
    for (const testCase of cases) {
      /** @type {Record<'git' | 'rg' | 'rgPlain' | 'wave', number[]>} */
      const times = {git: [], rg: [], rgPlain: [], wave: []}
      let output
      let rgOut = ''
      for (let run = 0; run < RUNS.search; run++) {
        output = waveSearch(testCase.tool, tree.root, testCase.input)
        times.wave.push(output.ms)
        peakRss = Math.max(peakRss, output.maxRssKb)
        if (rg) {
          const r = timeCommand('rg', testCase.rg, tree.root)
          times.rg.push(r.ms)
          rgOut = r.stdout
          if (testCase.rgPlain) times.rgPlain.push(timeCommand('rg', testCase.rgPlain, tree.root).ms)
        }

        if (gitGrep) times.git.push(timeCommand('git', testCase.git, tree.root).ms)
      }

      const value = median(times.wave)
      const rgMs = median(times.rg)
      const baselines = [
        rg ? `${testCase.tool === 'Glob' ? 'rg --files --sortr modified' : 'rg'} ${ms(rgMs)}` : undefined,
        times.rgPlain.length > 0 ? `rg --files ${ms(median(times.rgPlain))}` : undefined,
        gitGrep ? `${testCase.tool === 'Glob' ? 'git ls-files' : 'git grep'} ${ms(median(times.git))}` : undefined,
      ]
      let agreement = ''
      if (rg) {
        const rgLines = rgOut.split('\n').filter(Boolean)
        const rgTotal = testCase.input.output_mode === 'count' ? rgLines.length : rgLines.length
        agreement = waveTotal(output) === rgTotal ? `same result as rg (${rgTotal})` : `DIFFERENT from rg: wave ${waveTotal(output)}, rg ${rgTotal}`
      }

      record({
        baseline: baselines.filter(Boolean).join(', '),
        figure: testCase.name,
        note: `${agreement}${agreement ? '; ' : ''}peak RSS ${mb(output.maxRssKb)}, CPU ${ms(output.cpuMs)}`,
        // The targets are for the full tree: on the quick one, fixed costs (a worker's start) weigh more.
        ok: rg && !QUICK ? value <= 2 * rgMs : undefined,
        ratio: rg ? ratio(value, rgMs) : undefined,
        section: 'search',
        target: rg && !QUICK ? '≤ 2× rg' : undefined,
        value: ms(value),
      })
    }

    // What the worker threads buy, and that memory does not grow with the tree.
    const single = []
    const small = []
    for (let run = 0; run < RUNS.search; run++) {
      single.push(waveSearch('Grep', tree.root, {pattern: NEEDLE}, {WAVE_SEARCH_THREADS: '0'}).ms)
    }

    const subtree = waveSearch('Grep', tree.root, {output_mode: 'content', path: 'packages/pkg1', pattern: COMMON})
    small.push(subtree.maxRssKb)
    const whole = waveSearch('Grep', tree.root, {output_mode: 'content', pattern: COMMON})
    const everything = waveSearch('Grep', tree.root, {output_mode: 'content', pattern: 'e'})
    record({figure: 'Grep literal, main thread only', note: 'WAVE_SEARCH_THREADS=0: no worker thread', section: 'search', value: ms(median(single))})
    record({
      figure: 'Grep peak RSS: 1/50 of the tree → all of it',
      note: `content mode: ${mb(small[0])} → ${mb(whole.maxRssKb)}; a pattern matching nearly every line (${everything.tail.slice(0, 60)}...): ${mb(everything.maxRssKb)}`,
      section: 'search',
      value: mb(Math.max(whole.maxRssKb, everything.maxRssKb)),
    })
    peakRss = Math.max(peakRss, whole.maxRssKb, everything.maxRssKb)
    notes.push(
      'wave does not call ripgrep: every search figure is the pure-Node path (the main thread and one worker thread per further core), timed around the tool call in a fresh process, through the dispatcher.',
    )
    return {searchRssKb: peakRss, tree}
  } finally {
    if (!flag('keep-tree')) rmSync(tree.root, {force: true, recursive: true})
    else console.log(`  kept the tree at ${tree.root}`)
  }
}

// ---------------------------------------------------------------------------------------------- 6. memory

async function memory(context) {
  heading('6. Memory (peak RSS)')
  const sandbox = makeSandbox({'README.md': '# bench\n'})
  try {
    const file = path.join(sandbox.root, 'rss.txt')
    for (let run = 0; run < 3; run++) {
      spawnSync(process.execPath, ['--import', path.join(LIB, 'rss-preload.js'), '-e', '0'], {env: {...cleanEnv(sandbox.home), WAVE_BENCH_RSS_FILE: file}})
    }

    const node = median(readFileSync(file, 'utf8').trim().split('\n').map(Number))
    if (context.planRssKb) record({baseline: `node -e 0 ${mb(node)}`, figure: 'planning session (6 turns)', section: 'memory', value: mb(context.planRssKb)})
    if (context.searchRssKb)
      record({baseline: `node -e 0 ${mb(node)}`, figure: 'search benchmark (largest of its runs)', section: 'memory', value: mb(context.searchRssKb)})
  } finally {
    sandbox.cleanup()
  }
}

// ---------------------------------------------------------------------------------------------- 7. sandbox

/**
 * What the sandbox adds to a Bash call: the compiled Bash tool running `true` sandboxed (bwrap, its
 * namespaces and mounts) against the same tool with `--sandbox off`, interleaved, in a git workspace
 * (so .git is re-bound read-only too). The bare spawns of the same two commands show bwrap's own share.
 */
async function sandboxCost() {
  heading('7. Sandbox (cost per Bash call over an unsandboxed spawn of the same command)')
  const {default: bash} = await import(path.join(PROJECT_ROOT, 'dist', 'plugins', 'bash.js'))
  const {sandboxStatus, sandboxedCommand, unsandboxedCommand} = await import(path.join(PROJECT_ROOT, 'dist', 'core', 'policy', 'sandbox.js'))
  const status = sandboxStatus()
  if (!status.available) {
    record({figure: 'sandbox per Bash call', note: status.problem, ok: false, section: 'sandbox', target: '≤ 10 ms', value: 'unavailable'})
    return
  }

  const sandbox = makeSandbox({'README.md': '# bench\n'})
  try {
    const ctx = (enabled) => ({
      readable: async () => true,
      root: sandbox.repo,
      sandbox: {enabled, network: false},
      session: {},
      signal: new AbortController().signal,
    })
    // The CPU time of the command's processes (bwrap and bash, reaped by this process): what the sandbox
    // costs the machine, apart from the waits that a loaded machine stretches.
    const cpu = {off: 0, on: 0}
    const callOnce = async (enabled) => {
      const at = performance.now()
      const cpuAt = childrenCpuMs()
      await bash.run({command: 'true'}, ctx(enabled))
      cpu[enabled ? 'on' : 'off'] += childrenCpuMs() - cpuAt
      return performance.now() - at
    }

    const request = {command: 'true', cwd: sandbox.repo, network: false, root: sandbox.repo}
    const spawnOnce = (plan) => {
      const at = performance.now()
      spawnSync(plan.file, plan.args, {cwd: sandbox.repo, env: plan.env, stdio: 'ignore'})
      return performance.now() - at
    }

    /** @type {Record<'bareOff' | 'bareOn' | 'off' | 'on', number[]>} */
    const times = {bareOff: [], bareOn: [], off: [], on: []}
    for (let run = 0; run < 5; run++) await Promise.all([callOnce(true), callOnce(false)]) // warm up
    cpu.on = cpu.off = 0
    for (let run = 0; run < RUNS.sandbox; run++) {
      times.on.push(await callOnce(true))
      times.off.push(await callOnce(false))
      times.bareOn.push(spawnOnce(sandboxedCommand(request, status.bwrap)))
      times.bareOff.push(spawnOnce(unsandboxedCommand(request)))
    }

    const cost = median(times.on) - median(times.off)
    record({
      baseline: `--sandbox off ${ms(median(times.off))}`,
      figure: 'sandbox cost per Bash call (`true`)',
      note: `the Bash tool: ${ms(median(times.on))} sandboxed, ${ms(median(times.off))} unsandboxed; medians of ${RUNS.sandbox}, interleaved. CPU time of the command's processes per call: ${ms(cpu.on / RUNS.sandbox)} sandboxed, ${ms(cpu.off / RUNS.sandbox)} unsandboxed`,
      ok: cost <= 10,
      section: 'sandbox',
      target: '≤ 10 ms',
      value: ms(cost),
    })
    record({
      baseline: `bash -c true ${ms(median(times.bareOff))}`,
      figure: 'bare bwrap, same namespaces and mounts',
      ratio: ratio(median(times.bareOn), median(times.bareOff)),
      section: 'sandbox',
      value: ms(median(times.bareOn)),
    })
  } finally {
    sandbox.cleanup()
  }
}

/** User and system CPU time of this process's waited-for children so far (/proc/self/stat: cutime, cstime; 100 ticks a second). */
function childrenCpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
  return (Number(fields[13]) + Number(fields[14])) * 10
}

// ---------------------------------------------------------------------------------------------- 8. Read of large files

/**
 * Read's cost follows what it returns, not the file's size: a page of 100 lines of a 200 MB log, timed
 * around the call in a fresh process like the search figures, against the same call on a 3 KB file; and a
 * file that is one 600 MB line, whose page is that line cut, within bounded memory.
 */
async function readLarge() {
  heading(`8. Read of large files (${QUICK ? 'quick: a tenth of the sizes' : 'full sizes'}; one call through the dispatcher, in a fresh process)`)
  const dir = mkdtempSync(path.join(tmpdir(), 'wave-bench-read-'))
  const logBytes = (QUICK ? 20 : 200) * 1024 * 1024
  const lineBytes = (QUICK ? 60 : 600) * 1024 * 1024
  try {
    const line = '2026-11-23T12:00:00Z INFO request handled in 12 ms path=/api/v1/items id=123456\n'
    writeFileSync(path.join(dir, 'small.log'), line.repeat(40))
    writeRepeated(path.join(dir, 'big.log'), Buffer.from(line.repeat(10_000)), logBytes)
    writeRepeated(path.join(dir, 'one-line.txt'), Buffer.alloc(1024 * 1024, 'x'), lineBytes)
    /** @type {Record<'big' | 'small', number[]>} */
    const times = {big: [], small: []}
    let page
    for (let run = 0; run < RUNS.search; run++) {
      times.small.push(waveSearch('Read', dir, {file_path: 'small.log', limit: 100}).ms)
      page = waveSearch('Read', dir, {file_path: 'big.log', limit: 100})
      times.big.push(page.ms)
    }

    const value = median(times.big)
    record({
      baseline: `the same call on a 3 KB file ${ms(median(times.small))}`,
      figure: `Read, limit 100, ${mb(logBytes / 1024)} file`,
      note: `${page.lines} lines returned, ending: ${page.tail}`,
      ok: QUICK ? undefined : value <= 30,
      ratio: ratio(value, median(times.small)),
      section: 'read',
      target: QUICK ? undefined : '≤ 30 ms',
      value: ms(value),
    })
    const one = waveSearch('Read', dir, {file_path: 'one-line.txt'})
    const capped = /^ {5}1\tx{2000}… \[line truncated: \d+ more bytes\]$/.test(one.head[0] ?? '')
    record({
      figure: `Read of a ${mb(lineBytes / 1024)} single-line file, peak RSS`,
      note: `${capped ? 'a capped line' : 'NOT a capped line'} (${one.head[0]?.slice(-48)}), ${ms(one.ms)}`,
      ok: QUICK ? undefined : capped && one.maxRssKb <= 150 * 1024,
      section: 'read',
      target: QUICK ? undefined : '≤ 150 MB',
      value: mb(one.maxRssKb),
    })
  } finally {
    rmSync(dir, {force: true, recursive: true})
  }
}

/** Writes `block` again and again until the file holds `bytes` bytes (at least). */
function writeRepeated(file, block, bytes) {
  const fd = openSync(file, 'w')
  try {
    for (let written = 0; written < bytes; written += block.length) writeSync(fd, block)
  } finally {
    closeSync(fd)
  }
}

// ---------------------------------------------------------------------------------------------- 9. compaction

/**
 * What compaction costs (issue 17: the requests and tokens it costs): two `wave plan` sessions of eight
 * turns, each reading a ~6 KB file, that outgrow their window. In one wave sees it coming (settings'
 * `contextWindow`: 12,000 tokens; the turns also talk, so clearing old tool results is not enough and a
 * summary is asked for); in the other the API refuses the prompt as too long (the scripted server's
 * limit, 40 KB) and wave clears old results and sends the turn again. Counted from what the server
 * received (a token is 4 bytes there), and timed from the end of the response before the compaction to
 * the next turn's request, against the session's median turn.
 */
async function compaction() {
  heading('9. Compaction (two planning sessions outgrowing their window: what the compaction cost)')
  const line = `${'x'.repeat(59)}\n`
  const files = Object.fromEntries(Array.from({length: 8}, (_, i) => [`src/part${i}.ts`, `// part ${i}\n${line.repeat(100)}`]))
  const sandbox = makeSandbox({'README.md': '# bench\n', ...files})
  const scenarios = [
    {
      limit: undefined,
      name: 'near the window (contextWindow 12,000 tokens)',
      settings: {contextWindow: 12_000},
      talk: `Reading on, because ${'the details matter '.repeat(40)}`,
    },
    {limit: 40_000, name: 'refused by the API as too long (prompt over 40 KB)', settings: {}, talk: undefined},
  ]
  try {
    for (const scenario of scenarios) {
      mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
      writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify(scenario.settings))
      const turns = [
        ...Object.keys(files).map((file) =>
          scenario.talk ? reply(scenario.talk, toolUse('Read', {file_path: file})) : reply(toolUse('Read', {file_path: file})),
        ),
        writePlan,
        reply('Done.'),
      ]
      // A summary request (no tools) gets a summary; every other request the script's next turn.
      const router = (request) => {
        if (!request.body.tools) return reply('Summary: read parts 0 to 5 of src; next, plan the change.')
        const next = turns.shift() ?? reply('Done.')
        return typeof next === 'function' ? next(request) : next
      }
      const server = await startMessagesServer(Array.from({length: 40}, () => router))
      server.limitPrompt(scenario.limit)
      responseEnds.length = 0
      const result = await runWave(['plan', '--task', 'Read the eight parts, then plan', '--output-format', 'stream-json'], {
        cwd: sandbox.repo,
        home: sandbox.home,
        server,
      })
      await server.close()
      if (result.code !== 0) throw new Error(`wave plan failed (${result.code}): ${result.stderr}`)
      const events = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text))
      const compactions = events.filter((event) => event.type === 'compaction')
      const requests = server.messageRequests
      const refused = requests.filter((request) => request.outcome === 'too-long')
      const summaries = requests.filter((request) => !request.body.tools)
      const turnsSent = requests.filter((request) => request.body.tools && request.outcome !== 'too-long')
      const tokens = (request) => Math.ceil(request.rawBody.length / 4)
      // Time: the end of the response before the first extra request, to the next turn's request after it.
      const firstExtra = Math.min(...[...refused, ...summaries].map((request) => request.index))
      const resumed = turnsSent.find((request) => request.index > firstExtra)
      const gaps = turnsSent
        .slice(1)
        .filter((request) => request.index < firstExtra || request.index > (resumed?.index ?? 0))
        .map((request) => request.receivedAt - responseEnds[request.index - 1].at)
      const cost = resumed && firstExtra > 0 ? resumed.receivedAt - responseEnds[firstExtra - 1].at : Number.NaN
      const before = requests[firstExtra - 1]
      const summaryTokens = summaries.reduce((sum, request) => sum + tokens(request), 0)
      const plural = (count, word) => `${count} ${word}${count === 1 ? '' : 's'}`
      const triggers = [...new Set(compactions.map((event) => event.trigger))].map(
        (trigger) => `${trigger} ×${compactions.filter((event) => event.trigger === trigger).length}`,
      )
      const total = (field) => compactions.reduce((sum, event) => sum + event[field], 0)
      const [first] = compactions
      record({
        baseline: `a turn ${ms(median(gaps))}`,
        figure: `compaction, ${scenario.name}`,
        note: [
          `${plural(compactions.length, 'compaction')} in ${turnsSent.length} turns (${triggers.join(', ')}): ${total('clearedToolResults')} tool results cleared, ${total('summarizedMessages')} messages summarised; the first took the prompt from ${first?.tokensBefore.toLocaleString('en')} to ${first?.tokensAfter.toLocaleString('en')} tokens (wave's estimate)`,
          `${plural(summaries.length, 'summary request')} (${summaryTokens.toLocaleString('en')} input tokens), ${plural(refused.length, 'refused request')} (${kb(refused.reduce((sum, request) => sum + request.rawBody.length, 0))} sent, not billed)`,
          `the turn's request ${kb(before?.rawBody.length ?? 0)} before the first, ${kb(resumed?.rawBody.length ?? 0)} after; ${ms(cost)} from the response before it to the next turn's request`,
        ].join('; '),
        section: 'compaction',
        value: `+${plural(refused.length + summaries.length, 'request')}, ${summaryTokens.toLocaleString('en')} tokens`,
      })
    }
  } finally {
    sandbox.cleanup()
  }
}

/**
 * Compaction of tool inputs (issue 24): a `wave run --task` whose first turn Writes a 200 KB file, then
 * eight turns that talk (~8 KB each, text compaction cannot clear) and list a directory. With a window
 * of 90,000 tokens (settings' `contextWindow`) the conversation nears it after a few turns, and
 * compaction replaces the old Write's content with a stub (its path and size); the baseline is the same
 * script in the same run with the default window, where nothing is compacted and every later request
 * carries the 200 KB again. Reported: the last request's size with the stub against without, as a ratio.
 */
async function toolInputCompaction() {
  const sandbox = makeSandbox({'README.md': '# bench\n'})
  const big = `${'export const line = "abcdefghijklmnopqrstuvwxyz0123456789";\n'.repeat(3500)}`
  const talk = `Looking further, because ${'the layout of this repository matters '.repeat(200)}`
  try {
    const sessions = {}
    for (const [label, settings] of [
      ['stubbed', {contextWindow: 90_000}],
      ['baseline', {}],
    ]) {
      mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
      writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify(settings))
      const turns = [
        reply(toolUse('Write', {content: big, file_path: 'big.ts'})),
        ...Array.from({length: 8}, () => reply(talk, toolUse('LS', {path: '.'}))),
        reply('Done.'),
      ]
      // A summary request (no tools) gets a summary; every other request the script's next turn.
      const router = (request) => (request.body.tools ? (turns.shift() ?? reply('Done.')) : reply('Summary: wrote big.ts, then looked around.'))
      const server = await startMessagesServer(Array.from({length: 30}, () => router))
      const result = await runWave(['run', '--task', 'Write big.ts, then look around', '--output-format', 'stream-json'], {
        cwd: sandbox.repo,
        home: sandbox.home,
        server,
      })
      await server.close()
      if (result.code !== 0) throw new Error(`wave run (${label}) failed (${result.code}): ${result.stderr}`)
      const compactions = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text))
        .filter((event) => event.type === 'compaction')
      const turnsSent = server.messageRequests.filter((request) => request.body.tools)
      sessions[label] = {compactions, last: turnsSent.at(-1).rawBody.length, summaries: server.messageRequests.length - turnsSent.length, turns: turnsSent}
      rmSync(path.join(sandbox.repo, 'big.ts'), {force: true})
    }

    const {baseline, stubbed} = sessions
    const total = (field) => stubbed.compactions.reduce((sum, event) => sum + event[field], 0)
    const tokens = (bytes) => `${Math.ceil(bytes / 4).toLocaleString('en')} tokens`
    record({
      baseline: `not stubbed ${kb(baseline.last)} (${tokens(baseline.last)})`,
      figure: 'compaction of tool inputs: last request of 10 turns',
      note: [
        `a ${kb(big.length)} Write in turn 1 of a 90,000-token window: ${stubbed.compactions.length} compaction(s), ${total('clearedToolInputs')} tool input(s) and ${total('clearedToolResults')} result(s) cleared, ${total('summarizedMessages')} messages summarised, ${stubbed.summaries} summary request(s)`,
        `request bytes by turn, stubbed: ${stubbed.turns.map((request) => kb(request.rawBody.length)).join(', ')}; not stubbed: ${baseline.turns.map((request) => kb(request.rawBody.length)).join(', ')}`,
        'a token is 4 bytes at the scripted server',
      ].join('; '),
      ratio: ratio(stubbed.last, baseline.last),
      section: 'compaction',
      value: `${kb(stubbed.last)} (${tokens(stubbed.last)})`,
    })
  } finally {
    sandbox.cleanup()
  }
}

// ---------------------------------------------------------------------------------------------- 10. install
// The package as a user installs it (scripts/package-install.js, the suite's package test measures the
// same): size and packages of `npm install -g` of the packed tarball, and the Action's install step
// (scripts/ci/install-wave.sh) from job start to `wave` ready, with the package already in npm's cache.

async function installCost() {
  const {INSTALL_LIMITS, install, pack} = await import('../scripts/package-install.js')
  const work = mkdtempSync(path.join(tmpdir(), 'wave-bench-install-'))
  try {
    const packed = pack(path.join(work, 'dist'))
    const installed = install(packed.tarball, path.join(work, 'prefix'))
    record({
      figure: 'npm install -g of the packed tarball: size',
      ok: installed.bytes <= INSTALL_LIMITS.bytes,
      section: 'install',
      target: `≤ ${INSTALL_LIMITS.bytes / 1e6} MB`,
      value: `${(installed.bytes / 1e6).toFixed(1)} MB`,
    })
    record({
      figure: 'npm install -g of the packed tarball: packages',
      ok: installed.packages <= INSTALL_LIMITS.packages,
      section: 'install',
      target: `≤ ${INSTALL_LIMITS.packages}`,
      value: String(installed.packages),
    })
    // The Action's step, npm's cache warm (the install above filled it): a fresh prefix each run.
    const times = []
    for (let i = 0; i < (QUICK ? 2 : 3); i++) {
      const runnerTemp = mkdtempSync(path.join(work, 'runner-'))
      const env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))),
        RUNNER_TEMP: runnerTemp,
        WAVE_PACKAGE: packed.tarball,
      }
      const begun = performance.now()
      const step = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts/ci/install-wave.sh')], {encoding: 'utf8', env})
      if (step.status !== 0) throw new Error(`install-wave.sh failed: ${step.stderr}`)
      times.push(performance.now() - begun)
    }
    const value = median(times)
    record({figure: "the Action's install step to wave ready (npm cache warm)", ok: value <= 10_000, section: 'install', target: '≤ 10 s', value: ms(value)})
  } finally {
    rmSync(work, {force: true, recursive: true})
  }
}

// ---------------------------------------------------------------------------------------------- main

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

const info = machine()
const loadAtStart = loadavg()[0]
// ---------------------------------------------------------------------------------------------- 11. parallel reads

/**
 * Reads of one turn run together (src/tools/turn.ts): three calls in one turn against the same call
 * alone, each turn in a fresh process through the executor the loop uses, with the calls' spans as the
 * executor reported them. Two kinds of read: Grep over the quick search tree, CPU-bound (on 2 cores
 * three searches cannot all run at once, and one search already takes a worker thread per further
 * core), and WebFetch of a local page answered after 200 ms, which waits like a real fetch.
 */
async function parallelReads() {
  heading("11. Parallel reads (three reads in one turn against one alone; each call's span as the executor saw it)")
  const tree = await generateTree('quick')
  const LATENCY_MS = 200
  const web = createServer((_req, res) => {
    setTimeout(() => res.writeHead(200, {'content-type': 'text/plain'}).end('a page\n'), LATENCY_MS)
  })
  await new Promise((resolve) => web.listen(0, '127.0.0.1', () => resolve(undefined)))
  const address = web.address()
  const port = typeof address === 'object' && address ? address.port : 0
  const cases = [
    {call: {input: {pattern: NEEDLE}, name: 'Grep'}, name: `Grep literal over the quick tree (${tree.files.toLocaleString('en')} files)`},
    {
      allow: ['WebFetch(domain:127.0.0.1)'],
      call: {input: {url: `http://127.0.0.1:${port}/page`}, name: 'WebFetch'},
      name: `WebFetch of a page answered after ${LATENCY_MS} ms`,
    },
  ]
  try {
    for (const {allow = [], call, name} of cases) {
      /** @type {{one: number[], three: number[]}} */
      const walls = {one: [], three: []}
      let spans = []
      for (let run = 0; run < RUNS.search; run++) {
        walls.one.push((await turnChild(tree.root, [call], allow)).wall)
        const three = await turnChild(tree.root, [call, call, call], allow)
        walls.three.push(three.wall)
        spans = three.spans
      }

      const together = Math.min(...spans.map((span) => span.end)) - Math.max(...spans.map((span) => span.start))
      const busy = spans.reduce((sum, span) => sum + span.end - span.start, 0)
      const value = median(walls.three)
      record({
        baseline: `one alone ${ms(median(walls.one))}`,
        figure: `${name}, ×3 in one turn`,
        note: `spans ${spans.map((span) => `${span.start.toFixed(0)}–${span.end.toFixed(0)}`).join(', ')} ms: all three in flight together for ${ms(Math.max(0, together))}, ${(busy / Math.max(...spans.map((span) => span.end))).toFixed(1)} at once on average (3.0 = fully overlapped, 1.0 = one after another)`,
        ratio: ratio(value, median(walls.one)),
        section: 'parallel',
        value: ms(value),
      })
    }
  } finally {
    web.closeAllConnections()
    web.close()
    rmSync(tree.root, {force: true, recursive: true})
  }
}

/** Runs one turn of `calls` in bench/lib/turn-child.js (asynchronously: the page server lives in this process). */
function turnChild(root, calls, allow) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(LIB, 'turn-child.js'), root, JSON.stringify(calls), ...allow], {stdio: ['ignore', 'pipe', 'pipe']})
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk) => (out += chunk))
    child.stderr.on('data', (chunk) => (err += chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`turn-child failed (${code}): ${err}`))
      const result = JSON.parse(out)
      if (result.failed.length > 0) return reject(new Error(`a call failed: ${result.failed.join('; ')}`))
      resolve(result)
    })
  })
}

// ---------------------------------------------------------------------------------------------- 12. the run's work-tree snapshot

/**
 * What a run reads of its work tree before and after each command and around the checks (issue 34):
 * the fuller reading (src/base/workspace/worktree.ts: ignored files, the paths checks run from,
 * submodules, nested repositories, content hashes) against the reading it replaced (`git status
 * --untracked-files=all` and an lstat of each path it lists), on a tree of 100,000 committed files
 * with ignored directories, a node_modules/.bin, a few dirty and untracked files, one after the other.
 */
async function workTreeSnapshot() {
  heading("12. The run's work-tree snapshot (a reading before and after each command, and around the checks)")
  const {changedPaths} = await import(path.join(PROJECT_ROOT, 'dist', 'base', 'workspace', 'git.js'))
  const {WorkTreeWatch} = await import(path.join(PROJECT_ROOT, 'dist', 'base', 'workspace', 'worktree.js'))
  const {lstat} = await import('node:fs/promises')
  const tree = await generateTree(QUICK ? 'snapshotQuick' : 'snapshot', {commit: true})
  try {
    // What a real work tree has besides: an npm-style .bin, a few edits, a few new files.
    const bin = path.join(tree.root, 'node_modules', '.bin')
    mkdirSync(bin, {recursive: true})
    for (let i = 0; i < 40; i++) execFileSync('ln', ['-s', `../dep${i % 40}/lib/index0.ts`, path.join(bin, `tool${i}`)])
    for (let i = 0; i < 10; i++) writeFileSync(path.join(tree.root, 'packages', `pkg${i}`, 'src', 'mod1', 'file1.ts'), `// edited ${i}\n`)
    for (let i = 0; i < 10; i++) writeFileSync(path.join(tree.root, `new${i}.ts`), `export const n = ${i}\n`)
    const place = {top: tree.root, workspace: tree.root}
    /** Today's reading before issue 34: the status, and each listed path's size and mtime. */
    const previous = async () => {
      const status = await changedPaths(tree.root)
      await Promise.all([...status.keys()].map((file) => lstat(path.join(tree.root, file)).catch(() => undefined)))
      return status.size
    }

    const warm = new WorkTreeWatch(place)
    await warm.read()
    const runs = QUICK ? 5 : 9
    /** @type {Record<'first' | 'previous' | 'warm', number[]>} */
    const times = {first: [], previous: [], warm: []}
    let listed = 0
    for (let run = 0; run < runs; run++) {
      // Interleaved, so that the machine's load weighs on all three alike.
      let at = performance.now()
      await previous()
      times.previous.push(performance.now() - at)
      at = performance.now()
      listed = (await warm.read()).size
      times.warm.push(performance.now() - at)
      at = performance.now()
      await new WorkTreeWatch(place).read()
      times.first.push(performance.now() - at)
    }

    const [before, now, first] = [median(times.previous), median(times.warm), median(times.first)]
    const files = (QUICK ? 25_000 : 100_000).toLocaleString('en')
    record({
      baseline: `status + lstat ${ms(before)}`,
      figure: `work-tree reading, ${files} files`,
      note: `${listed} entries (ignored files and directories, node_modules/.bin by content, edits); each reading after the run's first reuses the hashes of unchanged files`,
      ok: now <= 1.2 * before,
      ratio: ratio(now, before),
      section: 'snapshot',
      target: '≤ 1.2× the status it replaced',
      value: ms(now),
    })
    record({
      baseline: `status + lstat ${ms(before)}`,
      figure: `the run's first reading, ${files} files`,
      note: 'once per run, before the first tool: every listed file hashed, the submodules listed (git ls-files --stage)',
      ratio: ratio(first, before),
      section: 'snapshot',
      value: ms(first),
    })
  } finally {
    rmSync(tree.root, {force: true, maxRetries: 5, recursive: true})
  }
}

const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z')
console.log(`wave bench (${QUICK ? 'quick' : 'full'}): ${date}; ${info.nproc} cores (${info.cpu}), ${info.memory}; node ${info.node}; ${info.rg}; ${info.git}`)
const context = {}
if (ONLY.has('cold')) Object.assign(context, await coldStart())
if (ONLY.has('first')) await firstRequest()
if (ONLY.has('turn')) Object.assign(context, await perTurn())
if (ONLY.has('weight')) await requestWeight()
if (ONLY.has('search')) Object.assign(context, await search())
if (ONLY.has('memory')) await memory(context)
if (ONLY.has('sandbox')) await sandboxCost()
if (ONLY.has('read')) await readLarge()
if (ONLY.has('compaction')) await compaction()
if (ONLY.has('compaction')) await toolInputCompaction()
if (ONLY.has('install')) await installCost()
if (ONLY.has('parallel')) await parallelReads()
if (ONLY.has('snapshot')) await workTreeSnapshot()

const seconds = (performance.now() - started) / 1000
const load = `load average ${loadAtStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`
const missed = results.filter((row) => row.ok === false)
console.log(
  `\n${results.filter((row) => row.ok).length} targets met, ${missed.length} missed${missed.length > 0 ? ` (${missed.map((row) => row.figure).join('; ')})` : ''}; ${seconds.toFixed(0)} s; ${load}`,
)
for (const note of notes) console.log(`note: ${note}`)

if (WRITE) {
  const file = path.join(PROJECT_ROOT, 'bench', 'RESULTS.md')
  const BEGIN = '<!-- bench:results:begin (written by `npm run bench`; edit outside these markers) -->'
  const END = '<!-- bench:results:end -->'
  const cell = (text) => String(text ?? '').replaceAll('|', '\\|')
  const sections = {
    compaction: '9. Compaction',
    cold: '1. Cold start',
    first: '2. Time to first model request',
    memory: '6. Memory',
    read: '8. Read of large files',
    sandbox: '7. Sandbox',
    install: '10. Install',
    parallel: '11. Parallel reads',
    snapshot: "12. The run's work-tree snapshot",
    search: '5. Search at scale',
    turn: '3. Overhead per turn',
    weight: '4. Request weight',
  }
  const table = [
    '| | figure | wave | baseline (same run) | ratio | target | |',
    '|---|---|---|---|---|---|---|',
    ...results.map(
      (row) =>
        `| ${sections[row.section].split('.')[0]} | ${cell(row.figure)}${row.note ? `<br><sub>${cell(row.note)}</sub>` : ''} | ${cell(row.value)} | ${cell(row.baseline)} | ${cell(row.ratio)} | ${cell(row.target)} | ${row.ok === undefined ? '' : row.ok ? 'met' : '**missed**'} |`,
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
