/**
 * Issue 49, item 4, in the comments flow: `/wave plan` stopped at the Action's `max-budget-usd` keeps its
 * exploration, and `/wave resume NAME` finishes it, end to end through `wave github` (the GitHub stand-in,
 * a bare remote, the scripted Messages API). The stopping job's comment records the digests of what the
 * recipe's cache carries (the plans directory); the resuming job, given that directory, goes on with the
 * earlier Reads and their results and shows the plan in the comment as `/wave plan` does. A job whose
 * cache restored nothing, or a state not as the stopped session left it, is refused and runs nothing.
 */
import {appendFileSync, cpSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {type CommentJob, commentJob, nameIn, PLAN, statusOf, useGitHubForge} from '../support/forge-fixture.js'
import type {GitHubServer, StoredComment} from '../support/github-server.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
let github: GitHubServer
let remote: string
let runs = 0
useGitHubForge({permissions: {alice: 'write', mona: 'maintain'}}, (made) => {
  ;({forge: github, remote, sandbox, server} = made)
})

/** One workflow run, as the Action runs `wave github`: its budget from the max-budget-usd input, WAVE_HOME restored from `restore`. */
const onGitHub = (body: string, by: string, budget: string, restore?: string): Promise<CommentJob> =>
  commentJob(
    {github, remote, sandbox, server},
    {body, by, env: {WAVE_MAX_BUDGET_USD: budget, WAVE_MAX_BUDGET_USD_SETTING: 'the max-budget-usd input'}, restore, run: ++runs},
  )

function stickyOn(issue: number): StoredComment {
  const found = github.commentsOn(issue).filter((c) => c.body.startsWith('<!-- wave:plan:'))
  expect(found).toHaveLength(1)
  return found[0]
}

const repliesTo = (login: string) => github.commentsOn(7).filter((c) => c.user.type === 'Bot' && c.body.includes(`@${login} `) && !c.body.startsWith('<!--'))

type Block = {type: string; id?: string; input?: Record<string, unknown>; tool_use_id?: string; text?: string; content?: unknown}
const blocksOf = (message: {content: unknown}): Block[] =>
  typeof message.content === 'string' ? [{text: message.content, type: 'text'}] : (message.content as Block[])

describe('/wave resume of a plan stopped at its budget', {timeout: 240_000}, () => {
  it('goes on with the exploration kept, and the comment shows the plan; without the kept state, or with another, nothing runs', async () => {
    // Two Reads, the second costly: what is left of 0.05 USD buys no further request.
    server.push(
      {...reply(toolUse('Read', {file_path: 'README.md'})), usage: {input_tokens: 2000, output_tokens: 20}},
      {...reply(toolUse('Read', {file_path: 'src/util.ts'})), usage: {input_tokens: 14_000, output_tokens: 20}},
    )
    const stopped = await onGitHub('/wave plan Add a farewell function', 'alice', '0.05')
    expect(stopped.result.code, stopped.result.stderr).toBe(5)
    expect(server.messageRequests).toHaveLength(2)
    const name = nameIn(stickyOn(7).body)
    // The stop names the Action's input and the comment that goes on, never a flag or a CLI command.
    const hint = `To go on with the exploration kept: raise the max-budget-usd input, then /wave resume ${name} (the cap counts what was spent before).`
    expect(stopped.result.stderr).toContain(hint)
    expect(stopped.result.stderr).toContain('the max-budget-usd input 0.05')
    expect(stopped.result.stderr).not.toMatch(/--max-budget-usd|wave plan --resume|--revise/)
    const sticky = stickyOn(7).body
    expect(statusOf(sticky)).toBe('❌ failed')
    expect(sticky).toContain(`/wave resume ${name}`)

    // A job whose cache restored nothing: said, with how to plan again; nothing asked of the model.
    const nothing = await onGitHub(`/wave resume ${name}`, 'alice', '1')
    expect(nothing.result.code).toBe(2)
    expect(repliesTo('alice').at(-1)!.body).toContain(`Nothing of plan ${name}'s stopped planning was kept for this job`)
    expect(server.messageRequests).toHaveLength(2)

    // Hostile: a transcript not as the stopped session left it (what the model would be told it did) is refused.
    const forged = path.join(sandbox.root, 'forged-home')
    cpSync(stopped.home, forged, {recursive: true})
    appendFileSync(path.join(forged, 'plans', `${name}.transcript.jsonl`), '\n')
    const refused = await onGitHub(`/wave resume ${name}`, 'alice', '1', forged)
    expect(refused.result.code).toBe(4)
    expect(repliesTo('alice').at(-1)!.body).toContain('its transcript is not the one the stopped session left')
    expect(server.messageRequests).toHaveLength(2)

    // With the kept state: the session goes on from its Reads, writes the plan, and the comment shows it.
    server.push((request: RecordedRequest) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})), reply('Planned.'))
    const resumed = await onGitHub(`/wave resume ${name}`, 'alice', '1', stopped.home)
    expect(resumed.result.code, resumed.result.stderr).toBe(0)
    const [first] = server.messageRequests.slice(2)
    const sent: Array<{role: string; content: unknown}> = first.body.messages
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    const reads = [sent[1], sent[3]].map((message) => blocksOf(message).find((block) => block.type === 'tool_use')!)
    expect(reads.map((read) => read.input)).toEqual([{file_path: 'README.md'}, {file_path: 'src/util.ts'}])
    const results = [sent[2], sent[4]].map((message) => blocksOf(message).find((block) => block.type === 'tool_result')!)
    expect(results.map((result) => result.tool_use_id)).toEqual(reads.map((read) => read.id))
    expect(JSON.stringify(results[1].content)).toContain('export function greet')
    expect(blocksOf(sent[4]).at(-1)!.text).toMatch(/resumed with wave plan --resume/)

    const shown = stickyOn(7).body
    expect(nameIn(shown)).toBe(name)
    expect(statusOf(shown)).toBe('⏳ awaiting approval')
    expect(shown).toContain('1. Create src/farewell.ts exporting farewell(name).')
    expect(shown).toContain(`/wave approve ${name} --sha256 `)
    expect(readFileSync(path.join(resumed.home, 'plans', `${name}.md`), 'utf8')).toBe(PLAN)
  })
})
