/**
 * Local stand-ins for Amazon Bedrock and Google Vertex AI, in front of the scripted Messages API server
 * (messages-server.ts), so tests run wave's real Bedrock and Vertex clients against canned model
 * behaviour. Each takes a request in its cloud's shape, records it, forwards it to the Messages server
 * as a Messages API request (the model from the path, the version from the body), and answers in its
 * cloud's shape:
 *
 * - Bedrock: `POST /model/{modelId}/invoke-with-response-stream`, answered as an AWS event stream
 *   (binary frames: prelude, headers, a `chunk` event whose payload is `{"bytes": base64(event JSON)}`,
 *   CRC32s), or `POST /model/{modelId}/invoke`, answered as JSON. Requests are SigV4-signed.
 * - Vertex AI: `POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:streamRawPredict`
 *   (SSE) or `:rawPredict` (JSON), with a Google OAuth access token. The same server answers the token
 *   exchange (`POST /token`) of an `external_account` credentials file (workload identity federation,
 *   as CI jobs use), so Google's real auth library runs too: `vertexCredentials()` writes one.
 *
 *   const messages = await startMessagesServer([reply('hi')])
 *   const bedrock = await startBedrockServer(messages)   // ANTHROPIC_BEDROCK_BASE_URL=bedrock.url
 */
import {writeFileSync} from 'node:fs'
import {createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import path from 'node:path'
import {crc32} from 'node:zlib'

import type {MessagesServer} from './messages-server.js'

export interface CloudRequest {
  method: string
  /** As received, percent-encoding kept. */
  path: string
  /** The model ID from the path, decoded. */
  model?: string
  /** Whether the path asked for a stream. */
  stream: boolean
  headers: IncomingHttpHeaders
  // biome-ignore lint/suspicious/noExplicitAny: a request body is whatever JSON the client sent; tests read it freely
  body: any
}

export interface CloudServer {
  readonly url: string
  /** The model requests received, in order (token exchanges are in `tokenRequests`). */
  readonly requests: CloudRequest[]
  /** Vertex only: the OAuth token exchanges (form bodies, parsed). */
  readonly tokenRequests: Array<Record<string, string>>
  close(): Promise<void>
}

/** The access token the Vertex stand-in issues and expects. */
export const VERTEX_ACCESS_TOKEN = 'ya29.test-access-token'

const BEDROCK_ROUTE = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream)$/
const VERTEX_ROUTE = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):(rawPredict|streamRawPredict)$/

export function startBedrockServer(upstream: MessagesServer): Promise<CloudServer> {
  return startCloudServer(async (req, res, body, record) => {
    const route = BEDROCK_ROUTE.exec(req.url ?? '')
    if (req.method !== 'POST' || !route) return notFound(res, req)
    const stream = route[2] === 'invoke-with-response-stream'
    record({body, headers: req.headers, method: req.method, model: decodeURIComponent(route[1]), path: req.url!, stream})
    const upstreamResponse = await forward(upstream, decodeURIComponent(route[1]), body, stream)
    if (!stream || upstreamResponse.status !== 200) return relay(res, upstreamResponse)
    res.writeHead(200, {'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'bedrock-test'})
    for await (const event of sseEvents(upstreamResponse)) {
      const payload = JSON.stringify({bytes: Buffer.from(event).toString('base64')})
      res.write(eventStreamFrame({':content-type': 'application/json', ':event-type': 'chunk', ':message-type': 'event'}, Buffer.from(payload)))
    }

    res.end()
  })
}

export function startVertexServer(upstream: MessagesServer): Promise<CloudServer> {
  return startCloudServer(async (req, res, body, record, tokens) => {
    if (req.method === 'POST' && req.url === '/token') {
      tokens(Object.fromEntries(new URLSearchParams(String(body ?? ''))))
      return json(res, 200, {
        access_token: VERTEX_ACCESS_TOKEN,
        expires_in: 3600,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
      })
    }

    const route = VERTEX_ROUTE.exec(req.url ?? '')
    if (req.method !== 'POST' || !route) return notFound(res, req)
    const stream = route[4] === 'streamRawPredict'
    record({body, headers: req.headers, method: req.method, model: decodeURIComponent(route[3]), path: req.url!, stream})
    if (req.headers.authorization !== `Bearer ${VERTEX_ACCESS_TOKEN}`)
      return json(res, 401, {error: {code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED'}})
    // Vertex streams the Messages API's own SSE: relayed as it comes.
    return relay(res, await forward(upstream, decodeURIComponent(route[3]), body, stream))
  })
}

/**
 * An `external_account` credentials file for GOOGLE_APPLICATION_CREDENTIALS whose token exchange goes
 * to `server` (the subject token is read from a file beside it, as a CI job's OIDC token would be).
 */
export function vertexCredentials(server: CloudServer, dir: string): string {
  const subject = path.join(dir, 'oidc-token')
  writeFileSync(subject, 'test-oidc-subject-token')
  const file = path.join(dir, 'gcp-credentials.json')
  writeFileSync(
    file,
    JSON.stringify({
      audience: '//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/ci/providers/github',
      credential_source: {file: subject},
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: `${server.url}/token`,
      type: 'external_account',
    }),
  )
  return file
}

/** One AWS event stream message: prelude (total and headers length, CRC32), string headers, payload, CRC32. */
export function eventStreamFrame(headers: Record<string, string>, payload: Buffer): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const nameBytes = Buffer.from(name)
      const valueBytes = Buffer.from(value)
      const head = Buffer.alloc(1 + nameBytes.length + 3)
      head.writeUInt8(nameBytes.length, 0)
      nameBytes.copy(head, 1)
      head.writeUInt8(7, 1 + nameBytes.length) // 7: string
      head.writeUInt16BE(valueBytes.length, 2 + nameBytes.length)
      return Buffer.concat([head, valueBytes])
    }),
  )
  const total = 12 + headerBytes.length + payload.length + 4
  const prelude = Buffer.alloc(12)
  prelude.writeUInt32BE(total, 0)
  prelude.writeUInt32BE(headerBytes.length, 4)
  prelude.writeUInt32BE(crc32(prelude.subarray(0, 8)), 8)
  const message = Buffer.concat([prelude, headerBytes, payload])
  const trailer = Buffer.alloc(4)
  trailer.writeUInt32BE(crc32(message), 0)
  return Buffer.concat([message, trailer])
}

// ---------------------------------------------------------------------------------------------- plumbing

type Handler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  record: (request: CloudRequest) => void,
  tokens: (form: Record<string, string>) => void,
) => Promise<void>

async function startCloudServer(handler: Handler): Promise<CloudServer> {
  const requests: CloudRequest[] = []
  const tokenRequests: Array<Record<string, string>> = []
  const sockets = new Set<Socket>()
  const server = createServer((req, res) => {
    ;(async () => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: unknown = raw
      try {
        body = raw && (req.headers['content-type'] ?? '').includes('json') ? JSON.parse(raw) : raw
      } catch {}

      await handler(
        req,
        res,
        body,
        (request) => requests.push(request),
        (form) => tokenRequests.push(form),
      )
    })().catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, {message: `provider-servers: ${(error as Error).stack ?? error}`})
      else res.destroy()
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
    requests,
    tokenRequests,
    url: `http://127.0.0.1:${port}`,
  }
}

/** The cloud's request as a Messages API request: the model back in the body, the version as a header. */
// biome-ignore lint/suspicious/noExplicitAny: a request body is whatever JSON the client sent; tests read it freely
async function forward(upstream: MessagesServer, model: string, body: any, stream: boolean): Promise<Response> {
  const {anthropic_version: version, ...rest} = body ?? {}
  return fetch(`${upstream.url}/v1/messages`, {
    body: JSON.stringify({...rest, model, stream}),
    headers: {'anthropic-version': String(version ?? ''), 'content-type': 'application/json', 'x-api-key': 'forwarded'},
    method: 'POST',
  })
}

/** The `data` of each SSE event, as text. */
async function* sseEvents(response: Response): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let buffered = ''
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, {stream: true})
    for (let end = buffered.indexOf('\n\n'); end !== -1; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end)
      buffered = buffered.slice(end + 2)
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n')
      if (data) yield data
    }
  }
}

async function relay(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, {'content-type': response.headers.get('content-type') ?? 'application/json'})
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk)
  res.end()
}

function json(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {'content-length': Buffer.byteLength(text), 'content-type': 'application/json'})
  res.end(text)
}

function notFound(res: ServerResponse, req: IncomingMessage): void {
  json(res, 404, {message: `provider-servers: no route for ${req.method} ${req.url}`})
}
