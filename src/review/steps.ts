/**
 * The review conversation of one plan, the same on every forge: plan, request changes (then revise),
 * reject, approve (then run and deliver). Each step calls the session drivers in-process (makePlan,
 * revisePlan, executePlan) and the approval module, keeps the plan's sticky comment in step through the
 * forge (forge.ts), and reports a failure there before passing it on.
 */
import {readFile} from 'node:fs/promises'

import {errorLine, ExitCode, usageError, WaveError} from '../base/errors.js'
import {isStopped, type Stopped, stoppedError} from '../agent/outcome.js'
import type {Continuation} from '../model/budget.js'
import {planNameOf} from '../plans/store.js'
import {sha256Of} from '../plans/approval.js'
import {approvePlan} from '../plans/decision.js'
import {type BoundContract, bindContract, type PlanContract, parseContract} from '../plans/contract.js'
import {contractMarkdown, revisionDiffMarkdown} from '../output/report-view.js'
import {type RunReport, runReportSchema} from '../plans/report.js'
import {textDiff} from '../plans/revisions.js'
import {addCost} from '../plans/lifecycle.js'
import {type BudgetCap, capOf, lowestCap} from '../model/budget.js'
import {makePlan, type PlanOutcome, resumePlan, revisePlan} from '../flows/plan.js'
import {executePlan} from '../flows/run.js'
import type {ExecutionMode} from '../policy/modes.js'
import type {SessionHost, SessionOptions} from '../session/session.js'
import {planNamed} from './commands.js'
import {deliver, type Delivery, type PrDelivery} from './delivery.js'
import {assertDuties, type Duties} from './duties.js'
import {type ChangeRequest, type Forge, samePerson, type Thread} from './forge.js'
import {keepStoppedRun, keptDigests, keptPlanning, keptPlanningDigests, keptRun} from './carryover.js'
import type {Intent, Trigger} from './intent.js'
import {now, PlanComment, plansOf} from './plan-comment.js'
import type {Remote} from './remote.js'
import {stickyStatusAfter} from './status.js'
import {pendingRows, unitsContractMarkdown} from './unit-rows.js'
import {countedApprovals, type StickyState, type StickyStatus, stickyReport} from './comment-body.js'
import {assertAnsweredPlan, materializePlan, type PlanOnForge} from './transport.js'
import {answered} from './refusal.js'
import {type DependencyInstall, dependencyLine, installError, installFailed, installFailureMarkdown} from './dependency-install.js'

/** Runs one model session with progress, given the host it needs. */
export type SessionRunner = <T>(title: string, work: (host: SessionHost) => Promise<T>) => Promise<T>

/** What every forge's flow is configured with, flags or variables (each forge's env.ts). */
export interface ReviewOptions {
  /** The proposed mode and rules of every plan; an approval can choose others. */
  mode: ExecutionMode
  allow: string[]
  /** A change request from this repository gets a commit on its branch (push) or a change request against it. */
  prDelivery: PrDelivery
  /** Whether the run's commands get the OS sandbox (recorded in the approval). */
  sandbox: boolean
  /** The hosts the sandbox may reach through wave's filtering proxy, proposed with every plan; an approval can name others. Empty: none. */
  networkAllow: string[]
  /** The dollar cap of each plan, revision and run (--max-budget-usd, naming where it was set); shown in the comment, recorded in the approval. */
  budget?: BudgetCap
  /** What that cap is set through where this job's users set it (the Action's max-budget-usd input, WAVE_MAX_BUDGET_USD): a run stopped at its plan's budget names it. */
  budgetSetting?: string
  /** What the job's own step installed of the project's dependencies (WAVE_INSTALL_RESULT): said in every comment; a failed install stops every step that would ask the model. */
  dependencies?: DependencyInstall
  /** `replan-on-push`: a change request's head moving plans each of its pending plans' tasks again on the new head (replan.ts). */
  replanOnPush?: boolean
}

/** Everything a step needs, made once per event (handler.ts). */
export interface ReviewRun {
  /** The event's name, for the outcome. */
  event: string
  options: ReviewOptions
  duties: Duties
  client: Forge
  remote: Remote
  /** The checkout, a real path. */
  workspace: string
  /** The login of wave's own comments. */
  author: string
  /** How to tell wave its own login, when its comments turn out to be by another (a setting's name). */
  authorSetting?: string
  /** The CI job handling this event, linked from the plan's comment. */
  runUrl?: string
  /** The commit and branch a dispatched run (a manual or scheduled pipeline) was started on. */
  dispatched?: {sha?: string; refName?: string}
  session: SessionRunner
  /** What every session of the review takes from the command (--model, --max-turns): passed to each as it is. */
  sessionOptions: ReviewSessionOptions
}

/** The session options a forge's command gives the review; the rest (place, host) the review sets. */
export type ReviewSessionOptions = Pick<SessionOptions, 'model' | 'maxTurns'>

export interface ReviewOutcome {
  event: string
  outcome: 'ignored' | 'triaged' | 'refused' | 'answered' | 'planned' | 'revised' | 'counted' | 'rejected' | 'approved' | 'ran' | 'merged' | 'reported'
  /** `wave gitlab --triage`: the thread a /wave command is about (mr-7, issue-12), for a resource group per thread. */
  thread?: string
  /** `wave gitlab --triage`: which command the note's text is (plan, approve, resume, ...; `task` for a WAVE_TASK pipeline), so the recipe restores a stopped run's state for `resume` only. */
  command?: string
  /** One line saying what happened. */
  message: string
  plan?: {
    name: string
    sha256?: string
    status: StickyStatus
    comment?: string
    /** The plan's contract as bound for approval: the paths the run may change, and the checks it must pass. */
    contract?: ContractShown
    questions?: string[]
    todos?: StickyState['todos']
  }
  /** Planned versus actual, once the plan ran: changes against the scope, the checks, the calls denied. */
  report?: RunReport
  /** What this event's session cost in US dollars (null: the model has no known price); absent, no session ran. */
  costUsd?: number | null
  delivery?: Delivery | null
  /** A plan with units, approved: their names, in order, for the jobs that run one each (the forge writes them out). */
  units?: string[]
  /** The approved plan on disk (a plan with units: the next jobs run it from there). */
  planPath?: string
}

/** A bound contract without its warnings (said when it was bound). */
type ContractShown = Pick<BoundContract, 'scope' | 'verify'>

type PlanIntent = Extract<Intent, {kind: 'plan'}>
type ApproveIntent = Extract<Intent, {kind: 'approve'}>
type TextIntent = Extract<Intent, {kind: 'request-changes' | 'reject'}>
type ResumeIntent = Extract<Intent, {kind: 'resume'}>

// ------------------------------------------------------------------------------------------------ plan

export async function plan(run: ReviewRun, intent: PlanIntent): Promise<ReviewOutcome> {
  await assertInstalled(run, intent.trigger)
  const thread = intent.trigger.thread ?? (await dispatchThread(run, intent))
  const meter = costMeter()
  let sticky: PlanComment | undefined
  let posting: Promise<void> | undefined
  try {
    const target = await targetOf(run, thread, intent.dispatch !== undefined)
    await checkout(run, target.commit, thread)
    const outcome = await run.session(`wave ${run.client.words.forge.toLowerCase()}: plan`, async (host) =>
      finished(
        await makePlan({
          allow: [],
          cwd: run.workspace,
          ...run.sessionOptions,
          budget: run.options.budget,
          host: meter.watch(host),
          onStart(info) {
            const state: StickyState = {
              allow: run.options.allow,
              base: target.base,
              commit: target.commit,
              cost: {},
              history: [],
              maxBudgetUsd: run.options.budget?.usd,
              mode: run.options.mode,
              model: info.model,
              networkAllow: run.options.sandbox && run.options.networkAllow.length > 0 ? run.options.networkAllow : undefined,
              name: info.name!,
              requestedBy: intent.trigger.actor,
              requestedById: intent.trigger.actorId,
              runUrl: run.runUrl,
              status: stickyStatusAfter({kind: 'planning', revising: false}),
              task: intent.task,
              thread,
              version: 1,
            }
            sticky = PlanComment.start(run.client, thread, state, run.options.dependencies)
            posting = sticky.save()
            posting.catch(() => {}) // awaited below
          },
          task: intent.task,
        }),
        commentResume,
      ),
    )
    await posting
    const {contract, sha256} = await showPlanned(sticky!, outcome, {
      cost: meter.cost(),
      entry: (sha256) => ({
        at: now(),
        by: intent.trigger.actor,
        event: 'planned',
        sha256,
        // A task planned again (/wave plan NAME, replan-on-push) names the plan it came from.
        ...(intent.replanOf ? {text: `the task of ${intent.replanOf}, planned again on ${target.commit.slice(0, 12)}`} : {}),
        url: intent.trigger.comment?.url,
      }),
    })
    if (sticky!.author && sticky!.author !== run.author) {
      const comments = `${run.client.words.comment}s`
      throw new WaveError(
        `wave's ${comments} are by ${sticky!.author}, but it trusts only ${comments} by ${run.author} as plans: no approval of ${sticky!.state.name} would be found.`,
        ExitCode.usage,
        `Set ${run.authorSetting ?? "wave's own login"} to ${sticky!.author}.`,
      )
    }

    return {...outcomeOf(run, 'planned', `Planned ${sticky!.state.name} (sha256 ${sha256}): ${sticky!.url}`, sticky!, contract), costUsd: meter.cost()}
  } catch (error) {
    await posting?.catch(() => {})
    // A plan stopped at its budget (exit 5) shows what it spent.
    if (sticky && meter.cost() !== undefined) sticky.state = {...sticky.state, cost: {...sticky.state.cost, plan: meter.cost()}}
    if (!sticky?.url) {
      await reply(run, {...intent.trigger, thread}, `wave could not plan: ${errorLine(error)}`).catch(() => {})
      throw error
    }

    throw await planningFailed(sticky, error)
  }
}

/** How a planning session stopped at its limit goes on in a comment: its driver's continuation, as `/wave resume NAME`. */
const commentResume = (stopped: Stopped): Continuation => ({
  command: `/wave resume ${planNameOf(stopped.details.planPath!)}`,
  kept: 'the exploration',
  takesFlags: false,
})

/**
 * A planning session (a plan, a revision, a resumed one) failed: the comment says why. One stopped at a
 * limit (exit 5) keeps its exploration for `/wave resume`: the digests of what the recipe's cache carries
 * (its state, transcript and plan so far) go in the comment, the authority on them (carryover.ts).
 * Answers the error to throw.
 */
async function planningFailed(sticky: PlanComment, error: unknown): Promise<unknown> {
  const planPath = error instanceof WaveError ? error.details?.planPath : undefined
  const kept =
    error instanceof WaveError && error.exitCode === ExitCode.limit && planPath ? await keptPlanningDigests(planPath).catch(() => undefined) : undefined
  sticky.state = {...sticky.state, keptPlanning: kept}
  await sticky.fail('plan', error).catch(() => {})
  return error
}

/** A dispatch names the thread to plan in, or gets a new issue holding its task. */
async function dispatchThread(run: ReviewRun, intent: PlanIntent): Promise<Thread> {
  const {issue, pull} = intent.dispatch ?? {}
  if (pull) return run.client.thread(pull, true)
  if (issue) return run.client.thread(issue, false)
  const title = `wave: ${intent.task.split('\n')[0].slice(0, 80)}`
  const body = `@${intent.trigger.actor} asked wave to plan this${run.dispatched?.refName ? ` on \`${run.dispatched.refName}\`` : ''}:\n\n${intent.task
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n')}`
  return run.client.createIssue(title, body)
}

interface Target {
  commit: string
  base: string
}

/**
 * The commit a plan is made against: a pull request's head; for an issue, the tip of the default branch,
 * or the commit a dispatch was started on.
 */
async function targetOf(run: ReviewRun, thread: Thread, dispatched: boolean): Promise<Target> {
  if (thread.pull) {
    const pull = await run.client.changeRequest(thread.number)
    return {base: pull.head.ref, commit: pull.head.sha}
  }

  if (dispatched && run.dispatched?.sha && run.dispatched.refName) return {base: run.dispatched.refName, commit: run.dispatched.sha}
  const base = await run.client.defaultBranch()
  return {base, commit: await run.remote.fetch(`refs/heads/${base}`)}
}

/** Checks the commit out; a change request's head from a fork may be reachable only through the forge's ref for it. */
async function checkout(run: ReviewRun, commit: string, thread: Thread): Promise<void> {
  try {
    await run.remote.checkout(commit)
  } catch (error) {
    if (!thread.pull || !(error instanceof WaveError) || error.exitCode !== ExitCode.runtime) throw error
    await run.remote.fetch(run.client.headRef(thread.number))
    await run.remote.checkout(commit)
  }
}

// ------------------------------------------------------------------------------------------------ decisions

export async function requestChanges(run: ReviewRun, intent: TextIntent): Promise<ReviewOutcome> {
  const plans = await plansOf(run.client, intent.trigger.thread!, run.author)
  const named = planNamed(intent.text, plans.map(nameOf))
  if (!named.rest) return refuse(run, intent.trigger, usageError('/wave request-changes needs feedback saying what to change.'))
  const found = await pick(run, intent.trigger, plans, named.plan, ['awaiting_approval', 'failed', 'rejected'], 'to revise')
  if (!found.plan) return refuse(run, intent.trigger, usageError(`Plan ${found.state.name} has no plan to revise: make a new one with /wave plan <task>.`))
  await assertInstalled(run, intent.trigger, found)
  const feedback = named.rest
  const {actor} = intent.trigger
  const sticky = PlanComment.of(run.client, found, run.options.dependencies)
  sticky.state = {
    ...sticky.state,
    failure: undefined,
    history: [
      ...sticky.state.history,
      {at: now(), by: actor, event: 'changes_requested', sha256: found.state.sha256, text: feedback, url: intent.trigger.comment?.url},
    ],
    maxBudgetUsd: run.options.budget?.usd,
    runUrl: run.runUrl,
    status: stickyStatusAfter({decision: 'changes_requested', kind: 'decided'}),
  }
  await sticky.save()

  const meter = costMeter()
  let saving: Promise<void> | undefined
  try {
    await checkout(run, found.state.commit, found.state.thread)
    const planPath = await materializePlan({plan: found.plan, state: found.state}, {model: run.sessionOptions.model ?? 'unknown', workspace: run.workspace})
    await approvePlan(
      planPath,
      {approver: actor, decision: 'changes_requested', feedback, planBytes: found.plan},
      {allow: found.state.allow, mode: found.state.mode},
    )
    const outcome = await run.session(`wave ${run.client.words.forge.toLowerCase()}: revise`, async (host) =>
      finished(
        await revisePlan({
          allow: [],
          cwd: run.workspace,
          feedback,
          ...run.sessionOptions,
          budget: run.options.budget,
          host: meter.watch(host),
          onStart() {
            sticky.state = {...sticky.state, status: stickyStatusAfter({kind: 'planning', revising: true})}
            saving = sticky.save()
            saving.catch(() => {})
          },
          planPath,
        }),
        commentResume,
      ),
    )
    await saving
    const {contract, sha256} = await showPlanned(sticky, outcome, {
      changes: (bytes, sha256) => changesSinceReview(found, bytes, sha256, feedback),
      cost: addCost(sticky.state.cost.plan, meter.cost()),
      entry: (sha256) => ({at: now(), event: 'revised', sha256}),
    })
    return {
      ...outcomeOf(run, 'revised', `Revised ${sticky.state.name} with the feedback of @${actor} (sha256 ${sha256}): ${sticky.url}`, sticky, contract),
      costUsd: meter.cost(),
    }
  } catch (error) {
    await saving?.catch(() => {})
    if (meter.cost() !== undefined) sticky.state = {...sticky.state, cost: {...sticky.state.cost, plan: addCost(sticky.state.cost.plan, meter.cost())}}
    throw await planningFailed(sticky, error)
  }
}

export async function reject(run: ReviewRun, intent: TextIntent): Promise<ReviewOutcome> {
  const plans = await plansOf(run.client, intent.trigger.thread!, run.author)
  const named = planNamed(intent.text, plans.map(nameOf))
  const found = await pick(run, intent.trigger, plans, named.plan, ['awaiting_approval', 'failed', 'changes_requested'], 'to reject')
  const sticky = PlanComment.of(run.client, found, run.options.dependencies)
  const {actor} = intent.trigger
  sticky.state = {
    ...sticky.state,
    failure: undefined,
    history: [
      ...sticky.state.history,
      {at: now(), by: actor, event: 'rejected', sha256: found.state.sha256, text: named.rest || undefined, url: intent.trigger.comment?.url},
    ],
    runUrl: run.runUrl,
    status: stickyStatusAfter({decision: 'rejected', kind: 'decided'}),
  }
  await sticky.save()
  return outcomeOf(run, 'rejected', `Rejected ${sticky.state.name} for @${actor}: ${sticky.url}`, sticky)
}

// ------------------------------------------------------------------------------------------------ approve

export async function approve(run: ReviewRun, intent: ApproveIntent): Promise<ReviewOutcome> {
  const {trigger} = intent
  const plans = await plansOf(run.client, trigger.thread!, run.author)
  const found = await pick(run, trigger, plans, intent.plan, ['awaiting_approval', 'failed'], 'to approve')
  let planBytes: Buffer
  try {
    planBytes = assertAnsweredPlan(found, {createdAt: trigger.comment!.createdAt, sha256: intent.sha256, url: trigger.comment!.url}, run.client.words)
  } catch (error) {
    return refuse(run, trigger, error as WaveError)
  }

  const state = found.state
  const pull = state.thread.pull ? await run.client.changeRequest(state.thread.number) : undefined
  try {
    await assertDuties(run.duties, run.client, {actor: {id: trigger.actorId, login: trigger.actor}, author: run.author, pull, state})
  } catch (error) {
    return refuse(run, trigger, error as WaveError)
  }

  const stale = staleness(run, state, pull)
  if (stale) return refuse(run, trigger, stale)
  const counted = await countApproval(run, trigger, found)
  if (counted) return counted
  await assertInstalled(run, trigger, found)

  const mode = intent.mode ?? state.mode
  const allow = intent.allow ?? state.allow
  // The hosts the sandbox may reach: the approval's, else the ones proposed with the plan (none by default).
  const networkAllow = run.options.sandbox ? (intent.networkAllow ?? state.networkAllow ?? []) : []
  // The budget the approver was shown binds the run; the job's own can only lower it.
  const budget = approvedRunBudget(run, state)
  const maxBudgetUsd = budget?.usd
  const sticky = PlanComment.of(run.client, found, run.options.dependencies)
  sticky.state = {
    ...state,
    allow,
    delivery: undefined,
    failure: undefined,
    history: [...state.history, {at: now(), by: trigger.actor, event: 'approved', sha256: state.sha256, url: trigger.comment!.url}],
    // A new run: what an earlier one kept for /wave resume is not this one's.
    kept: undefined,
    maxBudgetUsd,
    mode,
    networkAllow: networkAllow.length > 0 ? networkAllow : undefined,
    runUrl: run.runUrl,
    status: stickyStatusAfter({decision: 'approved', kind: 'decided'}),
  }
  // The plan's contract is bound as `wave approve` binds it: its scope (warned about) and its checks.
  // Its units too: a plan whose units overlap or leave its scope is refused here as at `wave approve`.
  const bound = bindContract(await parseContract(planBytes.toString('utf8'), {workspace: run.workspace}))
  const contract = showContract(sticky, bound)
  const approval = async () => {
    await checkout(run, state.commit, state.thread)
    const planPath = await materializePlan({plan: planBytes, state}, {model: run.sessionOptions.model ?? 'unknown', workspace: run.workspace})
    // approvePlan binds the contract shown above from the same bytes, and the hooks of this workspace, where the run will be.
    const {record} = await approvePlan(
      planPath,
      {approver: trigger.actor, decision: 'approved', planBytes},
      {
        allow,
        maxBudgetUsd,
        mode,
        sandbox: {enabled: run.options.sandbox, network: false, ...(networkAllow.length > 0 ? {networkAllow} : {})},
      },
    )
    return {decidedAt: record.decidedAt, planPath}
  }

  if (bound.units?.length) {
    // A plan with units fans out: this job approves and binds them, and the next jobs of the same
    // workflow or pipeline run one unit each (the forge's outputs say which), then merge them.
    const names = bound.units.map((unit) => unit.name)
    sticky.state = {...sticky.state, mergeChecks: undefined, report: undefined, units: pendingRows(names), unitsApprovedAt: undefined}
    try {
      const {decidedAt, planPath} = await approval()
      // The approval the units' jobs run under: a unit's result of another is not reported on this comment.
      sticky.state = {...sticky.state, unitsApprovedAt: decidedAt}
      await sticky.save()
      const message = `Approved ${state.name} for @${trigger.actor}: ${names.length} units (${names.join(', ')}) run as their own jobs, then merge.`
      return {...outcomeOf(run, 'approved', message, sticky, contract), planPath, units: names}
    } catch (error) {
      await sticky.fail('run', error).catch(() => {})
      throw error
    }
  }

  return carryOut(run, {approval: {by: trigger.actor, url: trigger.comment?.url}, budget, contract, found, pull, sticky, trigger}, async () => {
    const {planPath} = await approval()
    await sticky.save()
    return {planPath, resume: false}
  })
}

/**
 * With required-approvals N (duties.ts), an approval before the N-th distinct person's is recorded in the
 * comment's history and counted ("1 of 2"), and nothing runs; undefined when this approval is the N-th,
 * and the run goes on. People are told apart by the forge's id where known: the same person counts once.
 * The requester was refused before this under require-other-approver (assertDuties), so never counts.
 */
async function countApproval(run: ReviewRun, trigger: Trigger, found: PlanOnForge): Promise<ReviewOutcome | undefined> {
  const required = run.duties.requiredApprovals ?? 1
  if (required <= 1) return undefined
  const {state} = found
  const actor = {id: trigger.actorId, login: trigger.actor}
  const before = countedApprovals(state)
  const again = before.some((entry) => samePerson({id: entry.byId, login: entry.by!}, actor))
  if (!again && before.length + 1 >= required) return undefined
  const sticky = PlanComment.of(run.client, found, run.options.dependencies)
  const entry = {at: now(), by: trigger.actor, byId: trigger.actorId, event: 'approval' as const, sha256: state.sha256, url: trigger.comment!.url}
  sticky.state = {...state, history: again ? state.history : [...state.history, entry], requiredApprovals: required, runUrl: run.runUrl}
  await sticky.save()
  const count = countedApprovals(sticky.state).length
  const message = again
    ? `@${trigger.actor} already approved ${state.name}: ${count} of ${required} approvals, each by a different person.`
    : `Approval ${count} of ${required} for ${state.name} by @${trigger.actor}: it runs once ${required} different people approved.`
  return outcomeOf(run, 'counted', message, sticky)
}

/** A plan whose pushed change would land on a branch that moved since it was made: refused, to be made again. */
function staleness(run: ReviewRun, state: StickyState, pull: ChangeRequest | undefined): WaveError | undefined {
  const sameRepository = pull?.head.sameRepository === true
  if (!pull || !sameRepository || run.options.prDelivery !== 'push' || pull.head.sha === state.commit) return undefined
  return new WaveError(
    `Plan ${state.name} is stale: it was made against ${state.commit.slice(0, 12)}, and ${pull.head.ref} is now at ${pull.head.sha.slice(0, 12)}.`,
    ExitCode.mismatch,
    `Plan its task again on the current head: /wave plan ${state.name}`,
  )
}

// ------------------------------------------------------------------------------------------------ resume

/**
 * `/wave resume [<plan>]`: a run that stopped at its checks (exit 7) or a limit (exit 5) goes on, under
 * the approval it ran with, from what the recipe kept of it (carryover.ts: the plans directory, restored
 * from a cache keyed by the plan's sha256, with the run's changes as a patch). The person asking must be
 * one who may approve; without the kept state the reply says so, and how to start over.
 */
export async function resume(run: ReviewRun, intent: ResumeIntent): Promise<ReviewOutcome> {
  const {trigger} = intent
  const plans = await plansOf(run.client, trigger.thread!, run.author)
  const found = await pick(run, trigger, plans, intent.plan, ['failed'], 'to resume')
  if (found.state.failure?.phase === 'plan') return resumePlanning(run, trigger, found)
  const {state} = found
  const again = `/wave approve ${state.name}${state.sha256 ? ` --sha256 ${state.sha256}` : ''}`
  const failure = state.failure
  if (failure?.phase !== 'run' || !RESUMABLE_EXITS.has(failure.exitCode)) {
    const how = failure ? `its ${failure.phase} failed with exit ${failure.exitCode}` : 'it has not run'
    return refuse(
      run,
      trigger,
      usageError(
        `Plan ${state.name} has no run to resume: ${how}, and only a run stopped at its checks (exit 7) or a limit (exit 5) goes on.`,
        `To run it afresh: ${again}`,
      ),
    )
  }

  const pull = state.thread.pull ? await run.client.changeRequest(state.thread.number) : undefined
  try {
    await assertDuties(run.duties, run.client, {actor: {id: trigger.actorId, login: trigger.actor}, author: run.author, pull, state})
  } catch (error) {
    return refuse(run, trigger, error as WaveError)
  }

  await assertUnedited(run, trigger, found)

  const kept = await keptRun(state.name, state.sha256, state.kept)
  if ('tampered' in kept) {
    // Not a person's to answer: a cache not as the stopped run left it fails the job, the reply says why.
    return refuse(
      run,
      trigger,
      new WaveError(
        `The state restored for plan ${state.name}'s stopped run is not what that run left (${kept.tampered}): it is not used, and nothing ran.`,
        ExitCode.mismatch,
        `Whatever wrote the cache, the run cannot go on from it. To start over: ${again}`,
      ),
      false,
    )
  }

  if ('missing' in kept) {
    return refuse(
      run,
      trigger,
      usageError(
        `Nothing of plan ${state.name}'s stopped run was kept for this job (${kept.missing}), so it cannot go on from where it stopped.`,
        `The recipe keeps a stopped run's state in a cache keyed by the plan's sha256 (docs/ci). To start over: ${again}`,
      ),
    )
  }

  await assertInstalled(run, trigger, found)
  const sticky = PlanComment.of(run.client, found, run.options.dependencies)
  sticky.state = {
    ...state,
    delivery: undefined,
    failure: undefined,
    history: [...state.history, {at: now(), by: trigger.actor, event: 'resumed', sha256: state.sha256, url: trigger.comment?.url}],
    runUrl: run.runUrl,
    status: 'running',
  }
  const contract = showContract(sticky, bindContract(await parseContract(kept.text)))
  // The approval the run goes on under: its approver, and the comment that approved it (the /wave resume is linked beside it).
  const approved = [...state.history].reverse().find((entry) => entry.event === 'approved')
  const approval = {by: approved?.by ?? trigger.actor, url: approved?.url}
  const priorCost = kept.priorCostUsd
  return carryOut(run, {approval, budget: approvedRunBudget(run, state), contract, found, priorCost, pull, sticky, trigger}, async () => {
    await checkout(run, state.commit, state.thread)
    if (kept.patch) await run.remote.applyPatch(kept.patch)
    await sticky.save()
    return {planPath: kept.planPath, resume: true}
  })
}

/** The comment holds the digests of what the stopped session kept: an edit after the `/wave resume` was written could change them. */
async function assertUnedited(run: ReviewRun, trigger: Trigger, found: PlanOnForge): Promise<void> {
  if (!trigger.comment || Date.parse(found.comment.updatedAt) <= Date.parse(trigger.comment.createdAt)) return
  const word = run.client.words.comment
  await refuse(
    run,
    trigger,
    new WaveError(
      `The ${word} of plan ${found.state.name} changed after /wave resume was written (${word} updated ${found.comment.updatedAt}): what it records of the stopped session may not be what you asked to resume.`,
      ExitCode.mismatch,
      `Read the ${word} again and answer it anew: ${found.comment.url}`,
    ),
  )
}

/**
 * `/wave resume [<plan>]` of a plan whose planning session stopped at a limit (exit 5): it goes on
 * (`wave plan --resume`) from what the recipe kept of it (carryover.ts, keptPlanning: its state,
 * transcript and plan so far, checked against the digests in the comment), on the commit it was planned
 * against, and the comment shows the plan as `/wave plan` does. The person asking needs what planning
 * needs; without the kept state the reply says so, and how to plan its task again.
 */
async function resumePlanning(run: ReviewRun, trigger: Trigger, found: PlanOnForge): Promise<ReviewOutcome> {
  const {state} = found
  const again = `To plan its task again on the current head: /wave plan ${state.name}`
  if (state.failure?.exitCode !== ExitCode.limit || !state.keptPlanning) {
    const how = `its planning failed with exit ${state.failure?.exitCode}`
    return refuse(
      run,
      trigger,
      usageError(`Plan ${state.name} has no planning to resume: ${how}, and only a planning session stopped at a limit (exit 5) goes on.`, again),
    )
  }

  await assertUnedited(run, trigger, found)
  const kept = await keptPlanning(state.name, state.keptPlanning)
  if ('tampered' in kept) {
    const error = new WaveError(
      `The state restored for plan ${state.name}'s stopped planning is not what that session left (${kept.tampered}): it is not used, and nothing ran.`,
      ExitCode.mismatch,
      `Whatever wrote the cache, the planning cannot go on from it. ${again}`,
    )
    return refuse(run, trigger, error, false)
  }

  if ('missing' in kept) {
    const error = usageError(
      `Nothing of plan ${state.name}'s stopped planning was kept for this job (${kept.missing}), so it cannot go on from where it stopped.`,
      `The recipe keeps a stopped session's state in a cache of the thread (docs/ci). ${again}`,
    )
    return refuse(run, trigger, error)
  }

  await assertInstalled(run, trigger, found)
  const sticky = PlanComment.of(run.client, found, run.options.dependencies)
  const history = [...state.history, {at: now(), by: trigger.actor, event: 'resumed' as const, url: trigger.comment?.url}]
  sticky.state = {
    ...state,
    failure: undefined,
    history,
    keptPlanning: undefined,
    // The budget shown with the plan is the one it is finished under, as for a revision.
    maxBudgetUsd: run.options.budget?.usd,
    runUrl: run.runUrl,
    status: stickyStatusAfter({kind: 'planning', revising: false}),
  }
  // What the stopped part spent is in the comment's planning cost already: this job's is what it spends on top.
  const meter = costMeter(kept.planning.costUsd)
  try {
    await checkout(run, state.commit, state.thread)
    await sticky.save()
    const outcome = await run.session(`wave ${run.client.words.forge.toLowerCase()}: resume planning`, async (host) =>
      finished(
        await resumePlan({allow: [], cwd: run.workspace, ...run.sessionOptions, budget: run.options.budget, host: meter.watch(host), planPath: kept.planPath}),
        commentResume,
      ),
    )
    const {contract, sha256} = await showPlanned(sticky, outcome, {
      cost: addCost(state.cost.plan, meter.cost()),
      entry: (sha256) => ({at: now(), event: 'planned', sha256}),
    })
    const message = `Resumed the planning of ${state.name} for @${trigger.actor} and finished it (sha256 ${sha256}): ${sticky.url}`
    return {...outcomeOf(run, 'planned', message, sticky, contract), costUsd: meter.cost()}
  } catch (error) {
    if (meter.cost() !== undefined) sticky.state = {...sticky.state, cost: {...sticky.state.cost, plan: addCost(state.cost.plan, meter.cost())}}
    throw await planningFailed(sticky, error)
  }
}

/**
 * A planning session's plan in its comment (a plan, a revision, a resumed planning): its bytes, contract
 * (with the `changes` since the plan reviewed, for a revision), notes, planning cost and history `entry`,
 * awaiting approval.
 */
async function showPlanned(
  sticky: PlanComment,
  outcome: PlanOutcome,
  shown: {
    changes?: (bytes: Buffer, sha256: string) => Promise<string | undefined>
    cost: number | null | undefined
    entry: (sha256: string) => StickyState['history'][number]
  },
): Promise<{contract: ContractShown; sha256: string}> {
  const bytes = await readFile(outcome.planPath)
  const sha256 = sha256Of(bytes)
  sticky.plan = bytes
  const contract = showContract(sticky, bindContract(shownOnly(outcome.contract)), await shown.changes?.(bytes, sha256), outcome.contract.unitErrors)
  sticky.state = {
    ...sticky.state,
    cost: {...sticky.state.cost, plan: shown.cost},
    history: [...sticky.state.history, shown.entry(sha256)],
    questions: outcome.questions.map((q) => q.question),
    sha256,
    todos: outcome.todos,
    status: stickyStatusAfter({kind: 'planned', ok: true}),
  }
  await sticky.save()
  return {contract, sha256}
}

/** The budget the approver was shown binds the run; the job's own can only lower it (and is named on a tie). */
function approvedRunBudget(run: ReviewRun, state: StickyState): BudgetCap | undefined {
  return lowestCap(run.options.budget, capOf(state.maxBudgetUsd, {kind: 'approval'}))
}

/** The exits a run can go on from: its checks still failing (7), a limit reached (5). */
const RESUMABLE_EXITS = new Set<number>([ExitCode.unmet, ExitCode.limit])

interface CarryOut {
  trigger: Trigger
  found: PlanOnForge
  sticky: PlanComment
  pull?: ChangeRequest
  contract: ContractShown
  /** Who approved the run, and where (a resume keeps the approval it goes on under). */
  approval: {by: string; url?: string}
  /** The run's dollar cap: the approval's, lowered by the job's own. */
  budget?: BudgetCap
  /** A resumed run: what it had spent before this job (in the comment's run cost already). */
  priorCost?: number | null
}

/**
 * Runs an approved plan (or goes on with its stopped run) and delivers what it changed; on failure the
 * comment says why, and a run stopped at its checks or a limit keeps its changes for `/wave resume`.
 */
async function carryOut(run: ReviewRun, ctx: CarryOut, prepare: () => Promise<{planPath: string; resume: boolean}>): Promise<ReviewOutcome> {
  const {found, pull, sticky, trigger} = ctx
  const {state} = found
  const sameRepository = pull?.head.sameRepository === true
  const meter = costMeter(ctx.priorCost)
  let phase: 'run' | 'delivery' = 'run'
  let planPath: string | undefined
  try {
    const prepared = await prepare()
    planPath = prepared.planPath
    const outcome = await run.session(`wave ${run.client.words.forge.toLowerCase()}: ${prepared.resume ? 'resume' : 'run'}`, async (host) =>
      finished(
        await executePlan({
          ...run.sessionOptions,
          allowStale: false,
          budget: ctx.budget,
          cwd: run.workspace,
          host: meter.watch(host),
          planPath: prepared.planPath,
          resume: prepared.resume,
        }),
        () => ({command: `/wave resume ${state.name}`, kept: 'its changes and conversation', takesFlags: false}),
      ),
    )
    sticky.state = {
      ...sticky.state,
      cost: {...sticky.state.cost, run: addCost(prepared.resume ? state.cost.run : undefined, meter.cost())},
      questions: outcome.questions.map((q) => q.question),
      report: stickyReport(outcome.report),
      logsUrl: run.runUrl,
      todos: outcome.todos,
    }
    // The report is on the comment, within its size limit, before anything is delivered.
    await sticky.save()
    phase = 'delivery'
    const delivery = await deliver(run.client, run.remote, {
      approver: ctx.approval.by,
      files: outcome.filesChanged,
      links: {
        approval: ctx.approval.url ?? trigger.comment?.url ?? sticky.url ?? found.comment.url,
        plan: sticky.url ?? found.comment.url,
        resumed: prepared.resume ? trigger.comment?.url : undefined,
      },
      prDelivery: run.options.prDelivery,
      pull: pull && {baseRef: pull.base.ref, headRef: pull.head.ref, number: pull.number, sameRepository},
      state: sticky.state,
    })
    sticky.state = {
      ...sticky.state,
      delivery,
      history: [...sticky.state.history, {at: now(), event: 'ran', text: delivery ? `delivered: ${delivery.url}` : 'no file changed'}],
      status: stickyStatusAfter({kind: 'run', run: {exitCode: ExitCode.ok}}),
    }
    await sticky.save()
    const what = delivery
      ? delivery.kind === 'push'
        ? `pushed ${delivery.commit.slice(0, 12)} to ${delivery.branch}`
        : `opened ${delivery.url}`
      : 'no file changed'
    const ran = prepared.resume ? `Resumed ${state.name} for @${trigger.actor} and finished it` : `Ran ${state.name}, approved by @${trigger.actor}`
    return {...outcomeOf(run, 'ran', `${ran}: ${what}.`, sticky, ctx.contract), costUsd: meter.cost(), delivery: delivery ?? null}
  } catch (error) {
    if (meter.cost() !== undefined)
      sticky.state = {...sticky.state, cost: {...sticky.state.cost, run: addCost(ctx.priorCost === undefined ? undefined : state.cost.run, meter.cost())}}
    // A run that did not meet its checks (exit 7) shows what it did: the report is the failure's detail.
    const report = error instanceof WaveError ? runReportSchema.safeParse(error.details?.report) : undefined
    if (report?.success && phase === 'run') sticky.state = {...sticky.state, logsUrl: run.runUrl, report: stickyReport(report.data)}
    let failed = error
    if (error instanceof WaveError && phase === 'run' && RESUMABLE_EXITS.has(error.exitCode) && planPath) {
      // What the next job goes on from: the run's changes beside its plan, kept by the recipe's cache.
      // Not kept (a git failure): /wave resume then says nothing was kept, and how to start over.
      await keepStoppedRun(run.remote, planPath).catch(() => {})
      // What the next job may take from a cache, by digest: the comment is the authority, the cache only carries the bytes.
      sticky.state = {...sticky.state, kept: await keptDigests(planPath).catch(() => undefined)}
      // The hint that works where this is read (the comment, the job's summary): the comment command, not the CLI's.
      failed = new WaveError(error.message, error.exitCode, forgeRunHint(error, sticky.state, run.options.budgetSetting), error.details)
    }

    await sticky.fail(phase, failed).catch(() => {})
    throw failed
  }
}

/**
 * How a run stopped on a forge goes on, said where it is read (the comment, the job's summary): the
 * comment, not the CLI. A turn limit's hint says what to raise first and names the comment already
 * (`finished` in carryOut). A budget binds every run of the plan as its approver was shown it (the
 * comment's `maxBudgetUsd`, which `/wave resume` and another `/wave approve` keep): raising the setting
 * gives a run more only once the plan is revised or planned again, so the hint says that, not resume.
 * Not the CLI's "approve the plan again with a higher --max-budget-usd" (model/budget.ts, capRaise) when
 * the approval's cap (or a unit's share of it) binds: a forge's approval takes the budget shown with the
 * plan, so the setting to raise is the job's (`setting`: the Action's input, WAVE_MAX_BUDGET_USD).
 */
function forgeRunHint(error: WaveError, state: StickyState, setting = 'WAVE_MAX_BUDGET_USD'): string {
  const {name} = state
  if (error.details?.stopReason === 'budget') {
    const shown = state.maxBudgetUsd === undefined ? '' : ` (at most ${state.maxBudgetUsd} USD a session)`
    const source = error.details.budget?.source
    const raise =
      source?.kind === 'variable'
        ? (source.setting ?? 'WAVE_MAX_BUDGET_USD')
        : source?.kind === 'settings'
          ? `maxBudgetUsd in ${source.file}`
          : source?.kind === 'flag'
            ? "the job's --max-budget-usd"
            : setting
    return `The budget shown with the plan${shown} binds its runs, /wave resume included: to give it more, raise ${raise}, then revise the plan (/wave request-changes ${name} <what to change>) or plan its task again (/wave plan ${name}), and approve it.`
  }

  if (error.exitCode === ExitCode.limit && error.hint?.includes('/wave resume')) return error.hint
  return `Continue the run where it stopped: answer with /wave resume ${name}.`
}

// ------------------------------------------------------------------------------------------------ shared

/**
 * A session a step needs finished: one that stopped (a limit, a refusal, unmet checks) fails the step with
 * the line and exit code ENDINGS gives it. `resumed`: how it goes on here, in a comment, in place of the
 * driver's command, where the driver gave one (a session nothing resumes keeps saying so).
 */
function finished<T>(outcome: T | Stopped, resumed?: (stopped: Stopped) => Continuation): T {
  if (isStopped(outcome)) throw stoppedError(resumed && outcome.goOn ? {...outcome, goOn: resumed(outcome)} : outcome)
  return outcome
}

/** "Changed since your last review": the plan the reviewer asked changes of (carried in its comment) against the revision. */
async function changesSinceReview(found: PlanOnForge, bytes: Buffer, sha256: string, feedback: string): Promise<string | undefined> {
  if (!found.plan || !found.state.sha256) return undefined
  const from = {label: 'as reviewed', sha256: found.state.sha256, text: found.plan.toString('utf8')}
  const to = {label: 'revised', sha256, text: bytes.toString('utf8')}
  return revisionDiffMarkdown({...(await textDiff(from, to)), feedback: [feedback], from, to})
}

/**
 * The plan a decision is about: the one named, else the only one of the thread in an acceptable status.
 * Anything else is answered in a reply (no plan, several, one in another status) and refused.
 */
async function pick(
  run: ReviewRun,
  trigger: Trigger,
  plans: Awaited<ReturnType<typeof plansOf>>,
  name: string | undefined,
  statuses: StickyStatus[],
  purpose: string,
): Promise<PlanOnForge> {
  if (name) {
    const named = plans.find((p) => nameOf(p) === name)
    if (!named) return refuse(run, trigger, usageError(`No plan named ${name} in this thread.`, planList(plans)))
    if ('damaged' in named) return refuse(run, trigger, named.damaged)
    const replaced = named.state.status === 'superseded' ? named.state.replacedBy : undefined
    if (replaced) {
      // A plan whose task was planned again is answered through the new plan, whatever was asked of it.
      const verb = purpose === 'to approve' ? 'approve' : 'answer'
      return refuse(
        run,
        trigger,
        new WaveError(
          `Plan ${name} was planned again as ${replaced.name} on ${replaced.commit.slice(0, 12)}: ${verb} ${replaced.name}.`,
          ExitCode.notApproved,
          replaced.url ? `Its ${run.client.words.comment}: ${replaced.url}` : undefined,
        ),
      )
    }

    if (!statuses.includes(named.state.status)) {
      return refuse(
        run,
        trigger,
        new WaveError(`Plan ${name} is ${named.state.status.replace('_', ' ')}: nothing ${purpose}.`, ExitCode.notApproved, planList(plans)),
      )
    }

    return named
  }

  // A plan suggested for approval has a file to approve: a failed planning left none.
  const open = plans.filter(
    (p): p is PlanOnForge =>
      !('damaged' in p) && statuses.includes(p.state.status) && (purpose !== 'to approve' || (p.plan !== undefined && p.state.sha256 !== undefined)),
  )
  if (open.length === 1) return open[0]
  if (open.length === 0)
    return refuse(run, trigger, usageError(`No plan in this thread ${purpose}.`, plans.length > 0 ? planList(plans) : 'Make one with /wave plan <task>.'))
  return refuse(
    run,
    trigger,
    usageError(
      `Several plans in this thread could be meant (${open.map((p) => p.state.name).join(', ')}): name one.`,
      `For example: /wave ${purpose === 'to approve' ? 'approve' : purpose === 'to reject' ? 'reject' : purpose === 'to resume' ? 'resume' : 'request-changes'} ${open[0].state.name} ...`,
    ),
  )
}

const nameOf = (plan: Awaited<ReturnType<typeof plansOf>>[number]) => ('damaged' in plan ? plan.name : plan.state.name)

const planList = (plans: Awaited<ReturnType<typeof plansOf>>) =>
  plans.length > 0
    ? `Plans here: ${plans.map((p) => ('damaged' in p ? `${p.name} (damaged)` : `${p.state.name} (${p.state.status.replace('_', ' ')})`)).join(', ')}.`
    : 'No plan here yet.'

/** Replies to the comment (or in the thread) with the error's line and hint, then throws it. */
async function refuse(run: ReviewRun, trigger: Trigger, error: WaveError, refusal = true): Promise<never> {
  // Answered in the thread, a refusal (refusal.ts); a reply that could not be posted leaves a failure.
  const posted = await reply(run, trigger, `${error.message}${error.hint ? `\n\n${error.hint}` : ''}`).then(
    () => true,
    () => false,
  )
  throw posted && refusal ? answered(error) : error
}

/** A reply in the thread: the comment answered, quoted by its first line, and whom it answers; then what the job installed, in one line. */
export async function reply(run: Pick<ReviewRun, 'client'> & {options?: Pick<ReviewOptions, 'dependencies'>}, trigger: Trigger, text: string): Promise<void> {
  if (!trigger.thread) return
  const quoted = trigger.comment ? `> ${escapeLine(trigger.comment.body.trim().split('\n')[0])}\n\n` : ''
  const installed = dependencyLine(run.options?.dependencies)
  await run.client.createComment(trigger.thread, `${quoted}@${trigger.actor} ${text}${installed ? `\n\n${installed}` : ''}`)
}

/**
 * A step that would ask the model (plan, revise, run, resume) stops before it when the job's install of
 * the project's dependencies failed: the plan's comment (or, for a new plan, a reply) says so with the
 * install's last lines and the fix, the plan's state left as it was (it can be approved or resumed once
 * the install works), and the job fails with exit 1, a failure of the job's, not a refusal.
 */
async function assertInstalled(run: ReviewRun, trigger: Trigger, found?: PlanOnForge): Promise<void> {
  const install = run.options.dependencies
  if (!installFailed(install)) return
  const said = installFailureMarkdown(install)
  if (found) {
    const sticky = PlanComment.of(run.client, found)
    sticky.extras = {blocked: said}
    sticky.state = {...sticky.state, runUrl: run.runUrl}
    // The plan's status is unchanged: so are its commit statuses.
    await sticky.save({statuses: false}).catch(() => reply({client: run.client}, trigger, said).catch(() => {}))
  } else await reply({client: run.client}, trigger, said).catch(() => {})
  throw installError(install)
}

const escapeLine = (line: string) => line.slice(0, 200).replaceAll('<', '&lt;').replaceAll('@', '@\u200B')

/** A just-written plan's contract, to show: its units' problems refuse its approval, not its planning. */
const shownOnly = (contract: PlanContract): PlanContract => ({...contract, unitErrors: []})

/** Shows the plan's contract in its comment (with the changes since the last review, when there are any); answers it for the outcome. */
function showContract(sticky: PlanComment, bound: BoundContract, changes?: string, unitErrors: string[] = []): ContractShown {
  const contract = {scope: bound.scope, verify: bound.verify}
  sticky.extras = {
    ...sticky.extras,
    changes,
    contract: [contractMarkdown(contract), unitsContractMarkdown(bound.units ?? [], unitErrors)].filter(Boolean).join('\n\n'),
  }
  return contract
}

function outcomeOf(run: ReviewRun, outcome: ReviewOutcome['outcome'], message: string, sticky: PlanComment, contract?: ContractShown): ReviewOutcome {
  return {
    event: run.event,
    message,
    outcome,
    // The report of this run only (a plan rejected after a failed run still carries that run's).
    ...(outcome === 'ran' && sticky.state.report ? {report: sticky.state.report} : {}),
    plan: {
      comment: sticky.url,
      contract,
      name: sticky.state.name,
      questions: sticky.state.questions ?? [],
      sha256: sticky.state.sha256,
      status: sticky.state.status,
      todos: sticky.state.todos ?? [],
    },
  }
}

/**
 * A session's cost, from its own usage events (the last says the total so far). `prior`: what a resumed
 * session had spent before this job, which its events count too: left out, so the meter says this job's.
 */
function costMeter(prior?: number | null) {
  let cost: number | null | undefined
  return {
    cost: () =>
      cost === undefined || cost === null || prior === undefined ? cost : prior === null ? null : Math.max(0, Math.round((cost - prior) * 1e6) / 1e6),
    watch(host: SessionHost): SessionHost {
      return {
        ...host,
        onEvent(event) {
          if (event.type === 'usage') cost = event.costUsd
          host.onEvent?.(event)
        },
      }
    },
  }
}
