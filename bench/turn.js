/** Overhead per turn: from the end of a streamed response to the next request, six turns each reading a small file, against the bare SDK loop. Run by bench/run.js (`npm run bench -- --only=turn`). */
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {floorEnv, heading, LIB, record, reply, RUNS, spawnAsync, startMessagesServer, toolResults, toolUse, writePlan} from './lib/harness.js'
import {makeSandbox, runWave} from './lib/sandbox.js'
import {responseEnds} from './lib/server.js'
import {median, ms} from './lib/stats.js'

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
      await spawnAsync(process.execPath, [path.join(LIB, 'sdk-floor.js'), sandbox.repo], await floorEnv(floorServer, sandbox))
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

/** 3. Overhead per turn. */
export const title = '3. Overhead per turn'
export const run = perTurn
