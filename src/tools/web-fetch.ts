import type {lookup as dnsLookup, LookupAddress} from 'node:dns'
import type http from 'node:http'
import {BlockList, isIP} from 'node:net'

import type TurndownService from 'turndown'
import {z} from 'zod'

import {hostOf} from '../policy/policy.js'
import {defineTool, ToolError, type ToolPermissions} from './tool.js'

/** How long one fetch may take, redirects included. */
const FETCH_TIMEOUT_MS = 20_000
/** Bytes read from a response body; the rest is cut. */
const MAX_BODY_BYTES = 5 * 1024 * 1024
/** Characters of Markdown returned to the model (below the declared cap, so the note survives). */
export const MAX_MARKDOWN_CHARS = 30_000
const RESULT_CAP = 40_000
const MAX_REDIRECTS = 5
const REDIRECTS = new Set([301, 302, 303, 307, 308])

const input = () =>
  z.object({
    prompt: z.string().optional().describe('What you are looking for in the page; shown above its content'),
    url: z.string().describe('The http(s) URL to fetch'),
  })

const webFetch = defineTool({
  access: 'network',
  description: `Fetches a URL over HTTP(S) and returns its content as Markdown (HTML is converted; text, JSON and other text types are returned as they are).

- The network is off unless a permission rule allows the domain, e.g. WebFetch(domain:docs.example.com): other calls are refused. Redirects to a domain no rule allows are refused, and so are private and loopback addresses unless a rule names them.
- At most ${MAX_REDIRECTS} redirects and ${FETCH_TIMEOUT_MS} ms. The body is read up to ${MAX_BODY_BYTES / 1024 / 1024} MB and the Markdown cut at ${MAX_MARKDOWN_CHARS} characters, with a note saying so. Binary content is refused.
- prompt says what you are looking for; the page is returned for you to read, not summarised.`,
  input,
  name: 'WebFetch',
  resultCap: RESULT_CAP,
  async run({prompt, url}, ctx) {
    const page = await fetchPage(url, {permissions: ctx.permissions, signal: ctx.signal})
    return formatPage(page, prompt)
  },
})

export default webFetch

interface FetchedPage {
  url: string
  /** The URL asked for, when redirects led elsewhere. */
  requested?: string
  status: number
  contentType: string
  /** The body as Markdown (HTML) or text, before truncation. */
  markdown: string
  title?: string
  /** The body was longer than MAX_BODY_BYTES and was cut. */
  bodyCut: boolean
}

export type Lookup = typeof dnsLookup

interface FetchOptions {
  /** The policy as the wrapper hands it to WebFetch: without it, no redirect is followed and no private address used. */
  permissions?: ToolPermissions
  signal?: AbortSignal
  timeoutMs?: number
  maxBytes?: number
  /** For tests: the DNS lookup to use. */
  lookup?: Lookup
}

/**
 * Fetches a page the policy allowed: follows redirects only to URLs the same policy allows, and never
 * connects to a private or loopback address unless an allow rule names that host exactly. The address
 * is checked where the connection is made (the socket's lookup), so DNS cannot swap it after the check.
 */
export async function fetchPage(url: string, options: FetchOptions = {}): Promise<FetchedPage> {
  const {permissions} = options
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS
  const timeout = AbortSignal.timeout(timeoutMs)
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout
  let current = checkUrl(url)
  for (let hop = 0; ; hop++) {
    if (hop > 0) {
      if (!permissions) throw new ToolError(`Refused the redirect to ${current.href}: no policy is available to check it.`)
      const decision = permissions.decide({url: current.href})
      if (decision.decision !== 'allow') throw new ToolError(`Refused the redirect from ${url} to ${current.href}: ${decision.reason}`)
    }

    let response: http.IncomingMessage
    try {
      response = await request(current, {guard: addressGuard(current, permissions), lookup: options.lookup ?? (await import('node:dns')).lookup, signal})
    } catch (error) {
      if (error instanceof ToolError) throw error
      if (timeout.aborted) throw new ToolError(`Fetching ${current.href} timed out after ${timeoutMs} ms.`)
      if (signal.aborted) throw new ToolError(`Fetching ${current.href} was interrupted.`)
      throw new ToolError(`Fetching ${current.href} failed: ${(error as Error).message}`)
    }

    const status = response.statusCode ?? 0
    const location = response.headers.location
    if (REDIRECTS.has(status) && location) {
      response.resume()
      if (hop >= MAX_REDIRECTS) throw new ToolError(`Fetching ${url} failed: more than ${MAX_REDIRECTS} redirects.`)
      current = checkUrl(new URL(location, current).href)
      continue
    }

    const {body, cut} = await readBody(response, options.maxBytes ?? MAX_BODY_BYTES, signal).catch((error: unknown) => {
      if (timeout.aborted) throw new ToolError(`Fetching ${current.href} timed out after ${timeoutMs} ms.`)
      throw new ToolError(`Reading ${current.href} failed: ${(error as Error).message}`)
    })
    const contentType = String(response.headers['content-type'] ?? '').toLowerCase()
    const text = decodeBody(body, contentType)
    if (status < 200 || status >= 300) {
      const snippet = text.replaceAll(/\s+/g, ' ').trim().slice(0, 200)
      throw new ToolError(
        `${current.href} answered HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}${snippet ? `: ${snippet}` : ''}`,
      )
    }

    const kind = contentKind(contentType, body)
    if (kind === 'binary') throw new ToolError(`${current.href} returned ${contentType || 'binary content'}, which WebFetch cannot show as text.`)
    const page: FetchedPage = {bodyCut: cut, contentType, markdown: text, requested: hop > 0 ? url : undefined, status, url: current.href}
    if (kind === 'html') {
      page.title = titleOf(text)
      page.markdown = await htmlToMarkdown(text, current.href)
    }

    return page
  }
}

function checkUrl(spelled: string): URL {
  let url: URL
  try {
    url = new URL(spelled)
  } catch {
    throw new ToolError(`Invalid URL: ${spelled}. Give an absolute http:// or https:// URL.`)
  }

  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ToolError(`Only http and https URLs can be fetched, not ${url.protocol} (${spelled}).`)
  if (url.username || url.password) throw new ToolError(`URLs with credentials are refused: ${url.protocol}//${url.host}${url.pathname}`)
  return url
}

// Addresses no public web page lives at: loopback, private ranges, link-local, CGNAT, multicast, reserved.
const PRIVATE = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  PRIVATE.addSubnet(net, prefix, 'ipv6')

/** Loopback, private, link-local and other non-public addresses (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[(.*)\]$/, '$1').toLowerCase()
  const family = isIP(ip)
  if (family === 4) return PRIVATE.check(ip, 'ipv4')
  if (family !== 6) return true // not an address at all: refuse rather than guess
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip)
  if (mapped) return PRIVATE.check(mapped[1], 'ipv4')
  const hexMapped = /^::ffff:([\da-f]{1,4}):([\da-f]{1,4})$/.exec(ip)
  if (hexMapped) {
    const hi = Number.parseInt(hexMapped[1], 16)
    const lo = Number.parseInt(hexMapped[2], 16)
    return PRIVATE.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4')
  }

  return PRIVATE.check(ip, 'ipv6')
}

/** Returns why an address may not be used for this URL, or undefined when it may. */
function addressGuard(url: URL, permissions?: ToolPermissions): (address: string) => string | undefined {
  const host = hostOf(url.href) ?? url.hostname
  return (address) => {
    if (!isPrivateAddress(address)) return undefined
    if (permissions && (permissions.namesHost(host) || permissions.namesHost(address))) return undefined
    const via = host === address ? '' : ` (it resolves to ${address})`
    return `Refused ${url.host}${via}: private and loopback addresses are off unless a rule names them, such as WebFetch(domain:${host}).`
  }
}

interface RequestOptions {
  guard: (address: string) => string | undefined
  lookup: Lookup
  signal: AbortSignal
}

/**
 * One GET. node's HTTP clients and resolver are imported on the first fetch, not with the module: every
 * session loads the tools, few fetch, and the three cost ~5 ms of every start before its first request.
 */
async function request(url: URL, options: RequestOptions): Promise<http.IncomingMessage> {
  const literal = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (isIP(literal)) {
    // No lookup happens for an address literal: check it here.
    const problem = options.guard(literal)
    if (problem) throw new ToolError(problem)
  }

  const guardedLookup = ((hostname: string, opts: {all?: boolean}, callback: (...args: unknown[]) => void) => {
    options.lookup(hostname, {...opts, all: true}, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error)
      if (addresses.length === 0) return callback(new ToolError(`${hostname} has no address.`))
      for (const {address} of addresses) {
        const problem = options.guard(address)
        if (problem) return callback(new ToolError(problem))
      }

      if (opts.all) callback(null, addresses)
      else callback(null, addresses[0].address, addresses[0].family)
    })
  }) as unknown as http.RequestOptions['lookup']

  const client = url.protocol === 'https:' ? await import('node:https') : await import('node:http')
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      headers: {
        accept: 'text/markdown, text/html;q=0.9, text/plain;q=0.8, application/json;q=0.7, */*;q=0.1',
        'accept-encoding': 'identity',
        'user-agent': 'wave-cli WebFetch',
      },
      lookup: guardedLookup,
      method: 'GET',
      signal: options.signal,
    })
    req.on('response', resolve)
    req.on('error', reject)
    req.end()
  })
}

async function readBody(response: http.IncomingMessage, maxBytes: number, signal: AbortSignal): Promise<{body: Buffer; cut: boolean}> {
  const chunks: Buffer[] = []
  let size = 0
  let cut = false
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      if (signal.aborted) throw new Error('aborted')
      const room = maxBytes - size
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room))
        size += room
        cut = true
        break
      }

      chunks.push(chunk)
      size += chunk.length
    }
  } finally {
    if (cut) response.destroy()
  }

  return {body: Buffer.concat(chunks), cut}
}

function decodeBody(body: Buffer, contentType: string): string {
  const charset = /charset\s*=\s*"?([\w-]+)"?/.exec(contentType)?.[1]
  try {
    return new TextDecoder(charset ?? 'utf-8').decode(body)
  } catch {
    return new TextDecoder('utf-8').decode(body)
  }
}

function contentKind(contentType: string, body: Buffer): 'binary' | 'html' | 'text' {
  const type = contentType.split(';')[0].trim()
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html'
  if (type.startsWith('text/') || /[+/](json|xml|javascript|yaml|x-yaml|toml)$/.test(type) || type === 'application/x-ndjson') return 'text'
  if (type === '' || type === 'application/octet-stream') {
    // Unlabelled: sniff for NUL bytes, and for HTML.
    const head = body.subarray(0, 1024)
    if (head.includes(0)) return 'binary'
    return /^\s*(<!doctype html|<html)/i.test(head.toString('utf8')) ? 'html' : 'text'
  }

  return 'binary'
}

function titleOf(html: string): string | undefined {
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1]
  return title?.replaceAll(/\s+/g, ' ').trim() || undefined
}

let turndown: TurndownService | undefined

/** HTML to Markdown with turndown (loaded on first use: most sessions never fetch). */
export async function htmlToMarkdown(html: string, baseUrl?: string): Promise<string> {
  if (!turndown) {
    const {default: Turndown} = await import('turndown')
    turndown = new Turndown({bulletListMarker: '-', codeBlockStyle: 'fenced', headingStyle: 'atx'})
    turndown.remove(['script', 'style', 'noscript', 'template', 'head', 'title', 'iframe', 'object', 'embed', 'svg', 'canvas', 'form'] as never)
  }

  const absolute = baseUrl ? absolutise(html, baseUrl) : html
  return turndown
    .turndown(absolute)
    .replaceAll(/\n{3,}/g, '\n\n')
    .trim()
}

/** Links and images relative to the page would mean nothing to the model: make them absolute. */
function absolutise(html: string, baseUrl: string): string {
  return html.replaceAll(/(<(?:a|img)\b[^>]*?\s(?:href|src)\s*=\s*)(["'])(.*?)\2/gi, (whole, start: string, quote: string, link: string) => {
    if (/^(#|[a-z][\w+.-]*:)/i.test(link)) return whole
    try {
      return `${start}${quote}${new URL(link, baseUrl).href}${quote}`
    } catch {
      return whole
    }
  })
}

export function formatPage(page: FetchedPage, prompt?: string): string {
  const lines = [`URL: ${page.url}`]
  if (page.requested) lines.push(`Redirected from: ${page.requested}`)
  if (page.title) lines.push(`Title: ${page.title}`)
  lines.push(`Content-Type: ${page.contentType || 'unknown'}`)
  if (prompt?.trim()) lines.push(`Looking for: ${prompt.trim()}`)
  let body = page.markdown
  const notes: string[] = []
  if (body.length > MAX_MARKDOWN_CHARS) {
    notes.push(`[Truncated: showing the first ${MAX_MARKDOWN_CHARS} of ${body.length} characters. Fetch a more specific page for the rest.]`)
    body = body.slice(0, MAX_MARKDOWN_CHARS)
  }

  if (page.bodyCut) notes.push(`[The response was larger than ${MAX_BODY_BYTES} bytes; only the first ${MAX_BODY_BYTES} bytes were read.]`)
  return `${lines.join('\n')}\n\n${body}${notes.length > 0 ? `\n\n${notes.join('\n')}` : ''}`
}
