/** Read of large files: a page of a 200 MB log and a 600 MB single-line file. Run by bench/run.js (`npm run bench -- --only=read`). */
import {closeSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {heading, QUICK, record, RUNS, waveSearch} from './lib/harness.js'
import {mb, median, ms, ratio} from './lib/stats.js'

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

/** 8. Read of large files. */
export const title = '8. Read of large files'
export const run = readLarge
