/**
 * Issue #5, reliability: API faults retried with backoff (the SDK's retries, and wave's own for a stream
 * cut after the response began), nothing run twice, interruption by SIGINT and SIGTERM with every file
 * left consistent, one run of a plan at a time, concurrent plans apart, the key never written anywhere,
 * and the tools' own guards (Bash timeouts and caps, binary files, exact edits) seen end to end.
 */
import {chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {createServer, type Server, type Socket} from 'node:net'
import path from 'node:path'

import {test as base, describe, expect} from 'vitest'

import {
  makeSandbox,
  readJson,
  runWave,
  type RunWaveResult,
  type Sandbox,
  type StartedWave,
  snapshotTree,
  startWave,
  TEST_API_KEY,
  waitFor,
} from '../support/cli.js'
import {
  fault,
  type MessagesServer,
  planPathIn,
  type RecordedRequest,
  reply,
  type Reply,
  startMessagesServer,
  toolResults,
  toolUse,
  type Turn,
} from '../support/messages-server.js'

/** Retry backoffs in milliseconds instead of seconds: the SDK honours retry-after-ms, wave WAVE_RETRY_BASE_MS. */
const FAST = {WAVE_RETRY_BASE_MS: '5'}
const SOON = {'retry-after-ms': '5'}

const sidecar = (planPath: string, suffix: string) => planPath.replace(/\.md$/, suffix)

/** A turn that writes the session's plan file (plan mode) with this content. */
const writePlan =
  (content: string): Turn =>
  (request) =>
    reply(toolUse('Write', {content, file_path: planPathIn(request)}))

/** The error line of a failed command: exactly one `Error:` line, and no stack trace. */
function errorLine(result: RunWaveResult): string {
  const lines = result.stderr.split('\n').filter((line) => line.startsWith('Error:'))
  expect(lines, result.stderr).toHaveLength(1)
  expect(result.stderr).not.toMatch(/\n\s+at .+:\d+/)
  return lines[0]
}

/** Every line of a transcript is one complete JSON value. */
function transcriptEntries(planPath: string): Array<{message: {role: string; content: unknown}; session: string}> {
  const text = readFileSync(sidecar(planPath, '.transcript.jsonl'), 'utf8')
  expect(text.endsWith('\n')).toBe(true)
  return text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line))
}

/** No temporary file (write-file-atomic's or wave's own) is left behind anywhere under `dir`. */
function noTemporaryFiles(dir: string): void {
  const leftovers = Object.keys(snapshotTree(dir)).filter((file) => /\.tmp$|\.\d+$|\.[0-9a-f]{6,}$/.test(path.basename(file)))
  expect(leftovers).toEqual([])
}

/** Every file under `dir`, as text, must not contain the API key. */
function keyNowhereIn(dir: string): void {
  for (const file of Object.keys(snapshotTree(dir))) {
    if (file.endsWith('/')) continue
    const content = readFileSync(path.join(dir, file), 'latin1')
    expect(content.includes(TEST_API_KEY), `${file} holds the key`).toBe(false)
  }
}

/** What each test works with: its own sandbox and scripted server, and wave run against them. */
interface Kit {
  sandbox: Sandbox
  server: MessagesServer
  wave(args: string[], env?: Record<string, string | undefined>, baseUrl?: string): Promise<RunWaveResult>
  /** `wave` as a child process the test can signal. */
  startWave(args: string[], env?: Record<string, string | undefined>): StartedWave
  /** A plan written straight into the plans directory, for `wave run`. */
  planFile(content?: string, name?: string): string
}

function kit(sandbox: Sandbox, server: MessagesServer): Kit {
  return {
    planFile(content = '# Plan\n\n1. Do the thing.\n', name = 'steady-heron') {
      mkdirSync(sandbox.plansDir, {recursive: true})
      const file = path.join(sandbox.plansDir, `${name}.md`)
      writeFileSync(file, content)
      return file
    },
    sandbox,
    server,
    startWave: (args, env = {}) => startWave(args, {cwd: sandbox.repo, env: {...FAST, ...env}, home: sandbox.home, server}),
    wave: (args, env, baseUrl) =>
      runWave(args, {cwd: sandbox.repo, env: {...FAST, ...(baseUrl ? {ANTHROPIC_BASE_URL: baseUrl} : {}), ...env}, home: sandbox.home, server}),
  }
}

/**
 * Tests run concurrently (most of their time is spent waiting on wave), each with its own kit.
 */
const it = base.extend<{t: Kit}>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its destructuring
  async t({}, use) {
    const sandbox = makeSandbox()
    const server = await startMessagesServer()
    try {
      await use(kit(sandbox, server))
    } finally {
      await server.close()
      sandbox.cleanup()
    }
  },
})

/** Whether a process is gone: no such pid, or a zombie that no longer runs. */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }

  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return true
  }
}

function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return false
  } catch {
    return true
  }
}

/**
 * A TCP front for the scripted server that resets the first `resets` connections as soon as the request
 * arrives (a connection error, before any response) and relays the rest.
 */
async function flakyProxy(target: MessagesServer, resets: number): Promise<{url: string; resets: () => number; close(): Promise<void>}> {
  const {connect} = await import('node:net')
  let seen = 0
  const sockets = new Set<Socket>()
  const proxy: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    if (seen++ < resets) {
      // Once the request is in: a reset before any response (undici may miss a reset that comes earlier).
      socket.once('data', () => socket.resetAndDestroy())
      return
    }

    const upstream = connect(target.port, '127.0.0.1')
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => socket.destroy())
    socket.pipe(upstream).pipe(socket)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  const {port} = proxy.address() as {port: number}
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        proxy.close(() => resolve())
      }),
    resets: () => Math.min(seen, resets),
    url: `http://127.0.0.1:${port}`,
  }
}

describe.concurrent('API faults', () => {
  it('retries 429, 500 and 529 with the backoff the server asks for (retry-after-ms), then goes on', async ({t: {server, wave}}) => {
    server.push(fault(429, {headers: SOON}), fault(500, {headers: SOON}), fault(529, {headers: SOON}), writePlan('# Plan\n'), reply('Done.'))
    const result = await wave(['plan', '--task', 'Survive faults'])

    expect(result.stderr).not.toContain('Error')
    expect(result.code).toBe(0)
    const requests = server.messageRequests
    expect(requests.map((r) => r.status)).toEqual([429, 500, 529, 200, 200])
    // The SDK waited what the server asked (5 ms), not its default backoff (0.5 s, 1 s, 2 s, less jitter).
    // (The default's least is ~2.6 s with its jitter: the margin below is for a loaded machine, not a speed target.)
    expect(requests[3].receivedAt - requests[0].receivedAt).toBeLessThan(2500)
    // The retries are visible in the progress on stderr.
    expect(result.stderr).toMatch(/retrying \(attempt 1\): status 429/)
    expect(result.stderr).toMatch(/retrying \(attempt 3\): status 529/)
    expect(readFileSync(result.stdout.trim(), 'utf8')).toBe('# Plan\n')
  })

  it('retries connection errors (the SDK), then goes on', async ({t: {server, wave}}) => {
    const proxy = await flakyProxy(server, 2)
    try {
      server.push(writePlan('# Plan\n'), reply('Done.'))
      const result = await wave(['plan', '--task', 'Survive resets'], {}, proxy.url)
      expect(result.stderr).not.toContain('Error')
      expect(result.code).toBe(0)
      expect(proxy.resets()).toBe(2)
      expect(result.stderr).toMatch(/retrying \(attempt 1\): connection failed/)
      expect(server.messageRequests).toHaveLength(2)
    } finally {
      await proxy.close()
    }
  })

  it('gives up after the retries with one line (status, request id), keeping the plan so far for --resume and --revise', async ({t: {server, wave}}) => {
    server.push(writePlan('# Plan\n\n1. First step.\n'), ...Array.from({length: 5}, () => fault(529, {headers: SOON})))
    const result = await wave(['plan', '--task', 'Plan under load'])

    expect(result.code).toBe(1)
    expect(result.stdout).toBe('')
    const line = errorLine(result)
    expect(line).toMatch(/status 529/)
    expect(line).toMatch(/\(request req_01\w+\)/)
    expect(line).toMatch(/Overloaded|scripted 529/)
    const planPath = planPathIn(server.messageRequests[0])
    expect(line).toContain(`The plan so far is at ${planPath}.`)
    expect(result.stderr).toContain(`Go on with the exploration kept: wave plan --resume ${path.basename(planPath, '.md')}.`)
    // 1 turn + the first try of the second turn + 4 SDK retries.
    expect(server.messageRequests).toHaveLength(6)

    // Nothing lost: the plan as written, its state marked failed, a transcript of complete lines.
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\n1. First step.\n')
    expect(readJson(sidecar(planPath, '.state.json'))).toMatchObject({status: 'failed', task: 'Plan under load'})
    const entries = transcriptEntries(planPath)
    expect(entries.map((e) => e.message.role)).toEqual(['user', 'assistant', 'user'])

    // --revise goes on from there, with the task, and ends with a draft.
    server.push(
      (request) => reply(toolUse('Edit', {file_path: planPathIn(request), new_string: '1. First step.\n2. Second step.', old_string: '1. First step.'})),
      reply('Finished.'),
    )
    const revised = await wave(['plan', '--revise', planPath])
    expect(revised.stderr).not.toContain('Error')
    expect(revised.code).toBe(0)
    expect(revised.stdout.trim()).toBe(planPath)
    const opening = server.messageRequests[6].body.messages[0].content
    expect(JSON.stringify(opening)).toContain('Plan under load')
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\n1. First step.\n2. Second step.\n')
    expect(readJson(sidecar(planPath, '.state.json')).status).toBe('draft')
  })

  it('does not retry a fault no retry cures (400), and fails at once', async ({t: {server, wave}}) => {
    server.push(fault(400, {error: {message: 'max_tokens: too large'}}))
    const result = await wave(['plan', '--task', 'Bad request'])
    expect(result.code).toBe(1)
    expect(errorLine(result)).toMatch(/status 400 \(request req_01\w+\): max_tokens: too large/)
    expect(server.messageRequests).toHaveLength(1)
  })

  it('retries a stream cut after the response began (wave), and runs the tool call once', async ({t: {sandbox, server, wave, planFile}}) => {
    const planPath = planFile()
    const call = reply(toolUse('Bash', {command: 'echo ran >> count.txt'}, 'toolu_count'), 'Counting.')
    server.push(
      {...call, cutAfterEvents: 0}, // headers, then nothing
      {...call, streamError: {afterEvents: 3, message: 'Overloaded', type: 'overloaded_error'}}, // an error event mid-stream
      {...call, cutAfterEvents: 6}, // cut in the middle of the tool call's input
      call,
      reply('Counted.'),
    )
    const result = await wave(['run', planPath, '--approve', '--mode', 'bypassPermissions'])

    expect(result.stderr).not.toContain('Error')
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe('Counted.')
    expect(readFileSync(path.join(sandbox.repo, 'count.txt'), 'utf8')).toBe('ran\n')
    const requests = server.messageRequests
    expect(requests.map((r) => r.outcome)).toEqual(['cut', 'stream-error', 'cut', 'reply', 'reply'])
    // The retries re-sent the same conversation: nothing of a partial message was kept.
    for (const retry of requests.slice(1, 4)) expect(retry.body.messages).toEqual(requests[0].body.messages)
    expect(toolResults(requests[4])).toHaveLength(1)
    expect(toolResults(requests[4])[0]).toMatchObject({tool_use_id: 'toolu_count'})
    expect(result.stderr).toMatch(/retrying \(attempt 3\): stream cut/)

    const entries = transcriptEntries(planPath)
    const toolUses = entries.flatMap((e) => (Array.isArray(e.message.content) ? e.message.content : [])).filter((b: {type: string}) => b.type === 'tool_use')
    expect(toolUses).toHaveLength(1)
  })

  it('gives up after a bounded number of stream retries: exit 1, one line with the request id, no tool run', async ({t: {sandbox, server, wave, planFile}}) => {
    const planPath = planFile()
    const call = reply(toolUse('Bash', {command: 'echo ran >> count.txt'}))
    server.push(...Array.from({length: 4}, (): Reply => ({...call, cutAfterEvents: 5})))
    const result = await wave(['run', planPath, '--approve', '--mode', 'bypassPermissions'])

    expect(result.code).toBe(1)
    expect(errorLine(result)).toMatch(/Model API request failed \(request req_01\w+\): /)
    expect(server.messageRequests).toHaveLength(4)
    expect(existsSync(path.join(sandbox.repo, 'count.txt'))).toBe(false)
    const state = readJson(sidecar(planPath, '.state.json'))
    expect(state.status).toBe('failed')
    expect(state.runs.at(-1)).toMatchObject({exitCode: 1})
    expect(state.runs.at(-1).endedAt).toBeTruthy()
    expect(existsSync(sidecar(planPath, '.lock'))).toBe(false)
  })

  it('times out a request that stalls past WAVE_API_TIMEOUT_MS, retries it, then fails with one line', async ({t: {server, wave}}) => {
    server.push({stallMs: 20_000}, {stallMs: 20_000})
    const result = await wave(['plan', '--task', 'Stall'], {WAVE_API_RETRIES: '1', WAVE_API_TIMEOUT_MS: '300'})
    expect(result.code).toBe(1)
    expect(errorLine(result)).toMatch(/timed out/i)
    expect(server.messageRequests).toHaveLength(2)
    // Two stalls of 20 s would outlast the harness's 30 s deadline: wave ended them itself.
    expect(result.timedOut).toBe(false)
  })

  it('cuts and retries a stream that goes silent mid-message', async ({t: {server, wave}}) => {
    server.push(
      (request) => ({...reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})), eventDelayMs: 5000}),
      writePlan('# Plan\n'),
      reply('Done.'),
    )
    const result = await wave(['plan', '--task', 'Silence'], {WAVE_API_TIMEOUT_MS: '1500'})
    expect(result.stderr).not.toContain('Error')
    expect(result.code).toBe(0)
    expect(result.stderr).toMatch(/stream cut: the response stream stalled/)
    expect(server.messageRequests).toHaveLength(3)
  })

  it('refuses a malformed knob before anything starts (exit 2)', async ({t: {sandbox, server, wave}}) => {
    const result = await wave(['plan', '--task', 'x'], {WAVE_API_TIMEOUT_MS: 'soon'})
    expect(result.code).toBe(2)
    expect(errorLine(result)).toMatch(/WAVE_API_TIMEOUT_MS must be a whole number/)
    expect(server.requests).toHaveLength(0)
    expect(existsSync(sandbox.plansDir) ? readdirSync(sandbox.plansDir) : []).toEqual([])
  })
})

describe.concurrent('interruption', () => {
  it.for([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s stops a running wave plan (exit %i), keeping the plan, its state and transcript consistent',
    async ([signal, exitCode], {t: {sandbox, server, startWave}}) => {
      server.push(writePlan('# Plan\n\n1. Partial.\n'), {stallMs: 30_000})
      const session = startWave(['plan', '--task', 'Interrupt me'])
      await waitFor(() => server.messageRequests.length === 2, 'the stalled second request')
      session.child.kill(signal)
      const result = await session.done

      // Ended by the signal, not by the harness's SIGKILL at its deadline (the stalled request lasts as long).
      expect(result.signal, result.stderr).toBeNull()
      expect(result.code).toBe(exitCode)
      expect(result.stdout).toBe('')
      const planPath = planPathIn(server.messageRequests[0])
      const lines = result.stderr.split('\n').filter((line) => line.startsWith('Error:'))
      expect(lines).toEqual([`Error: Interrupted by ${signal}. The plan so far is at ${planPath}.`])
      expect(result.stderr).toContain(`Go on with the exploration kept: wave plan --resume ${path.basename(planPath, '.md')}.`)
      expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\n1. Partial.\n')
      expect(readJson(sidecar(planPath, '.state.json'))).toMatchObject({status: 'failed'})
      expect(transcriptEntries(planPath).map((e) => e.message.role)).toEqual(['user', 'assistant', 'user'])
      noTemporaryFiles(sandbox.home)
    },
  )

  it.for([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)(
    "%s stops a running wave run (exit %i) and kills the command's whole process group",
    async ([signal, exitCode], {t: {sandbox, server, planFile, startWave}}) => {
      const planPath = planFile()
      server.push(reply(toolUse('Bash', {command: 'echo $$ > group.pid; sleep 30 & echo $! > sleep.pid; wait'})), reply('never reached'))
      // Unsandboxed, so the pids the command writes are the host's; in the sandbox they would be its own
      // PID namespace's (the sandboxed kill is tested in test/unit/tools/bash.test.ts).
      const session = startWave(['run', planPath, '--approve', '--mode', 'bypassPermissions', '--sandbox', 'off'])
      const sleepPidFile = path.join(sandbox.repo, 'sleep.pid')
      await waitFor(() => existsSync(sleepPidFile) && readFileSync(sleepPidFile, 'utf8').endsWith('\n'), 'the command to start')
      const group = Number(readFileSync(path.join(sandbox.repo, 'group.pid'), 'utf8'))
      const sleeper = Number(readFileSync(sleepPidFile, 'utf8'))
      expect(processGone(sleeper)).toBe(false)
      expect(existsSync(sidecar(planPath, '.lock'))).toBe(true)

      session.child.kill(signal)
      const result = await session.done

      expect(result.code).toBe(exitCode)
      expect(result.stderr).toContain(`Error: Interrupted by ${signal}.`)
      // The command and its background child are gone, with their whole group.
      await waitFor(() => processGone(sleeper) && groupGone(group), 'the process group to die', 5000)
      // Only the first turn was requested; the interrupted result was recorded, then the session ended.
      expect(server.messageRequests).toHaveLength(1)
      const state = readJson(sidecar(planPath, '.state.json'))
      expect(state.status).toBe('failed')
      expect(state.runs).toHaveLength(1)
      expect(state.runs[0]).toMatchObject({exitCode})
      expect(state.runs[0].endedAt).toBeTruthy()
      expect(existsSync(sidecar(planPath, '.lock'))).toBe(false)
      const entries = transcriptEntries(planPath)
      expect(entries.map((e) => e.message.role)).toEqual(['user', 'assistant', 'user'])
      expect(JSON.stringify(entries[2].message.content)).toMatch(/interrupted and killed/)
      noTemporaryFiles(sandbox.home)
    },
  )
})

describe.concurrent('concurrency', () => {
  it('gives concurrent wave plan sessions each their own plan file', async ({t: {server, wave}}) => {
    const tasks = ['alpha', 'bravo', 'charlie', 'delta']
    // One turn function for every request: write this session's plan with its own task, then end.
    const turn: Turn = (request: RecordedRequest) => {
      if (toolResults(request).length > 0) return reply('Done.')
      const task = /Task:\\n(\w+)/.exec(JSON.stringify(request.body.messages[0].content))![1]
      return reply(toolUse('Write', {content: `# Plan for ${task}\n`, file_path: planPathIn(request)}))
    }

    server.push(...tasks.flatMap(() => [turn, turn]))
    const results = await Promise.all(tasks.map((task) => wave(['plan', '--task', task])))
    for (const result of results) expect(result.code, result.stderr).toBe(0)
    const paths = results.map((result) => result.stdout.trim())
    expect(new Set(paths).size).toBe(tasks.length)
    for (const [i, planPath] of paths.entries()) {
      expect(readFileSync(planPath, 'utf8')).toBe(`# Plan for ${tasks[i]}\n`)
      expect(readJson(sidecar(planPath, '.state.json'))).toMatchObject({status: 'draft', task: tasks[i]})
    }
  })

  it("creates a plan's files exclusively and whole: of racing writers exactly one wins, and no reader sees half a file", async ({t: {sandbox}}) => {
    const {createExclusive} = await import('../../src/plans/store.js')
    const file = path.join(sandbox.root, 'contested.state.json')
    const content = (i: number) => JSON.stringify({writer: i, padding: 'x'.repeat(100_000)})
    const wins = await Promise.all(Array.from({length: 20}, (_, i) => createExclusive(file, content(i))))
    expect(wins.filter(Boolean)).toHaveLength(1)
    expect(readFileSync(file, 'utf8')).toBe(content(wins.indexOf(true)))
    expect(readdirSync(sandbox.root).filter((name) => name.startsWith('contested'))).toEqual(['contested.state.json'])
  })

  it('refuses a second wave run of a plan that is running (exit 1), changing nothing', async ({t: {sandbox, server, wave, planFile, startWave}}) => {
    const planPath = planFile()
    const approved = await wave(['approve', planPath, '--mode', 'bypassPermissions'])
    expect(approved.code, approved.stderr).toBe(0)
    server.push(reply(toolUse('Bash', {command: 'touch started; while [ ! -f go ]; do sleep 0.05; done'})), reply('First run done.'))
    const first = startWave(['run', planPath])
    await waitFor(() => existsSync(path.join(sandbox.repo, 'started')), 'the first run to be busy')
    // The first run asks the API about its model once its first response has begun, and keeps the answer
    // under WAVE_HOME/cache/models: written in the background, so the snapshot waits for it (a write
    // landing between the two snapshots failed this test on a loaded machine).
    const models = path.join(sandbox.home, '.wave', 'cache', 'models')
    await waitFor(() => existsSync(models) && readdirSync(models).some((name) => name.endsWith('.json')), "the first run's model look-up to be kept")

    const homeBefore = snapshotTree(sandbox.home)
    const repoBefore = snapshotTree(sandbox.repo)
    const second = await wave(['run', planPath])
    expect(second.code).toBe(1)
    expect(errorLine(second)).toMatch(/is already running \(pid \d+\)/)
    expect(snapshotTree(sandbox.home)).toEqual(homeBefore)
    expect(snapshotTree(sandbox.repo)).toEqual(repoBefore)
    expect(server.messageRequests).toHaveLength(1)

    writeFileSync(path.join(sandbox.repo, 'go'), '')
    const result = await first.done
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe('First run done.')
    const state = readJson(sidecar(planPath, '.state.json'))
    expect(state.runs).toHaveLength(1)
    expect(state.status).toBe('ran')
    expect(existsSync(sidecar(planPath, '.lock'))).toBe(false)
  })
})

describe.concurrent('secrets', () => {
  it('scrubs the key from an API error that echoes it, in text and JSON output', async ({t: {sandbox, server, wave}}) => {
    const echo = {error: {message: `invalid x-api-key: ${TEST_API_KEY}`, type: 'authentication_error'}}
    server.push(fault(401, echo), fault(401, echo))
    const text = await wave(['plan', '--task', 'Leak?'])
    const json = await wave(['plan', '--task', 'Leak?', '--json'])
    for (const result of [text, json]) {
      // A refused key is the user's to fix: exit 2, the variable named.
      expect(result.code).toBe(2)
      expect(result.stdout + result.stderr).not.toContain(TEST_API_KEY)
    }

    expect(errorLine(text)).toMatch(/status 401 .*invalid x-api-key: \[redacted\]/)
    expect(JSON.parse(json.stdout).error.message).toContain('[redacted]')
    keyNowhereIn(sandbox.home)
  })

  it('scrubs the key from a stream error event, the retry events and DEBUG stack traces', async ({t: {sandbox, server, wave}}) => {
    const broken = (): Reply => ({...reply('x'), streamError: {afterEvents: 2, message: `upstream said ${TEST_API_KEY}`, type: 'api_error'}})
    server.push(broken(), broken(), broken(), broken())
    const result = await wave(['plan', '--task', 'Leak?', '--output-format', 'stream-json'], {DEBUG: '1'})
    expect(result.code).toBe(1)
    expect(result.stdout + result.stderr).not.toContain(TEST_API_KEY)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.filter((e) => e.type === 'retry')).toHaveLength(3)
    expect(JSON.stringify(events)).toContain('upstream said [redacted]')
    keyNowhereIn(sandbox.home)
  })

  it("keeps the key out of a command's environment, and out of its output even when it digs for it", async ({t: {sandbox, server, wave, planFile}}) => {
    const planPath = planFile()
    server.push(
      reply(
        toolUse('Bash', {command: 'env'}),
        toolUse('Bash', {command: 'echo "key=[$ANTHROPIC_API_KEY]"'}),
        // The parent's environment is readable on Linux: what it finds is scrubbed from the result.
        toolUse('Bash', {command: "tr '\\0' '\\n' < /proc/$PPID/environ | grep ANTHROPIC_API_KEY || true"}),
      ),
      reply('Looked.'),
    )
    const result = await wave(['run', planPath, '--approve', '--mode', 'bypassPermissions', '--json'])
    expect(result.code, result.stderr).toBe(0)
    const [envResult, echoResult, digResult] = toolResults(server.messageRequests[1])
    expect(envResult.text).toContain('HOME=')
    expect(envResult.text).not.toContain('ANTHROPIC_API_KEY')
    expect(echoResult.text).toBe('key=[]')
    expect(digResult.text).not.toContain(TEST_API_KEY)
    for (const request of server.messageRequests) expect(request.rawBody).not.toContain(TEST_API_KEY)
    expect(result.stdout + result.stderr).not.toContain(TEST_API_KEY)
    keyNowhereIn(sandbox.home)
    keyNowhereIn(sandbox.repo)
  })
})

describe.concurrent('tools under stress, end to end (wave run in bypassPermissions)', () => {
  /** Runs one turn of calls in a bypassPermissions run; returns their results. */
  async function runCalls({planFile, server, wave}: Kit, ...calls: ReturnType<typeof toolUse>[]) {
    const planPath = planFile()
    server.push(reply(...calls), reply('Done.'))
    // Unsandboxed: these tests follow the commands' pids from the host (the sandboxed kill is tested in
    // test/unit/tools/bash.test.ts).
    const result = await wave(['run', planPath, '--approve', '--mode', 'bypassPermissions', '--sandbox', 'off'])
    expect(result.code, result.stderr).toBe(0)
    return toolResults(server.messageRequests[1])
  }

  it('Bash: stdin closed, timeout that kills the group, output capped head and tail, non-UTF-8 output kept', async ({t}) => {
    const {sandbox} = t
    const [stdin, timeout, stubborn, capped, bytes, ceiling] = await runCalls(
      t,
      toolUse('Bash', {command: 'read line; echo "read exit $?"'}),
      toolUse('Bash', {command: 'sleep 30 & echo $! > bg.pid; echo started; wait', timeout: 500}),
      // Ignores SIGTERM: SIGKILL follows after a grace period.
      toolUse('Bash', {command: "trap '' TERM; sleep 30 & echo $! > stubborn.pid; wait; wait", timeout: 300}),
      toolUse('Bash', {command: 'seq 1 200000'}),
      toolUse('Bash', {command: "printf 'caf\\xe9 \\xff\\xfe end\\n'"}),
      toolUse('Bash', {command: 'true', timeout: 600_001}),
    )
    expect(stdin.text).toBe('read exit 1')

    expect(timeout.text).toMatch(/^started\nCommand timed out after 500 ms and was killed\./)
    const background = Number(readFileSync(path.join(sandbox.repo, 'bg.pid'), 'utf8'))
    await waitFor(() => processGone(background), "the timed-out command's child to die", 5000)

    expect(stubborn.text).toMatch(/Command timed out after 300 ms and was killed\./)
    const stubbornPid = Number(readFileSync(path.join(sandbox.repo, 'stubborn.pid'), 'utf8'))
    await waitFor(() => processGone(stubbornPid), 'the command that ignores SIGTERM to die', 5000)

    expect(capped.text.startsWith('1\n2\n3\n')).toBe(true)
    expect(capped.text.endsWith('199999\n200000')).toBe(true)
    expect(capped.text).toMatch(/\[\.\.\. \d+ characters of output cut from the middle \.\.\.\]/)
    expect(capped.text.length).toBeLessThan(40_000)

    expect(bytes.is_error ?? false).toBe(false)
    expect(bytes.text).toBe('caf\uFFFD \uFFFD\uFFFD end')

    expect(ceiling).toMatchObject({is_error: true})
    expect(ceiling.text).toMatch(/Invalid input for Bash: .*timeout/)
  })

  it('Read, Glob and Grep: binary files described, large files paged, long lines cut, results capped', async ({t}) => {
    const {sandbox} = t
    writeFileSync(path.join(sandbox.repo, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]))
    writeFileSync(path.join(sandbox.repo, 'big.log'), Array.from({length: 5000}, (_, i) => `line ${i + 1}`).join('\n') + '\n')
    writeFileSync(path.join(sandbox.repo, 'wide.txt'), 'x'.repeat(5000) + '\nshort\n')
    mkdirSync(path.join(sandbox.repo, 'many'))
    for (let i = 0; i < 600; i++) writeFileSync(path.join(sandbox.repo, 'many', `f${i}.txt`), 'needle\n')
    writeFileSync(path.join(sandbox.repo, 'many', 'blob.bin'), Buffer.concat([Buffer.from('needle'), Buffer.alloc(10)]))

    const [binary, page, defaultPage, wide, glob, grep] = await runCalls(
      t,
      toolUse('Read', {file_path: 'image.png'}),
      toolUse('Read', {file_path: 'big.log', limit: 3, offset: 4990}),
      toolUse('Read', {file_path: 'big.log'}),
      toolUse('Read', {file_path: 'wide.txt'}),
      toolUse('Glob', {pattern: 'many/*'}),
      toolUse('Grep', {output_mode: 'files_with_matches', path: 'many', pattern: 'needle'}),
    )
    expect(binary.text).toBe('image.png: binary file, 16 bytes. Read shows text files only.')
    expect(page.text).toMatch(
      /^4990\tline 4990\n4991\tline 4991\n4992\tline 4992\n\n\(Showing lines 4990-4992 of 5000\. To read on, call Read with offset=4993\.\)$/,
    )
    expect(defaultPage.text).toMatch(/\(Showing lines 1-2000 of 5000\. To read on, call Read with offset=2001\.\)$/)
    expect(wide.text).toMatch(/x{2000}… \[line truncated: 3000 more characters\]\n2\tshort/)
    expect(glob.text).toMatch(/\(truncated: showing 500 of 601 matches; narrow the pattern or path\)$/)
    expect(grep.text).not.toContain('blob.bin')
    expect(grep.text).toMatch(/truncated|more|showing/i)
  })

  it('Edit: exactly one match unless replace_all, clear errors, line endings and file mode kept, writes atomic', async ({t}) => {
    const {sandbox} = t
    writeFileSync(path.join(sandbox.repo, 'crlf.txt'), 'one\r\ntwo\r\nthree\r\n')
    writeFileSync(path.join(sandbox.repo, 'twice.txt'), 'same\nsame\n')
    writeFileSync(path.join(sandbox.repo, 'run.sh'), '#!/bin/sh\necho old\n')
    chmodSync(path.join(sandbox.repo, 'run.sh'), 0o755)
    const before = readFileSync(path.join(sandbox.repo, 'twice.txt'), 'utf8')

    const [missing, ambiguous, crlf, all, mode, write] = await runCalls(
      t,
      toolUse('Edit', {file_path: 'twice.txt', new_string: 'other', old_string: 'absent'}),
      toolUse('Edit', {file_path: 'twice.txt', new_string: 'other', old_string: 'same'}),
      toolUse('Edit', {file_path: 'crlf.txt', new_string: 'TWO\nTWO-B', old_string: 'two'}),
      toolUse('Edit', {file_path: 'twice.txt', new_string: 'other', old_string: 'same', replace_all: true}),
      toolUse('Edit', {file_path: 'run.sh', new_string: 'echo new', old_string: 'echo old'}),
      toolUse('Write', {content: '#!/bin/sh\necho rewritten\n', file_path: 'run.sh'}),
    )
    expect(missing).toMatchObject({is_error: true})
    expect(missing.text).toMatch(/old_string was not found in twice\.txt/)
    expect(ambiguous).toMatchObject({is_error: true})
    expect(ambiguous.text).toMatch(/old_string occurs 2 times in twice\.txt.*replace_all/)
    expect(crlf.is_error ?? false).toBe(false)
    expect(all.text).toMatch(/replaced 2 occurrences/)
    expect(mode.is_error ?? false).toBe(false)
    expect(write.is_error ?? false).toBe(false)

    expect(before).toBe('same\nsame\n')
    expect(readFileSync(path.join(sandbox.repo, 'twice.txt'), 'utf8')).toBe('other\nother\n')
    expect(readFileSync(path.join(sandbox.repo, 'crlf.txt'), 'utf8')).toBe('one\r\nTWO\r\nTWO-B\r\nthree\r\n')
    expect(readFileSync(path.join(sandbox.repo, 'run.sh'), 'utf8')).toBe('#!/bin/sh\necho rewritten\n')
    expect(statSync(path.join(sandbox.repo, 'run.sh')).mode & 0o777).toBe(0o755)
    noTemporaryFiles(sandbox.repo)
    noTemporaryFiles(sandbox.home)
  })
})
