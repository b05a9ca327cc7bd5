/**
 * MCP servers as tool sources: a real server process written with the SDK (test/fixtures/mcp-server.mjs)
 * over stdio, and the same server over streamable HTTP on loopback, seen and used by wave sessions.
 */
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {makeSandbox, runWave, type Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, reply, startMessagesServer, toolNames, toolResults, toolUse} from '../support/messages-server.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url))
const {startHttpFixture} = (await import(FIXTURE)) as {startHttpFixture(): Promise<{url: string; close(): Promise<void>}>}

let sandbox: Sandbox
let server: MessagesServer
let recordFile: string

beforeEach(async () => {
  sandbox = makeSandbox()
  server = await startMessagesServer()
  recordFile = path.join(sandbox.root, 'record.txt')
})

afterEach(async () => {
  await server.close()
  sandbox.cleanup()
})

const wave = (args: string[], env?: Record<string, string | undefined>) => runWave(args, {cwd: sandbox.repo, env, home: sandbox.home, server})

function userSettings(settings: unknown): void {
  mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
  writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify(settings, null, 2))
}

const stdioServer = (extra: Record<string, unknown> = {}) => ({
  args: [FIXTURE],
  command: process.execPath,
  env: {MCP_RECORD_FILE: recordFile},
  ...extra,
})

function writePlan(content = '# Plan\n\n1. Record a line.\n'): string {
  mkdirSync(sandbox.plansDir, {recursive: true})
  const file = path.join(sandbox.plansDir, 'quiet-heron.md')
  writeFileSync(file, content)
  return file
}

describe('MCP servers over stdio', () => {
  it('plan mode offers and allows only the read-only tool, deferred behind ToolSearch', async () => {
    userSettings({mcpServers: {fixture: stdioServer()}})
    server.push(
      reply(toolUse('ToolSearch', {query: 'select:mcp__fixture__lookup,mcp__fixture__record'})),
      reply(toolUse('mcp__fixture__lookup', {key: 'answer'}), toolUse('mcp__fixture__record', {line: 'from plan mode'})),
      reply(toolUse('mcp__fixture__lookup', {key: 'missing'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n\nThe answer is 42.\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Find the answer'])
    expect(result.code, result.stderr).toBe(0)
    const requests = server.messageRequests
    expect(toolNames(requests[0])).toContain('mcp__fixture__lookup')
    expect(toolNames(requests[0])).not.toContain('mcp__fixture__record')
    // Sent deferred, as Claude Code sends MCP tools: out of the cached prefix, named by ToolSearch, loaded by it.
    const lookup = requests[0].body.tools.find((tool: {name: string}) => tool.name === 'mcp__fixture__lookup')
    expect(lookup).toMatchObject({
      defer_loading: true,
      description: 'Looks a key up in the fixture table.',
      input_schema: {properties: {key: {type: 'string'}}, required: ['key'], type: 'object'},
    })
    const search = requests[0].body.tools.find((tool: {name: string}) => tool.name === 'ToolSearch')
    expect(search.description).toContain('mcp__fixture__lookup')
    expect(search.description).not.toContain('mcp__fixture__record')
    // The search loads only what plan mode offers.
    expect(toolResults(requests[1])[0].content).toEqual([{tool_name: 'mcp__fixture__lookup', type: 'tool_reference'}])

    const [looked, recorded] = toolResults(requests[2])
    expect(looked.is_error ?? false).toBe(false)
    expect(looked.text).toBe('answer = 42 (via stdio)')
    expect(recorded.is_error).toBe(true)
    expect(recorded.text).toContain('mcp__fixture__record is not available in plan mode')
    expect(existsSync(recordFile)).toBe(false)
    // A tool's own error comes back as an error result, and the session goes on.
    expect(toolResults(requests[3])[0]).toMatchObject({is_error: true, text: 'No fact named missing.'})

    // The server's stderr never reaches stdout: stdout is the plan path alone.
    expect(result.stdout).toBe(planPathIn(requests[0]) + '\n')
    expect(result.stdout + result.stderr).not.toContain('stderr noise')
  })

  it('a run needs a rule for the writing tool, and then uses it', async () => {
    userSettings({mcpServers: {fixture: stdioServer()}})
    const planPath = writePlan()
    expect((await wave(['approve', planPath, '--mode', 'acceptEdits'])).code).toBe(0)
    server.push(reply(toolUse('mcp__fixture__record', {line: 'no rule'})), reply('Could not.'))
    const denied = await wave(['run', planPath])
    expect(denied.code, denied.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).toContain('mcp__fixture__lookup')
    expect(toolNames(server.messageRequests[0])).not.toContain('mcp__fixture__record')
    expect(toolResults(server.messageRequests[1])[0].is_error).toBe(true)
    expect(existsSync(recordFile)).toBe(false)

    // A server-wide rule in the approval record: both tools, and the writing one really runs.
    expect((await wave(['approve', planPath, '--mode', 'acceptEdits', '--allow', 'mcp__fixture'])).code).toBe(0)
    server.push(reply(toolUse('mcp__fixture__record', {line: 'recorded by the run'}), toolUse('mcp__fixture__lookup', {key: 'wave'})), reply('Recorded.'))
    const allowed = await wave(['run', planPath, '--json'])
    expect(allowed.code, allowed.stderr).toBe(0)
    const first = server.messageRequests[2]
    expect(toolNames(first)).toEqual(expect.arrayContaining(['mcp__fixture__lookup', 'mcp__fixture__record']))
    expect(toolResults(server.messageRequests[3]).map((r) => [r.is_error ?? false, r.text])).toEqual([
      [false, 'recorded: recorded by the run'],
      [false, 'wave = plan, approve, run (via stdio)'],
    ])
    expect(readFileSync(recordFile, 'utf8')).toBe('recorded by the run\n')
    expect(JSON.parse(allowed.stdout)).toMatchObject({ok: true, result: 'Recorded.'})
  })

  it('a deny rule in the settings beats the approval record', async () => {
    userSettings({mcpServers: {fixture: stdioServer()}, permissions: {deny: ['mcp__fixture__record']}})
    const planPath = writePlan()
    expect((await wave(['approve', planPath, '--mode', 'bypassPermissions', '--allow', 'mcp__fixture'])).code).toBe(0)
    server.push(reply(toolUse('mcp__fixture__record', {line: 'x'})), reply('Denied.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).not.toContain('mcp__fixture__record')
    expect(existsSync(recordFile)).toBe(false)
  })

  it('a server that fails to start is reported and skipped, not fatal', async () => {
    userSettings({
      mcpServers: {
        broken: stdioServer({args: [FIXTURE, '--crash']}),
        fixture: stdioServer(),
        missing: {command: path.join(sandbox.root, 'no-such-server')},
      },
    })
    server.push(
      reply(toolUse('mcp__fixture__lookup', {key: 'colour'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Colour?'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(
      /Warning: MCP server "broken" failed to start \(.+\); its tools are not available\. Its stderr ended with: .*cannot start, giving up/,
    )
    expect(result.stderr).toMatch(/Warning: MCP server "missing" failed to start/)
    expect(result.stdout).toBe(planPathIn(server.messageRequests[0]) + '\n')
    expect(toolNames(server.messageRequests[0]).filter((name) => name.startsWith('mcp__'))).toEqual(['mcp__fixture__lookup'])
    expect(toolResults(server.messageRequests[1])[0].text).toBe('colour = blue (via stdio)')
  })

  it('wave tools lists MCP tools with their origin', async () => {
    userSettings({mcpServers: {fixture: stdioServer()}})
    const result = await wave(['tools', '--json'])
    expect(result.code, result.stderr).toBe(0)
    const tools = JSON.parse(result.stdout).tools.filter((tool: {origin: string}) => tool.origin === 'mcp')
    expect(tools).toEqual([
      expect.objectContaining({access: 'read', name: 'mcp__fixture__lookup', offered: {acceptEdits: true, bypassPermissions: true, default: true, plan: true}}),
      expect.objectContaining({
        access: 'execute',
        name: 'mcp__fixture__record',
        offered: {acceptEdits: false, bypassPermissions: true, default: false, plan: false},
      }),
    ])
  })
})

describe('MCP servers over streamable HTTP', () => {
  let http: {url: string; close(): Promise<void>}

  beforeEach(async () => {
    http = await startHttpFixture()
  })

  afterEach(async () => {
    await http.close()
  })

  it('are configured by url in trusted project settings, and used in plan mode', async () => {
    mkdirSync(path.join(sandbox.repo, '.wave'))
    writeFileSync(path.join(sandbox.repo, '.wave', 'settings.json'), JSON.stringify({mcpServers: {remote: {url: http.url}}}))
    userSettings({trustProjectSettings: true})
    server.push(
      reply(toolUse('mcp__remote__lookup', {key: 'answer'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Ask the remote server'])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).toContain('mcp__remote__lookup')
    expect(toolNames(server.messageRequests[0])).not.toContain('mcp__remote__record')
    expect(toolResults(server.messageRequests[1])[0]).toMatchObject({text: 'answer = 42 (via http)'})
    expect(toolResults(server.messageRequests[1])[0].is_error ?? false).toBe(false)
  })

  it('are not started from an untrusted project file', async () => {
    mkdirSync(path.join(sandbox.repo, '.wave'))
    writeFileSync(path.join(sandbox.repo, '.wave', 'settings.json'), JSON.stringify({mcpServers: {remote: {url: http.url}}}))
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Ask the remote server'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/mcpServers \(remote\) ignored, since project settings are not trusted/)
    expect(toolNames(server.messageRequests[0]).filter((name) => name.startsWith('mcp__'))).toEqual([])
  })

  it('a server that cannot be reached is reported and skipped', async () => {
    await http.close()
    userSettings({mcpServers: {remote: {url: http.url}}})
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'No server'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('Warning: MCP server "remote" failed to start')
    expect(toolNames(server.messageRequests[0]).some((name) => name.startsWith('mcp__'))).toBe(false)
  })
})
