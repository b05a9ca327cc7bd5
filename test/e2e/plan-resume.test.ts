/**
 * Issue 49, item 4: a plan stopped at its budget keeps its exploration. `wave plan --resume NAME` goes on
 * with the plan's newest planning session, stopped before it ended with a plan, its conversation rebuilt
 * from the plan's transcript: the first request of the resumed part carries the earlier Read calls and
 * their results, the plan file gets written, and the plan's state adds up the turns and the cost. The
 * stop's hint names the command that goes on; nothing to resume (a plan that finished planning, a plan
 * without a transcript) is exit 2 with a hint.
 */
import {readFileSync, rmSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {readJson, type Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const PLAN = '# Plan\n\n1. Rename greet to welcome in src/util.ts.\n\n## Scope\n- src/util.ts\n'
const sidecar = (planPath: string, suffix: string) => planPath.replace(/\.md$/, suffix)
const hintOf = (stderr: string) => stderr.split('\n').find((line) => line.startsWith('Hint:')) ?? ''

type Block = {type: string; id?: string; name?: string; input?: Record<string, unknown>; tool_use_id?: string; text?: string; content?: unknown}
const blocksOf = (message: {content: unknown}): Block[] =>
  typeof message.content === 'string' ? [{text: message.content, type: 'text'}] : (message.content as Block[])
const messagesOf = (request: RecordedRequest): Array<{role: string; content: unknown}> => request.body.messages

/**
 * Two Reads, the second costly (14,000 input tokens): after it, what is left of a cap of 0.05 USD buys no
 * further request, and the session stops at its budget before it plans, both Reads answered.
 */
async function stoppedAtBudget(): Promise<{planPath: string; name: string; stderr: string; code: number | null; json: Record<string, unknown>}> {
  server.push(
    {...reply(toolUse('Read', {file_path: 'README.md'})), usage: {input_tokens: 2000, output_tokens: 20}},
    {...reply(toolUse('Read', {file_path: 'src/util.ts'})), usage: {input_tokens: 14_000, output_tokens: 20}},
  )
  const result = await wave(['plan', '--task', 'Rename greet to welcome', '--max-budget-usd', '0.05', '--json'])
  const planPath = planPathIn(server.messageRequests[0])
  return {code: result.code, json: JSON.parse(result.stdout), name: planPath.split('/').at(-1)!.replace(/\.md$/, ''), planPath, stderr: result.stderr}
}

describe('wave plan --resume', {timeout: 60_000}, () => {
  it('goes on from a stop at the budget with the exploration kept: the earlier Reads sent again, the plan written, the cost adding up', async () => {
    const stopped = await stoppedAtBudget()
    expect(stopped.code, stopped.stderr).toBe(5)
    expect(server.messageRequests).toHaveLength(2)
    expect(stopped.stderr).toMatch(/Stopped at the budget: \$\d+\.\d{4} spent, and the next request could pass --max-budget-usd 0\.05,/)
    // The hint names a command that exists, and how the cap counts.
    expect(hintOf(stopped.stderr)).toBe(
      `Hint: To go on with the exploration kept: wave plan --resume ${stopped.name} --max-budget-usd <more than 0.05> (the cap counts what was spent before).`,
    )
    expect(stopped.stderr).not.toMatch(/to let it go on/)
    const firstCost = (stopped.json.costUsd as number) ?? 0
    expect(firstCost).toBeGreaterThan(0.04)
    const before = readJson(sidecar(stopped.planPath, '.state.json'))
    const firstTurns = stopped.json.turns as number
    // A turn is a request sent: the one the budget refused is not counted.
    expect(firstTurns).toBe(2)
    expect(before).toMatchObject({planning: {exitCode: 5, turns: firstTurns}, status: 'failed'})

    server.push((request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})), reply('The plan is ready.'))
    const resumed = await wave(['plan', '--resume', stopped.name, '--max-budget-usd', '1', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(readFileSync(stopped.planPath, 'utf8')).toBe(PLAN)
    const result = JSON.parse(resumed.stdout)
    expect(result).toMatchObject({ok: true, planPath: stopped.planPath, turns: firstTurns + 2})

    // The first request of the resumed part: the opening, both Reads with their results, then the note.
    const [next] = server.messageRequests.slice(2)
    const sent = messagesOf(next)
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    expect(blocksOf(sent[0])[0].text).toBe(blocksOf(messagesOf(server.messageRequests[0])[0])[0].text)
    const reads = [sent[1], sent[3]].map((message) => blocksOf(message).find((block) => block.type === 'tool_use')!)
    expect(reads.map((read) => read.input)).toEqual([{file_path: 'README.md'}, {file_path: 'src/util.ts'}])
    const results = [sent[2], sent[4]].map((message) => blocksOf(message).find((block) => block.type === 'tool_result')!)
    expect(results.map((r) => r.tool_use_id)).toEqual(reads.map((read) => read.id))
    expect(JSON.stringify(results[1].content)).toContain('export function greet')
    expect(blocksOf(sent[4]).at(-1)!.text).toMatch(/this planning session stopped \(at a limit: turns or budget\) and was resumed with wave plan --resume/)
    // Still plan mode, on the same plan file.
    expect(planPathIn(next)).toBe(stopped.planPath)

    // The plan's state: the whole session's turns, and what planning cost, both parts.
    const after = readJson(sidecar(stopped.planPath, '.state.json'))
    expect(after).toMatchObject({planning: {exitCode: 0, turns: firstTurns + 2}, status: 'draft'})
    expect(after.failure).toBeUndefined()
    expect(result.costUsd).toBeGreaterThan(firstCost)
    expect(after.costUsd).toBeCloseTo(result.costUsd, 5)
    expect(after.planning.costUsd).toBeCloseTo(result.costUsd, 5)

    // Finished with a plan: nothing left to resume, and --revise is named instead (exit 2, no request).
    const asked = server.messageRequests.length
    const again = await wave(['plan', '--resume', stopped.name])
    expect(again.code).toBe(2)
    expect(again.stderr).toContain(`Error: Nothing to resume: the newest planning session of ${stopped.name} finished with a plan`)
    expect(hintOf(again.stderr)).toContain(`wave plan --revise ${stopped.name}`)
    expect(server.messageRequests).toHaveLength(asked)
  })

  it('at the same cap, goes no further: no request, and the hint again says to raise it', async () => {
    const stopped = await stoppedAtBudget()
    expect(stopped.code).toBe(5)
    const again = await wave(['plan', '--resume', stopped.name, '--max-budget-usd', '0.05'])
    expect(again.code, again.stderr).toBe(5)
    expect(server.messageRequests).toHaveLength(2)
    expect(hintOf(again.stderr)).toContain(`wave plan --resume ${stopped.name} --max-budget-usd <more than 0.05>`)
  })

  it('a stop at the turn limit names --max-turns on the command that goes on', async () => {
    server.push(reply(toolUse('Read', {file_path: 'README.md'})), reply(toolUse('Read', {file_path: 'src/util.ts'})))
    const result = await wave(['plan', '--task', 'Rename greet to welcome', '--max-turns', '1'])
    expect(result.code).toBe(5)
    const name = planPathIn(server.messageRequests[0]).split('/').at(-1)!.replace(/\.md$/, '')
    expect(hintOf(result.stderr)).toBe(
      `Hint: To go on with the exploration kept: wave plan --resume ${name} --max-turns <more than 1> (the limit counts the turns before).`,
    )
  })

  it('refuses when nothing is kept to resume from (no transcript), or with --revise or --task (exit 2, nothing asked)', async () => {
    const stopped = await stoppedAtBudget()
    rmSync(sidecar(stopped.planPath, '.transcript.jsonl'))
    const none = await wave(['plan', '--resume', stopped.name, '--max-budget-usd', '1'])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain(`Error: Nothing to resume: the transcript of ${stopped.name} holds nothing of its planning session`)
    expect(hintOf(none.stderr)).toContain(`wave plan --revise ${stopped.name}`)

    const both = await wave(['plan', '--resume', stopped.name, '--revise', stopped.name])
    expect(both.code).toBe(2)
    expect(both.stderr).toMatch(/--resume.*--revise|--revise.*--resume/)
    const task = await wave(['plan', '--resume', stopped.name, '--task', 'Something else'])
    expect(task.code).toBe(2)
    const unknown = await wave(['plan', '--resume', 'no-such-plan'])
    expect(unknown.code).toBe(2)
    expect(server.messageRequests).toHaveLength(2)
  })
})
