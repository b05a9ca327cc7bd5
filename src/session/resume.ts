/**
 * `wave run <plan> --resume`: which run goes on, and the conversation it goes on with.
 *
 * The run is the plan's newest, if it did not succeed; it keeps its record (same `startedAt`), so its
 * turns, usage and cost keep adding up and a second resume finds it again. The conversation is rebuilt
 * from the run's transcript entries, from its newest replacement (a compaction, or an earlier resume)
 * on, as it was after the last complete turn. A call whose result was never recorded (the process was
 * killed mid-turn) is not run again and not dropped: it is answered with an error saying its effect is
 * unknown. A note that the run was interrupted and resumed ends the last user message (the API wants
 * a user message last, and user and assistant messages alternating).
 */
import type {ContentBlockParam, MessageParam, ToolResultBlockParam} from '@anthropic-ai/sdk/resources/messages'

import {ExitCode, usageError, WaveError} from '../base/errors.js'
import type {ApprovalRecord} from '../plans/approval.js'
import type {PlanRun, PlanState} from '../plans/lifecycle.js'
import {planNameOf} from '../plans/store.js'
import {readTranscript, type RecordedEntry} from '../plans/transcript.js'
import {acceptedConversation} from '../agent/conversation.js'
import {emptyUsage, type TokenUsage} from '../model/pricing.js'

/** What a run had spent when it stopped: the resumed session counts on from it. */
interface RunProgress {
  turns: number
  usage: TokenUsage
  costUsd: number | null
}

interface ResumePoint {
  /** The conversation to send next, ending with a user message; undefined when none was recorded (start from the opening). */
  history?: MessageParam[]
  prior: RunProgress
  /** The names of the calls answered as "effect unknown": the run was killed before their results were recorded. */
  unanswered: string[]
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
 * Where the run goes on: its conversation rebuilt from the transcript and made ready to send, and what
 * it had spent. `opening` is the run's first message as the approval record and the plan's bytes make
 * it: the task and the plan come from them, never from the transcript (wave's bookkeeping).
 */
export async function resumePoint(planPath: string, run: PlanRun, opening: string): Promise<ResumePoint> {
  const entries = await readTranscript(planPath)
  const recorded = conversationOf(entries, run.startedAt)
  const prior = priorProgress(run, recorded)
  if (recorded.messages.length === 0) return {prior, unanswered: []}
  const {messages, unanswered} = resumedConversation(recorded.messages, opening, resumeNote(run.exitCode))
  // A transcript written before wave cleaned what it sends back may hold blocks the API refuses.
  return {history: acceptedConversation(messages), prior, unanswered}
}

/** The run's conversation as recorded: from its newest replacement on, every message appended after it. */
function conversationOf(entries: RecordedEntry[], startedAt: string): {messages: MessageParam[]; progress?: RunProgress; assistantTurns: number} {
  let messages: MessageParam[] = []
  let progress: RunProgress | undefined
  let assistantTurns = 0
  for (const entry of entries) {
    if (entry.session !== 'run' || entry.startedAt !== startedAt) continue
    const replaced = entry.compacted ?? entry.conversation
    if (replaced) messages = [...replaced]
    else if (entry.message) {
      messages.push(entry.message)
      if (entry.message.role === 'assistant') assistantTurns++
    }

    if (entry.progress) progress = {...entry.progress, usage: tokenUsage(entry.progress.usage)}
  }

  return {assistantTurns, messages, progress}
}

/**
 * What the run had spent: its record's totals when it ended and recorded them, else the newest
 * progress its transcript holds (a killed process records nothing at the end), else its turns counted
 * from the transcript, with usage and cost unknown.
 */
function priorProgress(run: PlanRun, recorded: ReturnType<typeof conversationOf>): RunProgress {
  if (run.exitCode !== undefined && run.turns !== undefined) {
    return {costUsd: run.costUsd ?? recorded.progress?.costUsd ?? null, turns: run.turns, usage: tokenUsage(run.usage ?? recorded.progress?.usage)}
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
 * The recorded conversation made ready to send: the opening from the approval record and the plan
 * (summaries of earlier turns, which compaction appends to it, kept); the calls of a last assistant
 * message that were never answered answered with an error; and the note, last in the last user message.
 */
function resumedConversation(recorded: MessageParam[], opening: string, note: string): {messages: MessageParam[]; unanswered: string[]} {
  const messages = [...recorded]
  const [first] = messages
  if (first.role !== 'user')
    throw usageError("The run's transcript does not start with its first message: the run cannot be resumed from it.", 'Run the plan afresh, without --resume.')
  messages[0] = {...first, content: typeof first.content === 'string' ? opening : [{text: opening, type: 'text'}, ...first.content.slice(1)]}

  const last = messages.at(-1)!
  if (last.role === 'assistant') {
    const calls = typeof last.content === 'string' ? [] : last.content.filter((block) => block.type === 'tool_use')
    const results: ToolResultBlockParam[] = calls.map((call) => ({
      content: unknownEffect(call.name),
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

/** The result of a call the run was killed during: whether it ran, and what it did, is unknown. */
function unknownEffect(tool: string): string {
  return `The run was killed during this turn, before this ${tool} call's result was recorded: whether it ran, and what it changed, is unknown. It was not run again. Check its effect (read the files it would have changed, look at the workspace) before making the call again.`
}

/** The note that ends the last user message of a resumed run. */
function resumeNote(exitCode: number | undefined): string {
  return `[wave: this run stopped (${stopCause(exitCode)}) and was resumed with wave run --resume. The conversation above is as it was recorded; the workspace may have changed since. Check the state of what you were working on before going on, do not repeat steps whose results are above, and carry on with the plan.]`
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
