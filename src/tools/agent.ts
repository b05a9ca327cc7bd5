/**
 * Claude Code's Agent tool (called Task by models trained on its older harness): a fresh conversation
 * with its own system prompt and tools, whose final message is the call's result. Plan mode offers
 * Explore agents (read-only tools and plan mode's throwaway Bash); runs also offer general-purpose ones
 * (the run's own tools and policy). What an agent may do is the policy's (`nested` in policy.ts), how it
 * runs and what bounds it is the session's launcher (src/agent/subagents.ts).
 */
import {z} from 'zod'

import {NESTED_AGENT_REFUSAL} from '../policy/policy.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

export default defineTool({
  access: 'control',
  aliases: ['Task'],
  concurrent: true,
  description:
    'Launch an agent: a fresh conversation, with its own tools, that works on your prompt and returns its final message. ' +
    'subagent_type "Explore": a fast read-only explorer (read tools; Bash in a throwaway sandbox where plan mode has one) for broad questions over a large tree; ' +
    'outside plan mode also "general-purpose": this session\'s tools and permissions, for a self-contained piece of work. ' +
    'The agent sees none of this conversation: say all it needs, and what to report. Agents called in one turn run concurrently, ' +
    'each bounded by a turn cap, a share of the budget and a time limit; one that reaches a bound returns what it found so far, marked as cut. Agents cannot start agents; model and run_in_background are not supported.',
  input: () =>
    z.object({
      description: z.string().describe('3-5 words'),
      prompt: z.string(),
      subagent_type: z.string(),
      model: z.enum(['sonnet', 'opus', 'haiku']).optional(),
      run_in_background: z.boolean().optional(),
    }),
  name: 'Agent',
  resultCap: DEFAULT_RESULT_CAP,
  async run(input, ctx) {
    // The policy refuses an agent's Agent call before it gets here; should one reach the tool, the same words.
    if (ctx.nested) throw new ToolError(NESTED_AGENT_REFUSAL)
    if (!ctx.agents) throw new ToolError('Agents cannot be started here: do the work with your own tools.')
    if (input.model !== undefined) {
      throw new ToolError(`model is not supported: every agent uses this session's model. Call Agent again without model.`)
    }

    if (input.run_in_background) {
      throw new ToolError(
        'run_in_background is not supported for agents: they run while the call waits, and several called in one turn run concurrently. Call Agent again without it.',
      )
    }

    const planMode = ctx.planFile !== undefined
    const types = ctx.agents.types(planMode)
    if (!types.includes(input.subagent_type)) {
      const where = planMode ? 'in plan mode' : 'here'
      throw new ToolError(
        `Unknown subagent_type ${JSON.stringify(input.subagent_type)}: ${where} the types are ${types.map((type) => JSON.stringify(type)).join(', ')}.`,
      )
    }

    if (!input.prompt.trim()) throw new ToolError('prompt is empty: say what the agent should find or do, and what to report back.')
    return ctx.agents.launch(
      {description: input.description, id: ctx.callId ?? 'agent', planMode, prompt: input.prompt, subagentType: input.subagent_type},
      ctx.signal,
    )
  },
})
