/**
 * What the forge stand-ins (github-server.ts, gitlab-server.ts) share: an HTTP server on a free local
 * port that records every request, checks its token, and answers from a route table; a clock of its own,
 * one second per change, so tests can say what was written before or after what; and the bare git
 * repository a forge checks branches against. Each forge keeps its own routes, shapes and words.
 */
import {execFileSync} from 'node:child_process'
import {createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'

export interface RecordedForgeRequest {
  method: string
  /** Without the query string (and without the API's prefix, where the forge has one). */
  path: string
  query: Record<string, string>
  /** Parsed JSON (the raw text when it was not JSON); tests read into it freely. */
  // biome-ignore lint/suspicious/noExplicitAny: a request body of any shape, as tests assert on it
  body: any
  headers: IncomingHttpHeaders
  status?: number
}

/** A route's answer: status, JSON body, extra headers. */
export type Answer = [number, unknown, Record<string, string>?]
export type Route = [method: string, pattern: RegExp, handler: (match: RegExpExecArray, request: RecordedForgeRequest) => Answer]

export interface ForgeHttpOptions {
  /** Whether the request carries the right token; a request that does not gets `unauthorized`. */
  authorized(headers: IncomingHttpHeaders): boolean
  unauthorized: Answer
  /** The API's path prefix (GitLab's /api/v4): a request outside it is not found; recorded paths are without it. */
  prefix?: string
  notFound: Answer
  contentType: string
  /** Read when a request arrives, so routes may be made after the server knows its URL. */
  routes(): Route[]
}

export interface ForgeHttp {
  readonly url: string
  readonly requests: RecordedForgeRequest[]
  /** Requests other than reads. */
  writes(): RecordedForgeRequest[]
  /** Holds the next request matching (after `skip` others that match): see Hold. */
  hold(match: RequestMatch, answer: HeldAnswer): Hold
  close(): Promise<void>
}

/** What both stand-ins (github-server.ts, gitlab-server.ts) offer beside their own API's routes. */
export interface ForgeStandIn {
  readonly url: string
  /** Holds the next request matching, to order two clients' requests by events: see Hold. */
  hold(match: RequestMatch, answer: HeldAnswer): Hold
  close(): Promise<void>
}

/** Which requests a hold is for: the method, and the path (as recorded, without the API's prefix). */
export interface RequestMatch {
  method: string
  path: RegExp
  /** How many matching requests go by before the one held (default 0: the next). */
  skip?: number
}

/**
 * A held request is answered when released: `stale`, with the answer it had when it arrived (a read
 * that saw the server as it was, delivered late: what a slow network does), or `fresh`, with the
 * answer the server gives at release (a request that reached the server late).
 */
export type HeldAnswer = 'stale' | 'fresh'

/** One request held by the stand-in, so a test can order two clients' requests by events, not by time. */
export interface Hold {
  /** Resolves once the request has arrived (and is held). */
  readonly arrived: Promise<RecordedForgeRequest>
  release(): void
}

export async function startForgeHttp(options: ForgeHttpOptions): Promise<ForgeHttp> {
  const requests: RecordedForgeRequest[] = []
  const sockets = new Set<Socket>()
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const url = new URL(request.url ?? '/', 'http://localhost')
    const inside = options.prefix === undefined || url.pathname.startsWith(`${options.prefix}/`)
    const recorded: RecordedForgeRequest = {
      body: raw ? safeJson(raw) : undefined,
      headers: request.headers,
      method: request.method ?? 'GET',
      path: options.prefix && inside ? url.pathname.slice(options.prefix.length) : url.pathname,
      query: Object.fromEntries(url.searchParams),
    }
    requests.push(recorded)
    const send = ([status, body, headers = {}]: Answer) => {
      recorded.status = status
      response.writeHead(status, {'content-type': options.contentType, ...headers})
      response.end(JSON.stringify(body))
    }

    if (!options.authorized(request.headers)) return send(options.unauthorized)
    if (!inside) return send(options.notFound)
    const answer = (): Answer => {
      for (const [method, pattern, handler] of options.routes()) {
        const match = pattern.exec(recorded.path)
        if (match && method === recorded.method) return handler(match, recorded)
      }

      return options.notFound
    }

    const held = holds.find((hold) => hold.method === recorded.method && hold.path.test(recorded.path) && hold.skip-- <= 0)
    if (!held) return send(answer())
    holds.splice(holds.indexOf(held), 1)
    const early = held.answer === 'stale' ? answer() : undefined
    held.arrived(recorded)
    await held.released
    send(early ?? answer())
  })
  const holds: Array<Required<RequestMatch> & {answer: HeldAnswer; arrived(request: RecordedForgeRequest): void; released: Promise<void>}> = []
  const releases: Array<() => void> = []
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        // A request still held is let go: nothing waits on a closed server.
        for (const release of releases.splice(0)) release()
        server.close(() => resolve())
      }),
    hold(match, answer) {
      let arrived!: (request: RecordedForgeRequest) => void
      let release!: () => void
      const hold = {
        arrived: new Promise<RecordedForgeRequest>((resolve) => (arrived = resolve)),
        release: () => release(),
      }
      holds.push({...match, answer, arrived, released: new Promise<void>((resolve) => (release = resolve)), skip: match.skip ?? 0})
      releases.push(release)
      return hold
    },
    requests,
    url: `http://127.0.0.1:${port}`,
    writes: () => requests.filter((r) => r.method !== 'GET'),
  }
}

/** The stand-ins' clock: starts at 2030-01-01, moves one second per change. */
export class ForgeClock {
  private time = Date.parse('2030-01-01T00:00:00Z')

  /** The current time (ISO 8601, with milliseconds). */
  now(): string {
    return new Date(this.time).toISOString()
  }

  /** Moves the clock one second on and returns the new time: something written "now", after everything so far. */
  tick(): string {
    this.time += 1000
    return this.now()
  }
}

/** The commit a branch of the bare repository points at, or undefined when it has no such branch. */
export function branchHead(remote: string, branch: string): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], {
      cwd: remote,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    return undefined
  }
}

function safeJson(raw: string): unknown {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

/** A commit status as a forge stores it (GitHub's `context`, GitLab's `name`, both called context here). */
export interface StoredStatus {
  sha: string
  context: string
  /** The forge's own word: GitHub's pending/success/failure/error, GitLab's pending/running/success/failed/canceled. */
  state: string
  description?: string
  target_url?: string
}

/** The newest status of each context on a commit, by context. */
export function latestStatuses(statuses: StoredStatus[], sha: string): Record<string, StoredStatus> {
  const latest: Record<string, StoredStatus> = {}
  for (const status of statuses) if (status.sha === sha) latest[status.context] = status
  return latest
}
