#!/usr/bin/env node
// The GitHub Action's outputs (action.yml) from `wave github --json` and its exit code: one `name=value`
// line each, for $GITHUB_OUTPUT. A failed run prints {"ok": false, ...}: its outcome is "failed", or
// "refused" when wave answered the comment with the error in its thread ("refused": true). The
// run's report, when the result has one, is written beside the result as report.json (report-file).
//
//   node scripts/github-outputs.js RESULT.json EXIT_CODE >> "$GITHUB_OUTPUT"
import {writeFileSync} from 'node:fs'
import {readFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'

const [file, exitCode = '0'] = process.argv.slice(2)
const outputs = {'exit-code': exitCode, 'result-file': resolve(file)}
let result
try {
  result = JSON.parse(readFileSync(file, 'utf8'))
} catch {
  // wave ended before printing its result (killed): the exit code says what little there is.
  result = undefined
}

if (result) {
  const report = result.report
  let reportFile
  if (report && typeof report === 'object') {
    reportFile = join(dirname(resolve(file)), 'report.json')
    writeFileSync(reportFile, `${JSON.stringify(report, null, 2)}\n`)
  }

  Object.assign(outputs, {
    'comment-url': result.plan?.comment,
    'cost-usd': typeof result.costUsd === 'number' ? String(result.costUsd) : undefined,
    'delivery-url': result.delivery?.url,
    outcome: result.ok === false ? (result.refused === true ? 'refused' : 'failed') : result.outcome,
    plan: result.plan?.name ?? (result.planPath ? result.planPath.split('/').pop().replace(/\.md$/, '') : undefined),
    'report-file': reportFile,
    sha256: result.plan?.sha256,
  })
}

for (const [name, value] of Object.entries(outputs)) {
  // One line each: a value never carries a newline into the next output.
  if (typeof value === 'string' && value) process.stdout.write(`${name}=${value.replaceAll(/[\r\n]/g, ' ')}\n`)
}
