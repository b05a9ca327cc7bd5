import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'

import {type SessionControl, ToolError} from '../../plugins/tool.js'
import {type AgentEvent, runAgent, type TokenUsage} from './loop.js'
import {ExitCode, WaveError} from '../errors.js'
import {assertCredentials, createClient} from './model.js'
import {appendTranscript, createPlan, isRegularFile, type NewPlan, planFileProblem, setPlanStatus} from '../plans/plans.js'
import type {ExecutionMode, PolicyContext} from '../policy/policy.js'
import {planModeSystemPrompt, taskSystemPrompt} from './prompts.js'
import {changedPaths, repositoryState} from '../workspace/git.js'
import {openSessionTools} from '../../plugins/toolset.js'
import {executePlan, filesChangedBy, type InlineApproval, type RunOutcome} from './run.js'
import {resolvePath, workspaceRoot} from '../workspace/paths.js'

export interface TaskOptions {
  task: string
  cwd: string
  mode: ExecutionMode
  allow: string[]
  /** `--approve`: a plan the model makes is approved and executed at once, in a fresh context. */
  approve?: InlineApproval
  model: string
  maxTurns: number
  signal: AbortSignal
  onEvent?: (event: AgentEvent) => void
  onStart?: (info: {mode: ExecutionMode; model: string; workspace: string}) => void
  onPlanMode?: (info: {planPath: string; name: string}) => void
}

export type TaskOutcome =
  | {kind: 'completed'; finalText: string; turns: number; usage: TokenUsage; filesChanged: string[]; denials: number; mode: ExecutionMode}
  | {kind: 'awaiting_approval'; planPath: string; name: string; turns: number; usage: TokenUsage}
  | {kind: 'executed'; planPath: string; name: string; planning: {turns: number; usage: TokenUsage}; run: RunOutcome}

/**
 * `wave run --task`: the task in the chosen mode, with EnterPlanMode on offer. If the model plans,
 * ExitPlanMode ends the session: with --approve the plan runs in a fresh context, else the command
 * stops with the plan awaiting approval (exit 10).
 */
export async function runTask(options: TaskOptions): Promise<TaskOutcome> {
  assertCredentials()
  const workspace = await workspaceRoot(options.cwd)
  const repository = await repositoryState(workspace)
  const before = repository ? await changedPaths(workspace) : new Map<string, string>()
  options.onStart?.({mode: options.mode, model: options.model, workspace})

  const tools = await openSessionTools({allow: options.allow, workspace})
  let policy: PolicyContext = {canEnterPlanMode: true, headless: true, mode: options.mode, rules: tools.rules, workspaceRoot: workspace}
  let plan: NewPlan | undefined
  let planFinished = false
  const transcript: MessageParam[] = []
  const session: SessionControl = {
    async enterPlanMode(reason) {
      if (plan) throw new ToolError('Plan mode was already used in this session.')
      plan = await createPlan({model: options.model, repository, task: options.task, workspace})
      policy = {...policy, canEnterPlanMode: false, mode: 'plan', planFile: plan.path}
      options.onPlanMode?.({name: plan.name, planPath: plan.path})
      for (const message of transcript) await appendTranscript(plan.path, {message, session: 'task'})
      const why = reason ? ` (${reason})` : ''
      return `Plan mode is active${why}. Explore read-only, write the plan to ${plan.path}, then call ExitPlanMode.`
    },
    async exitPlanMode(given) {
      if (!plan || policy.mode !== 'plan') throw new ToolError('Plan mode is not active.')
      const problem = await planFileProblem(plan.path, given, async (p) => (await resolvePath(workspace, p)).real)
      if (problem) throw new ToolError(problem)
      planFinished = true
      return options.approve
        ? 'The plan is approved and will be executed in a fresh session. End your turn now.'
        : 'The plan is recorded and awaits approval. End your turn now.'
    },
  }

  // Until the model enters plan mode there is no plan to keep a transcript beside: hold the messages.
  const record = async (message: MessageParam) => {
    transcript.push(message)
    if (plan) await appendTranscript(plan.path, {message, session: 'task'})
  }

  const messages: MessageParam[] = [{content: `Task:\n${options.task}`, role: 'user'}]
  await record(messages[0])
  const result = await runAgent({
    client: await createClient(),
    maxTurns: options.maxTurns,
    messages,
    model: options.model,
    onEvent: options.onEvent,
    onMessage: record,
    policy: () => policy,
    registry: tools.registry,
    session,
    signal: options.signal,
    stopRequested: () => planFinished,
    system: async () =>
      policy.mode === 'plan' && plan
        ? planModeSystemPrompt({planExists: await isRegularFile(plan.path), planFile: plan.path, workspace})
        : taskSystemPrompt({allow: tools.rules.allow.map((rule) => rule.source), mode: options.mode, workspace}),
  })

  if (!plan) {
    const filesChanged = await filesChangedBy(workspace, before, result.changed, Boolean(repository))
    return {denials: result.denials, filesChanged, finalText: result.finalText, kind: 'completed', mode: options.mode, turns: result.turns, usage: result.usage}
  }

  // A session that ended in plan mode without ExitPlanMode still leaves its plan for review, if it wrote one.
  const problem = await planFileProblem(plan.path, undefined, async (p) => p)
  if (problem) {
    await setPlanStatus(plan.path, 'failed')
    throw new WaveError(`The session entered plan mode but ended without a plan: ${problem}`, ExitCode.runtime)
  }

  await setPlanStatus(plan.path, 'draft')
  if (!options.approve) return {kind: 'awaiting_approval', name: plan.name, planPath: plan.path, turns: result.turns, usage: result.usage}

  const run = await executePlan({
    allowStale: false,
    approve: options.approve,
    cwd: workspace,
    maxTurns: options.maxTurns,
    model: options.model,
    onEvent: options.onEvent,
    planPath: plan.path,
    signal: options.signal,
  })
  return {kind: 'executed', name: plan.name, planPath: plan.path, planning: {turns: result.turns, usage: result.usage}, run}
}
