#!/usr/bin/env node
/**
 * `wave plans units` takes under 1 s (issue 36): an approved plan of 20 units, its job list printed in
 * every format, each the median of several runs, beside `wave --version` (node's start and wave's fast
 * path) measured in the same run. Prints the figures; exits 1 when a median is 1 s or more.
 *
 *   node bench/units.js [--runs=N]      # against the compiled CLI (npm run build first)
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {makeSandbox, runWave} from './lib/sandbox.js'
import {median, ms} from './lib/stats.js'

const runs = Number(process.argv.find((arg) => arg.startsWith('--runs='))?.split('=')[1] ?? 7)
const UNITS = 20

const units = Array.from({length: UNITS}, (_, index) => {
  const name = `service-${String(index + 1).padStart(2, '0')}`
  return `### ${name}\nBump the client in ${name}.\n\n#### Scope\n- \`services/${name}/**\`\n\n#### Verification\n- \`npm test -w ${name}\`\n`
})
const plan = `# Bump the API client in twenty services\n\n## Scope\n- services/**\n\n## Verification\n- \`npm test\`\n\n## Units\n\n${units.join('\n')}`

const sandbox = makeSandbox({'README.md': '# bench\n'})
try {
  const plans = path.join(sandbox.home, '.wave', 'plans')
  mkdirSync(plans, {recursive: true})
  const planPath = path.join(plans, 'twenty-units.md')
  writeFileSync(planPath, plan)
  const wave = (args) => runWave(args, {cwd: sandbox.repo, home: sandbox.home})
  const approved = await wave(['approve', planPath, '--unit-budget-usd', '2'])
  if (approved.code !== 0) throw new Error(`wave approve failed: ${approved.stderr}`)

  const timed = async (args) => {
    const times = []
    for (let run = 0; run < runs; run++) {
      const result = await wave(args)
      if (result.code !== 0) throw new Error(`wave ${args.join(' ')} failed (${result.code}): ${result.stderr}`)
      times.push(result.endedAt - result.startedAt)
    }

    return median(times)
  }

  const baseline = await timed(['--version'])
  let slowest = 0
  console.log(`wave plans units, ${UNITS} units, median of ${runs} runs (baseline wave --version: ${ms(baseline)})`)
  for (const format of ['lines', 'json', 'github-matrix', 'gitlab', 'gitlab-pipeline']) {
    const time = await timed(['plans', 'units', 'twenty-units', '--format', format])
    slowest = Math.max(slowest, time)
    console.log(`  --format ${format.padEnd(16)} ${ms(time)}`)
  }

  console.log(slowest < 1000 ? `under 1 s: yes (slowest ${ms(slowest)})` : `under 1 s: NO (slowest ${ms(slowest)})`)
  process.exitCode = slowest < 1000 ? 0 : 1
} finally {
  sandbox.cleanup()
}
