/**
 * `wave run <plan> --resume` and `wave plan --resume`: which session of a plan goes on, and the
 * conversation it goes on with.
 *
 * A run's is the plan's newest run, if it did not succeed; a planning session's, the plan's newest one,
 * if it did not end with a plan. Either keeps its record (same `startedAt`), so its turns, usage and cost
 * keep adding up and a second resume finds it again. The conversation is rebuilt from the session's
 * transcript entries, from its newest replacement (a compaction, or an earlier resume) on, as it was
 * after the last complete turn. A call whose result was never recorded (the process was killed
 * mid-turn) is not run again and not dropped: it is answered with an error saying its effect is
 * unknown. A note that the session was interrupted and resumed ends the last user message (the API
 * wants a user message last, and user and assistant messages alternating).
 */
import type {ContentBlockParam, MessageParam, ToolResultBlockParam} from '@anthropic-ai/sdk/resources/messages'

import {ExitCode, usageError, WaveError} from '../base/errors.js'
import type {ApprovalRecord} from '../plans/approval.js'
import type {PlanningSession, PlanRun, PlanState} from '../plans/lifecycle.js'
import {planNameOf, processAlive} from '../plans/store.js'
import {readTranscript, type RecordedEntry} from '../plans/transcript.js'
import {acceptedConversation} from '../agent/conversation.js'
import {emptyUsage, type TokenUsage} from '../model/pricing.js'

/** What a session had spent when it stopped: the resumed session counts on from it. */
interface RunProgress {
  turns: number
  usage: TokenUsage
  costUsd: number | null
}

interface ResumePoint {
  /** The conversation to send next, ending with a user message; undefined when none was recorded (start from the opening). */
  history?: MessageParam[]
  prior: RunProgress
  /** The names of the calls answered as "effect unknown": the session was killed before their results were recorded. */
  unanswered: string[]
  /** The transcript's label of the session's entries (`plan`, `revise`, `run`): a resumed part writes on under it. */
  session?: string
}

/** A stopped session of a plan, as its state records it: a run (`runs`), or a planning session (`planning`). */
interface StoppedPart {
  kind: 'run' | 'planning'
  startedAt: string
  exitCode?: number
  turns?: number
  usage?: Record<string, number>
  costUsd?: number | null
}

/** The transcript's sessions that are each kind's (transcript.ts): a planning session is a plan's or a revision's. */
const SESSIONS: Record<StoppedPart['kind'], string[]> = {planning: ['plan', 'revise'], run: ['run']}

/** How the session of each kind is named, and the command that resumes it. */
const WORDS: Record<StoppedPart['kind'], {what: string; command: string}> = {
  planning: {command: 'wave plan --resume', what: 'planning session'},
  run: {command: 'wave run --resume', what: 'run'},
}

/**
 * The run `--resume` continues: the plan's newest run, when it did not succeed (any exit but 0, or no
 * exit at all: a process killed without a chance to record one, whose lock is no longer held). Anything
 * else is nothing to resume (exit 2), or a run still going (exit 1).
 */
export function resumableRun(input: {planPath: string; state: PlanState | undefined; record: ApprovalRecord; lockOwner?: number}): PlanRun {
  const {planPath, record} = input
  const name = planNameOf(planPath)
  const newest = newestRun(input.state)
  if (!newest) throw usageError(`Nothing to resume: the plan ${name} has not run yet.`, `Run it without --resume: wave run ${planPath}`)
  const spentAt = Date.parse(record.spentAt ?? '')
  if (newest.exitCode === ExitCode.ok || spentAt >= Date.parse(newest.startedAt)) {
    throw usageError(
      `Nothing to resume: the newest run of ${name} succeeded${newest.endedAt ? ` (finished ${newest.endedAt})` : ''}.`,
      `A plan runs once per approval: approve it again (wave approve ${planPath}), then run it without --resume.`,
    )
  }

  if (newest.exitCode === undefined && input.lockOwner) {
    throw new WaveError(
      `The plan ${name} is still running (pid ${input.lockOwner}): there is nothing to resume yet.`,
      ExitCode.runtime,
      'Wait for it to finish.',
    )
  }

  if (newest.approvalSha256 && newest.approvalSha256.toLowerCase() !== record.plan.sha256.toLowerCase()) {
    throw usageError(
      `Nothing to resume under this approval: the newest run of ${name} ran another version of the plan (sha256 ${newest.approvalSha256.slice(0, 12)}).`,
      `Run the plan as approved now without --resume: wave run ${planPath}`,
    )
  }

  return newest
}

export function newestRun(state: PlanState | undefined): PlanRun | undefined {
  return [...(state?.runs ?? [])].sort((a, b) => a.startedAt.localeCompare(b.startedAt)).at(-1)
}

/**
 * Where the session goes on: its conversation rebuilt from the transcript and made ready to send, and
 * what it had spent. `opening`, for a run, is its first message as the approval record and the plan's
 * bytes make it: the task and the plan come from them, never from the transcript (wave's bookkeeping).
 * A planning session, which an approval does not bind, goes on with its first message as recorded.
 */
export async function resumePoint(planPath: string, part: StoppedPart, opening?: string): Promise<ResumePoint> {
  const entries = await readTranscript(planPath)
  const recorded = conversationOf(entries, part)
  const prior = priorProgress(part, recorded)
  if (recorded.messages.length === 0) return {prior, unanswered: []}
  const {messages, unanswered} = resumedConversation(recorded.messages, part, opening, resumeNote(part.kind, part.exitCode))
  // A transcript written before wave cleaned what it sends back may hold blocks the API refuses.
  return {history: acceptedConversation(messages), prior, session: recorded.session, unanswered}
}

/** The session's conversation as recorded: from its newest replacement on, every message appended after it. */
function conversationOf(
  entries: RecordedEntry[],
  part: StoppedPart,
): {messages: MessageParam[]; progress?: RunProgress; assistantTurns: number; session?: string} {
  let messages: MessageParam[] = []
  let progress: RunProgress | undefined
  let assistantTurns = 0
  let session: string | undefined
  for (const entry of entries) {
    if (!SESSIONS[part.kind].includes(entry.session ?? '') || entry.startedAt !== part.startedAt) continue
    session ??= entry.session
    const replaced = entry.compacted ?? entry.conversation
    if (replaced) messages = [...replaced]
    else if (entry.message) {
      messages.push(entry.message)
      if (entry.message.role === 'assistant') assistantTurns++
    }

    if (entry.progress) progress = {...entry.progress, usage: tokenUsage(entry.progress.usage)}
  }

  return {assistantTurns, messages, progress, session}
}

/**
 * What the session had spent: its record's totals when it ended and recorded them, else the newest
 * progress its transcript holds (a killed process records nothing at the end), else its turns counted
 * from the transcript, with usage and cost unknown.
 */
function priorProgress(part: StoppedPart, recorded: ReturnType<typeof conversationOf>): RunProgress {
  if (part.exitCode !== undefined && part.turns !== undefined) {
    return {costUsd: part.costUsd ?? recorded.progress?.costUsd ?? null, turns: part.turns, usage: tokenUsage(part.usage ?? recorded.progress?.usage)}
  }

  if (recorded.progress) return recorded.progress
  return {costUsd: recorded.assistantTurns === 0 ? 0 : null, turns: recorded.assistantTurns, usage: emptyUsage()}
}

function tokenUsage(recorded: Record<string, number> | TokenUsage | undefined): TokenUsage {
  const usage = emptyUsage()
  for (const key of Object.keys(usage) as Array<keyof TokenUsage>) {
    const value = (recorded as Record<string, number> | undefined)?.[key]
    if (typeof value === 'number' && Number.isFinite(value)) usage[key] = value
  }

  return usage
}

/**
 * The recorded conversation made ready to send: the opening (a run's, from the approval record and the
 * plan; summaries of earlier turns, which compaction appends to it, kept); the calls of a last assistant
 * message that were never answered answered with an error; and the note, last in the last user message.
 */
function resumedConversation(
  recorded: MessageParam[],
  part: StoppedPart,
  opening: string | undefined,
  note: string,
): {messages: MessageParam[]; unanswered: string[]} {
  const {kind} = part
  // A session stopped at a limit (over its budget after a response) or at a refusal ran none of its last turn's calls.
  const notRun = part.exitCode === ExitCode.limit || part.exitCode === ExitCode.refused
  const messages = [...recorded]
  const [first] = messages
  if (first.role !== 'user') {
    throw usageError(
      `The ${WORDS[kind].what}'s transcript does not start with its first message: it cannot be resumed from it.`,
      kind === 'run' ? 'Run the plan afresh, without --resume.' : 'Revise the plan instead (wave plan --revise), or plan its task afresh.',
    )
  }

  if (opening !== undefined) {
    messages[0] = {...first, content: typeof first.content === 'string' ? opening : [{text: opening, type: 'text'}, ...first.content.slice(1)]}
  }

  const last = messages.at(-1)!
  if (last.role === 'assistant') {
    const calls = typeof last.content === 'string' ? [] : last.content.filter((block) => block.type === 'tool_use')
    const results: ToolResultBlockParam[] = calls.map((call) => ({
      content: notRun ? notRunCall(kind, call.name) : unknownEffect(kind, call.name),
      is_error: true,
      tool_use_id: call.id,
      type: 'tool_result',
    }))
    messages.push({content: [...results, {text: note, type: 'text'}], role: 'user'})
    return {messages, unanswered: calls.map((call) => call.name)}
  }

  const blocks: ContentBlockParam[] = typeof last.content === 'string' ? [{text: last.content, type: 'text'}] : [...last.content]
  messages[messages.length - 1] = {content: [...blocks, {text: note, type: 'text'}], role: 'user'}
  return {messages, unanswered: []}
}

/** The result of a call of a turn the session stopped after, at a limit or a refusal, before running its calls. */
function notRunCall(kind: StoppedPart['kind'], tool: string): string {
  return `The ${WORDS[kind].what} stopped (at a limit, or a refusal) after this turn, before running its calls: this ${tool} call was not run. Make it again if you still need it.`
}

/** The result of a call the session was killed during: whether it ran, and what it did, is unknown. */
function unknownEffect(kind: StoppedPart['kind'], tool: string): string {
  return `The ${WORDS[kind].what} was killed during this turn, before this ${tool} call's result was recorded: whether it ran, and what it changed, is unknown. It was not run again. Check its effect (read the files it would have changed, look at the workspace) before making the call again.`
}

/** The note that ends the last user message of a resumed session. */
function resumeNote(kind: StoppedPart['kind'], exitCode: number | undefined): string {
  const {command, what} = WORDS[kind]
  const stopped = `[wave: this ${what} stopped (${stopCause(exitCode)}) and was resumed with ${command}. The conversation above is as it was recorded; the workspace may have changed since.`
  return kind === 'run'
    ? `${stopped} Check the state of what you were working on before going on, do not repeat steps whose results are above, and carry on with the plan.]`
    : `${stopped} Do not read again what you have read above; explore only what you still need, and write the plan to the plan file.]`
}

function stopCause(exitCode: number | undefined): string {
  switch (exitCode) {
    case undefined: {
      return 'its process was killed'
    }

    case ExitCode.interrupted: {
      return 'interrupted by SIGINT'
    }

    case ExitCode.terminated: {
      return 'terminated by SIGTERM'
    }

    case ExitCode.limit: {
      return 'at a limit: turns or budget'
    }

    case ExitCode.refused: {
      return 'a refusal, or an answer cut at the output limit'
    }

    default: {
      return `exit ${exitCode}: an error`
    }
  }
}

/**
 * The planning session `wave plan --resume` continues: the plan's newest, when it did not end with a
 * plan (a limit, a refusal, an API failure, an interrupt, a process killed). `decidedAt`: when a decision
 * on the plan was recorded, if one was. Anything else is nothing to resume (exit 2), or a session still
 * going (exit 1).
 */
export function resumablePlanning(planPath: string, state: PlanState | undefined, decidedAt: string | undefined): PlanningSession {
  const name = planNameOf(planPath)
  const planning = state?.planning
  const revise = `Revise it instead (a new session on the same plan file, the exploration not kept): wave plan --revise ${name}`
  if (!planning) {
    throw usageError(`Nothing to resume: wave kept no record of a planning session of ${name} (made by an earlier wave, or brought from a forge).`, revise)
  }

  if (planning.exitCode === ExitCode.ok) {
    throw usageError(
      `Nothing to resume: the newest planning session of ${name} finished with a plan${planning.endedAt ? ` (${planning.endedAt})` : ''}.`,
      `To change the plan: wave plan --revise ${name} --feedback "<what to change>"`,
    )
  }

  if (planning.exitCode === undefined && planning.pid !== undefined && planning.pid !== process.pid && processAlive(planning.pid)) {
    throw new WaveError(
      `The plan ${name} is still being planned (pid ${planning.pid}): there is nothing to resume yet.`,
      ExitCode.runtime,
      'Wait for it to finish.',
    )
  }

  if (decidedAt && Date.parse(decidedAt) >= Date.parse(planning.startedAt)) {
    throw usageError(`Nothing to resume: a decision on ${name} was recorded after its planning session (${decidedAt}).`, revise)
  }

  return planning
}

/** Said when a resumed session was killed during a turn: the calls it left unanswered are not run again. */
export function unansweredWarning(kind: StoppedPart['kind'], unanswered: string[]): string | undefined {
  if (unanswered.length === 0) return undefined
  return `The ${WORDS[kind].what} was killed during a turn: ${unanswered.join(', ')} ${unanswered.length === 1 ? 'call is' : 'calls are'} answered as having an unknown effect, not run again.`
}
