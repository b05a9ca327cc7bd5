/**
 * Hooks around the agents a session starts (the Agent tool), end to end: SubagentStop fires when an
 * agent ends, with Claude Code's input (its id, type, last message and its own transcript), and a block
 * sends the agent back once, as Stop does the session; the session's PreToolUse guard holds inside an
 * agent too. Real hook scripts on disk; judged by what the model received and what the hooks were given.
 */
import {existsSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {hookLog, hooks, lastUserText, nodeHook, userSettingsIn, writeJson} from '../support/hook-scripts.js'
import {type MessagesServer, type RecordedRequest, reply, type StaticTurn, systemText, text, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const isAgent = (request: RecordedRequest) => systemText(request).includes('You are an Explore agent')

describe('hooks and agents', () => {
  it('SubagentStop: Claude Code input, a block sends the agent back once; Stop is not fired for it; a PreToolUse guard holds inside it', async () => {
    const subagentStop = nodeHook(
      sandbox,
      'subagent-stop',
      `(input) => {
        input.seen = {agent: fs.readFileSync(input.agent_transcript_path, 'utf8'), session: fs.readFileSync(input.transcript_path, 'utf8')}
        return input.stop_hook_active ? undefined : {decision: 'block', reason: 'Also look for tests before you report.'}
      }`,
    )
    const otherType = nodeHook(sandbox, 'general-only', '() => undefined')
    const stop = nodeHook(sandbox, 'stop', '() => undefined')
    const guard = nodeHook(
      sandbox,
      'guard',
      `() => ({hookSpecificOutput: {hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no grepping today'}})`,
    )
    writeJson(userSettingsIn(sandbox), {
      hooks: {
        ...hooks('PreToolUse', guard, {matcher: 'Grep'}).hooks,
        ...hooks('Stop', stop).hooks,
        SubagentStop: [
          {hooks: [{command: subagentStop, type: 'command'}], matcher: 'Explore'},
          {hooks: [{command: otherType, type: 'command'}], matcher: 'general-purpose'},
        ],
      },
    })

    let agentTurn = 0
    let parentTurn = 0
    const router = (request: RecordedRequest): StaticTurn => {
      if (!isAgent(request)) {
        parentTurn++
        return parentTurn === 1
          ? reply(toolUse('Agent', {description: 'find greet', prompt: 'Where is greet defined?', subagent_type: 'Explore'}))
          : reply('Done.')
      }

      agentTurn++
      if (agentTurn === 1) return reply(toolUse('Grep', {pattern: 'function greet'}))
      return reply(text(agentTurn === 2 ? 'greet is in src/util.ts' : 'greet is in src/util.ts; there are no tests'))
    }

    server.push(...Array.from({length: 5}, () => router))
    const result = await wave(['run', '--task', 'Find greet', '--mode', 'acceptEdits'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe('Done.')

    const agentRequests = server.messageRequests.filter(isAgent)
    expect(agentRequests).toHaveLength(3)
    // The guard denied the agent's Grep, as it would the session's.
    expect(toolResults(agentRequests[1])[0]).toMatchObject({is_error: true})
    expect(toolResults(agentRequests[1])[0].text).toContain('no grepping today')
    expect(hookLog(sandbox, 'guard').map((input) => input.tool_name)).toEqual(['Grep'])
    // Sent back once with the hook's reason; its second answer is what the session got.
    expect(lastUserText(agentRequests[2])).toBe('Also look for tests before you report.')
    const parent = server.messageRequests.filter((request) => !isAgent(request))
    const [agentResult] = toolResults(parent[1])
    expect(agentResult.text).toBe('greet is in src/util.ts; there are no tests')

    const inputs = hookLog(sandbox, 'subagent-stop')
    expect(inputs.map((input) => input.stop_hook_active)).toEqual([false, true])
    expect(inputs.map((input) => input.last_assistant_message)).toEqual(['greet is in src/util.ts', 'greet is in src/util.ts; there are no tests'])
    for (const input of inputs) {
      expect(input).toMatchObject({
        agent_id: agentResult.tool_use_id,
        agent_type: 'Explore',
        cwd: sandbox.repo,
        hook_event_name: 'SubagentStop',
        permission_mode: 'acceptEdits',
      })
      // The agent's own conversation, and the session's (a task with no plan yet: a file of its own).
      expect(input.seen.agent).toContain('Where is greet defined?')
      expect(input.seen.agent).not.toContain('Find greet')
      expect(input.seen.session).toContain('Find greet')
      expect(input.agent_transcript_path).not.toBe(input.transcript_path)
    }

    expect(inputs[1].seen.agent).toContain('Also look for tests before you report.')
    // Both are wave's own files outside the workspace, gone with the session.
    expect(inputs[0].transcript_path.startsWith(sandbox.repo)).toBe(false)
    expect(existsSync(inputs[0].agent_transcript_path)).toBe(false)
    expect(existsSync(inputs[0].transcript_path)).toBe(false)
    // Control: the matcher holds (no general-purpose agent ran), and Stop fired once, for the session alone.
    expect(existsSync(`${sandbox.root}/general-only.log`)).toBe(false)
    expect(hookLog(sandbox, 'stop').map((input) => input.last_assistant_message)).toEqual(['Done.'])
  })
})
