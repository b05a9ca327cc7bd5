/**
 * A command's record (recorder.ts) as OpenTelemetry spans and metrics, exported over OTLP/HTTP once the
 * command has ended, on every exit path, within one bounded wait. Loaded only when telemetry is on: the
 * SDK and the exporters are vendor modules of their own (scripts/bundle.js), so a run without telemetry
 * loads none of them.
 *
 * Spans: the command (`wave plan`, `wave run`, ...) with the plan's name and sha256, the mode, the model
 * and the exit code, its parent the pipeline's span when `TRACEPARENT` names one; under it one span per
 * model request (`chat <model>`: tokens in and out, cache reads and writes, the stop reason, retries),
 * one per tool call (`execute_tool <name>`: the tool, allowed or denied, an error or not, how long; never
 * its input) and one per approved check (its command scrubbed as every sink scrubs). Metrics: tokens, cost, tool calls and denials by tool, and the
 * command's duration, by command, plan and exit code. Attribute names are in docs/telemetry.md.
 */
import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'

import type {Attributes, Context, Span, Tracer} from '@opentelemetry/api'

import {scrubSecrets} from '../../base/secrets.js'
import type {CommandRecord, TelemetryTarget, Timed} from './recorder.js'
import type {AgentEvent} from '../../agent/loop.js'

type Event = AgentEvent
type Usage = Extract<Event, {type: 'usage'}>['usage']

interface ExportOutcome {
  ok: boolean
  /** Why nothing or not everything reached the collector: one line for stderr. */
  problem?: string
}

/** Exports `record` to `target`, waiting at most `target.timeoutMs` (plus what loading the SDK takes). */
export async function exportCommand(
  record: CommandRecord,
  target: TelemetryTarget,
  version: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ExportOutcome> {
  const [api, core, resources, traceSdk, metricsSdk, exporters] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-metrics'),
    loadExporters(target.protocol),
  ])

  const resource = resources
    .resourceFromAttributes({'service.name': 'wave', 'service.version': version})
    .merge(resources.detectResources({detectors: [resources.envDetector]}))
  const timeoutMillis = target.timeoutMs
  const spanExporter = new exporters.OTLPTraceExporter({timeoutMillis, url: target.tracesEndpoint})
  const tracerProvider = new traceSdk.BasicTracerProvider({
    resource,
    // Everything is exported once, at the end: one batch as large as the record, never on a timer.
    spanProcessors: [
      new traceSdk.BatchSpanProcessor(spanExporter, {
        exportTimeoutMillis: timeoutMillis,
        maxExportBatchSize: 2048,
        maxQueueSize: 65_536,
        scheduledDelayMillis: 3_600_000,
      }),
    ],
  })
  const metricReader = new metricsSdk.PeriodicExportingMetricReader({
    exporter: new exporters.OTLPMetricExporter({timeoutMillis, url: target.metricsEndpoint}),
    exportIntervalMillis: 3_600_000,
    exportTimeoutMillis: timeoutMillis,
  })
  const meterProvider = new metricsSdk.MeterProvider({readers: [metricReader], resource})

  // The pipeline's trace, as CI systems and otel-cli pass it: the command's span becomes its child.
  const carrier = {traceparent: env.TRACEPARENT?.trim(), tracestate: env.TRACESTATE?.trim()}
  const parent = carrier.traceparent ? new core.W3CTraceContextPropagator().extract(api.ROOT_CONTEXT, carrier, api.defaultTextMapGetter) : api.ROOT_CONTEXT

  const tracer = tracerProvider.getTracer('wave', version)
  const common = commonAttributes(record)
  writeSpans(tracer, api, parent, record, common)
  recordMetrics(meterProvider.getMeter('wave', version), record, common)

  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMillis + 250)
    timer.unref()
  })
  // The providers' shutdown exports what they hold, once each (a forceFlush before it made the metric
  // reader export twice), and is awaited within the one deadline: the exporters' own timeouts, started
  // with it, end their requests by then, so nothing outlives the timeout the docs promise (issue 48).
  const shutdown = Promise.allSettled([tracerProvider.shutdown(), meterProvider.shutdown()])
  const settled = await Promise.race([shutdown, deadline])
  clearTimeout(timer)
  const silent = `no answer from ${target.tracesEndpoint} within ${timeoutMillis} ms`
  if (settled === 'timeout') return {ok: false, problem: silent}
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected')
  if (failed) {
    const reason = String((failed.reason as Error)?.message ?? failed.reason)
    // The exporters' own timeout says only "Timeout": the same case as our deadline, in the same words.
    return {ok: false, problem: /^(?:Error: )?Timeout$/i.test(reason) ? silent : `${target.tracesEndpoint}: ${scrubSecrets(reason)}`}
  }
  return {ok: true}
}

async function loadExporters(protocol: TelemetryTarget['protocol']) {
  if (protocol === 'http/json') {
    const [traces, metrics] = await Promise.all([import('@opentelemetry/exporter-trace-otlp-http'), import('@opentelemetry/exporter-metrics-otlp-http')])
    return {OTLPMetricExporter: metrics.OTLPMetricExporter, OTLPTraceExporter: traces.OTLPTraceExporter}
  }

  const [traces, metrics] = await Promise.all([import('@opentelemetry/exporter-trace-otlp-proto'), import('@opentelemetry/exporter-metrics-otlp-proto')])
  return {OTLPMetricExporter: metrics.OTLPMetricExporter, OTLPTraceExporter: traces.OTLPTraceExporter}
}

/** What every span and data point of the command carries: which command, on which plan, how it ended. */
function commonAttributes(record: CommandRecord): Attributes {
  const session = record.session?.value
  const name = session?.name ?? (record.result?.name as string | undefined)
  return defined({
    'wave.command': record.command,
    'wave.exit_code': record.exitCode,
    'wave.plan.name': name,
  })
}

function writeSpans(tracer: Tracer, api: typeof import('@opentelemetry/api'), parent: Context, record: CommandRecord, common: Attributes): void {
  const root = rootSpan(tracer, api, parent, record, common)
  const session = record.session?.value
  const inside = api.trace.setSpan(parent, root)
  const model = session?.model

  let request: {span: Span; turn: number; retries: number; before: Usage | undefined} | undefined
  let usage: Usage | undefined
  const tools = new Map<string, Span>()
  let check: Span | undefined
  const endRequest = (at: number, event?: Extract<Event, {type: 'usage'}>) => {
    if (request) endRequestSpan(api, request, at, event)
    request = undefined
  }

  for (const {at, value: event} of record.events as Timed<Event>[]) {
    switch (event.type) {
      case 'request': {
        endRequest(at)
        const span = tracer.startSpan(
          `chat ${model ?? ''}`.trim(),
          {
            attributes: defined({
              ...common,
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': 'anthropic',
              'gen_ai.request.model': model,
              'wave.mode': event.mode,
              'wave.turn': event.turn,
            }),
            kind: api.SpanKind.CLIENT,
            startTime: at,
          },
          inside,
        )
        request = {before: usage, retries: 0, span, turn: event.turn}
        break
      }

      case 'retry': {
        if (request) request.retries += 1
        break
      }

      case 'usage': {
        endRequest(at, event)
        usage = event.usage
        break
      }

      case 'tool_call': {
        tools.set(
          event.id,
          tracer.startSpan(
            `execute_tool ${event.name}`,
            {attributes: {...common, 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.call.id': event.id, 'gen_ai.tool.name': event.name}, startTime: at},
            inside,
          ),
        )
        break
      }

      case 'tool_result': {
        const span = tools.get(event.id)
        if (!span) break
        span.setAttributes({'wave.tool.decision': event.denied ? 'deny' : 'allow', 'wave.tool.denied': event.denied, 'wave.tool.is_error': event.isError})
        if (event.isError) span.setStatus({code: api.SpanStatusCode.ERROR})
        span.end(at)
        tools.delete(event.id)
        break
      }

      case 'check': {
        if (event.exitCode === undefined && event.durationMs === undefined) {
          check = tracer.startSpan('check', {attributes: {...common, 'wave.check.command': scrubSecrets(event.command)}, startTime: at}, inside)
        } else if (check) {
          endCheckSpan(api, check, event, at)
          check = undefined
        }

        break
      }

      default: {
        // Compaction, output limits, notes: moments of the command, not spans of their own.
        root.addEvent(event.type, eventAttributes(event), at)
      }
    }
  }

  const end = record.endedAt ?? performance.timeOrigin + performance.now()
  endRequest(end)
  for (const span of tools.values()) span.end(end)
  check?.end(end)
  root.end(end)
}

/** The command's span: the model, its cost, mode, plan and ending, failed when the command failed. */
function rootSpan(tracer: Tracer, api: typeof import('@opentelemetry/api'), parent: Context, record: CommandRecord, common: Attributes): Span {
  const session = record.session?.value
  const result = record.result ?? {}
  const planPath = (session?.planPath ?? result.planPath) as string | undefined
  const root = tracer.startSpan(
    `wave ${record.command}`,
    {
      attributes: defined({
        ...common,
        'gen_ai.request.model': session?.model,
        'wave.cost_usd': numberOr(result.costUsd),
        'wave.mode': session?.mode,
        'wave.plan.sha256': planPath ? sha256Of(planPath) : undefined,
        'wave.stop_reason': result.stopReason as string | undefined,
        'wave.turns': numberOr(result.turns),
        ...reportAttributes(result.report),
      }),
      kind: api.SpanKind.INTERNAL,
      startTime: record.startedAt,
    },
    parent,
  )
  if (record.failure) root.setStatus({code: api.SpanStatusCode.ERROR, message: scrubSecrets(record.failure.message)})
  return root
}

/** A model request's span ends with its usage (the tokens since the request before) and retries, or as failed without a response. */
function endRequestSpan(
  api: typeof import('@opentelemetry/api'),
  request: {span: Span; retries: number; before: Usage | undefined},
  at: number,
  event?: Extract<Event, {type: 'usage'}>,
): void {
  const {span, before, retries} = request
  if (event) {
    const delta = (key: keyof Usage) => (event.usage[key] ?? 0) - (before?.[key] ?? 0)
    span.setAttributes(
      defined({
        'gen_ai.response.finish_reasons': event.stopReason ? [event.stopReason] : undefined,
        'gen_ai.usage.input_tokens': delta('input_tokens'),
        'gen_ai.usage.output_tokens': delta('output_tokens'),
        'wave.request.retries': retries,
        'wave.usage.cache_creation_input_tokens': delta('cache_creation_input_tokens'),
        'wave.usage.cache_read_input_tokens': delta('cache_read_input_tokens'),
      }),
    )
  } else span.setStatus({code: api.SpanStatusCode.ERROR, message: 'no response'})
  span.end(at)
}

/** A check's span ends with its exit code and time, failed unless it passed. */
function endCheckSpan(api: typeof import('@opentelemetry/api'), check: Span, event: Extract<Event, {type: 'check'}>, at: number): void {
  check.setAttributes(
    defined({
      'wave.check.duration_ms': event.durationMs,
      'wave.check.exit_code': event.exitCode ?? undefined,
      'wave.check.passed': event.exitCode === 0,
    }),
  )
  if (event.exitCode !== 0) check.setStatus({code: api.SpanStatusCode.ERROR})
  check.end(at)
}

function recordMetrics(meter: import('@opentelemetry/api').Meter, record: CommandRecord, common: Attributes): void {
  const events = record.events.map((timed) => timed.value as Event)
  const last = events.filter((event): event is Extract<Event, {type: 'usage'}> => event.type === 'usage').at(-1)
  const tokens = meter.createCounter('wave.tokens', {description: 'Tokens of the model requests, by type', unit: '{token}'})
  if (last) {
    tokens.add(last.usage.input_tokens ?? 0, {...common, 'wave.token.type': 'input'})
    tokens.add(last.usage.output_tokens ?? 0, {...common, 'wave.token.type': 'output'})
    tokens.add(last.usage.cache_read_input_tokens ?? 0, {...common, 'wave.token.type': 'cache_read'})
    tokens.add(last.usage.cache_creation_input_tokens ?? 0, {...common, 'wave.token.type': 'cache_creation'})
  }

  const cost = numberOr(record.result?.costUsd) ?? last?.costUsd ?? undefined
  if (cost !== undefined) meter.createCounter('wave.cost', {description: 'What the command cost, in US dollars', unit: 'USD'}).add(cost, common)
  const calls = meter.createCounter('wave.tool.calls', {description: 'Tool calls, by tool and decision', unit: '{call}'})
  const denials = meter.createCounter('wave.tool.denials', {description: 'Tool calls denied, by tool', unit: '{call}'})
  for (const event of events) {
    if (event.type !== 'tool_result') continue
    calls.add(1, {...common, 'gen_ai.tool.name': event.name, 'wave.tool.decision': event.denied ? 'deny' : 'allow'})
    if (event.denied) denials.add(1, {...common, 'gen_ai.tool.name': event.name})
  }

  const seconds = ((record.endedAt ?? record.startedAt) - record.startedAt) / 1000
  meter.createHistogram('wave.command.duration', {description: 'How long the command took', unit: 's'}).record(seconds, common)
}

function reportAttributes(report: unknown): Attributes {
  if (!report || typeof report !== 'object') return {}
  const {changed, checks, outOfScope} = report as {changed?: unknown[]; outOfScope?: unknown[]; checks?: Array<{exitCode?: number | null}>}
  return defined({
    'wave.report.changed': changed?.length,
    'wave.report.checks': checks?.length,
    'wave.report.checks_failed': checks?.filter((check) => check.exitCode !== 0).length,
    'wave.report.out_of_scope': outOfScope?.length,
  })
}

/** An event's numbers and short words as span-event attributes (never text the model wrote). */
function eventAttributes(event: Event): Attributes {
  const attributes: Attributes = {}
  for (const [key, value] of Object.entries(event)) {
    if (key === 'type') continue
    if (typeof value === 'number' || typeof value === 'boolean') attributes[`wave.${key}`] = value
    else if (typeof value === 'string' && value.length <= 64 && /^[\w.:-]*$/.test(value)) attributes[`wave.${key}`] = value
  }

  return attributes
}

function sha256Of(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex')
  } catch {
    return undefined
  }
}

const numberOr = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined)

function defined(attributes: Record<string, unknown>): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined && value !== null)) as Attributes
}
