import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'

import Anthropic from '@anthropic-ai/sdk'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {CONTEXT_1M_BETA, knowModel, MODEL_CACHE_TTL_MS, modelCachePath, tableProfile} from '../../../src/model/catalog.js'
import {type MessagesServer, startMessagesServer} from '../../support/messages-server.js'

let server: MessagesServer
let home: string

beforeEach(async () => {
  server = await startMessagesServer([], {
    models: [
      {effort: ['low', 'medium', 'high'], id: 'claude-sonnet-5-5', max_input_tokens: 1_000_000, max_tokens: 100_000, thinking: ['adaptive']},
      {effort: [], id: 'claude-small', max_input_tokens: 100_000, max_tokens: 8192, thinking: []},
    ],
  })
  home = mkdtempSync(path.join(tmpdir(), 'wave-catalog-'))
})

afterEach(async () => {
  await server.close()
  rmSync(home, {force: true, recursive: true})
})

const client = () => new Anthropic({apiKey: 'test-key', baseURL: server.url, maxRetries: 0})

describe('knowing a model', () => {
  it('answers from the table at once, then from the API, and keeps the answer for the next session', async () => {
    const known = knowModel({client: client(), home, model: 'claude-sonnet-5-5'})
    // Nothing awaited yet: the table's figures, so the first request need not wait.
    expect(known.current()).toMatchObject({maxOutput: 128_000, source: 'table', thinking: ['adaptive', 'enabled']})
    const profile = await known.settled
    expect(profile).toEqual({
      betas: [CONTEXT_1M_BETA],
      contextWindow: 1_000_000,
      efforts: ['low', 'medium', 'high'],
      maxOutput: 100_000,
      model: 'claude-sonnet-5-5',
      source: 'api',
      thinking: ['adaptive'],
    })
    expect(known.current()).toEqual(profile)
    expect(server.modelRequests.map((r) => r.path)).toEqual(['/v1/models/claude-sonnet-5-5'])

    const file = modelCachePath(home, server.url, 'claude-sonnet-5-5')
    expect(file.startsWith(path.join(home, 'cache', 'models'))).toBe(true)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({info: {max_tokens: 100_000}, model: 'claude-sonnet-5-5'})

    // The next session: from the cache at once, no request.
    const again = knowModel({client: client(), home, model: 'claude-sonnet-5-5'})
    expect(again.current()).toEqual({...profile, source: 'cache'})
    await again.settled
    expect(server.modelRequests).toHaveLength(1)
  })

  it('asks again once the cached answer is a day old', async () => {
    const now = Date.now()
    await knowModel({client: client(), home, model: 'claude-small', now: () => now}).settled
    await knowModel({client: client(), home, model: 'claude-small', now: () => now + MODEL_CACHE_TTL_MS - 1}).settled
    expect(server.modelRequests).toHaveLength(1)
    const later = knowModel({client: client(), home, model: 'claude-small', now: () => now + MODEL_CACHE_TTL_MS + 1})
    expect(later.current().source).toBe('unknown')
    expect(await later.settled).toMatchObject({contextWindow: 100_000, betas: [], maxOutput: 8192, source: 'api'})
    expect(server.modelRequests).toHaveLength(2)
  })

  it('falls back to the table when the API does not know the model (404), and remembers that', async () => {
    const profile = await knowModel({client: client(), home, model: 'claude-opus-4-5'}).settled
    expect(profile).toEqual({...tableProfile('claude-opus-4-5'), source: 'table'})
    expect(profile).toMatchObject({betas: [], contextWindow: 200_000, efforts: ['low', 'medium', 'high'], maxOutput: 64_000, thinking: ['enabled']})
    expect(server.modelRequests.map((r) => r.status)).toEqual([404])
    await knowModel({client: client(), home, model: 'claude-opus-4-5'}).settled
    expect(server.modelRequests).toHaveLength(1)
  })

  it('knows nothing of a model neither knows: the 200k window, no thinking, no effort, no output limit', async () => {
    const profile = await knowModel({client: client(), home, model: 'my-proxy-model'}).settled
    expect(profile).toEqual({betas: [], contextWindow: 200_000, efforts: [], maxOutput: undefined, model: 'my-proxy-model', source: 'unknown', thinking: []})
  })

  it("plans for the settings' window, sending the 1M beta only when that window needs it", async () => {
    expect(await knowModel({client: client(), contextWindow: 150_000, home, model: 'claude-sonnet-5-5'}).settled).toMatchObject({
      betas: [],
      contextWindow: 150_000,
    })
    expect(tableProfile('claude-sonnet-5-5', 500_000)).toMatchObject({betas: [CONTEXT_1M_BETA], contextWindow: 500_000})
    expect(tableProfile('claude-haiku-4-5')).toMatchObject({betas: [], contextWindow: 200_000})
  })

  it('uses the table for a client without the models API (Bedrock, Vertex), asking nothing', async () => {
    const profile = await knowModel({client: {baseURL: server.url}, home, model: 'claude-sonnet-5-5'}).settled
    expect(profile.source).toBe('table')
    expect(server.modelRequests).toHaveLength(0)
  })

  it('ignores a cache file that is not what wave wrote', async () => {
    const file = modelCachePath(home, server.url, 'claude-small')
    await knowModel({client: client(), home, model: 'claude-small'}).settled
    writeFileSync(file, '{"fetchedAt": "yesterday"}')
    expect(await knowModel({client: client(), home, model: 'claude-small'}).settled).toMatchObject({maxOutput: 8192, source: 'api'})
    expect(server.modelRequests).toHaveLength(2)
  })
})

describe('a look-up that hangs', () => {
  let hanging: Server
  afterEach(() => new Promise<void>((resolve) => hanging.close(() => resolve())))

  it('never holds the session: close() ends it, and the table serves', async () => {
    const received: string[] = []
    hanging = createServer((req) => received.push(req.url ?? ''))
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`
    const known = knowModel({client: new Anthropic({apiKey: 'k', baseURL: url, maxRetries: 0}), home, model: 'claude-sonnet-5-5'})
    expect(known.current().source).toBe('table')
    // Wait for the request to arrive (the look-up is running), then end it.
    const deadline = Date.now() + 10_000
    while (received.length === 0) {
      if (Date.now() > deadline) throw new Error('the look-up never reached the server')
      await new Promise((resolve) => setImmediate(resolve))
    }

    known.close()
    expect((await known.settled).source).toBe('table')
    expect(existsSync(modelCachePath(home, url, 'claude-sonnet-5-5'))).toBe(false)
    hanging.closeAllConnections()
  })
})
