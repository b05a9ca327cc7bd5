/** Parallel reads: three reads in one turn against one alone. Run by bench/run.js (`npm run bench -- --only=parallel`). */
import {spawn} from 'node:child_process'
import {rmSync} from 'node:fs'
import {createServer} from 'node:http'
import path from 'node:path'

import {heading, LIB, record, RUNS} from './lib/harness.js'
import {median, ms, ratio} from './lib/stats.js'
import {generateTree, NEEDLE} from './lib/tree.js'

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

/** 11. Parallel reads. */
export const title = '11. Parallel reads'
export const run = parallelReads
