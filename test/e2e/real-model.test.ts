/**
 * Issue #24 end to end, the loop and request side: what a real Claude model does that scripted ones
 * did not, and what wave sends back. Whitespace text blocks never go back to the API (nor from a
 * transcript written before wave cleaned them, on --resume); thinking, effort and max_tokens are sent as
 * Claude Code sends them, or as the flags say; a plan given in prose is saved, never lost; an empty final
 * turn of a run is not a success; a window-full cut is explained as the window; compaction clears a large
 * Write's content from later requests. Judged by what the server received, files on disk and exit codes.
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {readJson, type Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, text, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

type Block = {type: string; text?: string; input?: Record<string, unknown>; name?: string}
type Message = {role: string; content: string | Block[]}
const messagesOf = (request: RecordedRequest): Message[] => request.body.messages
const blocksOf = (message: Message): Block[] => (typeof message.content === 'string' ? [{text: message.content, type: 'text'}] : message.content)
/** Every text block of every message the request carried. */
const textBlocks = (request: RecordedRequest): Block[] => messagesOf(request).flatMap((message) => blocksOf(message).filter((block) => block.type === 'text'))
/** Whether roles alternate, starting with the user: the API's rule. */
const alternates = (request: RecordedRequest) => messagesOf(request).every((message, index) => message.role === (index % 2 === 0 ? 'user' : 'assistant'))

async function approvedPlan(): Promise<string> {
  mkdirSync(sandbox.plansDir, {recursive: true})
  const planPath = path.join(sandbox.plansDir, 'quiet-lake.md')
  writeFileSync(planPath, '# Plan\n\n1. Write notes.txt.\n2. List the workspace.\n')
  const approved = await wave(['approve', planPath, '--mode', 'acceptEdits'])
  expect(approved.code, approved.stderr).toBe(0)
  return planPath
}

describe('requests the API accepts', () => {
  it('a whitespace-only text block before a tool call is never sent back; the run completes', async () => {
    const planPath = await approvedPlan()
    server.push(
      reply(text('  \n'), toolUse('Write', {content: 'notes\n', file_path: 'notes.txt'})),
      reply(text(''), toolUse('LS', {path: '.'})),
      reply('Done.'),
    )
    const result = await wave(['run', planPath])

    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe('Done.')
    expect(readFileSync(path.join(sandbox.repo, 'notes.txt'), 'utf8')).toBe('notes\n')
    expect(server.messageRequests).toHaveLength(3)
    for (const request of server.messageRequests) {
      expect(textBlocks(request).every((block) => block.text!.trim() !== '')).toBe(true)
      expect(alternates(request)).toBe(true)
    }

    // The assistant turns went back with their tool calls, without the empty text.
    const last = messagesOf(server.messageRequests[2])
    expect(last.filter((message) => message.role === 'assistant').map((message) => blocksOf(message).map((block) => block.type))).toEqual([
      ['tool_use'],
      ['tool_use'],
    ])
  })

  it('--resume of a transcript written with a whitespace block sends none of it', async () => {
    const planPath = await approvedPlan()
    server.push(reply(toolUse('Write', {content: 'notes\n', file_path: 'notes.txt'})))
    const first = await wave(['run', planPath, '--max-turns', '1'])
    expect(first.code).toBe(5)

    // As an earlier wave wrote it: the assistant turn with its whitespace block as the model sent it.
    const transcript = `${planPath.slice(0, -3)}.transcript.jsonl`
    const lines = readFileSync(transcript, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const assistant = lines.find((entry) => entry.message?.role === 'assistant')
    assistant.message.content.unshift({text: ' ', type: 'text'})
    writeFileSync(transcript, lines.map((entry) => JSON.stringify(entry)).join('\n') + '\n')

    server.push(reply('Resumed and done.'))
    const resumed = await wave(['run', planPath, '--resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(JSON.parse(resumed.stdout)).toMatchObject({result: 'Resumed and done.', resumed: true})
    const request = server.messageRequests.at(-1)!
    expect(textBlocks(request).every((block) => block.text!.trim() !== '')).toBe(true)
    expect(alternates(request)).toBe(true)
  })
})

describe('thinking, effort and max_tokens', () => {
  it('by default: adaptive thinking, effort high and max_tokens 64000 for a model that takes them', async () => {
    server.push(
      (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Step.\n', file_path: planPathIn(request)})),
      reply(toolUse('ExitPlanMode', {})),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Plan something', '--model', 'claude-sonnet-5-5'])
    expect(result.code, result.stderr).toBe(0)

    const [first] = server.messageRequests
    expect(first.body).toMatchObject({max_tokens: 64_000, output_config: {effort: 'high'}, thinking: {type: 'adaptive'}})
    const state = readJson(`${result.stdout.trim().slice(0, -3)}.state.json`)
    expect(state.reasoning).toEqual({effort: 'high', maxOutputTokens: 64_000, thinking: 'adaptive'})
  })

  it('--effort, --thinking N and --max-output-tokens are sent as given; --thinking off disables it', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Step.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const given = await wave(['plan', '--task', 'Plan something', '--effort', 'low', '--thinking', '4096', '--max-output-tokens', '20000'])
    expect(given.code, given.stderr).toBe(0)
    expect(server.messageRequests[0].body).toMatchObject({max_tokens: 20_000, output_config: {effort: 'low'}, thinking: {budget_tokens: 4096, type: 'enabled'}})

    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Step.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const off = await wave(['plan', '--task', 'Plan something', '--thinking', 'off', '--effort', 'max'])
    expect(off.code, off.stderr).toBe(0)
    expect(server.messageRequests[2].body).toMatchObject({output_config: {effort: 'max'}, thinking: {type: 'disabled'}})

    // A budget not below max_tokens is refused before any request (exit 2).
    const bad = await wave(['plan', '--task', 'Plan something', '--thinking', '30000', '--max-output-tokens', '20000'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/thinking budget must be below max_tokens \(20000\)/)
    expect(server.messageRequests).toHaveLength(4)
  })

  it('a model without thinking or effort gets neither, and max_tokens within its limit; the settings file sets them too', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Step.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const old = await wave(['plan', '--task', 'Plan something', '--model', 'claude-3-5-haiku-20241022'])
    expect(old.code, old.stderr).toBe(0)
    const body = server.messageRequests[0].body
    expect(body.max_tokens).toBe(8192)
    expect(body.thinking).toBeUndefined()
    expect(body.output_config).toBeUndefined()

    mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({effort: 'medium', maxOutputTokens: 30_000, thinking: 2048}))
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Step.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const set = await wave(['plan', '--task', 'Plan something', '--effort', 'xhigh'])
    expect(set.code, set.stderr).toBe(0)
    expect(server.messageRequests[2].body).toMatchObject({
      max_tokens: 30_000,
      output_config: {effort: 'xhigh'},
      thinking: {budget_tokens: 2048, type: 'enabled'},
    })
  })
})

describe('no plan is ever lost', () => {
  it('a plan given in prose gets one corrective turn naming the file, then is saved as the plan (planSource final_message)', async () => {
    const prose = '# Plan\n\n1. Add the flag.\n2. Test it.'
    server.push(reply(prose), reply(`Here it is again:\n\n${prose}`))
    const result = await wave(['plan', '--task', 'Plan something', '--json'])

    expect(result.code, result.stderr).toBe(0)
    const json = JSON.parse(result.stdout)
    expect(json).toMatchObject({planSource: 'final_message'})
    expect(server.messageRequests).toHaveLength(2)
    const corrective = messagesOf(server.messageRequests[1]).at(-1)!
    expect(
      blocksOf(corrective)
        .map((block) => block.text)
        .join('\n'),
    ).toContain(`Write the complete plan to ${json.planPath}`)
    expect(readFileSync(json.planPath, 'utf8')).toBe(`Here it is again:\n\n${prose}\n`)
    expect(readJson(`${json.planPath.slice(0, -3)}.state.json`)).toMatchObject({planSource: 'final_message', status: 'draft'})
    expect(result.stderr).toMatch(/wrote no plan file: its final message is saved as the plan/)
  })

  it('the corrective turn is enough when the model then writes the file', async () => {
    server.push(
      reply('I would add a flag.'),
      (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Add the flag.\n', file_path: planPathIn(request)})),
      reply('Written.'),
    )
    const result = await wave(['plan', '--task', 'Plan something', '--json'])
    expect(result.code, result.stderr).toBe(0)
    const json = JSON.parse(result.stdout)
    expect(json.planSource).toBe('plan_file')
    expect(readFileSync(json.planPath, 'utf8')).toBe('# Plan\n\n1. Add the flag.\n')
  })

  it('the plan prompt makes the plan file and ExitPlanMode the required end, the reminder unchanged', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Step.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Plan something'])
    expect(result.code, result.stderr).toBe(0)
    const system = server.messageRequests[0].body.system.map((block: {text: string}) => block.text).join('')
    expect(system).toMatch(
      /End every planning turn .*in the plan file .*written with Write .*a call to ExitPlanMode\. A plan given only in your reply is not recorded/s,
    )
    expect(system).toMatch(
      /## Plan File Info:\nNo plan file exists yet\. You should create your plan at .* using the Write tool if you need to\.\nYou should build your plan incrementally by writing to or editing this file\. NOTE that this is the only file you are allowed to edit - other than this you are only allowed to take READ-ONLY actions\.$/,
    )
  })
})

describe('a run that ends without a result', () => {
  it('an empty final turn gets one "continue" nudge, then exits 6', async () => {
    const planPath = await approvedPlan()
    server.push(reply(toolUse('LS', {path: '.'})), reply(text(' ')), reply(text('')))
    const result = await wave(['run', planPath])

    expect(result.code).toBe(6)
    expect(result.stderr).toMatch(/Error: The model ended without a result/)
    expect(server.messageRequests).toHaveLength(3)
    const nudge = messagesOf(server.messageRequests[2]).at(-1)!
    expect(
      blocksOf(nudge)
        .map((block) => block.text)
        .join('\n'),
    ).toMatch(/Your last turn was empty\. Continue/)
    expect(alternates(server.messageRequests[2])).toBe(true)
  })

  it('after the nudge, an answer completes the run', async () => {
    const planPath = await approvedPlan()
    server.push(reply(text('')), reply('Nothing was needed.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe('Nothing was needed.')
  })

  it('a turn cut because the window is full is explained as the window, not the output limit', async () => {
    const planPath = await approvedPlan()
    server.push({...reply(toolUse('Write', {content: 'half', file_path: 'notes.txt'})), stop_reason: 'model_context_window_exceeded' as never}, reply('Done.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    const [answer] = toolResults(server.messageRequests[1])
    expect(answer.content).toMatch(/filled the model's context window \(not the output limit\)/)
    expect(answer.content).not.toMatch(/smaller pieces/)
  })
})

describe('compaction', () => {
  it('clears a large Write content from later requests: a stub with the path and size, the call and result kept', async () => {
    const big = `${'const x = 1\n'.repeat(8000)}`
    mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({contextWindow: 30_000}))
    server.push(
      reply(toolUse('Write', {content: big, file_path: 'big.ts'})),
      reply(toolUse('LS', {path: '.'})),
      reply(toolUse('LS', {path: 'src'})),
      reply(toolUse('Read', {file_path: 'README.md'})),
      reply(toolUse('LS', {path: '.'})),
      reply('Done.'),
    )
    const result = await wave(['run', '--task', 'Write big.ts, then look around', '--output-format', 'stream-json'])

    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, 'big.ts'), 'utf8')).toBe(big)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const compaction = events.find((event) => event.type === 'compaction' && event.clearedToolInputs > 0)
    expect(compaction).toBeDefined()
    const last = server.messageRequests.at(-1)!
    expect(last.rawBody.length).toBeLessThan(big.length)
    const write = messagesOf(last)
      .flatMap(blocksOf)
      .find((block) => block.type === 'tool_use' && block.name === 'Write')!
    expect(write.input).toMatchObject({file_path: 'big.ts'})
    expect(String(write.input!.content)).toMatch(new RegExp(`${big.length} characters of content for big\\.ts`))
  })
})
