import {stat} from 'node:fs/promises'

import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'

import {builtinRegistry} from '../plugins/registry.js'
import {type SessionControl, ToolError} from '../plugins/tool.js'
import {type AgentEvent, runAgent, type StopReason, type TokenUsage} from './agent.js'
import {ExitCode, WaveError} from './errors.js'
import {assertCredentials, createClient, scrubSecrets} from './model.js'
import {appendTranscript, createPlan, planFileProblem, readPlanState, writePlanState} from './plans.js'
import {NO_RULES, type PolicyContext} from './policy.js'
import {planModeSystemPrompt} from './prompts.js'
import {repositoryState} from './repository.js'
import {resolvePath, workspaceRoot} from './workspace.js'

export interface PlanOptions {
  task: string
  cwd: string
  model: string
  maxTurns: number
  signal: AbortSignal
  onEvent?: (event: AgentEvent) => void
  onStart?: (info: {planPath: string; name: string; model: string; workspace: string}) => void
}

export interface PlanOutcome {
  planPath: string
  name: string
  turns: number
  usage: TokenUsage
  stopReason: StopReason
  summary: string
}

/** `wave plan --task`: a plan-mode session whose one writable file is a freshly named plan. */
export async function makePlan(options: PlanOptions): Promise<PlanOutcome> {
  assertCredentials()
  const workspace = await workspaceRoot(options.cwd)
  const repository = await repositoryState(workspace)
  const plan = await createPlan({model: options.model, repository, task: options.task, workspace})
  options.onStart?.({model: options.model, name: plan.name, planPath: plan.path, workspace})

  const policy: PolicyContext = {headless: true, mode: 'plan', planFile: plan.path, rules: NO_RULES, workspaceRoot: workspace}
  let exitRequested = false
  const session: SessionControl = {
    async enterPlanMode() {
      throw new ToolError('Plan mode is already active.')
    },
    async exitPlanMode(planPath) {
      const problem = await planFileProblem(plan.path, planPath, async (p) => (await resolvePath(workspace, p)).real)
      if (problem) throw new ToolError(problem)
      exitRequested = true
      return 'The plan is complete and recorded for approval. End your turn now.'
    },
  }

  const messages: MessageParam[] = [{content: firstMessage(options.task, plan.path), role: 'user'}]
  await appendTranscript(plan.path, {message: messages[0], session: 'plan'})
  const client = await createClient()
  const result = await runAgent({
    client,
    maxTurns: options.maxTurns,
    messages,
    model: options.model,
    onEvent: options.onEvent,
    onMessage: (message) => appendTranscript(plan.path, {message: JSON.parse(scrubSecrets(JSON.stringify(message))), session: 'plan'}),
    policy: () => policy,
    registry: builtinRegistry(),
    session,
    signal: options.signal,
    stopRequested: () => exitRequested,
    system: async () => planModeSystemPrompt({planExists: await isFile(plan.path), planFile: plan.path, workspace}),
  }).catch(async (error: unknown) => {
    await markState(plan.path, 'failed')
    if (error instanceof WaveError && error.exitCode === ExitCode.limit) {
      const partial = (await isFile(plan.path)) ? ` The plan so far is at ${plan.path}.` : ''
      throw new WaveError(error.message + partial, error.exitCode, error.hint)
    }

    throw error
  })

  const problem = await planFileProblem(plan.path, undefined, async (p) => p)
  if (problem) {
    await markState(plan.path, 'failed')
    throw new WaveError(`The planning session ended without a plan: ${plan.path} ${(await isFile(plan.path)) ? 'is empty' : 'was never written'}.`, ExitCode.runtime)
  }

  await markState(plan.path, 'draft')
  return {name: plan.name, planPath: plan.path, stopReason: result.stopReason, summary: result.finalText, turns: result.turns, usage: result.usage}
}

function firstMessage(task: string, planFile: string): string {
  return `Task:\n${task}\n\nExplore the workspace and write an implementation plan for this task to ${planFile}.`
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile()
  } catch {
    return false
  }
}

async function markState(planPath: string, status: 'draft' | 'failed'): Promise<void> {
  const state = await readPlanState(planPath)
  if (state) await writePlanState(planPath, {...state, status})
}
