// Loaded with `node --import` into a process under measurement: at exit, appends the process's peak
// resident set size (KB) to the file named by WAVE_BENCH_RSS_FILE.
import {appendFileSync} from 'node:fs'

const file = process.env.WAVE_BENCH_RSS_FILE
if (file) {
  process.on('exit', () => {
    appendFileSync(file, `${process.resourceUsage().maxRSS}\n`)
  })
}
