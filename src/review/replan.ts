/**
 * A plan's task planned again on the current head, in a comment of its own beside the old one (whose
 * history stays):
 * - `/wave plan NAME`: the task of the thread's plan NAME, without retyping it (after a push made it
 *   stale). A one-word task that names no plan of the thread is planned as the task it is.
 * - `replan-on-push`: a change request's head moved, and every task whose newest plan still awaits
 *   approval on an older head is planned again, as `/wave plan NAME` would, for whoever pushed. A plan
 *   approved (or running, done, failed, rejected) is left as it is: its approval is bound to its commit.
 * Once the new plan is made, the old one's comment says so (status superseded, naming the new plan and
 * its commit), so a reader never sees two plans of one task awaiting approval; a planning that failed
 * leaves the old comment as it was.
 */
import {errorLine} from '../base/errors.js'
import {PLAN_NAME} from '../plans/store.js'
import type {Intent, Trigger} from './intent.js'
import type {StickyStatus} from './comment-body.js'
import type {Thread} from './forge.js'
import type {PlanOnForge} from './transport.js'
import {now, PlanComment, plansOf} from './plan-comment.js'
import {stickyStatusAfter} from './status.js'
import {plan, type ReviewOutcome, type ReviewRun} from './steps.js'

type PlanIntent = Extract<Intent, {kind: 'plan'}>
type PushedIntent = Extract<Intent, {kind: 'pushed'}>

/** The statuses of a plan that could still be approved (or resumed): the ones its task planned again supersedes. */
const SUPERSEDED_FROM: StickyStatus[] = ['awaiting_approval', 'failed']

/** `/wave plan <task>`: the task planned, or, when it names a plan of the thread, that plan's task planned again and the old plan marked so. */
export async function planned(run: ReviewRun, intent: PlanIntent): Promise<ReviewOutcome> {
  const asked = await replanned(run, intent)
  const made = await plan(run, asked)
  return asked.replanOf ? supersede(run, asked.trigger, asked.replanOf, made) : made
}

async function replanned(run: Pick<ReviewRun, 'client' | 'author'>, intent: PlanIntent): Promise<PlanIntent> {
  const word = intent.task.trim()
  // Plan names are drawn as adjective-animal: a word without a hyphen is no name to look up.
  if (!intent.trigger.thread || !PLAN_NAME.test(word) || !word.includes('-')) return intent
  const plans = (await plansOf(run.client, intent.trigger.thread, run.author)).filter((found): found is PlanOnForge => !('damaged' in found))
  let named = plans.find((found) => found.state.name === word)
  // A plan already planned again stands for the newest of its line: that one is what a new plan replaces.
  const seen = new Set<string>()
  while (named?.state.replacedBy && named.state.status === 'superseded' && !seen.has(named.state.name)) {
    seen.add(named.state.name)
    const next = named.state.replacedBy.name
    const newer = plans.find((found) => found.state.name === next)
    if (!newer) break
    named = newer
  }

  return named ? {...intent, replanOf: named.state.name, task: named.state.task} : intent
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
  for (const found of pending) {
    const outcome = await plan(run, {kind: 'plan', replanOf: found.state.name, task: found.state.task, trigger: intent.trigger})
    made.push(await supersede(run, intent.trigger, found.state.name, outcome))
  }

  const names = pending.map((found, index) => `${found.state.name} as ${made[index].plan?.name ?? '?'}`)
  const costs = made.map((outcome) => outcome.costUsd).filter((cost) => cost !== undefined)
  return {
    ...made.at(-1)!,
    costUsd: costs.length === 0 ? undefined : costs.includes(null) ? null : costs.reduce((sum, cost) => sum! + cost!, 0),
    message: `Planned again on ${head.slice(0, 12)} after a push to ${ref}: ${names.join(', ')}.`,
  }
}

/**
 * The old plan's comment, once its task was planned again as `made`'s plan: superseded, naming the new
 * plan and its commit, everything else it recorded kept. Read again first: a plan approved (or run) while
 * the new one was planned is left as it is. A comment that cannot be updated fails nothing (the new plan
 * was made), and the outcome's message says so.
 */
async function supersede(run: ReviewRun, trigger: Trigger, oldName: string, made: ReviewOutcome): Promise<ReviewOutcome> {
  const newName = made.plan?.name
  const thread: Thread | undefined = trigger.thread
  if (!newName || !thread) return made
  try {
    const plans = (await plansOf(run.client, thread, run.author)).filter((found): found is PlanOnForge => !('damaged' in found))
    const old = plans.find((found) => found.state.name === oldName)
    const fresh = plans.find((found) => found.state.name === newName)
    if (!old || !fresh || !SUPERSEDED_FROM.includes(old.state.status)) return made
    const {commit} = fresh.state
    const sticky = PlanComment.of(run.client, old, run.options.dependencies)
    sticky.state = {
      ...old.state,
      history: [
        ...old.state.history,
        {at: now(), by: trigger.actor, event: 'superseded', text: `planned again as ${newName} on ${commit.slice(0, 12)}`, url: trigger.comment?.url},
      ],
      replacedBy: {commit, name: newName, url: fresh.comment.url},
      runUrl: run.runUrl,
      status: stickyStatusAfter({kind: 'superseded'}),
    }
    await sticky.save()
    return {...made, message: `${made.message} (${oldName}'s ${run.client.words.comment} says it was planned again as ${newName})`}
  } catch (error) {
    return {...made, message: `${made.message} (${oldName}'s ${run.client.words.comment} could not be marked as planned again: ${errorLine(error)})`}
  }
}
