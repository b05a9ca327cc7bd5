/**
 * Issue #24, thinking end to end against the strict scripted server: a model that thinks before its
 * calls, between them in one turn, and in redacted blocks. The session completes; every thinking block
 * goes back unchanged and signed on the requests after it (the server refuses anything else, and the
 * test reads what it received); thinking never reaches stdout nor the plan file; it is counted in the
 * usage the result reports; stream-json shows it as its own `thinking` event.
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {
  type MessagesServer,
  planPathIn,
  type RecordedRequest,
  redactedThinking,
  reply,
  signThinking,
  text,
  thinking,
  toolUse,
} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

// Long enough that its tokens show in the usage: ~1,500 tokens of thinking against a few words of text.
const FIRST = `THOUGHT-ONE: the README first, then the sources. ${'Weighing the options carefully. '.repeat(60)}`
const BETWEEN = 'THOUGHT-BETWEEN: README read; the util module next.'
const LAST = 'THOUGHT-LAST: enough seen, the plan can be written.'
const THOUGHTS = [FIRST, BETWEEN, LAST]

type Block = {type: string; thinking?: string; signature?: string; data?: string; name?: string}
const assistantTurns = (request: RecordedRequest): Block[][] =>
  (request.body.messages as Array<{role: string; content: string | Block[]}>)
    .filter((message) => message.role === 'assistant')
    .map((message) => (typeof message.content === 'string' ? [{type: 'text'}] : message.content))

/** A planning session that thinks before a call, between two calls of one turn, and redacted before the Write. */
function pushThinkingPlan(): void {
  server.push(
    reply(thinking(FIRST), toolUse('Read', {file_path: 'README.md'}), thinking(BETWEEN), toolUse('Read', {file_path: 'src/util.ts'})),
    (request) => reply(thinking(LAST), redactedThinking(), toolUse('Write', {content: '# Plan\n\n1. Greet louder.\n', file_path: planPathIn(request)})),
    reply(text('Planned: one step.'), toolUse('ExitPlanMode', {})),
  )
}

describe('a model that thinks', () => {
  it('a plan completes; every thinking block goes back unchanged and signed, in order, on every later request', async () => {
    pushThinkingPlan()
    const result = await wave(['plan', '--task', 'Make greet louder', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(server.invalidRequests).toEqual([])
    expect(server.messageRequests).toHaveLength(3)
    for (const request of server.messageRequests) expect(request.body.thinking).toEqual({type: 'adaptive'})

    // The last request holds the whole conversation: each assistant turn with its thinking as issued.
    const turns = assistantTurns(server.messageRequests[2])
    expect(turns[0].map((block) => block.type)).toEqual(['thinking', 'tool_use', 'thinking', 'tool_use'])
    expect(turns[0][0]).toMatchObject({signature: signThinking(FIRST), thinking: FIRST})
    expect(turns[0][2]).toMatchObject({signature: signThinking(BETWEEN), thinking: BETWEEN})
    // The newest turn, mid-tool-loop: the server compared it with what it issued (any change is a 400, and there was none).
    expect(turns[1].map((block) => block.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use'])
    expect(turns[1][0]).toMatchObject({signature: signThinking(LAST), thinking: LAST})
    // The first turn again, one request later: unchanged.
    expect(assistantTurns(server.messageRequests[1])[0]).toEqual(turns[0])

    // Never on stdout, never in the plan; counted in the usage.
    const json = JSON.parse(result.stdout)
    for (const thought of THOUGHTS) expect(result.stdout).not.toContain(thought.slice(0, 20))
    const plan = readFileSync(json.planPath, 'utf8')
    expect(plan).toBe('# Plan\n\n1. Greet louder.\n')
    // The server counts every output block (thinking included) as output tokens: ~4 bytes each.
    expect(json.usage.output_tokens).toBeGreaterThan(FIRST.length / 4)
  })

  it('a run that thinks between tool calls completes, the thinking sent back, never printed', async () => {
    const planPath = path.join(sandbox.plansDir, 'deep-thought.md')
    mkdirSync(sandbox.plansDir, {recursive: true})
    writeFileSync(planPath, '# Plan\n\n1. Write notes.txt.\n')
    const approved = await wave(['approve', planPath])
    expect(approved.code, approved.stderr).toBe(0)

    server.push(
      reply(thinking(FIRST), toolUse('LS', {path: '.'}), thinking(BETWEEN), toolUse('Write', {content: 'notes\n', file_path: 'notes.txt'})),
      reply(thinking(LAST), toolUse('Read', {file_path: 'notes.txt'})),
      reply('Wrote notes.txt.'),
    )
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe('Wrote notes.txt.')
    expect(readFileSync(path.join(sandbox.repo, 'notes.txt'), 'utf8')).toBe('notes\n')
    expect(server.invalidRequests).toEqual([])
    const turns = assistantTurns(server.messageRequests[2])
    expect(turns[0].filter((block) => block.type === 'thinking').map((block) => block.thinking)).toEqual([FIRST, BETWEEN])
    expect(turns[1][0]).toMatchObject({signature: signThinking(LAST), thinking: LAST})
    for (const thought of THOUGHTS) expect(result.stdout + result.stderr).not.toContain(thought.slice(0, 20))
  })

  it('stream-json shows each thought as a `thinking` event, apart from the assistant text', async () => {
    pushThinkingPlan()
    const result = await wave(['plan', '--task', 'Make greet louder', '--output-format', 'stream-json'])
    expect(result.code, result.stderr).toBe(0)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const thoughts = events.filter((event) => event.type === 'thinking')
    expect(thoughts.map((event) => event.text)).toEqual(THOUGHTS)
    for (const event of thoughts) expect(event.version).toBe(1)
    const said = events.filter((event) => event.type === 'assistant').map((event) => event.text)
    expect(said).toEqual(['Planned: one step.'])
    // In order: the first thought before the first call.
    const firstThought = events.findIndex((event) => event.type === 'thinking')
    const firstCall = events.findIndex((event) => event.type === 'tool_call')
    expect(firstThought).toBeLessThan(firstCall)
  })
})

describe('thinking through a compaction', () => {
  it('a run that thinks and outgrows its window completes: the compacted conversation is still one the API takes', async () => {
    const big = `${'const x = 1\n'.repeat(8000)}`
    mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({contextWindow: 30_000}))
    // A summary request (no tools) gets a summary; every other request the next scripted turn.
    const turns = [
      reply(thinking(FIRST), toolUse('Write', {content: big, file_path: 'big.ts'})),
      reply(thinking(BETWEEN), toolUse('LS', {path: '.'})),
      reply(thinking(LAST), toolUse('Read', {file_path: 'README.md'}), thinking(BETWEEN), toolUse('LS', {path: 'src'})),
      reply(thinking(LAST), toolUse('LS', {path: '.'})),
      reply('Done.'),
    ]
    const router = (request: RecordedRequest) => (request.body.tools ? (turns.shift() ?? reply('Done.')) : reply('Summary: wrote big.ts, looked around.'))
    server.push(...Array.from({length: 12}, () => router))
    const result = await wave(['run', '--task', 'Write big.ts, then look around', '--output-format', 'stream-json'])

    expect(result.code, result.stderr).toBe(0)
    expect(server.invalidRequests).toEqual([])
    expect(readFileSync(path.join(sandbox.repo, 'big.ts'), 'utf8')).toBe(big)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.some((event) => event.type === 'compaction')).toBe(true)
    // Every thinking block still in a request is the one issued, signed.
    for (const request of server.messageRequests.filter((r) => r.body.tools)) {
      for (const block of assistantTurns(request).flat()) {
        if (block.type === 'thinking') expect(block.signature).toBe(signThinking(block.thinking!))
      }
    }
  })
})

describe('thinking across --resume', () => {
  it('a run stopped mid-tool-loop resumes with its thinking sent back as issued', async () => {
    const planPath = path.join(sandbox.plansDir, 'paused-thought.md')
    mkdirSync(sandbox.plansDir, {recursive: true})
    writeFileSync(planPath, '# Plan\n\n1. Write notes.txt.\n')
    expect((await wave(['approve', planPath])).code).toBe(0)
    server.push(reply(thinking(FIRST), toolUse('Write', {content: 'notes\n', file_path: 'notes.txt'})))
    const first = await wave(['run', planPath, '--max-turns', '1'])
    expect(first.code).toBe(5)

    server.push(reply('Resumed and done.'))
    const resumed = await wave(['run', planPath, '--resume'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(server.invalidRequests).toEqual([])
    const [turn] = assistantTurns(server.messageRequests.at(-1)!)
    expect(turn[0]).toEqual({signature: signThinking(FIRST), thinking: FIRST, type: 'thinking'})
    expect(resumed.stdout + resumed.stderr).not.toContain(FIRST.slice(0, 20))
  })
})
