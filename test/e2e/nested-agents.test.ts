/**
 * An agent that asks for an agent of its own (issue #35): what its model is told, through bin/run.js and
 * the scripted server. The policy refuses it in Claude Code's words ("subagents cannot spawn other
 * subagents"), under either of the tool's names, for an Explore agent in plan mode and a general-purpose
 * one in a run; the session's own Agent call (the control) starts the agent and gets its final message.
 */
import {describe, expect, it} from 'vitest'

import {planPathIn, type RecordedRequest, reply, type StaticTurn, systemText, text, toolNames, toolResults, toolUse} from '../support/messages-server.js'
import {type ScriptedSession, useScriptedSession, waveIn} from '../support/session.js'

let session: ScriptedSession
useScriptedSession((ready) => (session = ready))
const wave = waveIn(() => session)

const REFUSAL = 'Subagents cannot spawn other subagents: you are running as an agent, and Agent (Task) is not available to you.'

const literally = (literal: string) => literal.replaceAll(/[.*+?^${}()|[\]\\]/g, '\\$&')

const isAgent = (request: RecordedRequest) => /You are an? (Explore|general-purpose) agent/.test(systemText(request))
const firstText = (request: RecordedRequest) => {
  const content = request.body.messages[0].content
  return typeof content === 'string' ? content : content.map((block: {text?: string}) => block.text ?? '').join('')
}

/**
 * The session starts one agent of `type`; the agent asks for two of its own (Agent, then Task), then
 * reports what it was told; the session ends with `finish`, then "Done." for any turn after it. One more
 * turn is scripted than a session takes: unused, it is never asked for.
 */
function script(type: string, finish: (request: RecordedRequest) => StaticTurn): Array<(request: RecordedRequest) => StaticTurn> {
  let parentTurn = 0
  const router = (request: RecordedRequest): StaticTurn => {
    if (!isAgent(request)) {
      parentTurn++
      if (parentTurn === 1) return reply(toolUse('Agent', {description: 'look around', prompt: 'CHILD: look around', subagent_type: type}))
      return parentTurn === 2 ? finish(request) : reply(text('Done.'))
    }

    const results = toolResults(request)
    if (results.length === 0) {
      return reply(
        toolUse('Agent', {description: 'grandchild', prompt: 'GRANDCHILD', subagent_type: 'Explore'}),
        toolUse('Task', {description: 'grandchild', prompt: 'GRANDCHILD', subagent_type: type}),
      )
    }

    return reply(text(`child saw: ${results.map((result) => `${result.is_error ? 'ERR' : 'OK'} ${result.text}`).join(' | ')}`))
  }

  return Array.from({length: 6}, () => router)
}

function expectRefusedTwice(label: string): void {
  const agentRequests = session.server.messageRequests.filter(isAgent)
  // The agent's first request: offered no Agent tool (the policy's table), its prompt the session's.
  expect(firstText(agentRequests[0])).toBe('CHILD: look around')
  expect(toolNames(agentRequests[0]), label).not.toContain('Agent')
  // What the agent's model received for its two calls: the policy's refusal, as errors, and no grandchild started.
  const answered = toolResults(agentRequests[1])
  expect(answered, label).toHaveLength(2)
  for (const result of answered) {
    expect(result.is_error, label).toBe(true)
    expect(result.text, label).toMatch(
      new RegExp(
        `^Permission denied: ${literally(REFUSAL)} Do this part of the work with your own tools, then finish with your findings as your final message\\. Available tools: Read, `,
      ),
    )
    expect(result.text, label).not.toMatch(/Available tools: .*\bAgent\b/)
  }

  expect(
    session.server.messageRequests.some((request) => firstText(request) === 'GRANDCHILD'),
    label,
  ).toBe(false)
  // Control: the session's own Agent call started the agent and got its final message, the refusals in it.
  const parentAfter = session.server.messageRequests.filter((request) => !isAgent(request))[1]
  const [child] = toolResults(parentAfter)
  expect(child.is_error ?? false, label).toBe(false)
  expect(child.text, label).toContain(`child saw: ERR Permission denied: ${REFUSAL}`)
}

describe('an agent asking for an agent', {timeout: 60_000}, () => {
  it('an Explore agent in plan mode is refused in Claude Code’s words, under Agent and Task', async () => {
    const plan = '# Plan\n\n## Scope\n- `src/util.ts`\n\n## Verification\n- `true`\n'
    session.server.push(
      ...script('Explore', (request) => reply(toolUse('Write', {content: plan, file_path: planPathIn(request)}), toolUse('ExitPlanMode', {}))),
    )
    const result = await wave(['plan', '--task', 'Look around', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expectRefusedTwice('Explore')
  })

  it('a general-purpose agent in a run is refused in the same words', async () => {
    session.server.push(...script('general-purpose', () => reply(text('Done.'))))
    const result = await wave(['run', '--task', 'Look around', '--mode', 'bypassPermissions', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expectRefusedTwice('general-purpose')
  })
})
