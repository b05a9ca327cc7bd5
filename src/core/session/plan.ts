import {lstat, realpath, stat} from 'node:fs/promises'
import path from 'node:path'

import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'

import {type SessionControl, ToolError} from '../../plugins/tool.js'
import {type AgentEvent, runAgent, type StopReason, type TokenUsage} from './loop.js'
import {approvalPathFor, readApproval} from '../plans/approval.js'
import {ExitCode, usageError, WaveError} from '../errors.js'
import {assertCredentials, createClient} from './model.js'
import {appendTranscript, createPlan, ensurePlansDir, isRegularFile, planFileProblem, planNameOf, planSidecars, readPlanStateChecked, setPlanStatus} from '../plans/plans.js'
import type {PolicyContext} from '../policy/policy.js'
import {planModeSystemPrompt} from './prompts.js'
import {repositoryState} from '../workspace/git.js'
import {openSessionTools} from '../../plugins/toolset.js'
import {resolvePath, workspaceRoot} from '../workspace/paths.js'

export interface SessionCallbacks {
  signal: AbortSignal
  /** `--allow` rules, on top of the settings files' (e.g. WebFetch(domain:docs.example.com) for research). */
  allow?: string[]
  onEvent?: (event: AgentEvent) => void
  onStart?: (info: {planPath: string; name: string; model: string; workspace: string}) => void
}

export interface PlanOptions extends SessionCallbacks {
  task: string
  cwd: string
  model: string
  maxTurns: number
}

export interface ReviseOptions extends SessionCallbacks {
  planPath: string
  feedback?: string
  /** Default: the workspace the plan was made in. */
  cwd?: string
  model: string
  maxTurns: number
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
  const opening = `Task:\n${options.task}\n\nExplore the workspace and write an implementation plan for this task to ${plan.path}.`
  return planSession({...options, opening, planPath: plan.path, transcriptLabel: 'plan', workspace})
}

/**
 * `wave plan --revise`: the same plan file, in plan mode again, with the original task and the
 * reviewer's feedback in the first message. Also picks up a session that failed or was interrupted.
 */
export async function revisePlan(options: ReviseOptions): Promise<PlanOutcome> {
  const planPath = await planInPlansDir(options.planPath)
  const state = await readPlanStateChecked(planPath)
  const record = await readApproval(approvalPathFor(planPath), planPath).catch(() => undefined)
  const task = state?.task || record?.task
  if (!task) throw usageError(`Nothing is known of the task behind ${planPath}: its state file is missing.`)
  const feedback = options.feedback?.trim() || newestFeedback(record)
  assertCredentials()
  const workspace = await workspaceRoot(options.cwd ?? (await existingDir(state?.workspace)) ?? process.cwd())

  const review = feedback ? `A reviewer asked for changes:\n${feedback}\n\n` : ''
  const opening = `Task:\n${task}\n\n${review}Revise the plan at ${planPath} for this task${feedback ? ', addressing the feedback' : ', completing it where it is unfinished'}. Read it first, then edit it.`
  return planSession({...options, opening, planPath, transcriptLabel: 'revise', workspace})
}

interface SessionInput extends SessionCallbacks {
  planPath: string
  workspace: string
  opening: string
  model: string
  maxTurns: number
  transcriptLabel: string
}

/** One planning session on one plan file: only that file is writable, the rest read-only. */
async function planSession(input: SessionInput): Promise<PlanOutcome> {
  const {planPath, workspace} = input
  const name = planNameOf(planPath)
  input.onStart?.({model: input.model, name, planPath, workspace})

  const tools = await openSessionTools({allow: input.allow, workspace})
  const policy: PolicyContext = {headless: true, mode: 'plan', planFile: planPath, rules: tools.rules, workspaceRoot: workspace}
  let exitRequested = false
  const session: SessionControl = {
    async enterPlanMode() {
      throw new ToolError('Plan mode is already active.')
    },
    async exitPlanMode(given) {
      const problem = await planFileProblem(planPath, given, async (p) => (await resolvePath(workspace, p)).real)
      if (problem) throw new ToolError(problem)
      exitRequested = true
      return 'The plan is complete and recorded for approval. End your turn now.'
    },
  }

  const transcript = (message: MessageParam) =>
    appendTranscript(planPath, {message, session: input.transcriptLabel})
  const messages: MessageParam[] = [{content: input.opening, role: 'user'}]
  await transcript(messages[0])
  const result = await runAgent({
    client: await createClient(),
    maxTurns: input.maxTurns,
    messages,
    model: input.model,
    onEvent: input.onEvent,
    onMessage: transcript,
    policy: () => policy,
    registry: tools.registry,
    session,
    signal: input.signal,
    stopRequested: () => exitRequested,
    system: async () => planModeSystemPrompt({planExists: await isRegularFile(planPath), planFile: planPath, workspace}),
  }).catch(async (error: unknown) => {
    await setPlanStatus(planPath, 'failed')
    const partial = (await isRegularFile(planPath)) ? ` The plan so far is at ${planPath}; continue with wave plan --revise ${planPath}.` : ''
    if (error instanceof WaveError) throw new WaveError(error.message + partial, error.exitCode, error.hint)
    throw error
  })

  const problem = await planFileProblem(planPath, undefined, async (p) => p)
  if (problem) {
    await setPlanStatus(planPath, 'failed')
    throw new WaveError(`The planning session ended without a plan: ${planPath} ${(await isRegularFile(planPath)) ? 'is empty' : 'was never written'}.`, ExitCode.runtime)
  }

  await setPlanStatus(planPath, 'draft')
  return {name, planPath, stopReason: result.stopReason, summary: result.finalText, turns: result.turns, usage: result.usage}
}

/** A plan to revise must be one of wave's: a regular file (or a plan still to write) in the plans directory. */
async function planInPlansDir(given: string): Promise<string> {
  const dir = await ensurePlansDir()
  const absolute = path.resolve(given)
  const parent = await existingDir(path.dirname(absolute))
  const planPath = parent ? path.join(parent, path.basename(absolute)) : absolute
  if (path.dirname(planPath) !== dir || !planPath.endsWith('.md')) {
    throw usageError(`${given} is not a plan in ${dir}: only wave's own plans can be revised.`)
  }

  const [plan, state] = await Promise.all([lstat(planPath).catch(() => undefined), stat(planSidecars(planPath).state).catch(() => undefined)])
  if (!plan && !state) throw usageError(`Plan not found: ${given}`)
  if (plan && !plan.isFile()) throw usageError(`The plan ${given} is not a regular file.`)
  return planPath
}

function newestFeedback(record: Awaited<ReturnType<typeof readApproval>> | undefined): string | undefined {
  if (!record) return undefined
  const decisions = [...record.history].reverse()
  const wanted = decisions.find((entry) => entry.decision !== 'approved' && entry.feedback)
  return wanted?.feedback ?? (record.decision === 'approved' ? undefined : record.feedback ?? undefined)
}

async function existingDir(dir: string | undefined): Promise<string | undefined> {
  if (!dir) return undefined
  try {
    return (await stat(dir)).isDirectory() ? await realpath(dir) : undefined
  } catch {
    return undefined
  }
}
