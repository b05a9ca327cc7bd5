/**
 * The agent loop in process (seconds, not minutes): runAgent with a real SDK client against the scripted
 * Messages API server. What is asserted is what a user would check: files on disk, the error's exit code
 * and details, what the model was sent.
 */
import {existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'

import Anthropic from '@anthropic-ai/sdk'
import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {stoppedBy, stoppedError} from '../../../src/agent/outcome.js'
import {ExitCode, WaveError} from '../../../src/base/errors.js'
import {NO_RULES} from '../../../src/policy/policy.js'
import {type AgentEvent, type AgentOutcome, outcomeDetails, type RequestShape} from '../../../src/agent/loop.js'
import {agentLoop, type LoopBinding} from '../../../src/session/session.js'
import {costOf, roundUsd} from '../../../src/model/pricing.js'
import {builtinRegistry} from '../../../src/tools/registry.js'
import {
  cutToolUse,
  fault,
  type MessagesServer,
  type RecordedRequest,
  reply,
  startMessagesServer,
  systemText,
  toolResults,
  toolUse,
  type Turn,
} from '../../support/messages-server.js'

const TASK = 'Task:\nWrite the release notes to notes.md.'
/** A model whose limits and prices wave knows: a 1M window, 128k output. */
const KNOWN = 'claude-sonnet-5-5'

let server: MessagesServer
let workspace: string

beforeEach(async () => {
  server = await startMessagesServer()
  workspace = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-loop-')))
})

afterEach(async () => {
  await server.close()
  rmSync(workspace, {force: true, recursive: true})
})

interface Session {
  result?: AgentOutcome
  error?: WaveError
  events: AgentEvent[]
  messages: MessageParam[]
  /** What onCompacted was given, each time. */
  compacted: MessageParam[][]
}

/** Runs the loop against the server in acceptEdits (Write and Edit allowed in the workspace). */
async function session(overrides: Partial<LoopBinding> & {maxRetries?: number; baseURL?: string} = {}): Promise<Session> {
  const {baseURL, maxRetries, ...options} = overrides
  const client = new Anthropic({apiKey: 'test-key', baseURL: baseURL ?? server.url, maxRetries: maxRetries ?? 2})
  const events: AgentEvent[] = []
  const compacted: MessageParam[][] = []
  const messages: MessageParam[] = [{content: TASK, role: 'user'}]
  const refuse = async (): Promise<string> => {
    throw new Error('no session control here')
  }

  const out: Session = {compacted, events, messages}
  try {
    const outcome = await agentLoop({
      client,
      maxTurns: 20,
      messages,
      model: KNOWN,
      onCompacted: (now) => {
        compacted.push(structuredClone(now))
      },
      onEvent: (event) => events.push(event),
      policy: () => ({headless: true, mode: 'acceptEdits', rules: NO_RULES, workspaceRoot: workspace}),
      registry: builtinRegistry(),
      session: {enterPlanMode: refuse, exitPlanMode: refuse},
      signal: new AbortController().signal,
      system: () => 'You are a careful engineer.',
      ...options,
    }).run()
    // A session stopped before it finished: the line, hint and exit code a command reports for it (ENDINGS).
    const stopped = stoppedBy(outcome, outcomeDetails(outcome))
    if (stopped) throw stoppedError(stopped)
    out.result = outcome
  } catch (error) {
    if (!(error instanceof WaveError)) throw error
    out.error = error
  }

  return out
}

const requests = () => server.messageRequests
const file = (name: string) => path.join(workspace, name)
const NOTES = `# Release notes\n\n${'- a change worth noting\n'.repeat(40)}`

describe('a tool call cut at max_tokens', () => {
  it("never runs: the same request goes again with the model's whole output limit, and the complete call runs once", async () => {
    server.push(
      (request) => {
        expect(request.body.max_tokens).toBe(16_000)
        return reply('Writing.', cutToolUse('Write', {content: NOTES, file_path: 'notes.md'}))
      },
      (request) => {
        // Nothing of the cut response ran or was kept: the same conversation, a larger limit.
        expect(existsSync(file('notes.md'))).toBe(false)
        expect(request.body.max_tokens).toBe(128_000)
        expect(request.body.messages).toEqual(requests()[0].body.messages)
        return reply(toolUse('Write', {content: NOTES, file_path: 'notes.md'}))
      },
      reply('Done.'),
    )
    const {result, events} = await session()

    expect(result?.finalText).toBe('Done.')
    expect(readFileSync(file('notes.md'), 'utf8')).toBe(NOTES)
    expect(events).toContainEqual({action: 'raise', maxTokens: 16_000, turn: 1, type: 'output_limit'})
    expect(result?.turns).toBe(2)
  })

  it('still cut at the limit: nothing is written, every call of the turn gets an error asking for smaller pieces', async () => {
    writeFileSync(file('keep.md'), 'untouched\n')
    server.push(
      reply(
        toolUse('Edit', {file_path: 'keep.md', new_string: 'changed', old_string: 'untouched'}),
        cutToolUse('Write', {content: NOTES, file_path: 'notes.md'}),
      ),
      (request) => {
        expect(existsSync(file('notes.md'))).toBe(false)
        expect(readFileSync(file('keep.md'), 'utf8')).toBe('untouched\n')
        const [edit, write] = toolResults(request)
        expect(edit).toMatchObject({is_error: true})
        expect(edit.text).toMatch(/none of its calls ran/)
        expect(write).toMatchObject({is_error: true})
        expect(write.text).toMatch(/cut off at the output limit \(max_tokens 128000\).*smaller pieces/)
        return reply(toolUse('Write', {content: '# Release notes\n', file_path: 'notes.md'}))
      },
      reply('Done in pieces.'),
    )
    // Already at the model's output limit: no larger request to make.
    const {result, events} = await session({maxTokens: 128_000})

    expect(result?.finalText).toBe('Done in pieces.')
    expect(readFileSync(file('notes.md'), 'utf8')).toBe('# Release notes\n')
    expect(requests()).toHaveLength(3)
    expect(events.filter((e) => e.type === 'output_limit').map((e) => (e as {action: string}).action)).toEqual(['smaller_pieces'])
  })

  it('for a model without known limits, goes straight to the error result', async () => {
    server.push(reply(cutToolUse('Write', {content: NOTES, file_path: 'notes.md'})), reply('Understood.'))
    const {result} = await session({model: 'claude-test'})
    expect(existsSync(file('notes.md'))).toBe(false)
    expect(requests()[1].body.max_tokens).toBe(16_000)
    expect(toolResults(requests()[1])[0]).toMatchObject({is_error: true})
    expect(result?.finalText).toBe('Understood.')
  })
})

describe('stop reasons', () => {
  it("a refusal ends the session with exit 6 and what it did, running none of the refused turn's calls", async () => {
    server.push(reply(toolUse('Write', {content: 'x', file_path: 'first.md'})), {
      ...reply("I can't help with that.", toolUse('Write', {content: 'x', file_path: 'refused.md'})),
      stop_details: {category: 'cyber', explanation: null, type: 'refusal'},
      stop_reason: 'refusal',
    })
    const {error} = await session()

    expect(error?.exitCode).toBe(ExitCode.refused)
    expect(error?.exitCode).toBe(6)
    expect(error?.message).toMatch(/refused.*stop_reason refusal, category cyber/)
    expect(existsSync(file('refused.md'))).toBe(false)
    expect(error?.details).toMatchObject({filesChanged: [file('first.md')], stopReason: 'refusal', turns: 2})
    expect((error?.details?.usage as {input_tokens: number} | undefined)?.input_tokens).toBeGreaterThan(0)
    expect(error?.details?.costUsd).toBeGreaterThan(0)
  })

  it('a final answer cut at max_tokens gets one continuation, and the parts make the answer', async () => {
    server.push({...reply('The release adds'), stop_reason: 'max_tokens'}, (request) => {
      expect(request.body.max_tokens).toBe(128_000)
      expect(request.body.messages.at(-2)).toMatchObject({content: [{text: 'The release adds', type: 'text'}], role: 'assistant'})
      expect(JSON.stringify(request.body.messages.at(-1).content)).toMatch(/cut off at the output limit. Continue/)
      return reply(' three flags.')
    })
    const {result} = await session()
    expect(result?.finalText).toBe('The release adds three flags.')
    expect(result?.stopReason).toBe('end_turn')
  })

  it('a final answer that stays cut after the continuation exits 6 naming max_tokens', async () => {
    server.push({...reply('Part one'), stop_reason: 'max_tokens'}, {...reply('Part two'), stop_reason: 'max_tokens'})
    const {error} = await session()
    expect(error?.exitCode).toBe(6)
    expect(error?.message).toMatch(/max_tokens/)
    expect(error?.details).toMatchObject({stopReason: 'max_tokens', turns: 2})
    expect(requests()).toHaveLength(2)
  })

  it('pause_turn goes on: the paused turn is sent back as it is, and the answer continues it', async () => {
    server.push({...reply('Searching'), stop_reason: 'pause_turn'}, (request) => {
      expect(request.body.messages.at(-1)).toMatchObject({content: [{text: 'Searching', type: 'text'}], role: 'assistant'})
      return reply(', found it.')
    })
    const {result} = await session()
    expect(result?.finalText).toBe('Searching, found it.')
    expect(result?.turns).toBe(2)
  })
})

/**
 * Scripts the server with `turns` for the session's requests, answering summary requests (no tools
 * offered) with a summary wherever they come.
 */
function script(turns: Turn[], summary = 'Summary: read the sources; next, write the notes.'): void {
  const router: Turn = (request: RecordedRequest) => {
    if (!request.body.tools) return reply(summary)
    const next = turns.shift()
    if (!next) throw new Error('the test script ran out of turns')
    return typeof next === 'function' ? next(request) : next
  }
  server.push(...Array.from({length: turns.length * 2}, () => router))
}

/** Source files of about `size` characters each (lines of 60), named a.txt, b.txt, ... */
function sources(count: number, size: number): string[] {
  return Array.from({length: count}, (_, index) => {
    const name = `${String.fromCodePoint(97 + index)}.txt`
    writeFileSync(file(name), `${name}\n${`${'x'.repeat(59)}\n`.repeat(Math.ceil(size / 60))}`)
    return name
  })
}

describe('compaction', () => {
  it('when the API refuses the prompt as too long, clears old tool results and goes on; the first message stays verbatim', async () => {
    // Results large beside the tool definitions, so that clearing them halves the prompt.
    const names = sources(12, 4000)
    const last = names.pop()!
    let limit = 0
    script([
      reply(toolUse('Write', {content: '# Notes\n', file_path: 'notes.md'})),
      ...names.map((name) => reply(toolUse('Read', {file_path: name}))),
      (request) => {
        // From the next request on (one more result), the prompt no longer fits.
        limit = request.rawBody.length + 1000
        server.limitPrompt(limit)
        return reply(toolUse('Read', {file_path: last}))
      },
      reply('Done.'),
    ])
    const {result, events, compacted, error} = await session()
    expect(error?.message).toBeUndefined()
    expect(result?.finalText).toBe('Done.')
    const tooLong = requests().filter((r) => r.outcome === 'too-long')
    expect(tooLong).toHaveLength(1)
    const [compaction] = events.filter((e) => e.type === 'compaction')
    expect(compaction).toMatchObject({summarizedMessages: 0, trigger: 'prompt_too_long', type: 'compaction'})
    expect((compaction as {clearedToolResults: number}).clearedToolResults).toBeGreaterThan(0)
    expect((compaction as {tokensAfter: number}).tokensAfter).toBeLessThan((compaction as {tokensBefore: number}).tokensBefore)
    // Clearing was enough: no summary was asked for.
    expect(requests().every((r) => r.body.tools)).toBe(true)

    // What the model was sent next: the same request, the task first and verbatim, old results cleared, pairs kept.
    const after = requests()[tooLong[0].index + 1]
    expect(after.rawBody.length).toBeLessThan(limit / 2)
    expect(after.body.messages[0]).toEqual({content: TASK, role: 'user'})
    expect(after.body.messages).toHaveLength(tooLong[0].body.messages.length)
    const blocks = after.body.messages.flatMap((m: {content: unknown}) => (Array.isArray(m.content) ? m.content : []))
    const cleared = blocks.filter(
      (b: {type: string; content?: unknown}) => b.type === 'tool_result' && String(b.content).startsWith('[wave cleared this tool result'),
    )
    expect(cleared.length).toBe((compaction as {clearedToolResults: number}).clearedToolResults)
    expect(String(cleared[0].content)).toMatch(/the result of Read a\.txt, \d+ characters\. Call the tool again/)
    const answered = new Set(blocks.filter((b: {type: string}) => b.type === 'tool_result').map((b: {tool_use_id: string}) => b.tool_use_id))
    for (const use of blocks.filter((b: {type: string}) => b.type === 'tool_use')) expect(answered.has(use.id)).toBe(true)
    // The transcript hook got the compacted conversation.
    expect(compacted[0][0]).toEqual({content: TASK, role: 'user'})
  })

  it('summarises older turns when clearing is not enough, keeping the task and the files changed', async () => {
    const names = sources(6, 6000)
    script([
      reply(toolUse('Write', {content: '# Notes\n', file_path: 'notes.md'})),
      ...names.map((name) =>
        reply(`Reading ${name}, which matters for the notes because ${'of many details '.repeat(60)}`, toolUse('Read', {file_path: name})),
      ),
      reply('Done.'),
    ])
    // A small window (settings' contextWindow): the loop compacts before the API would refuse.
    const {result, events, error} = await session({contextWindow: 12_000})
    expect(error?.message).toBeUndefined()

    expect(result?.finalText).toBe('Done.')
    expect(requests().filter((r) => r.outcome === 'too-long')).toHaveLength(0)
    const summaries = requests().filter((r) => !r.body.tools)
    expect(summaries.length).toBeGreaterThan(0)
    expect(systemText(summaries[0])).toMatch(/summarise/)
    const compaction = events.find((e) => e.type === 'compaction' && e.summarizedMessages > 0)
    expect(compaction).toMatchObject({trigger: 'near_window'})

    const after = requests().find((r) => r.index > summaries[0].index && r.body.tools)!
    const [first] = after.body.messages
    expect(first.content[0]).toMatchObject({text: TASK, type: 'text'})
    expect(first.content[1].text).toMatch(/Summary: read the sources/)
    expect(first.content[1].text).toContain(`Files changed so far:\n- ${file('notes.md')}`)
    // The system prompt is untouched, and caching goes on: the newest turn is the breakpoint.
    expect(systemText(after)).toBe('You are a careful engineer.')
    expect(after.body.messages.at(-1).content.at(-1).cache_control).toEqual({type: 'ephemeral'})
  })
})

describe('cost and budget', () => {
  it('reports what the session cost, from the price table', async () => {
    server.push(reply('Nothing to do.'))
    const {result, events} = await session()
    const usage = requests()[0]
    expect(usage).toBeDefined()
    // Reported to a millionth of a dollar (tally.ts): the price table's figure, rounded.
    expect(result?.costUsd).toBe(roundUsd(costOf(KNOWN, result!.usage)!))
    expect(result!.costUsd).toBeGreaterThan(0)
    expect(events.find((e) => e.type === 'usage')).toMatchObject({costUsd: result?.costUsd})
  })

  it('null for a model without a price', async () => {
    server.push(reply('Nothing to do.'))
    const {result} = await session({model: 'claude-test'})
    expect(result?.costUsd).toBeNull()
  })

  it('stops before a request whose worst case what is left cannot buy: exit 5, the cap named, that request not made (issue 48)', async () => {
    // $0.036 of the $0.05 cap spent: what is left buys no request of 1024 output tokens at $15 a million.
    server.push({...reply(toolUse('Write', {content: 'x', file_path: 'a.md'})), usage: {input_tokens: 12_000, output_tokens: 10}}, reply('Done.'))
    const {error, events} = await session({budget: {source: {kind: 'flag'}, usd: 0.05}})

    expect(error?.exitCode).toBe(ExitCode.limit)
    expect(error?.message).toMatch(/Stopped at the budget: \$0\.03\d+ spent, and the next request could pass --max-budget-usd 0\.05/)
    expect(error?.details).toMatchObject({budget: {maxBudgetUsd: 0.05, source: {kind: 'flag'}}, stopReason: 'budget'})
    expect(existsSync(file('a.md'))).toBe(true)
    expect(requests()).toHaveLength(1)
    // The refused request was no turn: one turn counted and announced, as many as were sent.
    expect(error?.details).toMatchObject({turns: 1})
    expect(events.filter((e) => e.type === 'request')).toEqual([expect.objectContaining({turn: 1})])
  })

  it('sends a session’s first request even when the cap is below its worst case, then stops', async () => {
    server.push(reply(toolUse('Write', {content: 'x', file_path: 'a.md'})), reply('Done.'))
    const {error} = await session({budget: {source: {kind: 'flag'}, usd: 0.000001}})
    expect(error?.details).toMatchObject({stopReason: 'budget'})
    expect(requests()).toHaveLength(1)
    expect(requests()[0].body.max_tokens).toBe(1024)
  })

  it("stops once the spend exceeds the budget: exit 5, the line naming the spend, the hint the cap to raise, the turn's calls not run", async () => {
    // The prompt fits the cap, its response's usage (as the server reports it) passes it.
    server.push({...reply(toolUse('Write', {content: 'x', file_path: 'a.md'})), usage: {input_tokens: 2_000_000, output_tokens: 10}}, reply('Done.'))
    const {error} = await session({budget: {source: {kind: 'flag'}, usd: 0.5}})

    expect(error?.exitCode).toBe(ExitCode.limit)
    expect(error?.message).toMatch(/more than --max-budget-usd 0\.5/)
    expect(error?.message).toMatch(/\$\d+\.\d{2}.* spent/)
    // Nothing here resumes the session (no driver gave a continuation): the hint says so.
    expect(error?.hint).toBe('This session is not resumed: raise --max-budget-usd and start it again.')
    expect(error?.details).toMatchObject({stopReason: 'budget', turns: 1})
    expect(error?.details?.costUsd).toBeGreaterThan(0.5)
    expect(existsSync(file('a.md'))).toBe(false)
    expect(requests()).toHaveLength(1)
  })

  it('lowers max_tokens to what is left of the budget, and sends it as it was with room to spare', async () => {
    server.push(reply('Done.'))
    await session({budget: {source: {kind: 'flag'}, usd: 0.1}})
    server.push(reply('Done.'))
    await session({budget: {source: {kind: 'flag'}, usd: 100}})
    const [tight, ample] = requests()
    expect(tight.body.max_tokens).toBeLessThan(ample.body.max_tokens)
    expect(tight.body.max_tokens).toBeGreaterThanOrEqual(1024)
  })

  it('keeps a budget for a model without a price, at the highest known price: it stops, never refuses to start', async () => {
    // Big usage so that even a family's price passes the budget on the first turn.
    const usage = {input_tokens: 2_000_000, output_tokens: 10}
    server.push({...reply(toolUse('Write', {content: 'x', file_path: 'a.md'})), usage}, reply('never'))
    const {error, result} = await session({budget: {source: {kind: 'flag'}, usd: 1}, model: 'claude-test'})
    expect(error?.exitCode).toBe(ExitCode.limit)
    expect(error?.details).toMatchObject({costUsd: null, stopReason: 'budget', turns: 1})
    expect(result).toBeUndefined()
    expect(requests()).toHaveLength(1)
  })
})

describe('API errors people can act on', () => {
  it('401: exit 2 naming ANTHROPIC_API_KEY, not retried even when the endpoint says it may be', async () => {
    server.push(fault(401, {error: {message: 'invalid x-api-key'}, headers: {'x-should-retry': 'true'}}), reply('never'))
    const {error} = await session({maxRetries: 3})
    expect(error?.exitCode).toBe(ExitCode.usage)
    expect(error?.message).toMatch(/status 401.*invalid x-api-key/)
    expect(error?.hint).toMatch(/ANTHROPIC_API_KEY/)
    expect(error?.details).toMatchObject({stopReason: 'api_error', turns: 1})
    expect(requests()).toHaveLength(1)
  })

  it('403: exit 2 naming the credentials', async () => {
    server.push(fault(403, {error: {message: 'not allowed'}}))
    const {error} = await session()
    expect(error?.exitCode).toBe(ExitCode.usage)
    expect(error?.hint).toMatch(/ANTHROPIC_API_KEY/)
  })

  it('404 for the model: exit 2 naming --model and WAVE_MODEL', async () => {
    server.push(fault(404, {error: {message: 'model: claude-nope'}}))
    const {error} = await session({maxRetries: 3, model: 'claude-nope'})
    expect(error?.exitCode).toBe(ExitCode.usage)
    expect(error?.message).toMatch(/status 404.*model: claude-nope/)
    expect(error?.hint).toMatch(/"claude-nope".*--model.*WAVE_MODEL/)
    expect(requests()).toHaveLength(1)
  })

  it('an unreachable endpoint is named: its host, and ANTHROPIC_BASE_URL', async () => {
    const port = await closedPort()
    const {error} = await session({baseURL: `http://127.0.0.1:${port}/some/path?token=s3cret`, maxRetries: 1})
    expect(error?.exitCode).toBe(ExitCode.runtime)
    expect(error?.message).toBe(`The model API at 127.0.0.1:${port} could not be reached (ECONNREFUSED), after retries.`)
    expect(error?.hint).toMatch(/ANTHROPIC_BASE_URL/)
    expect(`${error?.message} ${error?.hint}`).not.toContain('s3cret')
    expect(error?.details).toMatchObject({stopReason: 'api_error', turns: 1})
  })

  it('an endpoint URL with credentials in it: exit 2, the credentials never shown', async () => {
    const {error} = await session({baseURL: `http://wave:s3cret-pass@127.0.0.1:${server.port}/`, maxRetries: 1})
    expect(error?.exitCode).toBe(ExitCode.usage)
    expect(error?.hint).toMatch(/ANTHROPIC_BASE_URL/)
    expect(`${error?.message} ${error?.hint}`).not.toContain('s3cret')
    expect(requests()).toHaveLength(0)
  })

  it('retries 429 and 529, reported as the SDK makes them (its middleware), then goes on', async () => {
    const soon = {'retry-after-ms': '5'}
    server.push(fault(429, {headers: soon}), fault(529, {headers: soon}), reply('Done.'))
    const {result, events} = await session({maxRetries: 4})
    expect(result?.finalText).toBe('Done.')
    expect(events.filter((e) => e.type === 'retry')).toEqual([
      {attempt: 1, reason: 'status 429 from the API', type: 'retry'},
      {attempt: 2, reason: 'status 529 from the API', type: 'retry'},
    ])
  })

  it('an interruption carries what the session did', async () => {
    const abort = new AbortController()
    server.push(reply(toolUse('Write', {content: 'x', file_path: 'a.md'})), {stallMs: 10_000})
    const pending = session({signal: abort.signal})
    await waitFor(() => requests().length === 2)
    abort.abort()
    const {error} = await pending
    expect(error?.exitCode).toBe(ExitCode.interrupted)
    expect(error?.details).toMatchObject({filesChanged: [file('a.md')], stopReason: 'interrupted', turns: 2})
  })
})

async function closedPort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
  const {port} = probe.address() as {port: number}
  await new Promise<void>((resolve) => probe.close(() => resolve()))
  return port
}

async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe('the shape of each request', () => {
  it('is asked before every turn: what is learnt mid-session (the API describing the model) shapes the turns after it, betas as a header', async () => {
    const before: RequestShape = {betas: [], contextWindow: 200_000, maxOutput: 64_000, maxTokens: 32_000}
    const after: RequestShape = {
      betas: ['context-1m-2025-08-07'],
      contextWindow: 1_000_000,
      effort: 'low',
      maxOutput: 128_000,
      maxTokens: 100_000,
      thinking: {type: 'adaptive' as const},
    }
    let known = before
    server.push((request) => {
      known = after
      expect(request.body.max_tokens).toBe(32_000)
      return reply(toolUse('LS', {path: '.'}))
    }, reply('Done.'))
    const {result} = await session({shape: () => known})
    expect(result?.stopReason).toBe('end_turn')
    const [first, second] = requests()
    expect(first.body.thinking).toBeUndefined()
    expect(first.body.output_config).toBeUndefined()
    expect(first.headers['anthropic-beta']).toBeUndefined()
    expect(second.body).toMatchObject({max_tokens: 100_000, output_config: {effort: 'low'}, thinking: {type: 'adaptive'}})
    expect(String(second.headers['anthropic-beta'])).toContain('context-1m-2025-08-07')
  })
})
