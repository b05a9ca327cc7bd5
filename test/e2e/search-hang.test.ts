/**
 * Issue #12: a search can never hang wave. A model's catastrophic patterns (for Grep and for Glob) get
 * an answer and the session goes on; a search that would run for minutes still lets SIGTERM and SIGINT
 * end wave at once, with the design's exit code.
 */
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {makeSandbox, runWave, type Sandbox, startWave, waitFor, writePlanFile} from '../support/cli.js'
import {type MessagesServer, reply, startMessagesServer, toolResults, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer

beforeEach(async () => {
  sandbox = makeSandbox()
  server = await startMessagesServer()
})

afterEach(async () => {
  await server.close()
  sandbox.cleanup()
})

const PLAN = '# Plan\n\n1. Search the repository.\n'

/** `length` characters from `alphabet`, the same every run. */
function pseudoRandom(alphabet: string, length: number): string {
  const chars: string[] = []
  let state = 7
  for (let i = 0; i < length; i++) {
    state = (state * 1_103_515_245 + 12_345) & 0x7f_ff_ff_ff
    chars.push(alphabet[(state >> 8) % alphabet.length])
  }

  return chars.join('')
}

describe('catastrophic patterns', () => {
  it('Grep and Glob answer at once and the session goes on', async () => {
    // Each pattern below takes a backtracking engine hours on these lines and names.
    const long = 'a'.repeat(200)
    writeFileSync(path.join(sandbox.repo, 'evil.txt'), `${'a'.repeat(50)}b\n${'a'.repeat(60)}\n`)
    writeFileSync(path.join(sandbox.repo, 'minified.js'), `${'x'.repeat(500_000)}\n`)
    writeFileSync(path.join(sandbox.repo, long), 'hello\n')
    const planPath = writePlanFile(sandbox, PLAN, 'search-hang')
    server.push(
      reply(
        toolUse('Grep', {output_mode: 'content', pattern: '^(a+)+$'}),
        toolUse('Grep', {pattern: '(x+x+)+y'}),
        toolUse('Grep', {glob: '*a*a*a*a*a*a*a*a*a*a*b', pattern: 'a'}),
        toolUse('Glob', {pattern: '*a*a*a*a*a*a*a*a*a*a*b'}),
        toolUse('Grep', {pattern: String.raw`(a)\1`}),
      ),
      reply('Searched.'),
    )

    // A search that hung would meet the harness's deadline (SIGKILL, timedOut) instead of an answer.
    const result = await runWave(['run', planPath, '--approve', '--mode', 'acceptEdits'], {cwd: sandbox.repo, home: sandbox.home, server, timeoutMs: 20_000})

    expect(result.code, result.stderr).toBe(0)
    expect(result.timedOut).toBe(false)
    expect(result.stdout.trim()).toBe('Searched.')
    const results = toolResults(server.messageRequests[1]).map((r) => [r.is_error ?? false, r.text])
    expect(results).toEqual([
      [false, `evil.txt:2:${'a'.repeat(60)}`],
      [false, 'No files found'],
      [false, 'No files found'],
      [false, 'No files found'],
      [true, expect.stringMatching(/^Backreferences \(\\1\) are not supported: Grep uses a linear-time engine/)],
    ])
  })
})

describe('interruption during a long search', () => {
  it.for([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('%s ends wave (exit %i) while a search would run for minutes', async ([signal, exitCode]) => {
    // RE2 is linear in the text, but this program has 10,003 instructions: ~130 µs a byte, minutes for
    // this file. The file goes to a worker thread; the main thread stays free for the signal.
    writeFileSync(path.join(sandbox.repo, 'big.txt'), `${pseudoRandom('abcdefghij', 1_000_000)}!\n`)
    const planPath = writePlanFile(sandbox, PLAN, 'search-interrupt')
    server.push(reply(toolUse('Grep', {pattern: '(?:a|b|c|d|e|f|g|h|i|j|ab|bc|cd){1000}!'})), reply('never reached'))
    const session = startWave(['run', planPath, '--approve', '--mode', 'acceptEdits'], {cwd: sandbox.repo, home: sandbox.home, server, timeoutMs: 20_000})
    // The progress line of the call is written as the search starts.
    await waitFor(() => session.stderr().includes('→ Grep'), 'the Grep call to start')

    session.child.kill(signal)
    const result = await session.done

    // Ended by the signal, not by the harness's SIGKILL at its deadline.
    expect(result.signal, result.stderr).toBeNull()
    expect(result.code, result.stderr).toBe(exitCode)
    expect(result.stderr).toContain(`Interrupted by ${signal}.`)
    // The search never finished: no second turn was requested.
    expect(server.messageRequests).toHaveLength(1)
  })
})
