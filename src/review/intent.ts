/**
 * What a forge's event asks of wave, once its reader (github/event.ts, gitlab/event.ts) has read it: an
 * intent. The `/wave` comment grammar is read here, the same for every forge.
 */
import type {ExecutionMode} from '../policy/modes.js'
import {CommentSyntaxError, parseWaveComment} from './commands.js'
import type {Thread} from './forge.js'

/** Who asked, where, and with which comment. */
export interface Trigger {
  actor: string
  /** The forge's numeric id of the actor: who they are (duties compare it), and what GitLab's members API takes. */
  actorId?: number
  /** The issue or pull request to answer in (none for a dispatch without one). */
  thread?: Thread
  comment?: {id: number; url: string; createdAt: string; body: string}
}

export type Intent =
  | {kind: 'ignore'; reason: string}
  /** A `/wave` comment that does not parse: the reply says why. */
  | {kind: 'invalid'; trigger: Trigger; message: string}
  | {kind: 'help'; trigger: Trigger}
  /** `replanOf`: the plan whose task this is, planned again on the current head (`/wave plan NAME`, replan-on-push). */
  | {kind: 'plan'; trigger: Trigger; task: string; dispatch?: {issue?: number; pull?: number}; replanOf?: string}
  /** A change request's head moved (GitHub's pull_request synchronize, a GitLab merge request pipeline) and replan-on-push is on. */
  | {kind: 'pushed'; trigger: Trigger}
  | {kind: 'approve'; trigger: Trigger; plan?: string; sha256?: string; mode?: ExecutionMode; allow?: string[]; networkAllow?: string[]}
  | {kind: 'resume'; trigger: Trigger; plan?: string}
  | {kind: 'request-changes'; trigger: Trigger; text: string}
  | {kind: 'reject'; trigger: Trigger; text: string}

/** The intent of a `/wave` comment (the caller has checked it is one); one that does not parse is `invalid`. */
export function commentIntent(body: string, trigger: Trigger): Intent {
  try {
    const command = parseWaveComment(body)
    switch (command.command) {
      case 'help': {
        return {kind: 'help', trigger}
      }

      case 'plan': {
        return {kind: 'plan', task: command.task, trigger}
      }

      case 'approve': {
        return {
          allow: command.allow,
          kind: 'approve',
          mode: command.mode,
          networkAllow: command.networkAllow,
          plan: command.plan,
          sha256: command.sha256,
          trigger,
        }
      }

      case 'resume': {
        return {kind: 'resume', plan: command.plan, trigger}
      }

      default: {
        return {kind: command.command, text: command.text, trigger}
      }
    }
  } catch (error) {
    if (error instanceof CommentSyntaxError) return {kind: 'invalid', message: error.message, trigger}
    throw error
  }
}
