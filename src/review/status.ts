/**
 * The status a plan's sticky comment shows, derived from the plan's own status (plans/lifecycle.ts,
 * `statusAfter`) rather than kept as a second machine: the steps say what happened to the plan, and the
 * comment's words follow. The forge adds only what a comment shows while a job works (a planning or
 * revising session under way) and a plan whose task was planned again (superseded).
 */
import {type PlanEvent, type PlanStatus, statusAfter} from '../plans/lifecycle.js'
import type {StickyStatus} from './comment-body.js'

/**
 * What happened to a plan on the forge: one of its events, a planning session starting on it (a revision:
 * after changes were requested), or its task planned again as another plan (replan.ts): the comment's
 * own, since the plan's state on a runner never learns of it.
 */
export type ReviewEvent = PlanEvent | {kind: 'planning'; revising: boolean} | {kind: 'superseded'}

/** How the comment words each status of the plan. On a forge an approval starts its run in the same job: approved is running. */
const SHOWN: Record<PlanStatus, StickyStatus> = {
  approved: 'running',
  changes_requested: 'changes_requested',
  draft: 'awaiting_approval',
  failed: 'failed',
  ran: 'done',
  rejected: 'rejected',
  running: 'running',
}

export function stickyStatusAfter(event: ReviewEvent): StickyStatus {
  if (event.kind === 'planning') return event.revising ? 'revising' : 'planning'
  if (event.kind === 'superseded') return 'superseded'
  return SHOWN[statusAfter(event)]
}
