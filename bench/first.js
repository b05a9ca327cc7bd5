import {writeFileSync} from 'node:fs'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {floorEnv, heading, LIB, QUICK, record, reply, RUNS, spawnAsync, startMessagesServer, writePlan} from './lib/harness.js'
import {makeSandbox, runWave, smallFiles} from './lib/sandbox.js'
import {median, ms, ratio} from './lib/stats.js'

async function firstRequest() {
  heading('2. Time to first model request (process start → request at the server)')
  const sandbox = makeSandbox({'README.md': '# bench\n', 'src/app.ts': 'export const app = 1\n'})
  const files = QUICK ? 25_000 : 100_000
  // A git repository of `files` small committed files (in 250 directories), for start-up in a large work tree.
  const large = makeSandbox(smallFiles(files, 250))
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
      await spawnAsync(process.execPath, [path.join(LIB, 'sdk-floor.js'), sandbox.repo, requestFile], await floorEnv(floorServer, sandbox))
      times.floor.push(floorServer.messageRequests[0].receivedAt - at)
      await floorServer.close()
    }

    const [small, floor, largeMs, cold] = [median(times.small), median(times.floor), median(times.large), median(times.cold)]
    record({
      baseline: `bare SDK script ${ms(floor)}`,
      figure: 'wave plan --task',
      note: 'the bare script: node, the SDK bundled into one ES module, and the same first request',
      ok: small <= 1.3 * floor,
      ratio: ratio(small, floor),
      section: 'first',
      target: '≤ 1.3× the bare script',
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

/** 2. Time to first model request. */
export const title = '2. Time to first model request'
export const run = firstRequest
