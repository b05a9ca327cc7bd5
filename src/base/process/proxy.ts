/**
 * The sandbox's one way out when an approval opens the network to named hosts only
 * (`--sandbox-network-allow HOST`): a filtering proxy, started by wave outside the sandbox, that tunnels
 * HTTPS (CONNECT) and forwards plain HTTP to the allowed hosts and refuses every other with a 403 saying
 * why. Inside bubblewrap the network stays unshared; the proxy's Unix socket is bound into the sandbox,
 * and a relay inside it (sandbox.ts) serves HTTP(S)_PROXY on the sandbox's own loopback. A raw
 * connection to anywhere else finds no route: only what goes through the proxy leaves.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import type http from 'node:http'
import net from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'

/** One allowed host as the approval names it: a host name or address, `*.` for its subdomains, `:port` to allow only that port. */
const NETWORK_HOST = /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*(?::\d{1,5})?$/i

/** Why `host` cannot be an allowed host, or undefined when it can. */
export function networkHostProblem(host: string): string | undefined {
  if (NETWORK_HOST.test(host)) return undefined
  return `"${host.slice(0, 80)}" is not a host name: give one such as registry.npmjs.org, *.pythonhosted.org or 127.0.0.1:4873 (no scheme, no path)`
}

/** Whether `host:port` is allowed by `allowed` (entries as NETWORK_HOST reads them). */
export function hostAllowed(allowed: readonly string[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/\.$/, '')
  return allowed.some((entry) => {
    const [pattern, onlyPort] = entry.toLowerCase().split(':')
    if (onlyPort !== undefined && Number(onlyPort) !== port) return false
    return pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) && name.length > pattern.length - 1 : name === pattern
  })
}

export interface NetworkProxy {
  /** The directory holding the proxy's socket (`proxy.sock`), bound into the sandbox. */
  readonly directory: string
  readonly hosts: readonly string[]
  /** The hosts refused so far, in the order first asked for. */
  readonly refused: string[]
  close(): Promise<void>
}

export const PROXY_SOCKET = 'proxy.sock'

/**
 * Starts the proxy for `hosts`, listening on a Unix socket in a private directory. Rejects when it cannot
 * listen: the caller then refuses the run rather than open the network.
 */
export async function startNetworkProxy(hosts: readonly string[], onRefused?: (host: string) => void): Promise<NetworkProxy> {
  for (const host of hosts) {
    const problem = networkHostProblem(host)
    if (problem) throw new Error(problem)
  }

  const directory = mkdtempSync(path.join(tmpdir(), 'wave-proxy-'))
  const refused: string[] = []
  const sockets = new Set<net.Socket>()
  const refuse = (host: string) => {
    if (!refused.includes(host)) {
      refused.push(host)
      onRefused?.(host)
    }
  }

  const gate: ProxyGate = {hosts, refuse, sockets}
  // Imported here, not with the module: only a run with an allow-list starts the proxy, and every other
  // command would load node's HTTP server before its first request for nothing.
  const {createServer, request: forward} = await import('node:http')
  const server = createServer((request, response) => forwardPlain(gate, forward, request, response))
  server.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => tunnel(gate, request, client, head))
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  const socket = path.join(directory, PROXY_SOCKET)
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(socket, () => {
        server.off('error', reject)
        resolve()
      })
    })
  } catch (error) {
    rmSync(directory, {force: true, recursive: true})
    throw error
  }

  // The proxy serves wave's own sandboxes for as long as the session: it never keeps wave alive by itself.
  server.unref()
  let closed: Promise<void> | undefined
  return {
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const open of sockets) open.destroy()
        server.close(() => {
          rmSync(directory, {force: true, recursive: true})
          resolve()
        })
      })
      return closed
    },
    directory,
    hosts,
    refused,
  }
}

/** What both of the proxy's ways out answer to: the allowed hosts, the refusals noted, the sockets open (closed with the proxy). */
interface ProxyGate {
  hosts: readonly string[]
  refuse(host: string): void
  sockets: Set<net.Socket>
}

const why = (gate: ProxyGate, host: string) => `wave: ${host} is not among the hosts the approval allows (${gate.hosts.join(', ')}).\n`

/** Plain HTTP through a proxy: the request names its absolute URL; forwarded to an allowed host, else refused with a 403. */
function forwardPlain(gate: ProxyGate, forward: typeof http.request, request: http.IncomingMessage, response: http.ServerResponse): void {
  let url: URL
  try {
    url = new URL(request.url ?? '')
  } catch {
    response.writeHead(400, {'content-type': 'text/plain'}).end('wave: this proxy forwards absolute http:// URLs only.\n')
    return
  }

  const port = Number(url.port || 80)
  if (url.protocol !== 'http:' || !hostAllowed(gate.hosts, url.hostname, port)) {
    gate.refuse(url.host)
    response.writeHead(403, {'content-type': 'text/plain'}).end(why(gate, url.host))
    return
  }

  const headers = {...request.headers}
  delete headers['proxy-connection']
  delete headers['proxy-authorization']
  const upstream = forward({headers, host: url.hostname, method: request.method, path: `${url.pathname}${url.search}`, port}, (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.headers)
    answer.pipe(response)
  })
  upstream.on('error', (error) => {
    if (!response.headersSent) response.writeHead(502, {'content-type': 'text/plain'})
    response.end(`wave: ${url.host} could not be reached: ${error.message}\n`)
  })
  request.pipe(upstream)
}

/** HTTPS: a tunnel to the host, opened only when it is allowed; what passes through it stays encrypted end to end. */
function tunnel(gate: ProxyGate, request: http.IncomingMessage, client: net.Socket, head: Buffer): void {
  const {sockets} = gate
  sockets.add(client)
  client.on('close', () => sockets.delete(client))
  client.on('error', () => client.destroy())
  const target = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(request.url ?? '')
  const host = target?.[1] ?? ''
  const port = Number(target?.[2])
  if (!target || !hostAllowed(gate.hosts, host, port)) {
    gate.refuse(request.url ?? '')
    const body = why(gate, request.url ?? '(nothing)')
    client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`)
    return
  }

  let established = false
  const upstream = net.connect(port, host, () => {
    established = true
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
    if (head.length > 0) upstream.write(head)
    upstream.pipe(client)
    client.pipe(upstream)
  })
  sockets.add(upstream)
  upstream.on('close', () => sockets.delete(upstream))
  upstream.on('error', (error) => {
    if (established) client.destroy()
    else client.end(`HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\n\r\nwave: ${host} could not be reached: ${error.message}\n`)
  })
  client.on('close', () => upstream.destroy())
}

/** The loopback port the relay inside each sandbox listens on: its network namespace is its own, so no other program holds it. */
export const RELAY_PORT = 3128

/**
 * The relay run inside the sandbox (by the same node as wave): it listens on the sandbox's loopback at
 * RELAY_PORT, pipes each connection to the proxy's socket, and once listening runs the command (its
 * arguments), ending as the command ends. Source text, passed with `node -e`.
 */
export const RELAY_SOURCE = `
const net = require('node:net'), {spawn} = require('node:child_process');
const [socket, port, ...command] = process.argv.slice(1);
const server = net.createServer((client) => {
  const proxy = net.connect(socket);
  client.on('error', () => proxy.destroy());
  proxy.on('error', () => client.destroy());
  client.pipe(proxy);
  proxy.pipe(client);
});
server.on('error', (error) => { process.stderr.write('wave: the sandbox network relay could not start: ' + error.message + '\\n'); process.exit(125); });
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command[0], command.slice(1), {stdio: 'inherit'});
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) { process.removeAllListeners(signal); process.kill(process.pid, signal); }
    process.exit(code ?? 1);
  });
});
`
