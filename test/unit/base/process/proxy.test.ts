import http from 'node:http'
import type {AddressInfo} from 'node:net'
import {mkdtempSync, realpathSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {hostAllowed, networkHostProblem, startNetworkProxy, type NetworkProxy} from '../../../../src/base/process/proxy.js'
import {runCommand, spawnFor} from '../../../../src/base/process/runner.js'
import {sandboxStatus} from '../../../../src/base/process/sandbox.js'

describe('the allowed hosts', () => {
  it('match a host exactly, a *. entry its subdomains only, a :port entry that port only', () => {
    expect(hostAllowed(['registry.npmjs.org'], 'registry.npmjs.org', 443)).toBe(true)
    expect(hostAllowed(['registry.npmjs.org'], 'REGISTRY.npmjs.org.', 443)).toBe(true)
    expect(hostAllowed(['registry.npmjs.org'], 'evil-registry.npmjs.org', 443)).toBe(false)
    expect(hostAllowed(['registry.npmjs.org'], 'registry.npmjs.org.evil.com', 443)).toBe(false)
    expect(hostAllowed(['*.pythonhosted.org'], 'files.pythonhosted.org', 443)).toBe(true)
    expect(hostAllowed(['*.pythonhosted.org'], 'pythonhosted.org', 443)).toBe(false)
    expect(hostAllowed(['*.pythonhosted.org'], 'xpythonhosted.org', 443)).toBe(false)
    expect(hostAllowed(['127.0.0.1:4873'], '127.0.0.1', 4873)).toBe(true)
    expect(hostAllowed(['127.0.0.1:4873'], '127.0.0.1', 22)).toBe(false)
  })

  it('are host names, never URLs or patterns', () => {
    for (const good of ['registry.npmjs.org', '*.pythonhosted.org', '127.0.0.1:4873', 'localhost']) expect(networkHostProblem(good)).toBeUndefined()
    for (const bad of ['https://registry.npmjs.org', 'a.org/path', '*', '*.*', 'a b', '', 'a.org:', 'exa*mple.org'])
      expect(networkHostProblem(bad)).toBeDefined()
  })
})

const sandboxed = sandboxStatus().available

describe.skipIf(!sandboxed)('a sandboxed command with hosts allowed', () => {
  let allowed: http.Server
  let other: http.Server
  let proxy: NetworkProxy
  let root: string
  const port = (server: http.Server) => (server.address() as AddressInfo).port

  beforeAll(async () => {
    const serve = (name: string) =>
      new Promise<http.Server>((resolve) => {
        const server = http.createServer((request, response) => response.end(`${name} says hello to ${request.url}\n`))
        server.listen(0, '127.0.0.1', () => resolve(server))
      })
    allowed = await serve('allowed')
    other = await serve('other')
    proxy = await startNetworkProxy([`127.0.0.1:${port(allowed)}`])
    root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-proxy-test-')))
  })

  afterAll(async () => {
    await proxy.close()
    allowed.close()
    other.close()
    rmSync(root, {force: true, recursive: true})
  })

  const run = async (
    command: string,
    settings: {proxy?: string; networkAllow?: string[]} = {proxy: proxy.directory, networkAllow: proxy.hosts as string[]},
  ) => {
    const spawn = spawnFor(command, {root}, {enabled: true, network: false, ...settings})
    if ('problem' in spawn) return {code: -1, output: spawn.problem}
    return runCommand(spawn.plan, root, 20_000, new AbortController().signal)
  }

  it('reaches an allowed host through the proxy, and is refused another', async () => {
    const reached = await run(`curl -sS http://127.0.0.1:${port(allowed)}/pkg`)
    expect(reached.output).toContain('allowed says hello to /pkg')
    expect(reached.code).toBe(0)

    const refused = await run(`curl -sS -w ' HTTP %{http_code}' http://127.0.0.1:${port(other)}/pkg`)
    expect(refused.output).toContain('HTTP 403')
    expect(refused.output).toContain('is not among the hosts the approval allows')
    expect(refused.output).not.toContain('other says hello')
    expect(proxy.refused).toContain(`127.0.0.1:${port(other)}`)
  })

  it('tunnels (CONNECT, as HTTPS goes) to an allowed host only', async () => {
    const reached = await run(`curl -sS --proxytunnel http://127.0.0.1:${port(allowed)}/tunnel`)
    expect(reached.output).toContain('allowed says hello to /tunnel')
    const refused = await run(`curl -sS --proxytunnel http://127.0.0.1:${port(other)}/tunnel`)
    expect(refused.code).not.toBe(0)
    expect(refused.output).toContain('403')
    expect(refused.output).not.toContain('other says hello')
  })

  it('has no way out around the proxy: a direct connection finds no network', async () => {
    const direct = await run(`curl -sS --noproxy '*' http://127.0.0.1:${port(allowed)}/pkg`)
    expect(direct.code).not.toBe(0)
    expect(direct.output).not.toContain('allowed says hello')
  })

  it('does not run at all when the hosts are allowed but no proxy is running', async () => {
    const result = await run(`curl -sS http://127.0.0.1:${port(allowed)}/pkg`, {networkAllow: [`127.0.0.1:${port(allowed)}`]})
    expect(result.code).toBe(-1)
    expect(result.output).toContain('proxy for the allowed hosts')
  })

  it('keeps the command’s exit code and output through the relay', async () => {
    const result = await run('echo out; echo err >&2; exit 3')
    expect(result.code).toBe(3)
    expect(result.output).toContain('out')
    expect(result.output).toContain('err')
  })
})
