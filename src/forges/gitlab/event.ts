/**
 * The GitLab job's event, turned into what wave is asked to do: an intent. A pipeline a note webhook
 * triggered carries the webhook's body in TRIGGER_PAYLOAD (a file variable: its value is the file's path);
 * a manual or scheduled pipeline carries WAVE_TASK. With replan-on-push, the webhook's merge request
 * events come the same way: one with new commits (`oldrev`) plans the merge request's pending plans again.
 * Only the fields wave uses are validated.
 *
 * The payload only says which note (or merge request) to look at: whoever holds the trigger token can start
 * a pipeline with any body, so the handler reads the note itself back from the API (verifyNote), and for a
 * push the merge request's head and the push that made it (verifyPush), before anyone's access, any command
 * or any timestamp is believed.
 */
import {readFile} from 'node:fs/promises'

import {z} from 'zod'

import {ExitCode, usageError, WaveError} from '../../base/errors.js'
import {isWaveComment} from '../../review/commands.js'
import {commentIntent, type Intent, type Trigger} from '../../review/intent.js'
import type {GitLabClient, Pipeline} from './client.js'
import type {GitLabEnvironment} from './env.js'

const noteEventSchema = z.lazy(() =>
  z.object({
    object_attributes: z.object({
      action: z.string().optional(),
      id: z.number().int().positive(),
      note: z.string().nullable().optional(),
      noteable_type: z.string(),
      system: z.boolean().optional(),
    }),
    object_kind: z.literal('note'),
    project: z.object({id: z.number().int()}).optional(),
    project_id: z.number().int().optional(),
    issue: z.object({iid: z.number().int().positive()}).optional(),
    merge_request: z.object({iid: z.number().int().positive()}).optional(),
    user: z.object({bot: z.boolean().optional(), id: z.number().int().optional(), username: z.string()}),
  }),
)

const mergeRequestEventSchema = z.lazy(() =>
  z.object({
    object_attributes: z.object({
      action: z.string().optional(),
      iid: z.number().int().positive(),
      /** The head before the update: present when the update pushed new commits. */
      oldrev: z.string().nullable().optional(),
    }),
    object_kind: z.literal('merge_request'),
    project: z.object({id: z.number().int()}).optional(),
    user: z.object({bot: z.boolean().optional(), id: z.number().int().optional(), username: z.string()}),
  }),
)

/** A project or group access token's user (project_123_bot_<hex>), or a user GitLab marks as a bot. */
export const isBotUser = (user: {username: string; bot?: boolean}) =>
  user.bot === true || /^(project|group)_\d+_bot(_[0-9a-f]+)?$/.test(user.username) || user.username.endsWith('[bot]')

export async function readPayload(payloadPath: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(payloadPath, 'utf8')
  } catch (error) {
    throw usageError(
      `Cannot read the webhook's body TRIGGER_PAYLOAD=${payloadPath.slice(0, 200)}: ${(error as Error).message}`,
      'TRIGGER_PAYLOAD is a file variable GitLab sets in a pipeline a webhook triggered; set no variable of that name yourself.',
    )
  }

  try {
    return JSON.parse(text)
  } catch {
    throw usageError("The webhook's body in TRIGGER_PAYLOAD is not JSON.")
  }
}

/**
 * The intent of a webhook's event: a note, or (with replan-on-push) a merge request's update that pushed
 * new commits. `projectId` is CI_PROJECT_ID, which the event must belong to.
 */
export function webhookIntent(payload: unknown, projectId: string | undefined, options: {replanOnPush?: boolean} = {}): Intent {
  const kind = (payload as {object_kind?: unknown})?.object_kind
  if (kind === 'merge_request') return mergeRequestIntent(payload, projectId, options.replanOnPush === true)
  if (kind !== 'note')
    return {
      kind: 'ignore',
      reason: `wave does nothing on ${typeof kind === 'string' ? `${kind.slice(0, 40)} events` : 'a webhook body that is no GitLab event'}`,
    }
  const parsed = noteEventSchema.safeParse(payload)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw usageError(`The note event is not one GitLab sends: ${issue.path.join('.') || '(root)'}: ${issue.message}.`)
  }

  const event = parsed.data
  const note = event.object_attributes
  sameProject('note', event.project?.id ?? event.project_id, projectId)

  if (note.action !== undefined && note.action !== 'create') return {kind: 'ignore', reason: `a note ${note.action}d, not created: wave answers new notes only`}
  if (note.system) return {kind: 'ignore', reason: 'a system note'}
  const body = note.note ?? ''
  if (!isWaveComment(body)) return {kind: 'ignore', reason: 'the note does not start with /wave'}
  if (isBotUser(event.user)) return {kind: 'ignore', reason: `the note is by a bot (${event.user.username}), not a person`}
  let thread: {number: number; pull: boolean}
  if (note.noteable_type === 'MergeRequest' && event.merge_request) thread = {number: event.merge_request.iid, pull: true}
  else if (note.noteable_type === 'Issue' && event.issue) thread = {number: event.issue.iid, pull: false}
  else return {kind: 'ignore', reason: `a note on a ${note.noteable_type.slice(0, 40)}: wave answers notes on merge requests and issues`}
  // Placeholders until verifyNote has read the note from the API.
  const trigger: Trigger = {actor: event.user.username, actorId: event.user.id, comment: {body, createdAt: '', id: note.id, url: ''}, thread}
  return commentIntent(body, trigger)
}

function sameProject(what: string, project: number | undefined, projectId: string | undefined): void {
  if (projectId !== undefined && project !== undefined && String(project) !== projectId) {
    throw usageError(
      `The ${what} event is from project ${project}, but this pipeline runs in project ${projectId}.`,
      "Point the project's webhook at its own pipeline trigger URL.",
    )
  }
}

/**
 * A merge request's update with new commits (`oldrev`): its pending plans planned again, with
 * replan-on-push. Only the merge request is taken from the body; who pushed is read from the API
 * (verifyPush) once the job may ask it.
 */
function mergeRequestIntent(payload: unknown, projectId: string | undefined, replanOnPush: boolean): Intent {
  if (!replanOnPush) return {kind: 'ignore', reason: 'a merge request event: replan-on-push is off, so a push plans nothing again'}
  const parsed = mergeRequestEventSchema.safeParse(payload)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw usageError(`The merge request event is not one GitLab sends: ${issue.path.join('.') || '(root)'}: ${issue.message}.`)
  }

  const event = parsed.data
  sameProject('merge request', event.project?.id, projectId)
  const {action, iid, oldrev} = event.object_attributes
  if (action !== 'update' || !oldrev) return {kind: 'ignore', reason: `a merge request ${action ?? 'event'} without new commits: nothing to plan again`}
  if (isBotUser(event.user)) return {kind: 'ignore', reason: `the push was by a bot (${event.user.username}), not a person`}
  // Placeholders until verifyPush has read the push from the API.
  return {kind: 'pushed', trigger: {actor: event.user.username, actorId: event.user.id, thread: {number: iid, pull: true}}}
}

/**
 * A manual or scheduled pipeline with WAVE_TASK: a plan, into the merge request or issue named, else a new
 * issue, asked for by whoever GitLab says started the pipeline (`pipeline`, read from the API). The job's
 * variables are what a trigger's caller may set, GITLAB_USER_LOGIN and CI_PIPELINE_SOURCE included: where
 * they contradict the API, the job is refused (exit 3) rather than believed.
 */
export function taskIntent(environment: GitLabEnvironment, pipeline: Pipeline): Intent {
  const {task, user} = environment
  if (!task) return {kind: 'ignore', reason: 'the job has neither a note event (TRIGGER_PAYLOAD) nor a task (WAVE_TASK)'}
  const claimed = [
    environment.pipelineSource !== undefined && environment.pipelineSource !== pipeline.source
      ? `CI_PIPELINE_SOURCE says ${environment.pipelineSource.slice(0, 40)}, GitLab says ${pipeline.source ?? 'nothing'}`
      : undefined,
    user && (!pipeline.user || user.login.toLowerCase() !== pipeline.user.login.toLowerCase() || (user.id !== undefined && user.id !== pipeline.user.id))
      ? `GITLAB_USER_LOGIN says ${user.login.slice(0, 80)}, GitLab says ${pipeline.user?.login ?? 'no one'}`
      : undefined,
  ].filter(Boolean)
  if (claimed.length > 0) {
    throw new WaveError(
      `The job's variables do not say what GitLab says of pipeline ${pipeline.id} (${claimed.join('; ')}): wave plans only for whoever GitLab says started it.`,
      ExitCode.notApproved,
      'Variables a pipeline trigger sets are not believed: start a manual or scheduled pipeline, without overriding predefined variables.',
    )
  }

  // Variables of a trigger-token pipeline are whatever the token's holder sent.
  if (pipeline.source === 'trigger')
    return {
      kind: 'ignore',
      reason: 'WAVE_TASK came with a pipeline trigger, whose variables anyone holding the token can set: start a manual or scheduled pipeline instead',
    }
  if (!pipeline.user) throw usageError(`GitLab names no user who started pipeline ${pipeline.id}: wave gitlab checks the access of whoever started it.`)
  return {
    dispatch: {issue: environment.issue, pull: environment.mergeRequest},
    kind: 'plan',
    task,
    trigger: {actor: pipeline.user.login, actorId: pipeline.user.id},
  }
}

/** Statuses of a pipeline whose jobs still run: a CI_PIPELINE_ID naming a finished one is not this job's. */
const RUNNING = ['created', 'waiting_for_resource', 'preparing', 'pending', 'running', 'scheduled']

/** This job's pipeline, as the API has it (CI_PIPELINE_ID, checked to be running on the job's commit). */
export async function jobPipeline(client: GitLabClient, environment: GitLabEnvironment): Promise<Pipeline> {
  if (environment.pipelineId === undefined) throw usageError('CI_PIPELINE_ID is not set: wave gitlab reads who started the pipeline from the API.')
  const pipeline = await client.pipeline(environment.pipelineId)
  const problem = !pipeline
    ? 'the project has no such pipeline'
    : pipeline.status && !RUNNING.includes(pipeline.status)
      ? `it is ${pipeline.status}, not running`
      : environment.sha && pipeline.sha && environment.sha !== pipeline.sha
        ? `it runs on ${pipeline.sha.slice(0, 12)}, and CI_COMMIT_SHA is ${environment.sha.slice(0, 12)}`
        : undefined
  if (problem || !pipeline) {
    throw new WaveError(
      `CI_PIPELINE_ID ${environment.pipelineId} is not this job's pipeline: ${problem}.`,
      ExitCode.notApproved,
      'Run wave gitlab in a job of the pipeline, without overriding predefined variables.',
    )
  }

  return pipeline
}

/**
 * The intent again, from the note as the API has it: its author (and their id), its text and when it was
 * written. A note the API does not have, or one by wave itself, asks nothing.
 */
export async function verifyNote(intent: Intent, client: GitLabClient, wave: string): Promise<Intent> {
  if (intent.kind === 'ignore' || !intent.trigger.comment || !intent.trigger.thread) return intent
  const {thread} = intent.trigger
  const note = await client.note(thread, intent.trigger.comment.id)
  if (!note)
    return {
      kind: 'ignore',
      reason: `note ${intent.trigger.comment.id} is not on ${client.words.ref(thread)}: the webhook's body names a note GitLab does not have`,
    }
  if (note.system || !isWaveComment(note.body)) return {kind: 'ignore', reason: 'the note (as GitLab has it) does not start with /wave'}
  if (isBotUser({username: note.author}) || note.author === wave) return {kind: 'ignore', reason: `the note is by a bot (${note.author}), not a person`}
  // As GitHub's edited comments: a note is answered as its author first wrote it. Anyone who may edit it
  // (its author, a maintainer) could otherwise turn it into a command its author never gave.
  if (Date.parse(note.updatedAt) > Date.parse(note.createdAt) || normalised(note.body) !== normalised(intent.trigger.comment.body)) {
    return {
      kind: 'ignore',
      reason: `note ${note.id} was edited after it was written (updated ${note.updatedAt}, written ${note.createdAt}): wave answers notes as first written, so write a new one`,
    }
  }

  return commentIntent(note.body, {
    actor: note.author,
    actorId: note.authorId,
    comment: {body: note.body, createdAt: note.createdAt, id: note.id, url: note.url},
    thread,
  })
}

/**
 * A push's intent again, from the API: the merge request's head as GitLab has it now, and who pushed it,
 * from the project's push events (the push to its source branch that made that head). A merge request
 * from a fork (whose pushes are the fork's), a head no push event of the project made, or a push by a bot
 * (wave's own delivery) asks nothing.
 */
export async function verifyPush(intent: Intent, client: GitLabClient, wave: string): Promise<Intent> {
  if (intent.kind !== 'pushed' || !intent.trigger.thread) return intent
  const {thread} = intent.trigger
  const request = await client.changeRequest(thread.number)
  if (!request.head.sameRepository) return {kind: 'ignore', reason: `!${thread.number} is from a fork: its pushes are the fork's, and plan nothing again here`}
  const pusher = await client.pusherOf(request.head.ref, request.head.sha)
  if (!pusher)
    return {
      kind: 'ignore',
      reason: `no push of ${request.head.sha.slice(0, 12)} to ${request.head.ref} is among the project's events: the webhook's body names a push GitLab does not have`,
    }
  if (isBotUser({username: pusher.login}) || pusher.login === wave) return {kind: 'ignore', reason: `the push was by a bot (${pusher.login}), not a person`}
  return {kind: 'pushed', trigger: {actor: pusher.login, actorId: pusher.id, thread}}
}

const normalised = (text: string) => text.replaceAll('\r\n', '\n').trim()
