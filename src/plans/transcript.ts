/**
 * A plan's transcript (`<plan>.transcript.jsonl`): every message of its sessions, one JSON entry a line,
 * written here and read back here. A run's entries, and a planning session's, carry its `startedAt` and
 * what it had spent (`progress`), so that `wave run --resume` and `wave plan --resume` can rebuild its
 * conversation and count on (session/resume.ts).
 */
import {appendFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'

import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'
import {z} from 'zod'

import {usageError} from '../base/errors.js'
import {scrubSecrets} from '../base/secrets.js'
import {planSidecars} from './store.js'

/** The session that wrote an entry. */
type TranscriptSession = 'plan' | 'revise' | 'task' | 'run'

/** What a session had spent when an entry was written. */
interface TranscriptProgress {
  turns: number
  /** Token counts by kind (the tally's TokenUsage when written). */
  usage: object
  costUsd: number | null
}

/**
 * One entry: a message, or the whole conversation replaced (`compacted` after a compaction, with what
 * the compaction did; `conversation` when a session was resumed, with when and after what exit), or an
 * agent's conversation once it ended (`agent`: `toolUseId` names the Agent call it is nested under;
 * a resume leaves it out, the call's result being in the conversation).
 */
export type TranscriptContent =
  | {message: MessageParam}
  | {agent: {toolUseId: string; messages: MessageParam[]}}
  | {compacted: MessageParam[]; compaction: unknown}
  | {conversation: MessageParam[]; resumed: {after: number | null; at: string}}

type TranscriptEntry = {session: TranscriptSession; startedAt?: string; progress?: TranscriptProgress} & TranscriptContent

/**
 * Appends one entry (JSON lines); secrets are scrubbed on the way to disk. Synchronously: a session
 * appends twice a turn, and open-write-close takes microseconds where the promise-based call costs
 * three trips through libuv's thread pool (bench/RESULTS.md, per-turn overhead).
 */
export async function appendTranscript(planPath: string, entry: TranscriptEntry): Promise<void> {
  appendTranscriptFile(transcriptPathOf(planPath), entry)
}

/** A plan's transcript file: what hooks are given as `transcript_path`. */
export const transcriptPathOf = (planPath: string) => planSidecars(planPath).transcript

/** Appends one entry to a transcript file of any place (a task's before it has a plan), as appendTranscript does. */
export function appendTranscriptFile(file: string, entry: TranscriptEntry): void {
  appendFileSync(file, scrubSecrets(JSON.stringify(entry)) + '\n', {mode: 0o600})
}

const messageSchema = z.lazy(() =>
  z.object({
    content: z.union([z.string(), z.array(z.looseObject({type: z.string()}))]),
    role: z.enum(['user', 'assistant']),
  }),
)

const progressSchema = z.lazy(() =>
  z.object({
    costUsd: z.number().nullable(),
    turns: z.number().int().nonnegative(),
    usage: z.record(z.string(), z.number()),
  }),
)

/** An entry as read back: loose, since transcripts written by earlier versions of wave must still resume. */
const entrySchema = z.lazy(() =>
  z.looseObject({
    compacted: z.array(messageSchema).optional(),
    conversation: z.array(messageSchema).optional(),
    message: messageSchema.optional(),
    progress: progressSchema.optional(),
    session: z.string().optional(),
    startedAt: z.string().optional(),
  }),
)

/** An entry as read back: any of its kinds' fields may be there. */
export interface RecordedEntry {
  session?: string
  startedAt?: string
  progress?: TranscriptProgress & {usage: Record<string, number>}
  message?: MessageParam
  compacted?: MessageParam[]
  conversation?: MessageParam[]
}

/**
 * The plan's transcript, entry by entry. A last line cut short (the process was killed while writing
 * it) is left out, as if never written; any other bad line makes the transcript unusable for a resume.
 */
export async function readTranscript(planPath: string): Promise<RecordedEntry[]> {
  const file = planSidecars(planPath).transcript
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw usageError(`Cannot read the plan's transcript ${file}: ${(error as Error).message}.`)
  }

  const lines = text.split('\n')
  const entries: RecordedEntry[] = []
  for (const [index, line] of lines.entries()) {
    if (!line.trim()) continue
    let parsed: unknown
    try {
      parsed = JSON.parse(line)
    } catch {
      // The last line, cut by a process that died mid-write, is dropped; a bad line before it is an error.
      if (lines.slice(index + 1).every((rest) => !rest.trim())) break
      throw malformed(file, index + 1, 'not JSON')
    }

    const entry = entrySchema.safeParse(parsed)
    if (!entry.success) throw malformed(file, index + 1, entry.error.issues[0].message)
    // The schema checked the shape a message needs; the SDK's type says the rest.
    entries.push(entry.data as RecordedEntry)
  }

  return entries
}

const malformed = (file: string, line: number, problem: string) =>
  usageError(
    `The plan's transcript ${file} is malformed at line ${line} (${problem}): nothing can be resumed from it.`,
    'Start afresh, without --resume (a plan: wave plan --revise).',
  )
