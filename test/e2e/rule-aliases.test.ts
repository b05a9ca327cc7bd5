/**
 * Issue 48: a rule names a tool by any of its names. Claude Code's configurations deny agents as `Task`;
 * the registry answers a `Task` call with the Agent tool, and a `Task` rule (from --disallowed-tools,
 * --deny or the settings) governs it: the model is not offered Agent, its Task call is refused, and the
 * agent's Bash never writes. The control: the same script with no rule starts the agent, whose Bash writes.
 */
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {type RecordedRequest, reply, type StaticTurn, systemText, text, toolNames, toolResults, toolUse} from '../support/messages-server.js'
import {type ScriptedSession, useScriptedSession, waveIn} from '../support/session.js'

let session: ScriptedSession
useScriptedSession((ready) => (session = ready))
const wave = waveIn(() => session)

const isAgent = (request: RecordedRequest) => /You are an? (Explore|general-purpose) agent/.test(systemText(request))

/** The session calls Task (Claude Code's older name) for a general-purpose agent whose Bash writes `pwned`. */
function script(): Array<(request: RecordedRequest) => StaticTurn> {
  let parentTurn = 0
  const router = (request: RecordedRequest): StaticTurn => {
    if (isAgent(request)) {
      return toolResults(request).length === 0 ? reply(toolUse('Bash', {command: 'touch pwned'})) : reply(text('wrote it'))
    }

    parentTurn++
    return parentTurn === 1 ? reply(toolUse('Task', {description: 'write', prompt: 'write pwned', subagent_type: 'general-purpose'})) : reply(text('Done.'))
  }

  return Array.from({length: 5}, () => router)
}

const WAYS: Array<[string, string[], () => void]> = [
  ['--disallowed-tools Task', ['--disallowed-tools', 'Task'], () => {}],
  ['--deny Task', ['--deny', 'Task'], () => {}],
  [
    'a settings deny rule Task',
    [],
    () => {
      mkdirSync(path.join(session.sandbox.home, '.wave'), {recursive: true})
      writeFileSync(path.join(session.sandbox.home, '.wave', 'settings.json'), JSON.stringify({permissions: {deny: ['Task']}}))
    },
  ],
]

describe('a rule naming Task governs the Agent tool', {timeout: 60_000}, () => {
  it.each(WAYS)('%s: Agent is not offered, the Task call is refused, nothing is written', async (_label, flags, setup) => {
    setup()
    session.server.push(...script())
    const result = await wave(['run', '--task', 'Delegate', '--mode', 'bypassPermissions', ...flags, '--json'])
    expect(result.code, result.stderr).toBe(0)
    const requests = session.server.messageRequests
    expect(toolNames(requests[0])).not.toContain('Agent')
    expect(requests.some((request) => isAgent(request))).toBe(false)
    const [answer] = toolResults(requests[1])
    expect(answer.is_error).toBe(true)
    expect(existsSync(path.join(session.sandbox.repo, 'pwned'))).toBe(false)
  })

  it('control: with no rule the same Task call starts the agent and its Bash writes', async () => {
    session.server.push(...script())
    const result = await wave(['run', '--task', 'Delegate', '--mode', 'bypassPermissions', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(session.server.messageRequests[0])).toContain('Agent')
    expect(session.server.messageRequests.some((request) => isAgent(request))).toBe(true)
    expect(existsSync(path.join(session.sandbox.repo, 'pwned'))).toBe(true)
  })

  it('a rule naming no tool is a warning naming it', async () => {
    session.server.push(reply(text('Done.')))
    const result = await wave(['run', '--task', 'Nothing', '--mode', 'bypassPermissions', '--deny', 'Tsak', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('The rule Tsak names no tool of this session: it governs nothing.')
    expect(result.stderr).not.toContain('The rule Task')
  })
})
