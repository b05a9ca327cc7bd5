#!/usr/bin/env node
// The GitHub Action's outputs (action.yml) from `wave github --json`: one `name=value` line each, for
// $GITHUB_OUTPUT. A failed run prints {"ok": false, ...}: its outcome is "failed".
import {readFileSync} from 'node:fs'

const result = JSON.parse(readFileSync(process.argv[2], 'utf8'))
const outputs = {
  'comment-url': result.plan?.comment,
  'delivery-url': result.delivery?.url,
  outcome: result.ok === false ? 'failed' : result.outcome,
  plan: result.plan?.name,
  sha256: result.plan?.sha256,
}
for (const [name, value] of Object.entries(outputs)) {
  // One line each: a value never carries a newline into the next output.
  if (typeof value === 'string' && value) process.stdout.write(`${name}=${value.replaceAll(/[\r\n]/g, ' ')}\n`)
}
