/**
 * The types of agent a session offers through the Agent tool, each as the launcher (src/agent/subagents.ts)
 * runs it: Explore (plan mode's policy without a plan file: the read-only tools and the throwaway Bash),
 * and outside plan mode general-purpose (the session's own tools and policy). Both are `nested`: the
 * policy refuses them every control tool, Agent included.
 */
import type {SubagentKind} from './subagents.js'
import type {SandboxSettings} from '../base/process/sandbox.js'
import type {ExecutionMode} from '../policy/modes.js'
import type {PlanBash, PolicyContext, ToolIdentity} from '../policy/policy.js'
import type {BackgroundTasks} from '../tools/background.js'
import type {ToolRegistry} from '../tools/registry.js'
import {planModePolicy} from '../policy/plan-policy.js'
import {explorePrompt, generalPurposePrompt} from './prompts/agents.js'
import {permissions} from './prompts/execution.js'

/** The Agent tool as the policy knows it, by each of its names: whether a session offers agents is whether it offers this. */
export const AGENT_TOOL: ToolIdentity = {access: 'control', aliases: ['Task'], name: 'Agent'}

interface AgentKindsInput {
  /** Started in plan mode: Explore only. */
  planMode: boolean
  /** The session's policy in force. */
  policy(): PolicyContext
  planBash(): PlanBash
  registry: ToolRegistry
  sandbox?: SandboxSettings
  tasks?: BackgroundTasks
}

export function agentKinds(input: AgentKindsInput): Record<string, SubagentKind> {
  const {registry, sandbox} = input
  const explore: SubagentKind = {
    // Plan mode's row of the policy, with no plan file: reads, the throwaway Bash, nothing written.
    policy: () => ({...planModePolicy(input.policy(), {planBash: input.planBash()}), nested: true}),
    registry,
    sandbox,
    system: explorePrompt(input.planBash()),
  }
  if (input.planMode) return {Explore: explore}
  const now = input.policy()
  const general: SubagentKind = {
    policy: () => ({...input.policy(), nested: true}),
    registry,
    sandbox,
    system: generalPurposePrompt(permissions({allow: now.rules.allow.map((rule) => rule.source), checks: now.approvedChecks, mode: now.mode as ExecutionMode})),
    tasks: input.tasks,
  }
  return {Explore: explore, 'general-purpose': general}
}
