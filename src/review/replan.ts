/**
 * `/wave plan NAME`: the task of the thread's plan NAME planned again, on the current head (after a push
 * made it stale), without retyping it; the new plan gets its own comment beside the old one, whose
 * history stays. A one-word task that names no plan of the thread is planned as the task it is.
 */
import {PLAN_NAME} from '../plans/store.js'
import type {Intent} from './intent.js'
import {plansOf} from './plan-comment.js'
import type {ReviewRun} from './steps.js'

type PlanIntent = Extract<Intent, {kind: 'plan'}>

export async function replanned(run: Pick<ReviewRun, 'client' | 'author'>, intent: PlanIntent): Promise<PlanIntent> {
  const word = intent.task.trim()
  // Plan names are drawn as adjective-animal: a word without a hyphen is no name to look up.
  if (!intent.trigger.thread || !PLAN_NAME.test(word) || !word.includes('-')) return intent
  const plans = await plansOf(run.client, intent.trigger.thread, run.author)
  const named = plans.find((plan) => !('damaged' in plan) && plan.state.name === word)
  return named && !('damaged' in named) ? {...intent, task: named.state.task} : intent
}
