#!/usr/bin/env node
/**
 * What telemetry costs (issue 38): a `wave plan` session of N scripted turns, each reading one small file,
 * run with telemetry off (the baseline, in the same run) and with OTEL_* pointing at a local OTLP/HTTP
 * receiver (http/json, answering 200 as a collector does), interleaved. Printed, with each ratio against
 * the baseline:
 *
 * - per turn: the end of a streamed response (where the scripted server ends it) to the next request's
 *   arrival, the median over every turn of every run: what the recorder adds while the session works;
 * - the whole command: spawn to exit, which with telemetry on includes loading the OpenTelemetry SDK
 *   and exporting the spans and metrics at the end (src/output/telemetry/export.ts);
 * - what telemetry adds per turn (the per-turn difference) and once (the whole command's difference less
 *   the turns': the SDK loaded and the export at exit).
 *
 *   npm run bench:telemetry                 # 12 turns, 6 runs of each
 *   npm run bench:telemetry -- --turns=30 --runs=10
 *
 * Runs against the compiled CLI (bin/run.js and dist/, built by `npm ci` or `npm run build`).
 */
import {existsSync} from 'node:fs'
import {createServer} from 'node:http'
import path from 'node:path'

import {messagesServerModule, responseEnds} from './lib/server.js'
import {makeSandbox, PROJECT_ROOT, runWave} from './lib/sandbox.js'
import {median, ms, ratio} from './lib/stats.js'

const argv = process.argv.slice(2)
const option = (name, fallback) => Number(argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback)
const TURNS = option('turns', 12)
const RUNS = option('runs', 6)

if (!existsSync(path.join(PROJECT_ROOT, 'dist', 'commands'))) {
  console.error('bench: dist/ is missing: run `npm run build` (npm ci runs it) first.')
  process.exit(2)
}

const {reply, startMessagesServer, systemText, toolResults, toolUse} = await messagesServerModule()

/** A local OTLP/HTTP receiver: reads each post whole and answers 200 with an empty JSON body, as a collector does. */
async function otlpReceiver() {
  const received = {metrics: 0, traces: 0}
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      if (req.url?.endsWith('/v1/traces')) received.traces++
      if (req.url?.endsWith('/v1/metrics')) received.metrics++
      res.writeHead(200, {'content-type': 'application/json'}).end('{}')
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  return {close: () => new Promise((resolve) => server.close(() => resolve(undefined))), received, url: `http://127.0.0.1:${address.port}`}
}

const FILES = Object.fromEntries(Array.from({length: TURNS}, (_, i) => [`src/file${i}.ts`, `export const value${i} = ${i}\n// a small file\n`]))

const planPathOf = (request) => /create your plan at (\S+) using/.exec(systemText(request))?.[1] ?? /already exists at (\S+)\. /.exec(systemText(request))?.[1]

/** One session; its per-turn gaps and its wall time. */
async function session(sandbox, env) {
  const script = Object.keys(FILES).map((file) => reply(toolUse('Read', {file_path: file})))
  const writePlan = (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Do the thing.\n', file_path: planPathOf(request)}))
  const server = await startMessagesServer([...script, writePlan, reply(toolUse('ExitPlanMode', {}))])
  responseEnds.length = 0
  try {
    const result = await runWave(['plan', '--task', `Read the ${TURNS} files, then plan`, '--quiet'], {cwd: sandbox.repo, env, home: sandbox.home, server})
    if (result.code !== 0) throw new Error(`wave plan failed (${result.code}): ${result.stderr}`)
    const requests = server.messageRequests
    const gaps = []
    for (let i = 1; i <= TURNS; i++) {
      if (toolResults(requests[i])[0]?.is_error) throw new Error(`Read failed: ${toolResults(requests[i])[0].text}`)
      gaps.push(requests[i].receivedAt - responseEnds[i - 1].at)
    }

    return {gaps, wallMs: result.endedAt - result.startedAt}
  } finally {
    await server.close()
  }
}

const sandbox = makeSandbox({'README.md': '# bench\n', ...FILES})
const receiver = await otlpReceiver()
const telemetry = {OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'wave-bench'}
const off = {gaps: [], wall: []}
const on = {gaps: [], wall: []}
try {
  // One of each first, unmeasured: the code cache of the bundles (and of the telemetry modules) is written by it.
  await session(sandbox, {})
  await session(sandbox, telemetry)
  const exportsBefore = receiver.received.traces
  for (let run = 0; run < RUNS; run++) {
    // Interleaved, so a machine that gets busier weighs on both.
    for (const [into, env] of run % 2
      ? [
          [on, telemetry],
          [off, {}],
        ]
      : [
          [off, {}],
          [on, telemetry],
        ]) {
      const {gaps, wallMs} = await session(sandbox, env)
      into.gaps.push(...gaps)
      into.wall.push(wallMs)
    }
  }

  if (receiver.received.traces - exportsBefore < RUNS)
    throw new Error(`the receiver got ${receiver.received.traces - exportsBefore} trace exports for ${RUNS} runs`)
  // What telemetry adds to each turn (the recorder, while the session works), and what it adds once (the
  // SDK loaded and the export at exit): the whole command's difference less the turns'.
  const perTurn = median(on.gaps) - median(off.gaps)
  const once = median(on.wall) - median(off.wall) - TURNS * perTurn
  console.log(`Telemetry's cost: wave plan, ${TURNS + 2} turns (${TURNS} Reads, the plan, ExitPlanMode), ${RUNS} runs each way, interleaved; medians`)
  console.log(`  ${'figure'.padEnd(40)} ${'off (baseline)'.padStart(16)} ${'on'.padStart(10)} ${'ratio'.padStart(8)}`)
  const row = (figure, baseline, value) =>
    console.log(`  ${figure.padEnd(40)} ${ms(baseline).padStart(16)} ${ms(value).padStart(10)} ${ratio(value, baseline).padStart(8)}`)
  row('per turn (response end → next request)', median(off.gaps), median(on.gaps))
  row('whole command (spawn → exit)', median(off.wall), median(on.wall))
  console.log(`  ${'added per turn'.padEnd(40)} ${ms(perTurn).padStart(16)}`)
  console.log(`  ${'added once (SDK loaded, export at exit)'.padEnd(40)} ${ms(once).padStart(16)}`)
  console.log(`  (${receiver.received.traces} trace and ${receiver.received.metrics} metric exports received)`)
} finally {
  await receiver.close()
  sandbox.cleanup()
}
