/**
 * One tool call (Glob, Grep, Read) in a fresh process, the way the agent makes it: through the dispatcher (input
 * validation, path resolution, the plan-mode policy, the `readable` re-check), timed around the call.
 * Prints one JSON line: wall and CPU time of the call, the output's size and first and last lines,
 * and the process's peak RSS.
 *
 *   node bench/lib/search-child.js <Glob|Grep> <workspace root> '<input json>'
 */
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath, pathToFileURL} from 'node:url'

const [tool, root, inputJson] = process.argv.slice(2)
const dist = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist')
const load = (file) => import(pathToFileURL(path.join(dist, file)).href)
const {dispatch} = await load('tools/dispatch.js')
const {NO_RULES} = await load('policy/policy.js')
const {ToolRegistry} = await load('tools/registry.js')
const plugin = (await load(`tools/${tool.toLowerCase()}.js`)).default

const refuse = async () => {
  throw new Error('no session control in the benchmark')
}

const env = {
  policy: {headless: true, mode: 'plan', planFile: path.join(root, '.no-plan.md'), rules: NO_RULES, workspaceRoot: root},
  registry: new ToolRegistry([plugin]),
  session: {enterPlanMode: refuse, exitPlanMode: refuse},
  signal: new AbortController().signal,
}

const cpuBefore = process.cpuUsage()
const started = performance.now()
const outcome = await dispatch({id: 'bench', input: JSON.parse(inputJson), name: tool}, env)
const ms = performance.now() - started
const cpu = process.cpuUsage(cpuBefore)
if (outcome.isError) {
  process.stderr.write(`${tool} failed: ${outcome.content}\n`)
  process.exit(1)
}

const lines = outcome.content.split('\n')
process.stdout.write(
  JSON.stringify({
    bytes: outcome.content.length,
    cpuMs: (cpu.user + cpu.system) / 1000,
    head: lines.slice(0, 3),
    lines: lines.length,
    maxRssKb: process.resourceUsage().maxRSS,
    ms,
    tail: lines.at(-1),
  }) + '\n',
)
