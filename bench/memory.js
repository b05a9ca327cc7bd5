/** Memory: the peak RSS of a planning session and of the search benchmark, against `node -e 0`. Run by bench/run.js (`npm run bench -- --only=memory`). */
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {cleanEnv, heading, LIB, record} from './lib/harness.js'
import {makeSandbox} from './lib/sandbox.js'
import {mb, median} from './lib/stats.js'

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

/** 6. Memory. */
export const title = '6. Memory'
export const run = memory
