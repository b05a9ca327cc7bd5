/**
 * Plan mode, whole: the state a session is in (not yet / planning / plan finished), the policy fields it
 * sets, the two control tools' behaviour (EnterPlanMode, ExitPlanMode), the plan-file checks and the
 * system prompt with the design's reminder. What plan mode may do with each access class is a row of the
 * policy table (src/policy/policy.ts); everything else about it is here.
 *
 * `wave plan` and `--revise` start in plan mode on a known plan file; `wave run --task` may enter it once,
 * when the model calls EnterPlanMode; `wave run plan.md` never can (the policy refuses both control tools,
 * and this object refuses them again).
 */
import {readFile, stat} from 'node:fs/promises'

import {type AllowedPrompt, type SessionControl, ToolError} from '../tools/tool.js'
import {recordAllowedPrompts} from '../plans/lifecycle.js'
import {isRegularFile} from '../plans/store.js'
import {PLAN_MODE_REFUSALS, type PlanBash, type PolicyContext} from '../policy/policy.js'
import {planModePolicy} from '../policy/plan-policy.js'
import {throwawayStatus} from '../base/process/sandbox.js'
import {resolvePath} from '../base/workspace/paths.js'
import {planPrompt, type PlanTools} from './prompts/plan.js'
import type {SystemPrompt} from '../agent/request.js'

/**
 * Whether plan mode runs Bash here, and how: in a throwaway sandbox when it can start and the settings
 * leave it on; never unsandboxed. Asked when plan mode is first in force (it starts bwrap once).
 */
export function planBashOf(settings: {planModeBash: boolean}): PlanBash {
  if (!settings.planModeBash) return {offered: false, why: 'planMode.bash is false in the settings'}
  const status = throwawayStatus()
  if (!status.available) return {offered: false, why: `${status.problem.replace(/\.$/, '')}; plan mode never runs a command unsandboxed`}
  return {kind: status.kind, offered: true}
}

export interface PlanFile {
  path: string
  name: string
}

export interface PlanModeOptions {
  workspace: string
  /** The plan file of a session that starts in plan mode (`wave plan`, `--revise`). */
  plan?: PlanFile
  /** For sessions that may enter plan mode (`run --task`): makes the plan file on entry. */
  enter?: (reason?: string) => Promise<PlanFile>
  /** What ExitPlanMode tells the model happens next. */
  exitMessage?: string
}

export class PlanMode implements SessionControl {
  private plan: PlanFile | undefined
  private entered = false
  /** Whether the plan file existed when plan mode began: the reminder's variant for the whole session. */
  private planExisted: boolean | undefined
  /** Set by ExitPlanMode once the plan file holds a plan: the session ends after this round of calls. */
  finished = false

  constructor(private readonly options: PlanModeOptions) {
    this.plan = options.plan
  }

  get active(): boolean {
    return this.plan !== undefined
  }

  /** The model entered plan mode itself (EnterPlanMode, `run --task`): once finished, the plan is what the session hands on. */
  get enteredByModel(): boolean {
    return this.entered
  }

  get planFile(): PlanFile | undefined {
    return this.plan
  }

  /**
   * The session's policy `base` as plan mode's state makes it: plan mode's own (policy/plan-policy.ts)
   * while active, else whether EnterPlanMode is offered. Asked every turn, since EnterPlanMode changes it
   * mid-session; `planBash` only while plan mode is in force (the answer may start bwrap).
   */
  policy(base: PolicyContext, planBash: () => PlanBash): PolicyContext {
    if (this.plan) return planModePolicy(base, {planBash: planBash(), planFile: this.plan.path})
    return this.options.enter && !this.entered ? {...base, canEnterPlanMode: true} : base
  }

  /**
   * The system prompt while plan mode is active: plan mode's instructions and the session's shared
   * `context` (the repository's instructions), then its own (the environment) and the Plan File Info
   * block that ends it.
   */
  async prompt(context: Partial<SystemPrompt> = {}, tools?: PlanTools): Promise<SystemPrompt> {
    const plan = this.plan!
    // The reminder says whether the plan file existed when plan mode began, and keeps saying it: the
    // system prompt comes before the conversation in the prompt cache's prefix, so a reminder that
    // changed when the model first wrote the plan would have every turn so far written to the cache again.
    this.planExisted ??= isRegularFile(plan.path)
    return {
      session: [context.session, planFileInfo(plan.path, this.planExisted)].filter(Boolean).join('\n\n'),
      shared: [planPrompt(tools), context.shared].filter(Boolean).join('\n\n'),
    }
  }

  async enterPlanMode(reason?: string): Promise<string> {
    if (this.plan) throw new ToolError(PLAN_MODE_REFUSALS.alreadyActive)
    if (!this.options.enter || this.entered) throw new ToolError(PLAN_MODE_REFUSALS.cannotEnter)
    this.entered = true
    this.plan = await this.options.enter(reason)
    const why = reason ? ` (${reason})` : ''
    return `Plan mode is active${why}. Explore read-only, write the plan to ${this.plan.path}, then call ExitPlanMode.`
  }

  async exitPlanMode(given?: string, allowedPrompts?: AllowedPrompt[]): Promise<string> {
    if (!this.plan) throw new ToolError(PLAN_MODE_REFUSALS.notActive)
    const resolve = async (p: string) => (await resolvePath(this.options.workspace, p)).real
    const problem = await planFileProblem(this.plan.path, given, resolve)
    if (problem) throw new ToolError(problem)
    this.finished = true
    const done = this.options.exitMessage ?? 'The plan is complete and recorded for approval. End your turn now.'
    // The plan's state is the session's to write (plans/lifecycle.ts), never a tool's.
    if (allowedPrompts && allowedPrompts.length > 0 && (await recordAllowedPrompts(this.plan.path, allowedPrompts))) {
      return `Recorded the permissions the plan asks for, for the approver: ${allowedPrompts.map((p) => `${p.tool}: ${p.prompt}`).join('; ')}.\n${done}`
    }
    return done
  }

  /** Why the session's plan cannot go to review (missing, empty, not a regular file), or undefined. */
  async problem(): Promise<string | undefined> {
    return this.plan ? planFileProblem(this.plan.path, undefined, async (p) => p) : 'no plan file was assigned'
  }
}

/** What is wrong with a plan file that should now hold a plan; `given` is ExitPlanMode's `plan_path`. */
async function planFileProblem(planFile: string, given: string | undefined, resolveGiven: (p: string) => Promise<string>): Promise<string | undefined> {
  if (given !== undefined) {
    const real = await resolveGiven(given)
    if (real !== planFile)
      return `plan_path ${given} is not this session's plan file. Write the plan to ${planFile}, then call ExitPlanMode again (plan_path may be omitted).`
  }

  let text: string
  try {
    const info = await stat(planFile)
    if (!info.isFile()) return `The plan file ${planFile} is not a regular file.`
    text = await readFile(planFile, 'utf8')
  } catch {
    return `No plan file exists yet. Write the plan to ${planFile} with the Write tool, then call ExitPlanMode.`
  }

  if (text.trim() === '') return `The plan file ${planFile} is empty. Write the plan into it, then call ExitPlanMode.`
  return undefined
}

/** The plan-mode reminder, word for word as the design requires. */
function planFileInfo(planFilePath: string, exists: boolean): string {
  const first = exists
    ? `A plan file already exists at ${planFilePath}. You can read it and make incremental edits using the Edit tool if you need to.`
    : `No plan file exists yet. You should create your plan at ${planFilePath} using the Write tool if you need to.`
  return [
    '## Plan File Info:',
    first,
    'You should build your plan incrementally by writing to or editing this file. NOTE that this is the only file you are allowed to edit - other than this you are only allowed to take READ-ONLY actions.',
  ].join('\n')
}
