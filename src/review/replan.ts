/**
 * A plan's task planned again on the current head, in a comment of its own beside the old one (whose
 * history stays):
 * - `/wave plan NAME`: the task of the thread's plan NAME, without retyping it (after a push made it
 *   stale). A one-word task that names no plan of the thread is planned as the task it is.
 * - `replan-on-push`: a change request's head moved, and every task whose newest plan still awaits
 *   approval on an older head is planned again, as `/wave plan NAME` would, for whoever pushed. A plan
 *   approved (or running, done, failed, rejected) is left as it is: its approval is bound to its commit.
 */
import {PLAN_NAME} from '../plans/store.js'
import type {Intent} from './intent.js'
import type {PlanOnForge} from './transport.js'
import {plansOf} from './plan-comment.js'
import {plan, type ReviewOutcome, type ReviewRun} from './steps.js'

type PlanIntent = Extract<Intent, {kind: 'plan'}>
type PushedIntent = Extract<Intent, {kind: 'pushed'}>

export async function replanned(run: Pick<ReviewRun, 'client' | 'author'>, intent: PlanIntent): Promise<PlanIntent> {
  const word = intent.task.trim()
  // Plan names are drawn as adjective-animal: a word without a hyphen is no name to look up.
  if (!intent.trigger.thread || !PLAN_NAME.test(word) || !word.includes('-')) return intent
  const plans = await plansOf(run.client, intent.trigger.thread, run.author)
  const named = plans.find((plan) => !('damaged' in plan) && plan.state.name === word)
  return named && !('damaged' in named) ? {...intent, replanOf: named.state.name, task: named.state.task} : intent
}

/**
 * The head moved: each task whose newest plan awaits approval on an older commit planned again, one new
 * plan a task (its older plans were planned again before, or are older versions of it), none when the
 * newest plan of the task is already on the head (the same push handled twice).
 */
export async function replanPushed(run: ReviewRun, intent: PushedIntent): Promise<ReviewOutcome> {
  const thread = intent.trigger.thread!
  const head = (await run.client.changeRequest(thread.number)).head.sha
  const plans = (await plansOf(run.client, thread, run.author)).filter((found): found is PlanOnForge => !('damaged' in found))
  const newest = new Map<string, PlanOnForge>()
  for (const found of plans) newest.set(found.state.task, found)
  const pending = [...newest.values()].filter((found) => found.state.status === 'awaiting_approval' && found.state.commit !== head)
  const ref = run.client.words.ref(thread)
  if (pending.length === 0)
    return {event: run.event, message: `Nothing to plan again: no plan on ${ref} awaits approval on a commit before ${head.slice(0, 12)}.`, outcome: 'ignored'}

  const made: ReviewOutcome[] = []
  for (const found of pending) made.push(await plan(run, {kind: 'plan', replanOf: found.state.name, task: found.state.task, trigger: intent.trigger}))
  const names = pending.map((found, index) => `${found.state.name} as ${made[index].plan?.name ?? '?'}`)
  const costs = made.map((outcome) => outcome.costUsd).filter((cost) => cost !== undefined)
  return {
    ...made.at(-1)!,
    costUsd: costs.length === 0 ? undefined : costs.includes(null) ? null : costs.reduce((sum, cost) => sum! + cost!, 0),
    message: `Planned again on ${head.slice(0, 12)} after a push to ${ref}: ${names.join(', ')}.`,
  }
}
