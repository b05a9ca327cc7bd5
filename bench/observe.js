#!/usr/bin/env node
/**
 * Issue #35's figures, as ratios against baselines measured in the same run (`npm run bench:observe`,
 * after `npm run build`):
 * 1. a plan-mode (throwaway) Bash call against a run-phase sandboxed call of the same command, through
 *    the compiled runner (`spawnFor` + `runCommand`), interleaved; target ≤ 1.5×;
 * 2. three Explore agents started in one turn against one: the time from the end of the parent's first
 *    response to its next request (the agents' whole life), the scripted model answering at once;
 *    target ≤ 1.5×, with the overlap (the share of the agents' lives that ran side by side). Every run
 *    shares one code cache, warmed first, as a user's runs do (src/base/bundles.ts): without it each run
 *    compiled the agents' code on first use inside the window, and the figure swung from 1.2× to 1.7×
 *    between runs of the bench with nothing changed. The medians of 15 rounds, interleaved;
 * 3. an agent that would loop for ever: stopped at its turn cap, the session's total input tokens
 *    against the cap the settings give (parent turns + agents.maxTurns, each response's usage fixed).
 */
import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {messagesServerModule, responseEnds} from './lib/server.js'
import {makeSandbox, PROJECT_ROOT, runWave} from './lib/sandbox.js'
import {median, ms, ratio} from './lib/stats.js'

const quick = process.argv.includes('--quick')
const RUNS = quick ? 5 : 15

const {runCommand, spawnFor} = await import(path.join(PROJECT_ROOT, 'dist', 'base', 'process', 'runner.js'))
const server = await messagesServerModule()
const rows = []
// One code cache for every wave run of figures 2 and 3, as one user's runs share theirs.
const codeCache = mkdtempSync(path.join(tmpdir(), 'wave-bench-cache-'))
process.on('exit', () => rmSync(codeCache, {force: true, recursive: true}))

// 1. plan-mode Bash against a run-phase sandboxed call
{
  const sandbox = makeSandbox({'README.md': '# bench\n'})
  const command = 'git log -1 --format=%s'
  const time = async (throwaway) => {
    const spawn = spawnFor(command, {root: sandbox.repo}, {enabled: true, network: false, throwaway})
    if ('problem' in spawn) throw new Error(spawn.problem)
    const at = performance.now()
    const result = await runCommand(spawn.plan, sandbox.repo, 60_000, new AbortController().signal)
    if (result.code !== 0) throw new Error(`${command} failed: ${result.output}`)
    return performance.now() - at
  }

  const run = []
  const plan = []
  await time(true) // the probe (once per process) is not a call's cost
  for (let i = 0; i < RUNS; i++) {
    run.push(await time(false))
    plan.push(await time(true))
  }

  rows.push(['plan-mode Bash call (`git log -1`)', ms(median(plan)), `run-phase sandboxed call ${ms(median(run))}`, ratio(median(plan), median(run)), '≤ 1.5×'])
  sandbox.cleanup()
}

// 2. three Explore agents in one turn against one
async function agentsWindow(count) {
  const sandbox = makeSandbox({'README.md': '# bench\n', 'src/a.ts': 'export const a = 1\n'})
  let parentTurns = 0
  const agentSpans = []
  const router = (request) => {
    const system = server.systemText(request)
    if (!system.includes('You are an Explore agent')) {
      parentTurns++
      if (parentTurns === 1) {
        return server.reply(
          ...Array.from({length: count}, (_, i) => server.toolUse('Agent', {description: `look ${i}`, prompt: `agent ${i}`, subagent_type: 'Explore'})),
        )
      }

      if (parentTurns === 2) {
        return server.reply(server.toolUse('Write', {content: '# Plan\n', file_path: server.planPathIn(request)}), server.toolUse('ExitPlanMode', {}))
      }

      return server.reply(server.text('done'))
    }

    const results = server.toolResults(request)
    if (results.length === 0) {
      agentSpans.push({start: request.receivedAt})
      return server.reply(server.toolUse('Read', {file_path: 'src/a.ts'}))
    }

    agentSpans.push({end: request.receivedAt})
    return server.reply(server.text('found a'))
  }

  const scripted = await server.startMessagesServer(Array.from({length: 4 + 2 * count}, () => router))
  responseEnds.length = 0
  try {
    const result = await runWave(['plan', '--task', 'bench', '--json'], {
      cwd: sandbox.repo,
      env: {WAVE_COMPILE_CACHE: codeCache},
      home: sandbox.home,
      server: scripted,
    })
    if (result.code !== 0) throw new Error(`wave plan failed: ${result.stderr}`)
    const parent = scripted.messageRequests.filter((request) => !server.systemText(request).includes('You are an Explore agent'))
    // From the end of the response that asked for the agents to the request carrying their results.
    const firstEnd = responseEnds.find((end) => end.at < parent[1].receivedAt && end.at > parent[0].receivedAt)?.at ?? parent[0].receivedAt
    const starts = agentSpans.filter((span) => span.start !== undefined).map((span) => span.start)
    const ends = agentSpans.filter((span) => span.end !== undefined).map((span) => span.end)
    const busy = starts.reduce((sum, start, i) => sum + (ends[i] - start), 0)
    const span = Math.max(...ends) - Math.min(...starts)
    return {overlap: count > 1 ? busy / span : 1, window: parent[1].receivedAt - firstEnd}
  } finally {
    await scripted.close()
    sandbox.cleanup()
  }
}

{
  const one = []
  const three = []
  const overlaps = []
  const times = quick ? 3 : 15
  await agentsWindow(3) // warms the code cache: its run is not counted
  for (let i = 0; i < times; i++) {
    one.push((await agentsWindow(1)).window)
    const measured = await agentsWindow(3)
    three.push(measured.window)
    overlaps.push(measured.overlap)
  }

  rows.push([
    'three Explore agents in one turn',
    ms(median(three)),
    `one agent ${ms(median(one))}; overlap ${median(overlaps).toFixed(2)} (agent time ÷ span; 3 = fully side by side); ${times} rounds, three ${ms(Math.min(...three))}–${ms(Math.max(...three))}`,
    ratio(median(three), median(one)),
    '≤ 1.5×',
  ])
}

// 3. an agent that would loop is stopped at its cap
{
  const sandbox = makeSandbox({'README.md': '# bench\n'})
  const usage = {input_tokens: 1000, output_tokens: 10}
  let parentTurns = 0
  const router = (request) => {
    if (!server.systemText(request).includes('You are an Explore agent')) {
      parentTurns++
      if (parentTurns === 1) return {...server.reply(server.toolUse('Agent', {description: 'loop', prompt: 'loop', subagent_type: 'Explore'})), usage}
      if (parentTurns === 2) {
        return {
          ...server.reply(server.toolUse('Write', {content: '# Plan\n', file_path: server.planPathIn(request)}), server.toolUse('ExitPlanMode', {})),
          usage,
        }
      }

      return {...server.reply(server.text('done')), usage}
    }

    return {...server.reply(server.text('still looking'), server.toolUse('Read', {file_path: 'README.md'})), usage}
  }

  mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
  const maxTurns = 25
  writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({agents: {maxTurns}}))
  const scripted = await server.startMessagesServer(Array.from({length: 40}, () => router))
  try {
    const result = await runWave(['plan', '--task', 'bench', '--json'], {
      cwd: sandbox.repo,
      env: {WAVE_COMPILE_CACHE: codeCache},
      home: sandbox.home,
      server: scripted,
    })
    if (result.code !== 0) throw new Error(`wave plan failed: ${result.stderr}`)
    const body = JSON.parse(result.stdout)
    const cap = (parentTurns + maxTurns) * usage.input_tokens
    rows.push([
      'an agent that would loop',
      `${body.usage.input_tokens} input tokens`,
      `cap ${cap} (${parentTurns} parent turns + agents.maxTurns ${maxTurns}, ${usage.input_tokens} each)`,
      ratio(body.usage.input_tokens, cap),
      '≤ 1.0×',
    ])
  } finally {
    await scripted.close()
    sandbox.cleanup()
  }
}

const bwrap = (() => {
  try {
    return execFileSync('bwrap', ['--version'], {encoding: 'utf8'}).trim()
  } catch {
    return 'bwrap ?'
  }
})()
console.log(`| figure | value | baseline (same run) | ratio | target |\n|---|---|---|---|---|`)
for (const row of rows) console.log(`| ${row.join(' | ')} |`)
console.log(`\n(${bwrap}; ${RUNS} runs of figure 1, medians)`)
