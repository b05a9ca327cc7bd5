/**
 * `wave run --task`: the task in the chosen mode, with EnterPlanMode on offer. If the model plans,
 * ExitPlanMode ends the session: with --approve the plan runs in a fresh context, else the command
 * stops with the plan awaiting approval (exit 10).
 */
import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'

import {openSessionTools} from '../../plugins/toolset.js'
import {ExitCode, WaveError} from '../errors.js'
import {appendTranscript, createPlan, setPlanStatus} from '../plans/plans.js'
import type {ExecutionMode} from '../policy/policy.js'
import {loadSettings} from '../settings.js'
import {changedPaths, repositoryState} from '../workspace/git.js'
import {workspaceRoot} from '../workspace/paths.js'
import type {StopReason, TokenUsage} from './loop.js'
import {assertCredentials, modelFrom} from './model.js'
import type {SessionStart} from './plan.js'
import {PlanMode} from './plan-mode.js'
import {taskSystemPrompt} from './prompts.js'
import {executePlan, filesChangedBy, type InlineApproval, type RunOutcome} from './run.js'
import {runSession, type SessionHost} from './session.js'

export interface TaskOptions {
  host: SessionHost
  task: string
  cwd: string
  mode: ExecutionMode
  allow: string[]
  /** `--approve`: a plan the model makes is approved and executed at once, in a fresh context. */
  approve?: InlineApproval
  model?: string
  maxTurns: number
  onStart?(info: SessionStart): void
  onPlanMode?(info: {planPath: string; name: string}): void
}

interface Tally {
  turns: number
  usage: TokenUsage
  stopReason: StopReason
}

export type TaskOutcome =
  | ({kind: 'completed'; finalText: string; filesChanged: string[]; denials: number; mode: ExecutionMode} & Tally)
  | ({kind: 'awaiting_approval'; planPath: string; name: string} & Tally)
  | {kind: 'executed'; planPath: string; name: string; planning: Tally; run: RunOutcome}

export async function runTask(options: TaskOptions): Promise<TaskOutcome> {
  const workspace = await workspaceRoot(options.cwd)
  const settings = loadSettings(workspace)
  const model = modelFrom(options.model, settings.model)
  assertCredentials()
  const repository = await repositoryState(workspace)
  const before = repository ? await changedPaths(workspace) : new Map<string, string>()
  options.onStart?.({mode: options.mode, model, workspace})

  // Until the model enters plan mode there is no plan to keep a transcript beside: hold the messages.
  const held: MessageParam[] = []
  let planPath: string | undefined
  const planMode = new PlanMode({
    async enter() {
      const plan = await createPlan({model, repository, task: options.task, workspace})
      planPath = plan.path
      options.onPlanMode?.({name: plan.name, planPath: plan.path})
      for (const message of held) await appendTranscript(plan.path, {message, session: 'task'})
      return plan
    },
    exitMessage: options.approve
      ? 'The plan is approved and will be executed in a fresh session. End your turn now.'
      : 'The plan is recorded and awaits approval. End your turn now.',
    workspace,
  })

  // One tool set for the task and, with --approve, the execution of its plan: MCP servers start once.
  const tools = await openSessionTools({config: options.host.config, settings, warn: options.host.warn, workspace})
  try {
    const result = await runSession({
      allow: options.allow,
      host: options.host,
      maxTurns: options.maxTurns,
      mode: options.mode,
      model,
      opening: `Task:\n${options.task}`,
      planMode,
      settings,
      system: (rules) => taskSystemPrompt({allow: rules.allow.map((rule) => rule.source), mode: options.mode, workspace}),
      tools,
      async transcript(message) {
        held.push(message)
        if (planPath) await appendTranscript(planPath, {message, session: 'task'})
      },
      workspace,
    })
    const tally = {stopReason: result.stopReason, turns: result.turns, usage: result.usage}

    const plan = planMode.planFile
    if (!plan) {
      const filesChanged = await filesChangedBy(workspace, before, result.changed, Boolean(repository))
      return {...tally, denials: result.denials, filesChanged, finalText: result.finalText, kind: 'completed', mode: options.mode}
    }

    // A session that ended in plan mode without ExitPlanMode still leaves its plan for review, if it wrote one.
    const problem = await planMode.problem()
    if (problem) {
      await setPlanStatus(plan.path, 'failed')
      throw new WaveError(`The session entered plan mode but ended without a plan: ${problem}`, ExitCode.runtime)
    }

    await setPlanStatus(plan.path, 'draft')
    if (!options.approve) return {...tally, kind: 'awaiting_approval', name: plan.name, planPath: plan.path}

    const run = await executePlan({
      allowStale: false,
      approve: options.approve,
      cwd: workspace,
      host: options.host,
      // The settings and tools taken before the task ran: whatever it wrote cannot widen the run.
      inherited: {settings, tools},
      maxTurns: options.maxTurns,
      model,
      planPath: plan.path,
    })
    return {kind: 'executed', name: plan.name, planPath: plan.path, planning: tally, run}
  } finally {
    await tools.close()
  }
}
