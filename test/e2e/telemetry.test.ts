/**
 * OpenTelemetry from headless runs (issue 38): `wave plan` and `wave run --task` export to an OTLP/HTTP
 * receiver in the test, as a collector would receive them: the command's span (a child of the pipeline's
 * TRACEPARENT), a span per model request and per tool call with their attributes, and the metrics. No
 * span carries a tool's input or the API key. A collector that never answers leaves the exit code as it
 * was and costs one line on stderr. Control: without the variables nothing is sent.
 */
import {createServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {readFileSync} from 'node:fs'

import {afterEach, describe, expect, it} from 'vitest'

import {type Sandbox, sha256, TEST_API_KEY} from '../support/cli.js'
import {type MessagesServer, planPathIn, reply, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

interface Received {
  path: string
  contentType: string
  body: Buffer
}

/** An OTLP/HTTP receiver: takes what the exporters post (JSON or protobuf) and answers as a collector does; or never answers. */
async function receiver(answer = true): Promise<{url: string; received: Received[]; server: Server; held: ServerResponse[]}> {
  const received: Received[] = []
  const held: ServerResponse[] = []
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({body: Buffer.concat(chunks), contentType: String(request.headers['content-type']), path: request.url ?? ''})
      if (!answer) {
        held.push(response)
        return
      }

      const json = String(request.headers['content-type']).includes('json')
      response.writeHead(200, {'content-type': json ? 'application/json' : 'application/x-protobuf'})
      response.end(json ? '{}' : '')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {held, received, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`}
}

let receivers: Array<Awaited<ReturnType<typeof receiver>>> = []
afterEach(async () => {
  for (const {held, server} of receivers) {
    for (const response of held) response.destroy()
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }

  receivers = []
})

type OtlpValue = {stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: {values: OtlpValue[]}}
type OtlpSpan = {
  name: string
  traceId: string
  spanId: string
  parentSpanId?: string
  attributes: Array<{key: string; value: OtlpValue}>
  status?: {code?: number}
}

const value = (v: OtlpValue | undefined): unknown =>
  v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue)) ?? v?.doubleValue ?? v?.boolValue ?? v?.arrayValue?.values.map(value)
const attributesOf = (span: {attributes: Array<{key: string; value: OtlpValue}>}) => Object.fromEntries(span.attributes.map((a) => [a.key, value(a.value)]))

function spansIn(received: Received[]): {spans: OtlpSpan[]; resource: Record<string, unknown>} {
  const bodies = received.filter((r) => r.path === '/v1/traces').map((r) => JSON.parse(r.body.toString('utf8')))
  const resourceSpans = bodies.flatMap((body) => body.resourceSpans)
  return {
    resource: attributesOf(resourceSpans[0].resource),
    spans: resourceSpans.flatMap((rs: {scopeSpans: Array<{spans: OtlpSpan[]}>}) => rs.scopeSpans.flatMap((ss) => ss.spans)),
  }
}

function metricsIn(received: Received[]): Map<string, Array<{attributes: Record<string, unknown>; value: number}>> {
  const bodies = received.filter((r) => r.path === '/v1/metrics').map((r) => JSON.parse(r.body.toString('utf8')))
  const metrics = new Map<string, Array<{attributes: Record<string, unknown>; value: number}>>()
  for (const body of bodies) {
    for (const rm of body.resourceMetrics) {
      for (const sm of rm.scopeMetrics) {
        for (const metric of sm.metrics) {
          const points = metric.sum?.dataPoints ?? metric.histogram?.dataPoints ?? []
          metrics.set(
            metric.name,
            points.map((point: {attributes: Array<{key: string; value: OtlpValue}>; asDouble?: number; asInt?: string; sum?: number}) => ({
              attributes: attributesOf(point),
              value: point.asDouble ?? (point.asInt === undefined ? (point.sum ?? 0) : Number(point.asInt)),
            })),
          )
        }
      }
    }
  }

  return metrics
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const PARENT_SPAN = '00f067aa0ba902b7'

describe('OpenTelemetry export', () => {
  it('exports the plan session, its requests and tool calls under the pipeline span, and the metrics', async () => {
    const collector = await receiver()
    receivers.push(collector)
    server.push(
      reply(toolUse('Read', {file_path: 'src/util.ts'}), toolUse('Write', {content: 'x', file_path: 'src/outside.ts'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Rename greet.\n', file_path: planPathIn(request)})),
      reply('The plan is ready.'),
    )
    const result = await wave(['plan', '--task', 'Rename greet'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_RESOURCE_ATTRIBUTES: 'ci.pipeline.id=77',
      OTEL_SERVICE_NAME: 'ci-wave',
      TRACEPARENT: `00-${TRACE_ID}-${PARENT_SPAN}-01`,
    })
    expect(result.stderr).not.toContain('telemetry')
    expect(result.code).toBe(0)
    const planPath = result.stdout.trim()

    const {resource, spans} = spansIn(collector.received)
    expect(resource).toMatchObject({'ci.pipeline.id': '77', 'service.name': 'ci-wave'})
    const root = spans.find((span) => span.name === 'wave plan')!
    expect(root).toBeDefined()
    expect(root.traceId).toBe(TRACE_ID)
    expect(root.parentSpanId).toBe(PARENT_SPAN)
    expect(attributesOf(root)).toMatchObject({
      'wave.command': 'plan',
      'wave.exit_code': 0,
      'wave.mode': 'plan',
      'wave.plan.sha256': sha256(readFileSync(planPath)),
      'wave.turns': 3,
    })
    expect(attributesOf(root)['wave.plan.name']).toBe(planPath.split('/').pop()!.replace(/\.md$/, ''))

    const requests = spans.filter((span) => span.name.startsWith('chat '))
    expect(requests).toHaveLength(3)
    for (const span of requests) {
      expect(span.parentSpanId).toBe(root.spanId)
      expect(attributesOf(span)).toMatchObject({'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'anthropic'})
      expect(attributesOf(span)['gen_ai.usage.input_tokens']).toBeGreaterThan(0)
      expect(attributesOf(span)['gen_ai.usage.output_tokens']).toBeGreaterThan(0)
    }

    expect(requests.map((span) => attributesOf(span)['gen_ai.response.finish_reasons'])).toEqual([['tool_use'], ['tool_use'], ['end_turn']])

    const tools = spans.filter((span) => span.name.startsWith('execute_tool '))
    expect(tools.map((span) => [span.name, attributesOf(span)['wave.tool.denied']])).toEqual([
      ['execute_tool Read', false],
      ['execute_tool Write', true],
      ['execute_tool Write', false],
    ])

    // Metrics: tokens by type, tool calls and denials by tool, the command's duration.
    const metrics = metricsIn(collector.received)
    expect(metrics.get('wave.tokens')?.find((p) => p.attributes['wave.token.type'] === 'input')?.value).toBeGreaterThan(0)
    expect(metrics.get('wave.tool.denials')).toEqual([{attributes: expect.objectContaining({'gen_ai.tool.name': 'Write', 'wave.command': 'plan'}), value: 1}])
    expect(metrics.get('wave.tool.calls')?.reduce((sum, p) => sum + p.value, 0)).toBe(3)
    expect(metrics.has('wave.command.duration')).toBe(true)

    // Nothing of a tool's input, nothing of the key.
    const everything = Buffer.concat(collector.received.map((r) => r.body)).toString('utf8')
    expect(everything).not.toContain('src/outside.ts')
    expect(everything).not.toContain('Rename greet.')
    expect(everything).not.toContain(TEST_API_KEY)
  })

  it('speaks http/protobuf by default, and marks a failed command with its exit code', async () => {
    const collector = await receiver()
    receivers.push(collector)
    server.push(reply(toolUse('Read', {file_path: 'src/util.ts'})), reply(toolUse('Read', {file_path: 'src/util.ts'})))
    const result = await wave(['plan', '--task', 'Loop', '--max-turns', '2'], {OTEL_EXPORTER_OTLP_ENDPOINT: collector.url})
    expect(result.code).toBe(5)
    const traces = collector.received.filter((r) => r.path === '/v1/traces')
    expect(traces.map((r) => r.contentType)).toEqual(['application/x-protobuf'])
    // Protobuf keeps strings as they are: the span's name and the exit code's key are in the body.
    expect(traces[0].body.includes(Buffer.from('wave plan'))).toBe(true)
    expect(traces[0].body.includes(Buffer.from('wave.exit_code'))).toBe(true)
    expect(collector.received.some((r) => r.path === '/v1/metrics')).toBe(true)
  })

  it('a collector that never answers: the exit code unchanged, one line on stderr', async () => {
    const collector = await receiver(false)
    receivers.push(collector)
    // The same failing session without telemetry and with it: a plan session that wrote no plan.
    server.push(reply('Nothing to plan.'))
    const control = await wave(['plan', '--task', 'Explain'])
    expect(control.code).not.toBe(0)
    server.push(reply('Nothing to plan.'))
    const result = await wave(['plan', '--task', 'Explain'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TIMEOUT: '300',
    })
    expect(result.timedOut).toBe(false)
    expect(result.code).toBe(control.code)
    expect(result.stdout).toBe(control.stdout)
    expect(collector.received.length).toBeGreaterThan(0)
    expect(collector.held.length).toBe(collector.received.length)
    // Issue 48: the process ended (above) within one deadline, with one export of each signal: the
    // providers' shutdown awaited within it, never a second metric export started by the shutdown.
    expect(collector.received.filter((request) => request.path === '/v1/traces')).toHaveLength(1)
    expect(collector.received.filter((request) => request.path === '/v1/metrics')).toHaveLength(1)
    expect(result.stderr.split('\n').filter((line) => line.includes('telemetry'))).toEqual([
      `Warning: telemetry not exported: no answer from ${collector.url}/v1/traces within 300 ms`,
    ])
  })

  it('control: without OTEL variables nothing is sent, and grpc is refused in one line', async () => {
    const collector = await receiver()
    receivers.push(collector)
    server.push(reply('Nothing to plan.'))
    const plain = await wave(['plan', '--task', 'Explain'])
    expect(plain.stderr).not.toContain('telemetry')
    server.push(reply('Nothing to plan.'))
    const grpc = await wave(['plan', '--task', 'Explain'], {OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc'})
    expect(grpc.code).toBe(plain.code)
    expect(grpc.stderr).toContain('Warning: telemetry is off: OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported')
    expect(collector.received).toEqual([])
  })

  it('wave doctor says where telemetry goes', async () => {
    const result = await wave(['doctor', '--json', '--offline'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector.example:4318/',
      TRACEPARENT: `00-${TRACE_ID}-${PARENT_SPAN}-01`,
    })
    const telemetry = JSON.parse(result.stdout).checks.find((check: {name: string}) => check.name === 'telemetry')
    expect(telemetry).toEqual({
      detail: 'on: http/protobuf to http://collector.example:4318/v1/traces and http://collector.example:4318/v1/metrics, each command a child of TRACEPARENT',
      name: 'telemetry',
      required: false,
      status: 'pass',
    })
  })
})
