/**
 * What telemetry keeps of a command while it runs: the start of its session, every event the loop
 * reports and how the command ended, each with its time. Nothing of OpenTelemetry loads here: the
 * spans and metrics are made from this record once the command has ended (export.ts), so a run with
 * telemetry on does no more per turn than push an object, and a run with it off has no recorder at all.
 *
 * Only what a dashboard needs is kept: a tool call's name and timing, never its input; a result's
 * counts, never its text.
 */
import type {AgentEvent} from '../../agent/loop.js'
import type {Failure, SessionObserver, SessionStartInfo} from '../sink.js'

/** Whether telemetry is on, from the variables OpenTelemetry and Claude Code define; where it goes. */
export interface TelemetryTarget {
  /** `http/protobuf` (OpenTelemetry's default) or `http/json`. */
  protocol: 'http/protobuf' | 'http/json'
  /** Where spans go (for `wave doctor` and the line on stderr when the collector does not answer). */
  tracesEndpoint: string
  metricsEndpoint: string
  /** How long the export at exit may take, in all: a collector that is down costs at most this. */
  timeoutMs: number
}

const DEFAULT_ENDPOINT = 'http://localhost:4318'
/** The export at exit waits at most this long (OTEL_EXPORTER_OTLP_TIMEOUT lowers or raises it). */
const DEFAULT_TIMEOUT_MS = 3000

/**
 * On when an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, or the traces or metrics one), or when
 * `CLAUDE_CODE_ENABLE_TELEMETRY=1` asks for it (then to the collector's default address, as Claude Code
 * does); off with `CLAUDE_CODE_ENABLE_TELEMETRY=0` or `OTEL_SDK_DISABLED=true`. A protocol wave cannot
 * speak (grpc) is `problem`, reported once: telemetry never changes a run's outcome.
 */
export function telemetryTarget(env: NodeJS.ProcessEnv = process.env): TelemetryTarget | {problem: string} | undefined {
  const switched = env.CLAUDE_CODE_ENABLE_TELEMETRY?.trim()
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true' || switched === '0' || switched === 'false') return undefined
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  const metrics = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim()
  if (!base && !traces && !metrics && switched !== '1' && switched !== 'true') return undefined
  const protocol = (env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || 'http/protobuf').toLowerCase()
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    return {problem: `OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: wave exports with http/protobuf or http/json.`}
  }

  const root = (base || DEFAULT_ENDPOINT).replace(/\/+$/, '')
  const timeout = Number(env.OTEL_EXPORTER_OTLP_TIMEOUT)
  return {
    metricsEndpoint: metrics || `${root}/v1/metrics`,
    protocol,
    timeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS,
    tracesEndpoint: traces || `${root}/v1/traces`,
  }
}

/** One thing that happened, at its time (milliseconds since the epoch, with the fraction performance.now gives). */
export interface Timed<T> {
  at: number
  value: T
}

export interface CommandRecord {
  command: string
  startedAt: number
  endedAt?: number
  exitCode?: number
  session?: Timed<SessionStartInfo>
  events: Timed<AgentEvent>[]
  /** The result's fields a dashboard reads (cost, turns, the plan's path, the stop reason). */
  result?: Record<string, unknown>
  failure?: {exitCode: number; message: string}
}

const now = () => performance.timeOrigin + performance.now()

/** Records a command for telemetry; the output sink reports to it as to its own progress. */
export class CommandRecorder implements SessionObserver {
  readonly record: CommandRecord

  constructor(
    command: string,
    readonly target: TelemetryTarget,
  ) {
    this.record = {command, events: [], startedAt: now()}
  }

  start(info: SessionStartInfo): void {
    this.record.session = {at: now(), value: info}
  }

  event(event: AgentEvent): void {
    // Tool inputs and texts stay out of the record: a span never carries them.
    if (event.type === 'tool_call') this.record.events.push({at: now(), value: {id: event.id, input: undefined, name: event.name, type: 'tool_call'}})
    else if (event.type === 'tool_result') {
      this.record.events.push({
        at: now(),
        value: {content: '', denied: event.denied, id: event.id, isError: event.isError, name: event.name, type: 'tool_result'},
      })
      // The structured result is the model's words too: the record knows only that it was given.
    } else if (event.type === 'structured_output') this.record.events.push({at: now(), value: {type: 'structured_output', value: undefined}})
    else if (event.type !== 'text' && event.type !== 'thinking') this.record.events.push({at: now(), value: event})
  }

  result(data: Record<string, unknown>): void {
    const {costUsd, name, planPath, report, stopReason, turns} = data
    this.record.result = {costUsd, name, planPath, report, stopReason, turns}
  }

  failure(failure: Failure): void {
    const details = failure.details ?? {}
    this.record.failure = {exitCode: failure.exitCode, message: failure.message}
    this.record.result ??= {costUsd: details.costUsd, planPath: details.planPath, report: details.report, stopReason: details.stopReason, turns: details.turns}
  }

  /** The command has ended with `exitCode`: nothing more is recorded. */
  end(exitCode: number): CommandRecord {
    this.record.endedAt ??= now()
    this.record.exitCode ??= exitCode
    return this.record
  }
}
