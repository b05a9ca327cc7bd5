/**
 * One turn's calls in a fresh process, the way the loop runs them (src/tools/turn.ts): reads together,
 * anything else alone. Prints one JSON line: the turn's wall time and each call's span (start and end,
 * ms from the turn's start, as the executor reported them), and whether any call failed.
 *
 *   node bench/lib/turn-child.js <workspace root> '<calls json: [{name, input}]>' [allow rule]...
 */
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath, pathToFileURL} from 'node:url'

const [root, callsJson, ...allow] = process.argv.slice(2)
const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist')
const load = (file) => import(pathToFileURL(path.join(dist, file)).href)
const {executeTurn} = await load('tools/turn.js')
const {parseRules} = await load('policy/policy.js')
const {builtinRegistry} = await load('tools/registry.js')

const refuse = async () => {
  throw new Error('no session control in the benchmark')
}

const policy = {headless: true, mode: 'plan', planFile: path.join(root, '.no-plan.md'), rules: parseRules(allow), workspaceRoot: root}
const env = {policy: () => policy, registry: builtinRegistry(), session: {enterPlanMode: refuse, exitPlanMode: refuse}, signal: new AbortController().signal}
const calls = JSON.parse(callsJson).map((call, index) => ({id: `bench-${index}`, ...call}))

const spans = calls.map(() => ({end: 0, start: 0}))
const started = performance.now()
const outcomes = await executeTurn(calls, env, {
  ended: (_call, _outcome, index) => (spans[index].end = performance.now() - started),
  started: (_call, index) => (spans[index].start = performance.now() - started),
})
const wall = performance.now() - started
const failed = outcomes.map((outcome, index) => (outcome.isError ? `${calls[index].name}: ${outcome.content.slice(0, 200)}` : undefined)).filter(Boolean)
process.stdout.write(JSON.stringify({failed, spans, wall}) + '\n')
