/**
 * Issue #24, knowing the model: what wave sends is shaped by the API's description of the model
 * (`GET /v1/models/{id}`), asked alongside the first request and kept under WAVE_HOME for the next
 * sessions, with the built-in table answering until then (and for a model the API does not know); the
 * 1M-context beta goes with a window past 200k. Judged by what the scripted server received and the
 * cache file on disk.
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {makeSandbox, runWave, type Sandbox, waitFor} from '../support/cli.js'
import {
  MODELS,
  type MessagesServer,
  planPathIn,
  type RecordedRequest,
  reply,
  type ServedModel,
  startMessagesServer,
  toolUse,
} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer

/** A model the table does not know, which the API describes as taking adaptive thinking and every effort. */
const LAB: ServedModel = {
  effort: ['low', 'medium', 'high', 'xhigh', 'max'],
  id: 'claude-lab-7',
  max_input_tokens: 200_000,
  max_tokens: 100_000,
  thinking: ['adaptive'],
}
/** A model the table knows (64,000 out), which this API describes with a smaller output limit. */
const SMALLER: ServedModel = {effort: [], id: 'claude-sonnet-4-5', max_input_tokens: 200_000, max_tokens: 32_000, thinking: ['enabled']}

beforeEach(async () => {
  sandbox = makeSandbox()
  server = await startMessagesServer([], {models: [...MODELS, LAB, SMALLER]})
})

afterEach(async () => {
  await server.close()
  sandbox.cleanup()
})

const wave = (args: string[]) => runWave(args, {cwd: sandbox.repo, home: sandbox.home, server})
const cacheDir = () => path.join(sandbox.home, '.wave', 'cache', 'models')
const cacheFiles = (model: string) => (existsSync(cacheDir()) ? readdirSync(cacheDir()).filter((name) => name.startsWith(`${model}-`)) : [])
const lookups = (model: string) => server.modelRequests.filter((request) => request.path === `/v1/models/${model}`)
const writePlan = (request: RecordedRequest) => reply(toolUse('Write', {content: '# Plan\n\n1. Step.\n', file_path: planPathIn(request)}))
const betasOf = (request: RecordedRequest) => String(request.headers['anthropic-beta'] ?? '')

describe('the model as the API describes it', () => {
  it('a model the table does not know: the API shapes the requests after its answer, and the next session from its cache', async () => {
    server.push(
      {
        ...reply(toolUse('LS', {path: '.'})),
        // The look-up goes once this response has begun; it is answered and cached before the response
        // goes on, so before the next request is made: no race decides the test.
        holdAfterHeaders: () => waitFor(() => cacheFiles(LAB.id).length > 0, 'the model description in the cache'),
      },
      writePlan,
      reply('Planned.'),
    )
    const first = await wave(['plan', '--task', 'Plan something', '--model', LAB.id])
    expect(first.code, first.stderr).toBe(0)

    const [one, two, three] = server.messageRequests
    // The first request does not wait for the look-up: the table (which knows nothing of the model, so
    // sends no thinking nor effort) shapes it, unless the API's answer happened to come before it.
    expect(one.body.max_tokens).toBe(64_000)
    expect(one.body.thinking === undefined || one.body.thinking.type === 'adaptive').toBe(true)
    for (const later of [two, three]) expect(later.body).toMatchObject({max_tokens: 64_000, output_config: {effort: 'high'}, thinking: {type: 'adaptive'}})
    expect(lookups(LAB.id)).toHaveLength(1)

    const [file] = cacheFiles(LAB.id)
    expect(JSON.parse(readFileSync(path.join(cacheDir(), file), 'utf8'))).toMatchObject({info: {id: LAB.id, max_tokens: 100_000}, model: LAB.id})

    // The next session: the cached answer shapes its first request, and the API is not asked again.
    server.push(writePlan, reply('Planned.'))
    const second = await wave(['plan', '--task', 'Plan again', '--model', LAB.id, '--max-output-tokens', '200000'])
    expect(second.code, second.stderr).toBe(0)
    expect(server.messageRequests[3].body).toMatchObject({max_tokens: 100_000, output_config: {effort: 'high'}, thinking: {type: 'adaptive'}})
    expect(second.stderr).toMatch(/--max-output-tokens 200000 is above claude-lab-7's output limit: 100000 is asked for/)
    expect(lookups(LAB.id)).toHaveLength(1)
  })

  it("a smaller output limit than the table's, from the cache: the next session's first request stays within it", async () => {
    server.push(writePlan, reply('Planned.'))
    const first = await wave(['plan', '--task', 'Plan something', '--model', SMALLER.id, '--max-output-tokens', '32000'])
    expect(first.code, first.stderr).toBe(0)
    await waitFor(() => cacheFiles(SMALLER.id).length > 0, 'the model description in the cache')

    server.push(writePlan, reply('Planned.'))
    const second = await wave(['plan', '--task', 'Plan again', '--model', SMALLER.id, '--json'])
    expect(second.code, second.stderr).toBe(0)
    // The table would ask for 64,000: the API said 32,000, and the strict server refuses more.
    const firstOfSecond = server.messageRequests[2]
    expect(firstOfSecond.body.max_tokens).toBe(32_000)
    expect(firstOfSecond.body.output_config).toBeUndefined()
    expect(server.invalidRequests).toEqual([])
    expect(lookups(SMALLER.id)).toHaveLength(1)
    // The plan's state records what was sent.
    const planPath = JSON.parse(second.stdout).planPath as string
    expect(JSON.parse(readFileSync(`${planPath.slice(0, -3)}.state.json`, 'utf8')).reasoning).toMatchObject({maxOutputTokens: 32_000})
  })

  it('a model the API answers 404 for: the table serves and the session works; the answer is remembered', async () => {
    // claude-opus-4-1 is in the table (32,000 out, budget thinking only, no effort), not in this server's catalogue.
    server.push(writePlan, reply('Planned.'))
    const result = await wave(['plan', '--task', 'Plan something', '--model', 'claude-opus-4-1'])
    expect(result.code, result.stderr).toBe(0)
    expect(lookups('claude-opus-4-1').map((request) => request.status)).toEqual([404])
    for (const request of server.messageRequests) {
      expect(request.body.max_tokens).toBe(32_000)
      expect(request.body.thinking).toBeUndefined()
      expect(request.body.output_config).toBeUndefined()
    }

    await waitFor(() => cacheFiles('claude-opus-4-1').length > 0, 'the 404 in the cache')
    server.push(writePlan, reply('Planned.'))
    const again = await wave(['plan', '--task', 'Plan again', '--model', 'claude-opus-4-1'])
    expect(again.code, again.stderr).toBe(0)
    expect(lookups('claude-opus-4-1')).toHaveLength(1)
  })

  it('a 1M-window model: every request carries the context-1m beta; planning for 200k (settings) carries none', async () => {
    server.push(writePlan, reply('Planned.'))
    const wide = await wave(['plan', '--task', 'Plan something', '--model', 'claude-sonnet-5-5'])
    expect(wide.code, wide.stderr).toBe(0)
    expect(server.messageRequests).toHaveLength(2)
    for (const request of server.messageRequests) expect(betasOf(request).split(',')).toContain('context-1m-2025-08-07')

    mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({contextWindow: 150_000}))
    server.push(writePlan, reply('Planned.'))
    const narrow = await wave(['plan', '--task', 'Plan something', '--model', 'claude-sonnet-5-5'])
    expect(narrow.code, narrow.stderr).toBe(0)
    for (const request of server.messageRequests.slice(2)) expect(betasOf(request)).not.toContain('context-1m')
  })

  it('a conversation past 200k tokens goes through on a 1M-window model: the beta is what lets the API take it', async () => {
    // ~225k tokens (4 bytes each at the scripted server) in the Write's input, which the next request carries back.
    const big = `${'const x = 1\n'.repeat(75_000)}`
    server.push(reply(toolUse('Write', {content: big, file_path: 'big.ts'})), reply('Done.'))
    const result = await wave(['run', '--task', 'Write big.ts', '--model', 'claude-sonnet-5-5'])
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, 'big.ts'), 'utf8')).toBe(big)
    const second = server.messageRequests[1]
    expect(second.rawBody.length / 4).toBeGreaterThan(200_000)
    expect(betasOf(second)).toContain('context-1m-2025-08-07')
    expect(server.invalidRequests).toEqual([])
  })
})

describe('the look-up is never on the path to the first request', () => {
  it("the look-up is never on the first request's path: it goes once the first response has begun, and its answer is still taken", async () => {
    server.push(writePlan, reply('Planned.'))
    const result = await wave(['plan', '--task', 'Plan something', '--model', LAB.id])
    expect(result.code, result.stderr).toBe(0)
    expect(lookups(LAB.id).map((request) => request.status)).toEqual([200])
    expect(lookups(LAB.id)[0].receivedAt).toBeGreaterThanOrEqual(server.messageRequests[0].receivedAt)
    await waitFor(() => cacheFiles(LAB.id).length > 0, 'the model description in the cache')
    // The first request went out with the table's shape: nothing of the API's answer was known yet.
    expect(server.messageRequests[0].body.thinking).toBeUndefined()
  })
})

describe("the approval record's model section", () => {
  async function approvedPlan(...flags: string[]): Promise<string> {
    const planPath = path.join(sandbox.plansDir, 'calm-river.md')
    mkdirSync(sandbox.plansDir, {recursive: true})
    writeFileSync(planPath, '# Plan\n\n1. List the workspace.\n')
    const approved = await wave(['approve', planPath, ...flags])
    expect(approved.code, approved.stderr).toBe(0)
    return planPath
  }

  it('approve --effort low --thinking off: recorded, and the run sends effort low and no thinking', async () => {
    const planPath = await approvedPlan('--effort', 'low', '--thinking', 'off', '--max-output-tokens', '20000')
    const record = JSON.parse(readFileSync(`${planPath.slice(0, -3)}.approval.json`, 'utf8'))
    expect(record.model).toEqual({effort: 'low', maxOutputTokens: 20_000, thinking: 'off'})

    server.push(reply(toolUse('LS', {path: '.'})), reply('Done.'))
    const run = await wave(['run', planPath])
    expect(run.code, run.stderr).toBe(0)
    expect(server.messageRequests).toHaveLength(2)
    for (const request of server.messageRequests) {
      expect(request.body).toMatchObject({max_tokens: 20_000, output_config: {effort: 'low'}, thinking: {type: 'disabled'}})
    }
  })

  it("a run flag that contradicts the approver's is refused (exit 2, naming both) before any request; one that agrees runs", async () => {
    const planPath = await approvedPlan('--effort', 'low', '--model', 'claude-opus-5-5')
    const refused = await wave(['run', planPath, '--effort', 'high'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/--effort high contradicts the approval record .*calm-river\.approval\.json, which approved effort low/)
    const otherModel = await wave(['run', planPath, '--model', 'claude-sonnet-5-5'])
    expect(otherModel.code).toBe(2)
    expect(otherModel.stderr).toMatch(/--model claude-sonnet-5-5 contradicts .* which approved model claude-opus-5-5/)
    expect(server.requests).toHaveLength(0)

    server.push(reply('Done.'))
    const agreed = await wave(['run', planPath, '--effort', 'low', '--max-output-tokens', '30000'])
    expect(agreed.code, agreed.stderr).toBe(0)
    expect(server.messageRequests[0].body).toMatchObject({max_tokens: 30_000, model: 'claude-opus-5-5', output_config: {effort: 'low'}})
  })

  it('run --approve records the model flags it was given; a record without a model section still runs', async () => {
    const planPath = await approvedPlan()
    expect(JSON.parse(readFileSync(`${planPath.slice(0, -3)}.approval.json`, 'utf8')).model).toBeUndefined()
    server.push(reply('Done.'))
    const plain = await wave(['run', planPath])
    expect(plain.code, plain.stderr).toBe(0)
    expect(server.messageRequests[0].body).toMatchObject({output_config: {effort: 'high'}, thinking: {type: 'adaptive'}})

    server.push(reply('Done again.'))
    const inline = await wave(['run', planPath, '--approve', '--effort', 'medium'])
    expect(inline.code, inline.stderr).toBe(0)
    expect(JSON.parse(readFileSync(`${planPath.slice(0, -3)}.approval.json`, 'utf8')).model).toEqual({effort: 'medium'})
    expect(server.messageRequests[1].body).toMatchObject({output_config: {effort: 'medium'}})
  })
})
