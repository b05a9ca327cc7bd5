/**
 * Every revision of a plan, kept beside it (`<name>.revisions.jsonl`, one JSON line per revision): its
 * bytes, sha256, when it was recorded, and the feedback that asked for it. A reviewer asked to look at
 * a plan again sees what changed since they last decided on it (`wave plans diff`, `approve -i`, the
 * sticky comment), not the whole plan from the top.
 */
import {appendFileSync, readFileSync} from 'node:fs'

import {z} from 'zod'

import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {sha256Of} from './approval.js'
import {planSidecars} from './store.js'

const revisionSchema = z.lazy(() =>
  z.object({
    at: z.string(),
    /** The feedback that asked for this revision (a request for changes), or null (the first draft, an edit by hand). */
    feedback: z.string().nullable(),
    revision: z.number().int().positive(),
    sha256: z.string(),
    /** The plan's bytes, as UTF-8 text (a plan is checked to be UTF-8 before anything reads it). */
    text: z.string(),
  }),
)

type Revision = z.infer<typeof revisionSchema>

/**
 * The plan's revisions, oldest first. A line that cannot be read is skipped (they are a record, not
 * authority), but a revision whose text is not the bytes its sha256 names is an error naming the file
 * (exit 4): a rewritten text under its old sha256 would show a reviewer a diff of what they never read.
 */
export function readRevisions(planPath: string): Revision[] {
  const file = planSidecars(planPath).revisions
  let raw: string
  try {
    raw = readFileSync(file, 'utf8')
  } catch {
    return []
  }

  const revisions: Revision[] = []
  for (const line of raw.split('\n')) {
    if (!line.trim()) continue
    let parsed: ReturnType<typeof revisionSchema.safeParse>
    try {
      parsed = revisionSchema.safeParse(JSON.parse(line))
    } catch {
      continue
    }

    if (!parsed.success) continue
    const revision = parsed.data
    const actual = sha256Of(Buffer.from(revision.text, 'utf8'))
    if (actual !== revision.sha256.toLowerCase()) {
      throw new WaveError(
        `The revisions file ${file} is damaged: revision ${revision.revision}'s text has sha256 ${actual.slice(0, 12)}…, not the ${revision.sha256.slice(0, 12)}… it records.`,
        ExitCode.mismatch,
        'Its revisions cannot be trusted: remove the file (the plan and its approval record stand alone) or restore it.',
      )
    }

    revisions.push(revision)
  }

  return revisions
}

/**
 * Records the plan's current bytes as a new revision, unless they are the newest revision already.
 * Returns the revision the bytes are (new or not).
 */
export function recordRevision(planPath: string, bytes: Uint8Array, feedback?: string | null): Revision {
  const revisions = readRevisions(planPath)
  const sha256 = sha256Of(bytes)
  const newest = revisions.at(-1)
  if (newest?.sha256 === sha256) return newest
  const revision: Revision = {
    at: new Date().toISOString(),
    feedback: feedback?.trim() || null,
    revision: (newest?.revision ?? 0) + 1,
    sha256,
    text: Buffer.from(bytes).toString('utf8'),
  }
  appendFileSync(planSidecars(planPath).revisions, JSON.stringify(revision) + '\n', {mode: 0o600})
  return revision
}

/** One side of a diff: a recorded revision, or the plan file as it is now. */
interface DiffSide {
  label: string
  revision?: number
  sha256: string
  text: string
}

export interface RevisionDiff {
  from: DiffSide
  to: DiffSide
  /** The unified diff (empty when both sides are the same bytes). */
  patch: string
  /** Lines added and removed. */
  added: number
  removed: number
  /** The feedback that asked for the revisions after `from`, up to `to`. */
  feedback: string[]
}

/**
 * `REV` as `--from` / `--to` take it: a revision number (`3`), `current` (the plan file now), or a
 * sha256 prefix of at least 6 hex digits.
 */
function pick(reference: string, revisions: Revision[], current: DiffSide): DiffSide {
  const given = reference.trim().toLowerCase()
  if (given === 'current') return current
  const byNumber = /^\d+$/.test(given) ? revisions.find((revision) => revision.revision === Number(given)) : undefined
  const bySha = /^[0-9a-f]{6,64}$/.test(given) ? revisions.filter((revision) => revision.sha256.startsWith(given)) : []
  const found = byNumber ?? (bySha.length === 1 ? bySha[0] : undefined)
  if (found) return sideOf(found)
  if (bySha.length > 1) throw usageError(`Revision ${reference} is ambiguous: ${bySha.length} revisions' sha256 start with it.`)
  const known = revisions.map((revision) => revision.revision).join(', ') || 'none recorded'
  throw usageError(
    `No revision ${reference} of this plan (revisions: ${known}).`,
    'Give a revision number, a sha256 prefix, or current; wave plans diff <plan> with no --from compares the revision last decided on with the current one.',
  )
}

const sideOf = (revision: Revision): DiffSide => ({
  label: `revision ${revision.revision}`,
  revision: revision.revision,
  sha256: revision.sha256,
  text: revision.text,
})

interface DiffRequest {
  planPath: string
  /** The plan file's bytes now. */
  current: Uint8Array
  from?: string
  to?: string
  /** The sha256 of the plan as last decided on (the approval record's newest decision): the default `from`. */
  decidedSha256?: string
}

/**
 * The diff between two revisions of a plan; by default from the revision last decided on (else the one
 * before the current) to the current plan. Undefined when there is nothing to compare with.
 */
export async function revisionDiff(request: DiffRequest): Promise<RevisionDiff | undefined> {
  const revisions = readRevisions(request.planPath)
  const sha = sha256Of(request.current)
  const known = revisions.find((revision) => revision.sha256 === sha)
  const current: DiffSide = known
    ? {...sideOf(known), label: `revision ${known.revision} (current)`}
    : {label: 'current', sha256: sha, text: Buffer.from(request.current).toString('utf8')}
  const to = request.to ? pick(request.to, revisions, current) : current
  let from: DiffSide | undefined
  if (request.from) {
    from = pick(request.from, revisions, current)
  } else {
    const decided = request.decidedSha256 ? [...revisions].reverse().find((revision) => revision.sha256 === request.decidedSha256?.toLowerCase()) : undefined
    const before = revisions.filter((revision) => revision.sha256 !== to.sha256 && (to.revision === undefined || revision.revision < to.revision)).at(-1)
    const base = decided ?? before
    if (!base) return undefined
    from = {...sideOf(base), label: decided ? `revision ${base.revision} (last decided on)` : sideOf(base).label}
  }

  const {added, patch, removed} = await textDiff(from, to)
  const low = from.revision ?? 0
  const high = to.revision ?? Number.POSITIVE_INFINITY
  const feedback = revisions
    .filter((revision) => revision.revision > low && revision.revision <= high && revision.feedback)
    .map((revision) => revision.feedback!)
  return {added, feedback, from, patch, removed, to}
}

/**
 * A unified diff of two texts (jsdiff; loaded on first use), with its counts. Empty for the same sha256.
 * Also what the GitHub flow shows, where the plan's earlier bytes travel in its comment rather than here.
 */
export async function textDiff(
  from: Pick<DiffSide, 'label' | 'sha256' | 'text'>,
  to: Pick<DiffSide, 'label' | 'sha256' | 'text'>,
): Promise<{patch: string; added: number; removed: number}> {
  if (from.sha256 === to.sha256) return {added: 0, patch: '', removed: 0}
  const {createTwoFilesPatch} = await import('diff')
  const patch = createTwoFilesPatch(from.label, to.label, from.text, to.text, `sha256 ${from.sha256.slice(0, 12)}`, `sha256 ${to.sha256.slice(0, 12)}`)
  let added = 0
  let removed = 0
  for (const line of patch.split('\n').slice(2)) {
    if (line.startsWith('+') && !line.startsWith('+++')) added++
    else if (line.startsWith('-') && !line.startsWith('---')) removed++
  }

  return {added, patch, removed}
}
