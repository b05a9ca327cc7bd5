/**
 * How a plan travels between workflow runs (GitHub) or pipelines (GitLab): inside its own sticky comment, as a hidden block at the end
 * of the body holding the plan's exact bytes and its state (gzip, then base64).
 *
 * Why the comment and not a `wave/plans` branch: the comment already has to show the whole plan to the
 * reviewer, so its size limit (65,536 characters) binds either way, and the compressed copy costs about
 * half the plan again; planning then needs no write access to the repository's contents, leaves no
 * branch to protect or clean up, and the plan, its status and its decisions live in one place that
 * GitHub timestamps: `updated_at`, which no one can set, tells the approving run whether the comment
 * changed after the reviewer answered it. The bytes travel encoded because GitHub may rewrite a comment's
 * text (line endings), and the approval binds bytes. All of this holds for a GitLab note as well (its
 * limit is 1,000,000 characters; its `updated_at` is GitLab's).
 */
import {rm, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {gunzipSync, gzipSync} from 'node:zlib'

import {z} from 'zod'

import {errorLine, ExitCode, WaveError} from '../base/errors.js'
import {sha256Of} from '../plans/approval.js'
import {adoptPlan} from '../plans/lifecycle.js'
import {ensurePlansDir, PLAN_NAME, planSidecars} from '../plans/store.js'
import type {ForgeComment, ForgeWords} from './forge.js'
import {type ParsedSticky, type StickyState, stickyStateSchema} from './comment-body.js'

/** The word for what holds the plan, where no forge is named (GitHub's). */
const COMMENT: Pick<ForgeWords, 'comment'> = {comment: 'comment'}

/** Far above any plan a comment can hold: a bigger block is not one wave wrote. */
const MAX_DECODED = 4 * 1024 * 1024

const dataSchema = z.lazy(() =>
  z.object({
    plan: z.string().optional(),
    /** The sha256 of what the comment shows (line endings as LF): an edit to the text a reviewer reads shows up. */
    shown: z.string(),
    state: stickyStateSchema,
  }),
)

/** The hidden block for a comment showing `shown`. */
export function encodeData(state: StickyState, plan: Uint8Array | undefined, shown: string): string {
  const json = JSON.stringify({plan: plan ? Buffer.from(plan).toString('base64') : undefined, shown: shownSha256(shown), state})
  return gzipSync(json, {level: 9}).toString('base64')
}

const shownSha256 = (shown: string) => sha256Of(Buffer.from(shown.replaceAll('\r\n', '\n')))

export interface PlanOnForge {
  comment: ForgeComment
  state: StickyState
  /** The plan's bytes, once there is a plan. */
  plan?: Buffer
  shownSha256?: string
}

/**
 * The hidden block decoded and validated, and checked against what the comment shows: a block that is
 * missing or does not decode, or a comment whose text was edited (what a reviewer reads would not be
 * what runs), is a damaged comment (exit 4).
 */
export function decodeData(sticky: ParsedSticky, comment: ForgeComment, words: Pick<ForgeWords, 'comment'> = COMMENT): PlanOnForge {
  const damaged = (why: string) =>
    new WaveError(`The ${words.comment} of plan ${sticky.name} (${comment.url}) is damaged: ${why}.`, ExitCode.mismatch, 'Make a new plan: /wave plan <task>')
  let data: z.infer<typeof dataSchema>
  try {
    if (!sticky.data) throw new Error('missing')
    const json = gunzipSync(Buffer.from(sticky.data, 'base64'), {maxOutputLength: MAX_DECODED}).toString('utf8')
    data = dataSchema.parse(JSON.parse(json))
    if (data.state.name !== sticky.name || !PLAN_NAME.test(data.state.name)) throw new Error('its name does not match its marker')
  } catch (error) {
    throw damaged(`its hidden plan block ${sticky.data ? `does not decode (${firstLine(error)})` : 'is missing'}`)
  }

  if (data.shown !== shownSha256(sticky.shown)) throw damaged('its text was edited after wave wrote it, so what it shows may not be the plan it carries')
  return {comment, plan: data.plan === undefined ? undefined : Buffer.from(data.plan, 'base64'), shownSha256: sticky.shownSha256, state: data.state}
}

/**
 * The checks an approving run makes before anything runs: the comment has not changed since the reviewer
 * answered it (GitHub's `updated_at`, which only GitHub sets), and the plan it carries has the sha256 the
 * comment shows, and the one the reviewer named if they named one. Each failure is exit 4.
 */
export function assertAnsweredPlan(
  found: PlanOnForge,
  answer: {createdAt: string; url: string; sha256?: string},
  words: Pick<ForgeWords, 'comment'> = COMMENT,
): Buffer {
  const {comment, plan, state} = found
  const name = state.name
  const word = words.comment
  if (!plan || !state.sha256) throw new WaveError(`Plan ${name} has no plan to approve yet (${state.status.replace('_', ' ')}).`, ExitCode.notApproved)
  if (Date.parse(comment.updatedAt) > Date.parse(answer.createdAt)) {
    throw new WaveError(
      `The ${word} of plan ${name} changed after the approval was written (${word} updated ${comment.updatedAt}, approval written ${answer.createdAt}): the plan approved may not be the one it holds now.`,
      ExitCode.mismatch,
      `Read the plan again and answer its ${word} anew: ${comment.url}`,
    )
  }

  const actual = sha256Of(plan)
  if (actual !== state.sha256 || actual !== found.shownSha256) {
    throw new WaveError(
      `The plan ${name} in its ${word} does not match the sha256 the ${word} shows (${(found.shownSha256 ?? 'none').slice(0, 12)}…, the plan's is ${actual.slice(0, 12)}…).`,
      ExitCode.mismatch,
      `The ${word} was edited: make a new plan (${comment.url}).`,
    )
  }

  if (answer.sha256 && !actual.startsWith(answer.sha256)) {
    throw new WaveError(
      `The approval names sha256 ${answer.sha256.slice(0, 12)}…, but plan ${name} is now ${actual.slice(0, 12)}…: it changed after that version was approved.`,
      ExitCode.mismatch,
      `Read the plan again and approve the version its ${word} shows: ${comment.url}`,
    )
  }

  return plan
}

/**
 * Puts a plan that came in a comment into the plans directory, as wave's own (plan file and state), so that
 * `plan --revise` and `run` pick it up. The comment's bytes win over a plan of the same name already
 * there; an approval record left beside it is not this decision's and goes.
 */
export async function materializePlan(found: {state: StickyState; plan: Uint8Array}, place: {workspace: string; model: string}): Promise<string> {
  const dir = await ensurePlansDir()
  const planPath = path.join(dir, `${found.state.name}.md`)
  await writeFile(planPath, found.plan, {mode: 0o600})
  await rm(planSidecars(planPath).approval, {force: true})
  await adoptPlan(planPath, {
    createdAt: found.state.history[0]?.at,
    model: found.state.model ?? place.model,
    repository: {branch: null, dirty: false, head: found.state.commit, root: place.workspace},
    task: found.state.task,
    workspace: place.workspace,
  })
  return planPath
}

const firstLine = (error: unknown) => errorLine(error).slice(0, 200)
