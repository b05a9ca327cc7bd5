/**
 * `wave gitlab`: one GitLab CI job, start to end. The job's event (a note webhook's body, or a manual
 * pipeline's WAVE_TASK) becomes an intent (event.ts), checked against the note as the API has it; the
 * review core decides the rest (review/handler.ts), through GitLab's client and git remote.
 */
import {dutiesOf, type DutyFlags} from '../../review/duties.js'
import {handleReview, ignored} from '../../review/handler.js'
import {Remote} from '../../review/remote.js'
import type {ReviewOutcome, ReviewSessionOptions, SessionRunner} from '../../review/steps.js'
import {usageError, WaveError} from '../../base/errors.js'
import {sessionWorkspace} from '../../base/workspace/git.js'
import {reportUnits, type UnitsReport, unitsReportFlag} from '../../review/units.js'
import type {Thread} from '../../review/forge.js'
import type {Intent} from '../../review/intent.js'
import {GitLabClient} from './client.js'
import {writeUnitsPipeline} from './units-pipeline.js'
import {gitlabAccess, gitlabEnvironment, type GitLabFlags, gitlabOptions} from './env.js'
import {jobPipeline, readPayload, taskIntent, verifyNote, verifyPush, webhookIntent} from './event.js'

interface GitLabJobOptions {
  flags: GitLabFlags & DutyFlags
  /** `--cwd`: the checkout (default: the top of the git repository holding the current directory). */
  cwd?: string
  /** --model, --max-turns: given to every session of the review. */
  sessionOptions: ReviewSessionOptions
  session: SessionRunner
  /**
   * `--triage`: only tell whether the job asks anything of wave, from its event alone (no API call, no
   * checkout): a light first step that ends the job at once for a note that is no /wave command.
   */
  triage?: boolean
  /** Where a commit status that could not be set is reported. */
  warn?(message: string): void
  env?: NodeJS.ProcessEnv
  /** `--units-merged FILE` (the merge's output, then deliver) or `--unit-result FILE` (one unit's result): shown on the plan's note. */
  unitsReport?: UnitsReport
}

export async function handleGitLabJob(input: GitLabJobOptions): Promise<ReviewOutcome> {
  const env = input.env ?? process.env
  const environment = gitlabEnvironment(env)
  const options = gitlabOptions(input.flags, env)
  const duties = dutiesOf(input.flags, env)
  // Nothing is asked of the API (nor is a token needed) for a job that asks nothing of wave.
  // A job of a plan's units (a unit's, the merge's) asks for its report whatever started its pipeline.
  if (!environment.payloadPath && !environment.task && !input.unitsReport)
    return ignored(environment.pipelineSource ?? 'pipeline', 'the job has neither a note event (TRIGGER_PAYLOAD) nor a task (WAVE_TASK)')
  const payload = environment.payloadPath ? await readPayload(environment.payloadPath) : undefined
  let intent = payload === undefined ? undefined : webhookIntent(payload, env.CI_PROJECT_ID?.trim() || undefined, {replanOnPush: options.replanOnPush})
  // The webhook's event, in the outcome: a note, or a merge request's push (replan-on-push).
  let event = (payload as {object_kind?: unknown} | undefined)?.object_kind === 'merge_request' ? 'merge_request' : 'note'
  if (intent?.kind === 'ignore') return ignored(event, intent.reason)
  if (input.triage) return triaged(intent, intent ? event : (environment.pipelineSource ?? 'pipeline'))

  const access = gitlabAccess(env)
  const client = new GitLabClient({
    apiUrl: access.apiUrl,
    minAccessLevel: options.minAccessLevel,
    project: access.project,
    projectUrl: access.projectUrl,
    token: access.token,
    warn: input.warn,
  })
  const user = await client.user()
  if (intent) {
    intent = intent.kind === 'pushed' ? await verifyPush(intent, client, user.username) : await verifyNote(intent, client, user.username)
  } else if (input.unitsReport) {
    intent = {kind: 'ignore', reason: "a job of a plan's units"}
  } else {
    // Who started a WAVE_TASK pipeline, and how, as GitLab says: not as the job's variables say.
    const pipeline = await jobPipeline(client, environment)
    event = pipeline.source ?? 'pipeline'
    intent = taskIntent(environment, pipeline)
  }

  const prepare = async () => {
    return {
      client,
      options,
      async complete() {
        const place = await sessionWorkspace(input.cwd ?? process.cwd(), input.cwd !== undefined)
        if (!place.repository)
          throw usageError(
            `${place.workspace} is not a git checkout: wave gitlab works in the job's checkout of the project.`,
            'Leave GIT_STRATEGY at fetch or clone for the job.',
          )
        const host = new URL(environment.serverUrl).hostname
        return {
          author: user.username,
          client,
          dispatched: {refName: environment.refName, sha: environment.sha},
          duties,
          event,
          sessionOptions: input.sessionOptions,
          options,
          remote: new Remote({
            checkoutStep: "the job's checkout",
            // A project access token's bot user commits as GitLab names it: <username>@noreply.<host>.
            identity: {email: `${user.username}@noreply.${host}`, name: user.name || user.username},
            name: options.remote,
            serverUrl: environment.serverUrl,
            token: access.token,
            user: 'oauth2',
            workspace: place.workspace,
          }),
          runUrl: environment.runUrl,
          session: input.session,
          workspace: place.workspace,
        }
      },
    }
  }

  let outcome: ReviewOutcome
  if (input.unitsReport) {
    // A job of a plan's units (a unit's, the merge's), in the pipeline its approval started: WAVE_THREAD
    // (mr-7, issue-12) names the thread as the recipe passes it down, else the note event does.
    const thread = threadNamed(env.WAVE_THREAD) ?? (intent.kind === 'ignore' ? undefined : intent.trigger.thread)
    if (!thread)
      throw usageError(
        `${unitsReportFlag(input.unitsReport)} reports on a plan's note: set WAVE_THREAD (mr-7, issue-12), or give the note event in TRIGGER_PAYLOAD.`,
      )
    outcome = await reportUnits(input.unitsReport, thread, async () => (await prepare()).complete())
  } else outcome = await reviewed({event, intent, prepare}, env, input.cwd ?? process.cwd())
  await writeUnitsPipeline(outcome, env, input.cwd ?? process.cwd())
  return outcome
}

/**
 * `--triage`: a note's (or a push's) thread from the event alone, as the webhook's body says it (the job
 * believes only what GitLab's API gives, and ignores a note whose text differs); a WAVE_TASK pipeline's is
 * known once GitLab is asked, so it shares one group.
 */
function triaged(intent: Exclude<Intent, {kind: 'ignore'}> | undefined, event: string): ReviewOutcome {
  const on = intent?.trigger.thread
  const thread = on ? `${on.pull ? 'mr' : 'issue'}-${on.number}` : 'task'
  return {
    command: intent ? intent.kind : 'task',
    event,
    message: `${intent?.kind === 'pushed' ? 'A push' : 'A /wave command'} for ${thread}: the job goes on to handle it.`,
    outcome: 'triaged',
    thread,
  }
}

/** The review of one note or task; a refusal the recipe ends green on (WAVE_FAIL_ON_REFUSAL) still leaves the units' child its next trigger needs. */
async function reviewed(review: Parameters<typeof handleReview>[0], env: NodeJS.ProcessEnv, cwd: string): Promise<ReviewOutcome> {
  try {
    return await handleReview(review)
  } catch (error) {
    if (error instanceof WaveError && error.details?.refused)
      await writeUnitsPipeline({event: review.event, message: error.message, outcome: 'refused'}, env, cwd)
    throw error
  }
}

/** A thread as the recipe names it (mr-7, issue-12), or undefined. */
function threadNamed(name: string | undefined): Thread | undefined {
  const match = /^(mr|issue)-(\d+)$/.exec(name?.trim() ?? '')
  return match ? {number: Number(match[2]), pull: match[1] === 'mr'} : undefined
}
