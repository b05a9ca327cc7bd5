/**
 * WebFetch end to end, against a local HTTP server on loopback: off by default, on for the domains a
 * rule allows (flag, settings, or approval record), redirects re-checked, loopback refused unless named.
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import {createServer, type IncomingMessage, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {makeSandbox, runWave, type Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, reply, startMessagesServer, toolNames, toolResults, toolUse} from '../support/messages-server.js'

const DOCS = `<!doctype html>
<html><head><title>Widget API</title><style>body { color: red }</style><script>alert('x')</script></head>
<body><h1>Widgets</h1><p>Call <code>widget.spin()</code> to spin. See <a href="/guide">the guide</a>.</p>
<ul><li>fast</li><li>safe</li></ul></body></html>`

let sandbox: Sandbox
let server: MessagesServer
let web: Server
let port: number
let seen: Array<{path: string; host: string}>

beforeEach(async () => {
  sandbox = makeSandbox()
  server = await startMessagesServer()
  seen = []
  web = createServer((req: IncomingMessage, res) => {
    seen.push({host: req.headers.host ?? '', path: req.url ?? ''})
    switch (req.url) {
      case '/docs': {
        res.writeHead(200, {'content-type': 'text/html; charset=utf-8'}).end(DOCS)
        break
      }

      case '/hop': {
        res.writeHead(302, {location: '/docs'}).end()
        break
      }

      case '/away': {
        res.writeHead(301, {location: `http://localhost:${port}/docs`}).end()
        break
      }

      case '/big': {
        res.writeHead(200, {'content-type': 'text/plain'}).end('word '.repeat(20_000))
        break
      }

      case '/logo.png': {
        res.writeHead(200, {'content-type': 'image/png'}).end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0]))
        break
      }

      default: {
        res.writeHead(404, {'content-type': 'text/plain'}).end('no such page')
      }
    }
  })
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
  port = (web.address() as AddressInfo).port
})

afterEach(async () => {
  await new Promise((resolve) => web.close(resolve))
  await server.close()
  sandbox.cleanup()
})

const wave = (args: string[], env?: Record<string, string | undefined>) => runWave(args, {cwd: sandbox.repo, env, home: sandbox.home, server})
const url = (page: string, host = '127.0.0.1') => `http://${host}:${port}${page}`
const LOCAL = 'WebFetch(domain:127.0.0.1)'

/** A plan session that makes the given WebFetch calls in one turn, then writes a plan. */
function planFetching(...pages: string[]) {
  server.push(
    reply(...pages.map((page) => toolUse('WebFetch', {prompt: 'how to spin', url: page.startsWith('http') ? page : url(page)}))),
    (request) => reply(toolUse('Write', {content: '# Plan\n\nSpin the widget.\n', file_path: planPathIn(request)})),
    reply('Planned.'),
  )
}

const results = () => toolResults(server.messageRequests[1])

describe('WebFetch', () => {
  it('is off by default: not offered, and a call is denied without a request', async () => {
    planFetching('/docs')
    const result = await wave(['plan', '--task', 'Read the widget docs'])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).not.toContain('WebFetch')
    expect(results()[0].is_error).toBe(true)
    expect(results()[0].text).toContain('WebFetch is not available in plan mode')
    expect(seen).toEqual([])
  })

  it('with --allow for the domain, plan mode offers it for research and turns HTML into Markdown', async () => {
    planFetching('/docs', '/hop', '/missing', '/logo.png')
    const result = await wave(['plan', '--task', 'Read the widget docs', '--allow', LOCAL])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).toContain('WebFetch')
    const [docs, hop, missing, logo] = results()
    expect(docs.is_error ?? false).toBe(false)
    expect(docs.text).toBe(
      [
        `URL: ${url('/docs')}`,
        'Title: Widget API',
        'Content-Type: text/html; charset=utf-8',
        'Looking for: how to spin',
        '',
        '# Widgets',
        '',
        `Call \`widget.spin()\` to spin. See [the guide](${url('/guide')}).`,
        '',
        '-   fast',
        '-   safe',
      ].join('\n'),
    )
    expect(hop.is_error ?? false).toBe(false)
    expect(hop.text).toContain(`URL: ${url('/docs')}\nRedirected from: ${url('/hop')}`)
    expect(missing).toMatchObject({is_error: true, text: `${url('/missing')} answered HTTP 404 Not Found: no such page`})
    expect(logo.is_error).toBe(true)
    expect(logo.text).toContain('image/png')
  })

  it('refuses a redirect to a domain no rule allows, without following it', async () => {
    planFetching('/away')
    const result = await wave(['plan', '--task', 'Follow the link', '--allow', LOCAL])
    expect(result.code, result.stderr).toBe(0)
    expect(results()[0].is_error).toBe(true)
    expect(results()[0].text).toContain(`Refused the redirect from ${url('/away')} to ${url('/docs', 'localhost')}`)
    expect(results()[0].text).toContain('WebFetch(domain:localhost)')
    expect(seen.map((s) => s.path)).toEqual(['/away'])
  })

  it('refuses loopback when the rule allows every domain but names none', async () => {
    planFetching('/docs')
    const result = await wave(['plan', '--task', 'Read', '--allow', 'WebFetch'])
    expect(result.code, result.stderr).toBe(0)
    expect(results()[0].is_error).toBe(true)
    expect(results()[0].text).toContain('private and loopback addresses are off unless a rule names them, such as WebFetch(domain:127.0.0.1)')
    expect(seen).toEqual([])
  })

  it('reaches a loopback host by name when a rule names it', async () => {
    planFetching(url('/docs', 'localhost'))
    const result = await wave(['plan', '--task', 'Read', '--allow', 'WebFetch(domain:localhost)'])
    expect(result.code, result.stderr).toBe(0)
    expect(results()[0].is_error ?? false).toBe(false)
    expect(results()[0].text).toContain('# Widgets')
  })

  it('truncates a long page with a note', async () => {
    planFetching('/big')
    const result = await wave(['plan', '--task', 'Read', '--allow', LOCAL])
    expect(result.code, result.stderr).toBe(0)
    const text = results()[0].text
    expect(text).toContain('[Truncated: showing the first 30000 of 100000 characters.')
    expect(text.length).toBeLessThan(31_000)
  })

  it('takes rules from the settings files, and a deny rule there beats --allow', async () => {
    mkdirSync(path.join(sandbox.repo, '.wave'))
    writeFileSync(path.join(sandbox.repo, '.wave', 'settings.json'), JSON.stringify({permissions: {allow: [LOCAL]}}))
    planFetching('/docs')
    const allowed = await wave(['plan', '--task', 'Read'], {WAVE_TRUST_PROJECT_SETTINGS: '1'})
    expect(allowed.code, allowed.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).toContain('WebFetch')
    expect(results()[0].text).toContain('# Widgets')

    mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({permissions: {deny: [LOCAL]}}))
    const before = seen.length
    server.push(
      reply(toolUse('WebFetch', {url: url('/docs')})),
      (request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const denied = await wave(['plan', '--task', 'Read', '--allow', LOCAL])
    expect(denied.code, denied.stderr).toBe(0)
    const result = toolResults(server.messageRequests[4])[0]
    expect(result.is_error).toBe(true)
    expect(result.text).toContain(`denied by the rule ${LOCAL}`)
    expect(seen.length).toBe(before)
  })

  it("runs with the approval record's rule", async () => {
    mkdirSync(sandbox.plansDir, {recursive: true})
    const planPath = path.join(sandbox.plansDir, 'calm-lynx.md')
    writeFileSync(planPath, '# Plan\n\n1. Read the docs.\n')
    expect((await wave(['approve', planPath, '--allow', LOCAL])).code).toBe(0)
    server.push(reply(toolUse('WebFetch', {url: url('/docs')})), reply('Read them.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).toContain('WebFetch')
    expect(toolResults(server.messageRequests[1])[0].text).toContain('# Widgets')
    expect(result.stdout).toBe('Read them.\n')
  })
})
