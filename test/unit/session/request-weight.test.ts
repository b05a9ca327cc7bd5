/**
 * What a planning session sends on every request besides the conversation (the system prompt and the
 * tool definitions, as JSON) stays within 0.15× of what Claude Code sends (issue 32: 91 KB, Claude
 * Code 2.1.332), with every tool plan mode offers where its Bash can run. The benchmark measures the
 * whole first request (`npm run bench -- --only=weight`); this keeps a longer description or prompt
 * paragraph from growing it unnoticed.
 */
import {describe, expect, it} from 'vitest'

import {type SystemPrompt, turnParams} from '../../../src/agent/request.js'
import {environmentSection} from '../../../src/session/environment.js'
import {PlanMode} from '../../../src/session/plan-mode.js'
import {parseRules, type PolicyContext} from '../../../src/policy/policy.js'
import {builtinRegistry} from '../../../src/tools/registry.js'

const CLAUDE_CODE_BYTES = 91 * 1024
const workspace = '/tmp/wave-bench-yawSla/repo'
const planFile = '/tmp/wave-bench-yawSla/home/.wave/plans/integrated-trout.md'

/** The request's system and tools as the loop sends them (turnParams: the blocks and the breakpoints). */
function fixedBytes(system: SystemPrompt, tools: object[]): number {
  const params = turnParams({maxTokens: 1024, messages: [], model: 'claude-sonnet-5-5', system, tools})
  return Buffer.byteLength(JSON.stringify(params.system)) + Buffer.byteLength(JSON.stringify(params.tools))
}

describe("plan mode's request weight", () => {
  it('is within 0.15× of Claude Code’s, Bash and agents offered', async () => {
    const policy: PolicyContext = {
      headless: true,
      mode: 'plan',
      planBash: {kind: 'read-only', offered: true},
      planFile,
      rules: parseRules(),
      workspaceRoot: workspace,
    }
    const tools = builtinRegistry().apiTools(policy)
    // The environment of the benchmark's small repository (bench/weight.js).
    const context = environmentSection({
      date: '2026-11-27',
      layout: ['README.md'],
      platform: 'linux x64',
      repository: {status: ['## main'], subjects: ['bench']},
      workspace,
    })
    const system = await new PlanMode({plan: {name: 'integrated-trout', path: planFile}, workspace}).prompt(
      {session: context},
      {
        agents: true,
        bash: {kind: 'read-only', offered: true},
      },
    )

    // Control: what the session offers here is every tool plan mode can use.
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(['Read', 'Glob', 'Grep', 'LS', 'Write', 'Edit', 'Bash', 'TaskOutput', 'TaskStop', 'AskUserQuestion', 'ExitPlanMode', 'Agent']),
    )
    expect(system.shared).toContain('Run commands with Bash')
    expect(system.session).toContain('# Environment')
    expect(fixedBytes(system, tools)).toBeLessThanOrEqual(0.15 * CLAUDE_CODE_BYTES)
  })
})
