/**
 * Reads of one turn run together (issue 24, item 6), judged by what a web server saw: three WebFetch
 * calls of one turn are held by the server until all three have arrived, so they can only all be
 * answered if they were in flight at once; their time spans, as the server recorded them, overlap.
 * The server answers them in reverse order, and the model still gets the results in call order. The
 * control: a write between two reads splits them, and the read after it sees what it wrote.
 */
import {readFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {type Sandbox, startWave, waitFor} from '../support/cli.js'
import {type MessagesServer, planPathIn, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

/**
 * How long the web server holds the first request for the others; past it, it answers what it holds
 * (and the overlap assertion fails). Below WebFetch's own timeout, and long enough for a loaded machine.
 */
const GATHER_DEADLINE_MS = 15_000

interface Span {
  page: string
  start: number
  end?: number
}

let web: Server
let port: number
let spans: Span[]
/** The number of requests the server waits for before it answers any. */
let gather: number

/**
 * How many results wave has streamed so far: the server answers the next held request only once wave
 * has reported the one before, so the order a script sees is the order the server answered (no race
 * between three responses in flight on the client). Unset, the server answers one after another at once.
 */
let resultsStreamed: (() => number) | undefined

beforeEach(async () => {
  spans = []
  gather = 1
  resultsStreamed = undefined
  const held: Array<() => void> = []
  let deadline: NodeJS.Timeout | undefined
  let answered = 0
  // Answers the held requests one after another, the last to arrive first: each when wave has taken the one before it.
  const answerNext = async () => {
    const respond = held.pop()
    if (!respond) return
    respond()
    answered++
    const count = resultsStreamed
    // Past the deadline it answers anyway: a wave that held its results back then fails the order assertions below.
    if (count) await waitFor(() => count() >= answered, `wave to stream result ${answered}`, GATHER_DEADLINE_MS).catch(() => {})
    await answerNext()
  }

  const release = () => {
    clearTimeout(deadline)
    deadline = undefined
    void answerNext()
  }

  web = createServer((req, res) => {
    const span: Span = {page: req.url ?? '', start: performance.now()}
    spans.push(span)
    held.push(() => {
      res.on('finish', () => {
        span.end = performance.now()
      })
      res.writeHead(200, {'content-type': 'text/plain'}).end(`page ${span.page}`)
    })
    if (held.length >= gather) release()
    else deadline ??= setTimeout(release, GATHER_DEADLINE_MS)
  })
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
  port = (web.address() as AddressInfo).port
})

afterEach(async () => {
  web.closeAllConnections()
  await new Promise((resolve) => web.close(resolve))
})

const url = (page: string) => `http://127.0.0.1:${port}${page}`
const fetchCall = (page: string) => toolUse('WebFetch', {url: url(page)})
const ALLOW = ['--allow', 'WebFetch(domain:127.0.0.1)']

describe('parallel reads', () => {
  it(
    'runs three reads of one turn at once, and returns their results in call order',
    async () => {
      gather = 3
      server.push(
        reply(fetchCall('/one'), fetchCall('/two'), fetchCall('/three')),
        (request) => reply(toolUse('Write', {content: '# Plan\n\nRead three pages.\n', file_path: planPathIn(request)})),
        reply('Planned.'),
      )
      const started = startWave(['plan', '--task', 'Read three pages', '--output-format', 'stream-json', ...ALLOW], {
        cwd: sandbox.repo,
        home: sandbox.home,
        server,
        timeoutMs: 3 * GATHER_DEADLINE_MS,
      })
      resultsStreamed = () =>
        started
          .stdout()
          .split('\n')
          .filter((line) => line.includes('"type":"tool_result"')).length
      const result = await started.done
      expect(result.code, result.stderr).toBe(0)

      // All three were in flight together: each started before any of them ended.
      expect(spans.map((span) => span.page).sort()).toEqual(['/one', '/three', '/two'])
      const lastStart = Math.max(...spans.map((span) => span.start))
      const firstEnd = Math.min(...spans.map((span) => span.end ?? Number.POSITIVE_INFINITY))
      expect(lastStart, 'every request arrived before the first was answered').toBeLessThan(firstEnd)

      // Answered last to first, returned in call order.
      const results = toolResults(server.messageRequests[1])
      expect(results.map((r) => [r.is_error ?? false, r.text.split('\n').at(-1)])).toEqual([
        [false, 'page /one'],
        [false, 'page /two'],
        [false, 'page /three'],
      ])

      // What a script sees: each call's start, then the results as they ended, in the order the server answered them.
      const events = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
      const tools = events.filter((e) => e.type === 'tool_call' || e.type === 'tool_result').slice(0, 6)
      expect(tools.map((e) => e.type)).toEqual(['tool_call', 'tool_call', 'tool_call', 'tool_result', 'tool_result', 'tool_result'])
      const pageOf = new Map(tools.slice(0, 3).map((e) => [e.id, new URL(e.input.url).pathname]))
      const answered = [...spans].sort((a, b) => (a.end ?? 0) - (b.end ?? 0)).map((span) => span.page)
      expect(tools.slice(3).map((e) => pageOf.get(e.id))).toEqual(answered)
      // Run one after another, the calls would each wait out the deadline: room for that to fail by the assertions above.
    },
    4 * GATHER_DEADLINE_MS,
  )

  it('runs a write alone: the reads around it do not overlap it, and the read after it sees what it wrote', async () => {
    server.push(
      (request) =>
        reply(
          fetchCall('/before'),
          toolUse('Write', {content: '# Plan\n\nFirst version.\n', file_path: planPathIn(request)}),
          toolUse('Read', {file_path: planPathIn(request)}),
          fetchCall('/after'),
        ),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Write then read', ...ALLOW])
    expect(result.code, result.stderr).toBe(0)
    const planPath = result.stdout.trim()
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\nFirst version.\n')

    const [before, write, read, after] = toolResults(server.messageRequests[1])
    expect(before.text).toContain('page /before')
    expect(write.is_error ?? false).toBe(false)
    expect(read.text).toContain('First version.')
    expect(after.text).toContain('page /after')
    // The read before the write had ended before the read after it started.
    const [first, second] = spans
    expect(spans.map((span) => span.page)).toEqual(['/before', '/after'])
    expect(first.end).toBeLessThan(second.start)
  })
})
