/** Cold start: `wave --version` and `--help` against `node -e 0`, the same through oclif, the fast path's output against oclif's, and which commands load the SDK. Run by bench/run.js (`npm run bench -- --only=cold`). */
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync, rmSync} from 'node:fs'
import path from 'node:path'

import {cleanEnv, heading, LIB, record, reply, RUNS, startMessagesServer, timeNode, writePlan} from './lib/harness.js'
import {BIN_RUN, makeSandbox, runWave} from './lib/sandbox.js'
import {median, ms, ratio} from './lib/stats.js'

const SDK_MODULE = /\/@anthropic-ai\/sdk\/|\/dist\/bundles\/vendor\/anthropic-sdk\.cjs/

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

/** 1. Cold start. */
export const title = '1. Cold start'
export const run = coldStart
