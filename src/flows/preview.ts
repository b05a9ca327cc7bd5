/**
 * `wave prompt`: what a session of a given kind would send the model as its system prompt and tools,
 * in this workspace, without making a request. Built by the same functions a session uses (profiles.ts,
 * sessionPrompt in session.ts, the tool registry), so what a user reviews is what the model gets.
 */
import path from 'node:path'

import type {ApiTool} from '../tools/registry.js'
import {describeHook} from '../config/hooks.js'
import {plansDir} from '../plans/store.js'
import type {ExecutionMode, PermissionMode} from '../policy/modes.js'
import type {PlanBash} from '../policy/policy.js'
import {openSession, type SessionOptions} from '../session/context.js'
import {planningProfile, runProfile, type SessionProfile, taskProfile} from '../session/profiles.js'
import {planOpening} from '../session/prompts/plan.js'
import {taskOpening} from '../session/prompts/task.js'
import {sessionPrompt} from '../session/session.js'
import {systemPromptText} from '../agent/request.js'

/** The kinds of session: `wave plan` (and `--revise`), `wave run plan.md`, `wave run --task`. */
export const PROMPT_KINDS = ['plan', 'run', 'task'] as const
type PromptKind = (typeof PROMPT_KINDS)[number]

/** Stands for the plan's name, which is drawn when a planning session starts. */
export const PLAN_NAME_PLACEHOLDER = '<name>'

interface PreviewOptions extends Pick<SessionOptions, 'appendSystemPrompt' | 'cwd' | 'host' | 'outputSchema'> {
  kind: PromptKind
  /** The task, for the first message (plan and task kinds). */
  task?: string
  /** The permission mode of a run or task (an approval's `mode`, or `--mode`). */
  mode: ExecutionMode
  /** Allow rules beyond the settings files' (an approval's `allow`, or `--allow`). */
  allow: string[]
}

export interface PromptPreview {
  kind: PromptKind
  workspace: string
  /** The permission mode the first request is made in. */
  mode: PermissionMode
  /** The system prompt, as the first request carries it. */
  system: string
  /** The tool definitions, as the first request carries them (less the cache breakpoint on the last). */
  tools: ApiTool[]
  /** The first user message, where it is known: a plan's or a task's, given the task. A run's holds the approved plan. */
  firstMessage: string | null
  /** Plan mode's Bash (plan kind): in a throwaway sandbox, and which, or off and why. */
  planBash?: PlanBash
  /** The Agent Skills that loaded (listed in the Skill tool's description). */
  skills: Array<{name: string; description: string; location: string; file: string}>
  /** The hooks a session here would run (settings' `hooks`), one line each. */
  hooks: string[]
}

export async function previewPrompt(options: PreviewOptions): Promise<PromptPreview> {
  // No turn is taken: the preview builds the first request's system prompt and tools, and sends nothing.
  const session = await openSession(options, {preview: true})
  const {workspace} = session
  const planPath = path.join(plansDir(), `${PLAN_NAME_PLACEHOLDER}.md`)
  const profile = profileOf(options, workspace, planPath)
  try {
    const tools = await session.tools()
    const prompt = await sessionPrompt(session, {...profile, allow: options.allow})
    const policy = prompt.policy()
    return {
      firstMessage: firstMessage(options, planPath),
      kind: options.kind,
      // Plan mode's Bash as the policy binds it (plan-policy.ts), shown only where it does.
      ...(policy.planBash ? {planBash: policy.planBash} : {}),
      mode: policy.mode,
      system: systemPromptText(await prompt.system()),
      hooks: session.settings.hooks.map((hook) => describeHook(hook)),
      skills: tools.skills.map(({description, file, location, name}) => ({description, file, location, name})),
      tools: tools.registry.apiTools(policy),
      workspace,
    }
  } finally {
    await session.close()
  }
}

function profileOf(options: PreviewOptions, workspace: string, planPath: string): SessionProfile {
  switch (options.kind) {
    case 'plan': {
      return planningProfile({name: PLAN_NAME_PLACEHOLDER, path: planPath}, workspace)
    }

    case 'run': {
      return runProfile(options.mode, workspace)
    }

    case 'task': {
      // Offered as in a session; never called, since no request is made.
      return taskProfile(options.mode, {enter: () => Promise.reject(new Error('a preview enters no plan mode')), workspace})
    }
  }
}

function firstMessage(options: PreviewOptions, planPath: string): string | null {
  if (options.task === undefined) return null
  if (options.kind === 'plan') return planOpening(options.task, planPath)
  if (options.kind === 'task') return taskOpening(options.task)
  return null
}
