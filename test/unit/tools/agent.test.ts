import {describe, expect, it} from 'vitest'

import {NESTED_AGENT_REFUSAL} from '../../../src/policy/policy.js'
import agent from '../../../src/tools/agent.js'
import type {AgentLauncher} from '../../../src/tools/tool.js'
import {contextFor} from './context.js'

const input = {description: 'look', prompt: 'look around', subagent_type: 'Explore'}

/** A launcher that records what it was asked to start. */
function launcher(): AgentLauncher & {started: string[]} {
  const started: string[] = []
  return {
    async launch(request) {
      started.push(request.prompt)
      return 'found it'
    },
    started,
    types: () => ['Explore'],
  }
}

describe('the Agent tool, where it runs', () => {
  it("refuses an agent's call in the policy's words, starting nothing, even when a launcher is at hand", async () => {
    const agents = launcher()
    const ctx = {...(await contextFor('/tmp')), agents, nested: true}
    await expect(agent.run(input, ctx)).rejects.toThrow(NESTED_AGENT_REFUSAL)
    expect(agents.started).toEqual([])
  })

  it("control: the session's own call starts the agent and answers its final message", async () => {
    const agents = launcher()
    const ctx = {...(await contextFor('/tmp')), agents}
    await expect(agent.run(input, ctx)).resolves.toBe('found it')
    expect(agents.started).toEqual(['look around'])
  })
})
