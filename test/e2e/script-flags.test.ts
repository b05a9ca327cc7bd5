/**
 * The flags scripts pass to Claude Code, taken by wave (issue 38): deny rules (`--deny`,
 * `--disallowed-tools`/`--disallowedTools`), allow rules (`--allowed-tools`/`--allowedTools`) where a
 * command takes `--allow` and refused on an approved plan's run, `--mcp-config` and
 * `--strict-mcp-config`, `--fallback-model` after the model stays overloaded, and `ANTHROPIC_MODEL` with
 * Claude Code's aliases resolved from the API's model list, or from the table without it.
 */
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'

import {readJson, runWave, type Sandbox, writePlanFile} from '../support/cli.js'
import {fault, type MessagesServer, planPathIn, reply, startMessagesServer, toolNames, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-server.mjs', import.meta.url))

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const writePlan = (request: Parameters<typeof planPathIn>[0]) => reply(toolUse('Write', {content: '# Plan\n\n1. Look.\n', file_path: planPathIn(request)}))

describe('deny rules from the command line', () => {
  for (const spelling of ['--disallowedTools', '--disallowed-tools', '--deny']) {
    it(`${spelling} denies a tool plan mode would allow; what no rule names still runs`, async () => {
      server.push(
        reply(toolUse('Grep', {pattern: 'greet'}), toolUse('Read', {file_path: 'src/util.ts'}), toolUse('LS', {path: '.'})),
        writePlan,
        reply('Done.'),
      )
      const result = await wave(['plan', '--task', 'Look', spelling, spelling === '--deny' ? 'Grep' : 'WebFetch,Grep'])
      expect(result.code, result.stderr).toBe(0)
      expect(toolNames(server.messageRequests[0])).not.toContain('Grep')
      const results = toolResults(server.messageRequests[1])
      expect(results[0]).toMatchObject({is_error: true})
      expect(results[0].text).toContain('Permission denied')
      // Control: Read and LS, named by no rule, run.
      expect(results.slice(1).map((r) => r.is_error ?? false)).toEqual([false, false])
    })
  }
})

describe('allow rules from the command line', () => {
  for (const spelling of ['--allowedTools', '--allowed-tools']) {
    it(`${spelling} allows a command for run --task, as --allow does; without it the command is denied`, async () => {
      const marker = path.join(sandbox.repo, 'ran.txt')
      server.push(reply(toolUse('Bash', {command: 'touch ran.txt'})), reply('Done.'))
      const denied = await wave(['run', '--task', 'Write a marker'])
      expect(denied.code, denied.stderr).toBe(0)
      expect(toolResults(server.messageRequests[1])[0]).toMatchObject({is_error: true})

      expect(existsSync(marker)).toBe(false)
      server.push(reply(toolUse('Bash', {command: 'touch ran.txt'})), reply('Done.'))
      const allowed = await wave(['run', '--task', 'Write a marker', spelling, 'Bash(touch ran.txt) Read'])
      expect(allowed.code, allowed.stderr).toBe(0)
      expect(toolResults(server.messageRequests[3])[0].is_error ?? false).toBe(false)
      expect(existsSync(marker)).toBe(true)
    })
  }

  it('are refused, with the reason, on the run of an approved plan: before any request', async () => {
    const planPath = writePlanFile(sandbox, '# Plan\n\n1. Do it.\n')
    expect((await wave(['approve', planPath, '--fallback-model', 'claude-opus-5-5'])).code).toBe(0)
    // The fallback is part of what was approved: the record's model section.
    expect(readJson(planPath.replace(/\.md$/, '.approval.json')).model).toEqual({fallbackModel: 'claude-opus-5-5'})
    for (const [flag, value] of [
      ['--allowedTools', 'Bash'],
      ['--allowed-tools', 'Bash'],
      ['--mcp-config', '{"mcpServers": {}}'],
    ]) {
      const result = await wave(['run', planPath, flag, value])
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/would widen what the approved plan may do .*which only its approval record decides/)
    }

    expect(server.messageRequests).toHaveLength(0)
  })

  it('plan mode takes them only as research rules, as --allow', async () => {
    const result = await wave(['plan', '--task', 'Look', '--allowedTools', 'Bash(ls:*)'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--allow Bash(ls:*): plan mode takes no rules but WebFetch ones')
  })
})

describe('--mcp-config', () => {
  const config = (name: string) => JSON.stringify({mcpServers: {[name]: {args: [FIXTURE], command: process.execPath}}})

  it("starts Claude Code's server file beside the settings' servers; --strict-mcp-config starts only it", async () => {
    mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({mcpServers: {fromsettings: {args: [FIXTURE], command: process.execPath}}}))
    const file = path.join(sandbox.root, 'mcp.json')
    writeFileSync(file, config('fromflag'))

    server.push(writePlan, reply('Done.'))
    expect((await wave(['plan', '--task', 'Look', '--mcp-config', file])).code).toBe(0)
    const both = toolNames(server.messageRequests[0])
    expect(both).toContain('mcp__fromflag__lookup')
    expect(both).toContain('mcp__fromsettings__lookup')

    server.push(writePlan, reply('Done.'))
    expect((await wave(['plan', '--task', 'Look', '--mcp-config', config('inline'), '--strict-mcp-config'])).code).toBe(0)
    const strict = toolNames(server.messageRequests[2])
    expect(strict).toContain('mcp__inline__lookup')
    expect(strict.filter((name) => name.startsWith('mcp__fromsettings'))).toEqual([])
  })

  it('a malformed file is one line naming it, exit 2', async () => {
    const result = await wave(['plan', '--task', 'Look', '--mcp-config', '{"servers": {}}'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^Error: Invalid --mcp-config JSON: .*/m)
  })
})

describe('the model', () => {
  it('ANTHROPIC_MODEL=haiku is the newest haiku of the API’s model list', async () => {
    server.push(writePlan, reply('Done.'))
    const result = await wave(['plan', '--task', 'Look'], {ANTHROPIC_MODEL: 'haiku'})
    expect(result.code, result.stderr).toBe(0)
    // The scripted API lists claude-haiku-4-5 only: the list, not the table (claude-haiku-5-5), decides.
    expect(server.messageRequests.map((request) => request.body.model)).toEqual(['claude-haiku-4-5', 'claude-haiku-4-5'])
    expect(server.modelRequests[0].path).toMatch(/^\/v1\/models(\?|$)/)
  })

  it('without the list, the table’s; --model wins over ANTHROPIC_MODEL', async () => {
    const bare = await startMessagesServer([writePlan, reply('Done.')], {models: []})
    try {
      const result = await runWave(['plan', '--task', 'Look'], {cwd: sandbox.repo, env: {ANTHROPIC_MODEL: 'opus'}, home: sandbox.home, server: bare})
      expect(result.code, result.stderr).toBe(0)
      expect(bare.messageRequests[0].body.model).toBe('claude-opus-5-5')
    } finally {
      await bare.close()
    }

    server.push(writePlan, reply('Done.'))
    expect((await wave(['plan', '--task', 'Look', '--model', 'claude-opus-4-5'], {ANTHROPIC_MODEL: 'haiku'})).code).toBe(0)
    expect(server.messageRequests[0].body.model).toBe('claude-opus-4-5')
  })

  it('--fallback-model takes over once the model stays overloaded after its retries, and the result says so', async () => {
    server.push(fault(529), fault(529), writePlan, reply('Done.'))
    const result = await wave(['plan', '--task', 'Look', '--fallback-model', 'claude-opus-5-5', '--json'], {WAVE_API_RETRIES: '1'})
    expect(result.code, result.stderr).toBe(0)
    expect(server.messageRequests.map((request) => request.body.model)).toEqual([
      'claude-sonnet-5-5',
      'claude-sonnet-5-5',
      'claude-opus-5-5',
      'claude-opus-5-5',
    ])
    expect(JSON.parse(result.stdout)).toMatchObject({fallbackModel: 'claude-opus-5-5', ok: true})
    expect(result.stderr).toContain('claude-sonnet-5-5 is overloaded or unavailable: going on with --fallback-model claude-opus-5-5')
  })

  it('control: without --fallback-model the overloaded model fails the session', async () => {
    server.push(fault(529), fault(529))
    const result = await wave(['plan', '--task', 'Look'], {WAVE_API_RETRIES: '1'})
    expect(result.code).toBe(1)
    expect(server.messageRequests.map((request) => request.body.model)).toEqual(['claude-sonnet-5-5', 'claude-sonnet-5-5'])
  })
})
