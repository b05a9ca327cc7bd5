/**
 * Where a command's output goes, chosen once from `--output-format` / `--json` (as Codex picks its event
 * processor once): text, json or stream-json, one interface. stdout carries the result only; progress,
 * warnings and errors go to stderr whatever the format. Every JSON object gets `version` here, every
 * result `ok`, everything written is scrubbed of secrets here, and the GitHub Actions job summary is
 * written here: commands never branch on the format.
 */
import {appendFile} from 'node:fs/promises'

import type {AgentEvent, TokenUsage} from '../agent/loop.js'
import {failureOf, isStopped} from '../agent/outcome.js'
import type {FailureDetails} from '../base/errors.js'
import {inertMarkdown, markdownTable, visible} from '../base/text.js'
import {scrubSecrets} from '../base/secrets.js'
import type {StopReason} from '../agent/outcome.js'
import {capName} from '../model/budget.js'
import {formatCost, type Reporter, withProgress} from './progress.js'
import {runReportSchema} from '../plans/report.js'
import {failingChecksMarkdown, failingChecksText, reportMarkdown, reportTally} from './report-view.js'

declare module '../base/errors.js' {
  /** What the sink adds to a failure's details: the hooks that failed during the session, as a result names them. */
  interface FailureDetails {
    hookErrors?: string[]
  }
}

export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

/** Version of every JSON object wave prints; bumped only on a breaking change. */
const OUTPUT_VERSION = 1

/** Longest tool result content a stream-json event carries; the transcript keeps all of it. */
const STREAM_CONTENT_CAP = 2000

export interface SessionStartInfo {
  command: 'plan' | 'run'
  mode: string
  model: string
  workspace: string
  name?: string
  planPath?: string
  task?: string
  /** How the session's commands are contained, for sessions that may run any ("sandbox on", "sandbox OFF ..."). */
  sandbox?: string
}

/** The stream-json events (documented in docs/output.md), each written with `version`. */
type StreamEvent =
  | ({type: 'session_start'} & SessionStartInfo)
  | {type: 'plan_mode'; name: string; planPath: string}
  | {type: 'turn_start'; turn: number; mode: string}
  | {type: 'usage'; turn: number; usage: TokenUsage; costUsd: number | null}
  | {type: 'assistant'; text: string}
  | {type: 'tool_call'; id: string; name: string; input: unknown}
  | {type: 'tool_result'; id: string; name: string; is_error: boolean; denied: boolean; content: string}
  | {type: 'retry'; attempt: number; reason: string}
  | {type: 'warning'; message: string}
  | ({type: 'result'; ok: boolean} & Record<string, unknown>)
  // Events the loop adds later (compaction, ...) pass through with their own fields.
  | ({type: string} & Record<string, unknown>)

/** What a command ends with. */
export interface CommandResult {
  /** The result's fields for json and stream-json (`version` and `ok` are added here). */
  data: Record<string, unknown>
  /** What text mode prints on stdout (a path, the final message, a table). */
  text?: string
  /** A closing line on stderr in text mode ("plan written in 4 turns; ..."). */
  tally?: string
  /** A Markdown section for the GitHub Actions job summary. */
  summary?: string
}

export interface Failure {
  exitCode: number
  message: string
  hint?: string
  /** What the session did before it failed (turns, usage, costUsd, filesChanged, planPath, ...). */
  details?: FailureDetails
}

/** What a running session reports to. */
export interface SessionReporter {
  start(info: SessionStartInfo): void
  planMode(info: {name: string; planPath: string}): void
  event(event: AgentEvent): void
}

export interface OutputSink {
  readonly format: OutputFormat
  /** Runs a session with progress on stderr (and its events on stdout in stream-json). */
  session<T>(title: string, work: (reporter: SessionReporter) => Promise<T>): Promise<T>
  warn(message: string): void
  /** A line on stderr (unless quiet), outside any session. */
  note(line: string): void
  result(result: CommandResult): Promise<void>
  failure(failure: Failure): Promise<void>
}

/**
 * What watches a command besides its output (telemetry): told what the sink is told, in the same order.
 * An observer never changes what is printed, and its own failures stay its own.
 */
export interface SessionObserver {
  start(info: SessionStartInfo): void
  event(event: AgentEvent): void
  result(data: Record<string, unknown>): void
  failure(failure: Failure): void
}

interface SinkOptions {
  format: OutputFormat
  /** Told every session start, event, result and failure (telemetry, when it is on). */
  observer?: SessionObserver
  /** No progress on stderr. */
  quiet?: boolean
  /** The command, for the job summary of a failure (`wave plan`). */
  command: string
}

export function createSink(options: SinkOptions): OutputSink {
  switch (options.format) {
    case 'json': {
      return new JsonSink(options)
    }

    case 'stream-json': {
      return new StreamSink(options)
    }

    default: {
      return new TextSink(options)
    }
  }
}

/**
 * stdout as data (JSON, whose strings escape what a terminal would obey) or as text for people; stderr
 * is always for people. Text for people shows its control characters visibly (base/text.ts): a plan's
 * words never move the cursor, erase a line or recolour what follows.
 */
const stdoutData = (text: string) => process.stdout.write(scrubSecrets(text))
const stdout = (text: string) => process.stdout.write(visible(scrubSecrets(text)))
const stderr = (text: string) => process.stderr.write(visible(scrubSecrets(text)))

/** What text, json and stream-json share: progress on stderr, warnings, the job summary. */
abstract class Sink implements OutputSink {
  abstract readonly format: OutputFormat
  private sessionStarted = false
  /** Hooks that failed during the session (could not start, timed out, unreadable JSON, another exit): named in the result too. */
  private readonly hookErrors: string[] = []
  /** The model a session went on with (`--fallback-model`), which the result then names. */
  private fellBackTo?: string
  /** The session's result as StructuredOutput gave it (`--json-schema`), which the result carries as `structured_output`. */
  private structured?: {value: unknown}

  constructor(protected readonly options: SinkOptions) {}

  /** Writes one stream event; only stream-json does. */
  protected emit(_event: StreamEvent): void {}

  protected abstract printResult(result: CommandResult): void
  protected abstract printFailure(failure: Failure): void

  async session<T>(title: string, work: (reporter: SessionReporter) => Promise<T>): Promise<T> {
    this.sessionStarted = true
    // A session that stopped before it finished ends its progress as failed, as a thrown error does.
    const failed = (result: unknown) => (isStopped(result) ? new Error(failureOf(result).message) : undefined)
    return withProgress(title, {failed, quiet: this.options.quiet}, (progress: Reporter) =>
      work({
        event: (event) => {
          if (event.type === 'fallback') this.fellBackTo = event.to
          // Carried by the result (its `structured_output`), not an event of its own.
          if (event.type === 'structured_output') {
            this.structured = {value: event.value}
            progress.event(event)
            this.options.observer?.event(event)
            return
          }

          progress.event(event)
          if (event.type === 'hook' && event.outcome === 'error') this.hookErrors.push(`${event.event} hook "${event.command}": ${event.message ?? 'failed'}`)
          this.emit(streamEventOf(event))
          this.options.observer?.event(event)
        },
        planMode: (info) => {
          progress.title(`${title} · planning ${info.name}`)
          this.emit({type: 'plan_mode', ...info})
        },
        start: (info) => {
          progress.header({command: title, mode: info.mode, model: info.model, name: info.name, sandbox: info.sandbox})
          this.emit({type: 'session_start', ...info})
          this.options.observer?.start(info)
        },
      }),
    )
  }

  warn(message: string): void {
    stderr(`Warning: ${message}\n`)
    this.emit({message, type: 'warning'})
  }

  note(line: string): void {
    if (!this.options.quiet) stderr(line + '\n')
  }

  async result(result: CommandResult): Promise<void> {
    if (this.fellBackTo) result = {...result, data: {...result.data, fallbackModel: this.fellBackTo}}
    if (this.hookErrors.length > 0) result = {...result, data: {...result.data, hookErrors: this.hookErrors}}
    if (this.structured) result = {...result, data: {...result.data, structured_output: this.structured.value}}
    this.options.observer?.result(result.data)
    if (result.summary) await appendStepSummary(result.summary)
    this.printResult(result)
  }

  async failure(failure: Failure): Promise<void> {
    // A session that stopped or failed names its failed hooks as a finished one does: they may be why it stopped.
    if (this.hookErrors.length > 0) failure = {...failure, details: {...failure.details, hookErrors: this.hookErrors}}
    this.options.observer?.failure(failure)
    // A run stopped on its checks shows what they said (the kept output), whatever the format: the evidence, not only the verdict.
    const report = runReportSchema.safeParse(failure.details?.report)
    const said = report.success ? failingChecksText(report.data) : ''
    stderr(`${said ? `${said}\n\n` : ''}Error: ${failure.message}\n${failure.hint ? `Hint: ${failure.hint}\n` : ''}`)
    // A session that failed still tells the CI job what happened, in its summary.
    if (this.sessionStarted) await appendStepSummary(failureSummary(this.options.command, failure))
    this.printFailure(failure)
  }
}

class TextSink extends Sink {
  readonly format = 'text' as const

  protected printResult(result: CommandResult): void {
    if (result.tally) this.note(result.tally)
    if (result.text !== undefined) stdout(result.text.endsWith('\n') ? result.text : result.text + '\n')
  }

  protected printFailure(failure: Failure): void {
    // A run that stopped still says what it did against its plan (exit 7 above all: which checks failed).
    const report = runReportSchema.safeParse(failure.details?.report)
    if (report.success) this.note(reportTally(report.data, 'Run stopped'))
  }
}

/** One compact line, so the output can be piped to jq or read line by line. */
// JSON escapes the C0 controls but not DEL and C1 (\u009b is a CSI): those as \u escapes too, the same value.
const jsonLine = (value: object) =>
  stdoutData(
    JSON.stringify({version: OUTPUT_VERSION, ...value}).replaceAll(/[\u007F-\u009F]/g, (char) => `\\u${char.codePointAt(0)!.toString(16).padStart(4, '0')}`) +
      '\n',
  )

const failureBody = (failure: Failure) => ({
  ...failure.details,
  error: {exitCode: failure.exitCode, hint: failure.hint, message: failure.message},
  ok: false,
})

class JsonSink extends Sink {
  readonly format = 'json' as const

  protected printResult(result: CommandResult): void {
    jsonLine({ok: true, ...result.data})
  }

  protected printFailure(failure: Failure): void {
    jsonLine(failureBody(failure))
  }
}

class StreamSink extends Sink {
  readonly format = 'stream-json' as const

  protected emit(event: StreamEvent): void {
    jsonLine(event)
  }

  protected printResult(result: CommandResult): void {
    jsonLine({type: 'result', ok: true, ...result.data})
  }

  protected printFailure(failure: Failure): void {
    jsonLine({type: 'result', ...failureBody(failure)})
  }
}

/** The stream-json form of an agent event. */
function streamEventOf(event: AgentEvent): StreamEvent {
  switch (event.type) {
    case 'request': {
      return {mode: event.mode, turn: event.turn, type: 'turn_start'}
    }

    case 'text': {
      return {text: event.text, type: 'assistant'}
    }

    case 'tool_call': {
      return {id: event.id, input: event.input, name: event.name, type: 'tool_call'}
    }

    case 'tool_result': {
      const content = event.content.length > STREAM_CONTENT_CAP ? event.content.slice(0, STREAM_CONTENT_CAP) + '…' : event.content
      return {content, denied: event.denied, id: event.id, is_error: event.isError, name: event.name, type: 'tool_result'}
    }

    default: {
      return event as StreamEvent
    }
  }
}

/** In GitHub Actions, adds a Markdown section to the job summary; elsewhere does nothing. */
async function appendStepSummary(markdown: string): Promise<void> {
  const file = process.env.GITHUB_STEP_SUMMARY
  if (!file) return
  try {
    await appendFile(file, scrubSecrets(markdown.trimEnd()) + '\n\n')
  } catch (error) {
    stderr(`Warning: could not write the job summary to ${file}: ${(error as Error).message}\n`)
  }
}

/** How a session ended, in the words of a job summary's row. */
const SESSION_ENDINGS: Partial<Record<StopReason, string>> = {
  api_error: 'the model API failed',
  budget: 'stopped at the budget',
  end_turn: 'the model finished',
  interrupted: 'interrupted',
  max_tokens: "the model's answer stayed cut at the output limit",
  max_turns: 'stopped at the turn limit (--max-turns)',
  model_context_window_exceeded: "the model's context window was full",
  no_result: 'the model ended with nothing to say',
  refusal: 'the model refused',
  stop_requested: 'the model finished',
  stop_sequence: 'the model finished',
  structured_output: 'the result never matched --json-schema',
}

/** A stopped session's ending in words; at a budget, the cap it reached as the error names it (the approval's, a unit's, ...). */
function sessionEnding({budget, stopReason}: FailureDetails & {stopReason: StopReason}): string {
  const words = SESSION_ENDINGS[stopReason] ?? stopReason.replaceAll('_', ' ')
  return budget ? `${words} (${capName({source: budget.source, usd: budget.maxBudgetUsd})})` : words
}

function failureSummary(command: string, failure: Failure): string {
  const details = failure.details ?? {}
  const rows: Array<[string, string]> = [
    ['Exit code', String(failure.exitCode)],
    // An error may quote a plan's check or the model's words: inert text in the summary.
    ['Error', inertMarkdown(failure.message, 2000)],
  ]
  if (failure.hint) rows.push(['Hint', inertMarkdown(failure.hint, 2000)])
  // Words and money for a reader, never the JSON's keys: the --json result has those.
  if (details.planPath) rows.push(['Plan', `\`${details.planPath}\``])
  if (details.stopReason) rows.push(['Session ended', sessionEnding({...details, stopReason: details.stopReason})])
  if (details.turns !== undefined) rows.push(['Model turns', String(details.turns)])
  if (details.costUsd !== undefined) rows.push(['Cost', formatCost(details.costUsd)])
  if (details.filesChanged?.length) rows.push(['Files changed', details.filesChanged.map((file) => `\`${file}\``).join(', ')])

  const report = runReportSchema.safeParse(details.report)
  const said = report.success ? failingChecksMarkdown(report.data) : ''
  return `## wave ${command}: failed\n\n${markdownTable(rows)}${report.success ? `\n\n${reportMarkdown(report.data)}` : ''}${said ? `\n\n${said}` : ''}`
}
