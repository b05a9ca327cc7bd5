/**
 * What a session costs under the API's prompt caching, read from the scripted server's usage (its cache
 * follows the API's rules: src/testing/cache.ts): within a session nothing before the newest turn
 * changes, the plan-mode reminder included, so each request writes only its newest turn; across
 * sessions in one repository the fixed part of the system prompt comes first, so the next session reads
 * it from the cache the last one wrote.
 */
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import Anthropic from '@anthropic-ai/sdk'
import {describe, expect, it} from 'vitest'

import {gitCommitAll, type Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, systemText, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const NO_PLAN_YET = (plan: string) =>
  `## Plan File Info:\nNo plan file exists yet. You should create your plan at ${plan} using the Write tool if you need to.\nYou should build your plan incrementally by writing to or editing this file. NOTE that this is the only file you are allowed to edit - other than this you are only allowed to take READ-ONLY actions.`

const cached = (request: RecordedRequest) => request.usage!.cache_read_input_tokens + request.usage!.cache_creation_input_tokens
const tokensOf = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4)
/** The tools the prompt holds: a deferred one (defer_loading) is in it only where ToolSearch loaded it. */
const promptTools = (request: RecordedRequest) => (request.body.tools as Array<{defer_loading?: boolean}>).filter((tool) => !tool.defer_loading)

/** Sends a recorded request's body again, changed by `edit`, and returns the usage the server answers with. */
async function resend(request: RecordedRequest, edit: (body: Record<string, unknown>) => void) {
  const body = structuredClone(request.body)
  edit(body)
  server.push(reply('ok'))
  const client = new Anthropic({apiKey: 'test-key', baseURL: server.url, maxRetries: 0})
  const {stream: _stream, ...params} = body
  return (await client.messages.stream(params as Parameters<typeof client.messages.stream>[0]).finalMessage()).usage
}

describe('the prompt cache across a session', () => {
  it('writes only the newest turn on every request after the first, across the plan file first being written', async () => {
    const plan = '# Plan\n\n## Goal\nRename greet to welcome.\n'
    server.push(
      reply('Looking around.', toolUse('Glob', {pattern: '**/*.ts'}), toolUse('Read', {file_path: 'src/util.ts'})),
      reply(toolUse('Grep', {output_mode: 'content', pattern: 'greet'})),
      (request) => reply(toolUse('Write', {content: plan, file_path: planPathIn(request)})),
      (request) => reply(toolUse('Edit', {file_path: planPathIn(request), new_string: 'welcome everywhere.', old_string: 'welcome.'})),
      reply(toolUse('LS', {path: '.'})),
      (request) => reply('The plan is ready.', toolUse('ExitPlanMode', {plan_path: planPathIn(request)})),
    )
    const result = await wave(['plan', '--task', 'Rename greet to welcome'])
    expect(result.code, result.stderr).toBe(0)
    const requests = server.messageRequests
    expect(requests).toHaveLength(6)
    const planPath = planPathIn(requests[0])

    // FR-006's reminder ends every request's system prompt, word for word, the same before the Write and after it.
    for (const request of requests) expect(systemText(request).endsWith(NO_PLAN_YET(planPath))).toBe(true)
    expect(requests.map((r) => r.body.system.at(-1).text)).toEqual(requests.map(() => requests[0].body.system.at(-1).text))
    // No request has more than the API's four breakpoints (the server refuses a fifth: none was refused).
    expect(server.invalidRequests).toEqual([])

    const first = requests[0].usage!
    expect(first.cache_read_input_tokens).toBe(0)
    expect(first.cache_creation_input_tokens).toBeGreaterThan(2000)
    for (const [i, request] of requests.entries()) {
      const usage = request.usage!
      // Only the turn's opening is left uncached.
      expect(usage.input_tokens, `request ${i}`).toBeLessThan(10)
      if (i === 0) continue
      // It reads everything the request before it cached, and writes only what its newest turn added.
      expect(usage.cache_read_input_tokens, `request ${i}`).toBe(cached(requests[i - 1]))
      const added = requests[i].body.messages.slice(requests[i - 1].body.messages.length)
      expect(usage.cache_creation_input_tokens, `request ${i}`).toBeGreaterThan(0)
      expect(usage.cache_creation_input_tokens, `request ${i}`).toBeLessThanOrEqual(tokensOf(added) + 5)
    }

    // Control: the same last request with the reminder's other variant, as it was when the reminder
    // followed the plan file, reads only the tools and the shared system prompt and writes the whole
    // conversation again.
    const last = requests.at(-1)!
    const flipped = await resend(last, (body) => {
      const blocks = body.system as Array<{text: string}>
      blocks[blocks.length - 1].text = blocks
        .at(-1)!
        .text.replace(
          `No plan file exists yet. You should create your plan at ${planPath} using the Write tool if you need to.`,
          `A plan file already exists at ${planPath}. You can read it and make incremental edits using the Edit tool if you need to.`,
        )
    })
    expect(flipped.cache_read_input_tokens).toBeGreaterThan(tokensOf(promptTools(last)))
    expect(flipped.cache_read_input_tokens).toBeLessThan(tokensOf(promptTools(last)) + tokensOf(last.body.system[0]) + 10)
    expect(flipped.cache_creation_input_tokens).toBeGreaterThan(0.8 * tokensOf(last.body.messages))
    expect(flipped.cache_creation_input_tokens).toBeGreaterThan(5 * last.usage!.cache_creation_input_tokens)
  })
})

describe('the prompt cache across sessions', () => {
  it("reads the fixed prompt (instructions, tool guidance, AGENTS.md) that the repository's last session wrote", async () => {
    writeFileSync(path.join(sandbox.repo, 'AGENTS.md'), `# Conventions\n\n${'Use tabs. Keep functions short. '.repeat(40)}\n`)
    gitCommitAll(sandbox.repo, 'AGENTS.md')
    const session = async (task: string) => {
      const before = server.messageRequests.length
      server.push((request) => reply(toolUse('Write', {content: `# Plan\n\n${task}\n`, file_path: planPathIn(request)})), reply('Done.'))
      const result = await wave(['plan', '--task', task])
      expect(result.code, result.stderr).toBe(0)
      return server.messageRequests[before]
    }

    const one = await session('Rename greet to welcome')
    // The next session: another task and plan file, another commit in the environment.
    writeFileSync(path.join(sandbox.repo, 'notes.txt'), 'x\n')
    gitCommitAll(sandbox.repo, 'notes')
    const two = await session('Add a farewell function')
    expect(two.body.system[0]).toEqual(one.body.system[0])
    expect(two.body.system[1].text).not.toBe(one.body.system[1].text)
    expect(two.body.system[0].text).toContain('Use tabs.')
    expect(two.body.system[0].text).not.toContain('# Environment')
    // It reads the tools and the shared system block, and writes only its own block and first message.
    const shared = two.usage!.cache_read_input_tokens
    expect(shared).toBeGreaterThan(tokensOf(promptTools(two)) + 1000)
    expect(two.usage!.cache_creation_input_tokens).toBeLessThan(tokensOf(two.body.system[1]) + tokensOf(two.body.messages) + 20)

    // Control: a session after AGENTS.md changed reads the tools only, and writes the shared prompt again.
    writeFileSync(path.join(sandbox.repo, 'AGENTS.md'), '# Conventions\n\nUse spaces.\n')
    gitCommitAll(sandbox.repo, 'AGENTS.md again')
    const three = await session('Add a test')
    expect(three.usage!.cache_read_input_tokens).toBeLessThan(tokensOf(promptTools(three)) + 10)
    expect(three.usage!.cache_read_input_tokens).toBeGreaterThan(0)
    expect(three.usage!.cache_creation_input_tokens).toBeGreaterThan(tokensOf(three.body.system) - 10)
  })
})
