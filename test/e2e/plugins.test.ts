/**
 * oclif plugins that contribute tools: the example plugin (examples/wave-plugin-wordcount) linked with
 * `wave plugins link`, its tools seen and called in plan and run sessions; invalid plugin tools rejected
 * with messages naming the plugin. Plugin data lives under the sandbox's HOME (~/.local/share/wave).
 * Each plugin is linked from a copy in the sandbox: a link points oclif (and npm, were it to install)
 * at the folder, and the project's own tree is left as the test found it.
 */
import {cpSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {PROJECT_ROOT, type Sandbox, snapshotTree} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, reply, toolNames, toolResults, toolUse} from '../support/messages-server.js'

const EXAMPLE = path.join(PROJECT_ROOT, 'examples', 'wave-plugin-wordcount')
const BAD = path.join(PROJECT_ROOT, 'test', 'fixtures', 'wave-plugin-bad')
const BROKEN = path.join(PROJECT_ROOT, 'test', 'fixtures', 'wave-plugin-broken')

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

// What the plugins' folders held before any test: each must hold the same after them all.
const untouched = Object.fromEntries([EXAMPLE, BAD, BROKEN].map((dir) => [dir, snapshotTree(dir)]))
afterAll(() => {
  for (const [dir, before] of Object.entries(untouched)) expect(snapshotTree(dir), dir).toEqual(before)
})

/** Links a copy of the plugin at `dir`, made in the sandbox, never the project's folder itself. */
async function link(dir: string) {
  const copy = path.join(sandbox.root, 'plugins', path.basename(dir))
  cpSync(dir, copy, {recursive: true})
  const result = await wave(['plugins', 'link', copy, '--no-install'])
  expect(result.code, result.stderr).toBe(0)
}

interface ListedTool {
  name: string
  access: string
  origin: string
  offered: Record<string, boolean>
}

async function listTools(): Promise<{tools: ListedTool[]; stderr: string}> {
  const result = await wave(['tools', '--json'])
  expect(result.code, result.stderr).toBe(0)
  return {stderr: result.stderr, tools: JSON.parse(result.stdout).tools}
}

describe('tools from oclif plugins', () => {
  it('links the example plugin and uses its tools in plan and run sessions', async () => {
    await link(EXAMPLE)
    const listed = await wave(['plugins'])
    expect(listed.stdout).toContain('wave-plugin-wordcount 0.1.0 (link)')

    const {stderr, tools} = await listTools()
    expect(stderr).toBe('')
    expect(tools.filter((tool) => tool.origin === 'plugin')).toEqual([
      expect.objectContaining({access: 'read', name: 'WordCount', offered: {acceptEdits: true, bypassPermissions: true, default: true, plan: true}}),
      expect.objectContaining({access: 'write', name: 'AppendNote', offered: {acceptEdits: true, bypassPermissions: true, default: false, plan: false}}),
    ])

    // Plan mode: the read tool is offered and runs, confined to the workspace; the write tool is not.
    server.push(
      reply(
        toolUse('WordCount', {file_path: 'README.md'}),
        toolUse('WordCount', {file_path: path.join(sandbox.root, 'outside.txt')}),
        toolUse('AppendNote', {file_path: 'NOTES.md', note: 'from plan mode'}),
      ),
      (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Note that the README has 3 lines.\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    writeFileSync(path.join(sandbox.root, 'outside.txt'), 'secret words here\n')
    const planned = await wave(['plan', '--task', 'Count the README'])
    expect(planned.code, planned.stderr).toBe(0)
    const offered = toolNames(server.messageRequests[0])
    expect(offered).toContain('WordCount')
    expect(offered).not.toContain('AppendNote')
    const wordCount = server.messageRequests[0].body.tools.find((tool: {name: string}) => tool.name === 'WordCount')
    expect(wordCount).toMatchObject({input_schema: {properties: {file_path: {type: 'string'}}, required: ['file_path'], type: 'object'}})
    const [counted, outside, note] = toolResults(server.messageRequests[1])
    expect(counted.is_error ?? false).toBe(false)
    expect(counted.text).toBe('README.md: 3 lines, 9 words, 43 characters')
    expect(outside.is_error).toBe(true)
    expect(outside.text).toContain('is outside the workspace')
    expect(note.is_error).toBe(true)
    expect(note.text).toContain('AppendNote is not available in plan mode')
    expect(existsSync(path.join(sandbox.repo, 'NOTES.md'))).toBe(false)

    // Run (acceptEdits): the write tool is offered and writes inside the workspace.
    const planPath = planned.stdout.trim()
    expect((await wave(['approve', planPath])).code).toBe(0)
    server.push(
      reply(toolUse('AppendNote', {file_path: 'NOTES.md', note: 'README has 3 lines'}), toolUse('WordCount', {file_path: 'src/util.ts'})),
      reply('Noted.'),
    )
    const ran = await wave(['run', planPath, '--json'])
    expect(ran.code, ran.stderr).toBe(0)
    const runRequests = server.messageRequests.slice(3)
    expect(toolNames(runRequests[0])).toEqual(expect.arrayContaining(['AppendNote', 'WordCount']))
    expect(toolResults(runRequests[1]).map((r) => r.text)).toEqual(['Appended a note to NOTES.md.', 'src/util.ts: 3 lines, 10 words, 73 characters'])
    expect(readFileSync(path.join(sandbox.repo, 'NOTES.md'), 'utf8')).toBe('README has 3 lines\n')
    expect(JSON.parse(ran.stdout)).toMatchObject({filesChanged: ['NOTES.md'], result: 'Noted.'})

    // Uninstalled, its tools are gone.
    expect((await wave(['plugins', 'uninstall', 'wave-plugin-wordcount'])).code).toBe(0)
    expect((await listTools()).tools.some((tool) => tool.origin === 'plugin')).toBe(false)
  })

  it('rejects invalid plugin tools with a message naming the plugin, and keeps the valid ones', async () => {
    await link(BAD)
    await link(BROKEN)
    const {stderr, tools} = await listTools()
    const warnings = stderr.trim().split('\n')
    expect(warnings).toEqual(
      expect.arrayContaining([
        'Warning: Plugin "wave-plugin-bad": tool "Shout" rejected: no valid access class (got "admin"); expected one of read, write, execute, network.',
        'Warning: Plugin "wave-plugin-bad": tool "Mute" rejected: no valid access class (none given); expected one of read, write, execute, network.',
        'Warning: Plugin "wave-plugin-bad": tool "Steer" rejected: no valid access class (got "control"); expected one of read, write, execute, network.',
        'Warning: Plugin "wave-plugin-bad": tool "Read" rejected: the name Read is already taken.',
        'Warning: Plugin "wave-plugin-bad": tool "Raw" rejected: input must be a zod object schema: build it with the z that wave passes to the wave:tools hook.',
        'Warning: Plugin "wave-plugin-broken": its wave:tools hook failed (the broken plugin could not start); it contributes no tools.',
      ]),
    )
    expect(warnings).toHaveLength(6)
    expect(tools.filter((tool) => tool.origin === 'plugin').map((tool) => tool.name)).toEqual(['Echo'])
    expect(tools.find((tool) => tool.name === 'Read')).toMatchObject({origin: 'builtin'})

    // A session goes on with what is valid; stdout stays the plan path alone.
    server.push(
      reply(toolUse('Echo', {text: 'hello from a plugin'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const planned = await wave(['plan', '--task', 'Echo'])
    expect(planned.code, planned.stderr).toBe(0)
    expect(planned.stdout).toBe(planPathIn(server.messageRequests[0]) + '\n')
    expect(planned.stderr).toContain('Plugin "wave-plugin-bad": tool "Shout" rejected: no valid access class')
    expect(toolResults(server.messageRequests[1])[0].text).toBe('hello from a plugin')
  })

  it('ignores a plugin the settings turn off', async () => {
    await link(EXAMPLE)
    mkdirSync(path.join(sandbox.repo, '.wave'))
    writeFileSync(path.join(sandbox.repo, '.wave', 'settings.json'), JSON.stringify({plugins: {'wave-plugin-wordcount': false}}))
    const {tools} = await listTools()
    expect(tools.some((tool) => tool.origin === 'plugin')).toBe(false)
  })
})
