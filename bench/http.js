/** Node's HTTP parser's CPU: a process that fetches as wave does (its parser by Liftoff alone) against V8's defaults. Run by bench/run.js (`npm run bench -- --only=http`). */
import {spawn} from 'node:child_process'
import {createServer} from 'node:http'
import path from 'node:path'

import {heading, recordAgainstDefaults} from './lib/harness.js'
import {PROJECT_ROOT} from './lib/sandbox.js'

/** A streamed reply the size of a model's turn: server-sent events, ~16 KB in 200 chunks. */
const EVENT = `event: content_block_delta\ndata: ${JSON.stringify({delta: {text: 'word '.repeat(12), type: 'text_delta'}, index: 0, type: 'content_block_delta'})}\n\n`

/**
 * One process: (for wave) node's fetch made as wave's commands make it (src/base/wasm.ts), then ten
 * requests, each read to its end, as a session's turns do; it stays 2 s, so that what V8 compiles on
 * background threads is counted, and prints its CPU (all its threads) in milliseconds.
 */
const child = (url, wave) => `
  ${wave ? `(await import(${JSON.stringify(path.join(PROJECT_ROOT, 'dist', 'base', 'wasm.js'))})).fetchParsedByLiftoff()` : ''}
  for (let turn = 0; turn < 10; turn++) await (await fetch(${JSON.stringify(url)}, {method: 'POST', body: '{}'})).text()
  await new Promise((resolve) => setTimeout(resolve, 2000))
  const {user, system} = process.cpuUsage()
  console.log((user + system) / 1000)
`

/** Runs a child (asynchronously: the server answering it is in this process) and returns its CPU in ms. */
function cpuOf(url, wave) {
  return new Promise((resolve, reject) => {
    const forked = spawn(process.execPath, ['--input-type=module', '-e', child(url, wave)], {stdio: ['ignore', 'pipe', 'inherit']})
    let out = ''
    forked.stdout.on('data', (chunk) => (out += chunk))
    forked.on('close', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`the HTTP child exited ${code}`))))
  })
}

async function httpCpu() {
  heading("14. Node's HTTP parser's CPU (a process that makes ten streamed requests, as a session's turns do)")
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      response.writeHead(200, {'content-type': 'text/event-stream'})
      for (let chunk = 0; chunk < 200; chunk++) response.write(EVENT)
      response.end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (server.address()).port}/v1/messages`
  try {
    await recordAgainstDefaults({
      factor: 0.75,
      figure: 'process CPU, ten streamed requests',
      measure: (wave) => cpuOf(url, wave),
      note: "all threads, the process staying 2 s after: V8's defaults recompile undici's llhttp by TurboFan on background threads",
      section: 'http',
    })
  } finally {
    server.close()
  }
}

/** 14. Node's HTTP parser's CPU. */
export const title = "14. Node's HTTP parser's CPU"
export const run = httpCpu
