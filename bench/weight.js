/** Request weight: the system prompt and tool definitions of the first request in plan mode and the run modes (against Claude Code's, when it is installed), the growth over a 20-turn session, and the cache breakpoints. Run by bench/run.js (`npm run bench -- --only=weight`). */
import {spawn, spawnSync} from 'node:child_process'

import {cleanEnv, heading, notes, record, reply, startMessagesServer, toolResults, toolUse, which, writePlan} from './lib/harness.js'
import {makeSandbox, runWave} from './lib/sandbox.js'
import {kb, median} from './lib/stats.js'

const bytes = (value) => Buffer.byteLength(JSON.stringify(value ?? null))

function cacheBreakpoints(request) {
  const {messages = [], system = [], tools = []} = request.body
  const last = messages.at(-1)
  const lastBlock = Array.isArray(last?.content) ? last.content.at(-1) : undefined
  return {
    messages: Boolean(lastBlock?.cache_control),
    // The shared block (the first) carries it; the session's own block after it is cached by the newest turn's.
    system: Array.isArray(system) && Boolean(system[0]?.cache_control),
    count: [...tools, ...(Array.isArray(system) ? system : []), ...messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))].filter(
      (b) => b?.cache_control,
    ).length,
    tools: Boolean(tools.at(-1)?.cache_control),
  }
}

async function requestWeight() {
  heading('4. Request weight (system prompt + tool definitions, JSON bytes)')
  const five = 'x'.repeat(60) + '\n'
  const bigFiles = Object.fromEntries(Array.from({length: 20}, (_, i) => [`docs/part${String(i).padStart(2, '0')}.md`, five.repeat(Math.round(5000 / 69))]))
  const sandbox = makeSandbox({'README.md': '# bench\n', ...bigFiles})
  try {
    const weights = {}
    const breakpoints = []
    // Plan mode.
    let server = await startMessagesServer([writePlan, reply('Done.')])
    let result = await runWave(['plan', '--task', 'Plan something'], {cwd: sandbox.repo, home: sandbox.home, server})
    if (result.code !== 0) throw new Error(`wave plan failed: ${result.stderr}`)
    weights.plan = server.messageRequests[0]
    breakpoints.push(...server.messageRequests.map(cacheBreakpoints))
    await server.close()
    // Run modes, with a task (the full tool set of the mode).
    for (const mode of ['acceptEdits', 'bypassPermissions']) {
      server = await startMessagesServer([reply('Nothing to do.')])
      result = await runWave(['run', '--task', 'Do something', '--mode', mode], {cwd: sandbox.repo, home: sandbox.home, server})
      if (result.code !== 0) throw new Error(`wave run --mode ${mode} failed (${result.code}): ${result.stderr}`)
      weights[mode] = server.messageRequests[0]
      breakpoints.push(...server.messageRequests.map(cacheBreakpoints))
      await server.close()
    }

    // Claude Code's first request in the same sandbox, mode and task: the baseline of the ≤ 0.15× (issues 18, 32).
    // Without it here, the figure issue 32 recorded stands in for it, said so in the row.
    const claude = claudeCode()
    const baselines = {}
    for (const mode of Object.keys(weights)) {
      baselines[mode] = claude
        ? await claudeCodeWeight(claude, mode, mode === 'plan' ? 'Plan something' : 'Do something', sandbox)
        : {bytes: CLAUDE_CODE_WEIGHT.bytes, version: `${CLAUDE_CODE_WEIGHT.version} (recorded, not this run)`}
    }

    if (!claude)
      notes.push(
        `Request weight: Claude Code not found (put claude on PATH or set WAVE_BENCH_CLAUDE): the ratios are to the ${kb(CLAUDE_CODE_WEIGHT.bytes)} Claude Code ${CLAUDE_CODE_WEIGHT.version} sent when issue 32 measured it.`,
      )

    for (const [mode, request] of Object.entries(weights)) {
      const system = bytes(request.body.system)
      const tools = bytes(request.body.tools)
      const names = (request.body.tools ?? []).map((tool) => tool.name).join(', ')
      const baseline = baselines[mode]
      const share = baseline ? (system + tools) / baseline.bytes : undefined
      record({
        baseline: baseline ? `Claude Code ${baseline.version} ${kb(baseline.bytes)}` : undefined,
        figure: `${mode === 'plan' ? 'plan mode' : `run, ${mode}`}`,
        note: `system ${kb(system)} + ${request.body.tools?.length ?? 0} tools ${kb(tools)} (${names}); ${system + tools} bytes`,
        ok: share === undefined || share <= 0.15,
        ratio: share === undefined ? undefined : `${share.toFixed(3)}×`,
        section: 'weight',
        target: '≤ 0.15× Claude Code',
        value: kb(system + tools),
      })
    }

    // Growth over a 20-turn session whose tool results are about 5 KB each.
    const script = Object.keys(bigFiles).map((file) => reply(toolUse('Read', {file_path: file})))
    server = await startMessagesServer([...script, writePlan, reply('Done.')])
    result = await runWave(['plan', '--task', 'Read the docs, then plan', '--max-turns', '30'], {cwd: sandbox.repo, home: sandbox.home, server})
    if (result.code !== 0) throw new Error(`wave plan (20 turns) failed: ${result.stderr}`)
    const requests = server.messageRequests
    breakpoints.push(...requests.map(cacheBreakpoints))
    await server.close()
    const sizes = requests.map((request) => Buffer.byteLength(request.rawBody))
    const resultChars = requests.slice(1, 21).map((request) => toolResults(request)[0]?.text.length ?? 0)
    const growth = sizes.slice(1, 21).map((size, i) => size - sizes[i])
    const shown = [1, 2, 5, 10, 15, 20, 21].filter((turn) => turn <= sizes.length)
    record({
      figure: '20-turn session, 5 KB tool results',
      note: `request bytes by turn: ${shown.map((turn) => `${turn}: ${kb(sizes[turn - 1])}`).join(', ')}; tool results ${kb(median(resultChars))} each`,
      section: 'weight',
      value: `+${kb(median(growth))}/turn`,
    })
    const all = breakpoints.length
    const tally = (key) => breakpoints.filter((b) => b[key]).length
    const most = Math.max(...breakpoints.map((b) => b.count))
    const ok = tally('tools') === all && tally('system') === all && tally('messages') === all && most <= 4
    record({
      figure: 'cache_control breakpoints',
      note: `of ${all} recorded requests: tools ${tally('tools')}, shared system ${tally('system')}, newest turn ${tally('messages')}; at most ${most} in a request (the API allows 4)`,
      ok,
      section: 'weight',
      target: 'on every request',
      value: ok ? 'all three' : 'MISSING',
    })
  } finally {
    sandbox.cleanup()
  }
}

/** Claude Code's system prompt and tools in its first request, as issue 32 recorded it (every mode). */
const CLAUDE_CODE_WEIGHT = {bytes: 91 * 1024, version: '2.1.332'}

/** The Claude Code executable to measure against: WAVE_BENCH_CLAUDE, else `claude` on PATH, else none. */
function claudeCode() {
  if (process.env.WAVE_BENCH_CLAUDE) return process.env.WAVE_BENCH_CLAUDE
  return which('claude') ? 'claude' : undefined
}

/** Bytes of `system` plus `tools` in Claude Code's first request with tools, for one task in one mode. */
async function claudeCodeWeight(claude, mode, task, sandbox) {
  const version = spawnSync(claude, ['--version'], {encoding: 'utf8'}).stdout?.split(' ')[0] ?? '?'
  const server = await startMessagesServer(Array.from({length: 10}, () => reply('Nothing to do.')))
  try {
    const env = {
      ...cleanEnv(sandbox.home, {ANTHROPIC_API_KEY: 'sk-bench-not-a-real-key', ANTHROPIC_BASE_URL: server.url}),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      // Claude Code refuses bypassPermissions to root unless it is told it runs in a sandbox (CI containers).
      IS_SANDBOX: '1',
    }
    // Asynchronously: the scripted server answering it runs in this process.
    await new Promise((resolve) => {
      const child = spawn(claude, ['-p', task, '--permission-mode', mode], {cwd: sandbox.repo, env, stdio: 'ignore'})
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
      child.on('error', resolve).on('exit', () => resolve(clearTimeout(timer)))
    })
    const request = server.messageRequests.find((r) => (r.body?.tools ?? []).length > 0)
    if (!request) throw new Error(`Claude Code (${claude}) sent no request with tools in ${mode} mode`)
    return {bytes: bytes(request.body.system) + bytes(request.body.tools), version}
  } finally {
    await server.close()
  }
}

/** 4. Request weight. */
export const title = '4. Request weight'
export const run = requestWeight
