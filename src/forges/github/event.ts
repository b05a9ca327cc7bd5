/**
 * The GitHub Actions event, read from GITHUB_EVENT_PATH, turned into what wave is asked to do: an
 * intent. Only the fields wave uses are validated; anything else about the payload is GitHub's.
 */
import {readFile} from 'node:fs/promises'

import {z} from 'zod'

import {usageError} from '../../base/errors.js'
import {isWaveComment} from '../../review/commands.js'
import {commentIntent, type Intent, type Trigger} from '../../review/intent.js'

const userSchema = z.lazy(() => z.object({id: z.number().int().optional(), login: z.string(), type: z.string().optional()}))

const issueCommentSchema = z.lazy(() =>
  z.object({
    action: z.string(),
    comment: z.object({body: z.string().nullable().optional(), created_at: z.string(), html_url: z.string(), id: z.number(), user: userSchema}),
    issue: z.object({number: z.number().int().positive(), pull_request: z.unknown().optional()}),
  }),
)

const pullRequestSchema = z.lazy(() =>
  z.object({
    action: z.string(),
    label: z.object({name: z.string()}).optional(),
    pull_request: z.object({body: z.string().nullable().optional(), number: z.number().int().positive(), title: z.string()}),
    sender: userSchema,
  }),
)

const dispatchSchema = z.lazy(() =>
  z.object({
    inputs: z.record(z.string(), z.unknown()).nullable().optional(),
    sender: userSchema,
  }),
)

export type {Intent, Trigger} from '../../review/intent.js'

export async function readEvent(eventPath: string): Promise<unknown> {
  let text: string
  try {
    text = await readFile(eventPath, 'utf8')
  } catch (error) {
    throw usageError(`Cannot read the event payload GITHUB_EVENT_PATH=${eventPath}: ${(error as Error).message}`)
  }

  try {
    return JSON.parse(text)
  } catch {
    throw usageError(`The event payload ${eventPath} is not JSON.`)
  }
}

/** A login that is an app's, not a person's: wave answers people only (its own comments included). */
const isBot = (user: z.infer<typeof userSchema>) => user.type === 'Bot' || user.login.endsWith('[bot]')

export function intentOf(eventName: string, payload: unknown, options: {label: string; replanOnPush?: boolean}): Intent {
  switch (eventName) {
    case 'issue_comment': {
      const event = parse(issueCommentSchema, payload, eventName)
      const {comment} = event
      if (event.action !== 'created') return {kind: 'ignore', reason: `a comment ${event.action}, not created: wave answers new comments only`}
      const body = comment.body ?? ''
      if (!isWaveComment(body)) return {kind: 'ignore', reason: 'the comment does not start with /wave'}
      if (isBot(comment.user)) return {kind: 'ignore', reason: `the comment is by an app (${comment.user.login}), not a person`}
      const trigger: Trigger = {
        actor: comment.user.login,
        actorId: comment.user.id,
        comment: {body, createdAt: comment.created_at, id: comment.id, url: comment.html_url},
        thread: {number: event.issue.number, pull: Boolean(event.issue.pull_request)},
      }
      return commentIntent(body, trigger)
    }

    case 'pull_request': {
      const event = parse(pullRequestSchema, payload, eventName)
      if (event.action === 'synchronize') return pushedIntent(event, options.replanOnPush === true)
      if (event.action !== 'labeled') return {kind: 'ignore', reason: `pull_request ${event.action}: wave plans when the label "${options.label}" is added`}
      if (event.label?.name !== options.label) return {kind: 'ignore', reason: `the label added is "${event.label?.name ?? ''}", not "${options.label}"`}
      if (isBot(event.sender)) return {kind: 'ignore', reason: `the label was added by an app (${event.sender.login}), not a person`}
      const pull = event.pull_request
      const task = [pull.title.trim(), (pull.body ?? '').replaceAll('\r\n', '\n').trim()].filter(Boolean).join('\n\n')
      return {kind: 'plan', task, trigger: {actor: event.sender.login, actorId: event.sender.id, thread: {number: pull.number, pull: true}}}
    }

    case 'workflow_dispatch': {
      const event = parse(dispatchSchema, payload, eventName)
      const task = typeof event.inputs?.task === 'string' ? event.inputs.task.trim() : ''
      if (!task) return {kind: 'ignore', reason: 'the dispatch has no task input'}
      const issueInput = event.inputs?.issue
      const issue = typeof issueInput === 'number' ? issueInput : typeof issueInput === 'string' && issueInput.trim() ? Number(issueInput.trim()) : undefined
      if (issue !== undefined && !(Number.isInteger(issue) && issue > 0))
        throw usageError(`The dispatch's issue input must be an issue or pull request number (got "${String(issueInput)}").`)
      return {dispatch: {issue}, kind: 'plan', task, trigger: {actor: event.sender.login, actorId: event.sender.id}}
    }

    default: {
      return {kind: 'ignore', reason: `wave does nothing on ${eventName} events`}
    }
  }
}

/** New commits on a pull request's branch: its pending plans planned again on the new head, when replan-on-push is on. */
function pushedIntent(event: z.infer<typeof pullRequestSchema>, replanOnPush: boolean): Intent {
  if (!replanOnPush) return {kind: 'ignore', reason: 'pull_request synchronize: replan-on-push is off, so a push plans nothing again'}
  if (isBot(event.sender)) return {kind: 'ignore', reason: `the push was by an app (${event.sender.login}), not a person`}
  return {kind: 'pushed', trigger: {actor: event.sender.login, actorId: event.sender.id, thread: {number: event.pull_request.number, pull: true}}}
}

function parse<T extends z.ZodType>(schema: T, payload: unknown, eventName: string): z.output<T> {
  const parsed = schema.safeParse(payload)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]
    throw usageError(`The ${eventName} payload is not one GitHub sends: ${issue.path.join('.') || '(root)'}: ${issue.message}.`)
  }

  return parsed.data
}
