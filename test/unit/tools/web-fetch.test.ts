import type {LookupAddress} from 'node:dns'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {parseRules, type PolicyContext} from '../../../src/policy/policy.js'
import {toolPermissions} from '../../../src/tools/dispatch.js'
import webFetch, {fetchPage, formatPage, htmlToMarkdown, isPrivateAddress, type Lookup, MAX_MARKDOWN_CHARS} from '../../../src/tools/web-fetch.js'

describe('isPrivateAddress', () => {
  it.each<[string, boolean]>([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['::1', true],
    ['[::1]', true],
    ['::', true],
    ['fe80::1', true],
    ['fd12:3456::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:8.8.8.8', false],
    ['2606:4700::1111', false],
    ['not an address', true],
  ])('%s: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected)
  })
})

describe('fetchPage', () => {
  let web: Server
  let port: number

  beforeEach(async () => {
    web = createServer((req, res) => {
      if (req.url === '/stall') return // never answers
      if (req.url === '/loop') {
        res.writeHead(302, {location: '/loop'}).end()
        return
      }

      res.writeHead(200, {'content-type': 'text/plain; charset=utf-8'}).end('x'.repeat(1000))
    })
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve))
    port = (web.address() as AddressInfo).port
  })

  afterEach(async () => {
    web.closeAllConnections()
    await new Promise((resolve) => web.close(resolve))
  })

  /** What the wrapper hands WebFetch in plan mode with these allow rules. */
  const permissions = (...allow: string[]) =>
    toolPermissions({headless: true, mode: 'plan', planFile: '/p.md', rules: parseRules(allow), workspaceRoot: '/w'} satisfies PolicyContext, webFetch)
  /** A resolver where every *.example.test name points at loopback, as a rebinding DNS would. */
  const toLoopback = ((_host: string, _options: unknown, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
    callback(null, [{address: '127.0.0.1', family: 4}])
  }) as unknown as Lookup

  it('refuses a name that resolves to loopback when the rule names only a parent domain', async () => {
    await expect(
      fetchPage(`http://docs.example.test:${port}/`, {lookup: toLoopback, permissions: permissions('WebFetch(domain:example.test)')}),
    ).rejects.toThrow(
      `Refused docs.example.test:${port} (it resolves to 127.0.0.1): private and loopback addresses are off unless a rule names them, such as WebFetch(domain:docs.example.test).`,
    )
  })

  it('connects when a rule names that host', async () => {
    const page = await fetchPage(`http://docs.example.test:${port}/`, {lookup: toLoopback, permissions: permissions('WebFetch(domain:docs.example.test)')})
    expect(page).toMatchObject({bodyCut: false, contentType: 'text/plain; charset=utf-8', status: 200})
    expect(page.markdown).toHaveLength(1000)
  })

  it('cuts a body at the size cap', async () => {
    const page = await fetchPage(`http://127.0.0.1:${port}/`, {maxBytes: 100, permissions: permissions('WebFetch(domain:127.0.0.1)')})
    expect(page.bodyCut).toBe(true)
    expect(page.markdown).toHaveLength(100)
    expect(formatPage(page)).toContain('only the first 5242880 bytes were read')
  })

  it('times out', async () => {
    await expect(fetchPage(`http://127.0.0.1:${port}/stall`, {permissions: permissions('WebFetch(domain:127.0.0.1)'), timeoutMs: 200})).rejects.toThrow(
      `Fetching http://127.0.0.1:${port}/stall timed out after 200 ms.`,
    )
  })

  it('stops after five redirects', async () => {
    await expect(fetchPage(`http://127.0.0.1:${port}/loop`, {permissions: permissions('WebFetch(domain:127.0.0.1)')})).rejects.toThrow('more than 5 redirects')
  })

  it.each([
    ['file:///etc/passwd', 'Only http and https URLs can be fetched, not file:'],
    ['http://user:secret@example.com/', 'URLs with credentials are refused'],
    ['not a url', 'Invalid URL: not a url.'],
  ])('refuses %s', async (url, message) => {
    await expect(fetchPage(url, {permissions: permissions('WebFetch')})).rejects.toThrow(message)
  })
})

describe('Markdown', () => {
  it('converts HTML, drops scripts and styles, and makes links absolute', async () => {
    const html =
      '<html><head><title>T</title><style>p{}</style></head><body><h2>Use</h2><script>x()</script><p>See <a href="b.html">b</a> and <a href="#top">top</a>.</p><img src="/i.png" alt="i"></body></html>'
    expect(await htmlToMarkdown(html, 'https://docs.example.com/a/index.html')).toBe(
      '## Use\n\nSee [b](https://docs.example.com/a/b.html) and [top](#top).\n\n![i](https://docs.example.com/i.png)',
    )
  })

  it('truncates long content with a note', () => {
    const text = formatPage(
      {bodyCut: false, contentType: 'text/plain', markdown: 'a'.repeat(MAX_MARKDOWN_CHARS + 5), status: 200, url: 'https://x.test/'},
      'the a',
    )
    expect(text.startsWith('URL: https://x.test/\nContent-Type: text/plain\nLooking for: the a\n\n')).toBe(true)
    expect(text).toContain(`[Truncated: showing the first ${MAX_MARKDOWN_CHARS} of ${MAX_MARKDOWN_CHARS + 5} characters.`)
  })
})
