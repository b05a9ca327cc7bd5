import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, reply, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

/** A two-turn planning script: read a file (and one denied call), write the plan, finish. */
function scriptPlan() {
  server.push(
    reply('Reading.', toolUse('Read', {file_path: 'src/app.ts'}), toolUse('Edit', {file_path: 'src/app.ts', new_string: 'b', old_string: 'a'})),
    (request) => reply(toolUse('Write', {content: '# Plan\n\nDo the thing.\n', file_path: planPathIn(request)})),
    reply('Plan ready.'),
  )
}

describe('output formats', () => {
  it('stream-json: one event per line, in order, ending with the result', async () => {
    scriptPlan()
    const result = await wave(['plan', '--task', 'Stream it', '--output-format', 'stream-json'])
    expect(result.code).toBe(0)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    for (const event of events) expect(event.version).toBe(1)
    const types = events.map((e) => e.type)
    expect(types[0]).toBe('session_start')
    expect(types.at(-1)).toBe('result')
    expect(events[0]).toMatchObject({command: 'plan', mode: 'plan', model: expect.any(String)})
    expect(events[0].planPath).toMatch(/\.md$/)
    expect(types).toEqual([
      'session_start',
      'turn_start',
      'usage',
      'assistant',
      'tool_call',
      'tool_result',
      'tool_call',
      'tool_result',
      'turn_start',
      'usage',
      'tool_call',
      'tool_result',
      'turn_start',
      'usage',
      'assistant',
      'result',
    ])
    const results = events.filter((e) => e.type === 'tool_result')
    expect(results.map((e) => [e.name, e.denied])).toEqual([
      ['Read', false],
      ['Edit', true],
      ['Write', false],
    ])
    const final = events.at(-1)
    expect(final).toMatchObject({ok: true, planPath: events[0].planPath, turns: 3})
    expect(final.usage.input_tokens).toBeGreaterThan(0)
  })

  it('text: stdout is the path alone while progress goes to stderr', async () => {
    scriptPlan()
    const result = await wave(['plan', '--task', 'Progress'])
    expect(result.code).toBe(0)
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('→ Read src/app.ts')
    expect(result.stderr).toMatch(/turn 1 · plan mode/)
    expect(result.stderr).toMatch(/wave plan [a-z]+-[a-z]+/)
    expect(result.stderr).toContain('✗ denied')
    expect(result.stderr).toMatch(/tokens: \d+ in/)
  })

  it('--quiet prints no progress', async () => {
    scriptPlan()
    const result = await wave(['plan', '--task', 'Quiet', '--quiet'])
    expect(result.code).toBe(0)
    expect(result.stderr).toBe('')
  })

  it('--output-format json equals --json', async () => {
    scriptPlan()
    const result = await wave(['plan', '--task', 'Json', '--output-format', 'json'])
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ok: true, turns: 3, version: 1})
  })

  it('an error in json mode is still one JSON object and the design exit code', async () => {
    const result = await wave(['plan', '--task', 'x', '--json'], {ANTHROPIC_API_KEY: undefined})
    expect(result.code).toBe(2)
    expect(JSON.parse(result.stdout)).toMatchObject({error: {exitCode: 2}, ok: false, version: 1})
  })

  it('appends a Markdown summary when GITHUB_STEP_SUMMARY is set', async () => {
    scriptPlan()
    const summary = path.join(sandbox.root, 'summary.md')
    writeFileSync(summary, '# Earlier step\n')
    const result = await wave(['plan', '--task', 'Summarise'], {GITHUB_STEP_SUMMARY: summary})
    expect(result.code).toBe(0)
    const text = readFileSync(summary, 'utf8')
    expect(text.startsWith('# Earlier step\n')).toBe(true)
    expect(text).toContain('## wave plan: ' + path.basename(result.stdout.trim(), '.md'))
    expect(text).toContain('Do the thing.')
    expect(text).toMatch(/Tokens \| \d+ in/)
  })
})

describe('wave plans and wave tools', () => {
  it('lists plans newest first with their status', async () => {
    scriptPlan()
    const first = (await wave(['plan', '--task', 'First plan'])).stdout.trim()
    scriptPlan()
    const second = (await wave(['plan', '--task', 'Second plan'])).stdout.trim()
    expect((await wave(['approve', first])).code).toBe(0)

    const listing = await wave(['plans', '--json'])
    expect(listing.code).toBe(0)
    const {plans, version} = JSON.parse(listing.stdout)
    expect(version).toBe(1)
    expect(plans.map((p: {path: string}) => p.path)).toEqual([second, first])
    expect(plans[0]).toMatchObject({status: 'draft', task: 'Second plan', workspace: sandbox.repo})
    expect(plans[1]).toMatchObject({status: 'approved', task: 'First plan'})

    const text = await wave(['plans'])
    expect(text.stdout.split('\n')[0]).toContain(path.basename(second, '.md'))
  })

  it('shows which tools a mode offers', async () => {
    const result = await wave(['tools', '--mode', 'plan', '--json'])
    expect(result.code).toBe(0)
    const {tools} = JSON.parse(result.stdout)
    const offered = tools.filter((t: {offered: {plan: boolean}}) => t.offered.plan).map((t: {name: string}) => t.name)
    // Plan mode's Bash runs in a throwaway sandbox, which starts here; TaskOutput and TaskStop go with it.
    expect(offered).toEqual([
      'Read',
      'Glob',
      'Grep',
      'LS',
      'Write',
      'Edit',
      'Bash',
      'TaskOutput',
      'TaskStop',
      'TodoWrite',
      'AskUserQuestion',
      'ExitPlanMode',
      'Agent',
      'ToolSearch',
    ])
    expect(tools.find((t: {name: string}) => t.name === 'Bash')).toMatchObject({access: 'execute', deferred: false, offered: {plan: true}})
    expect(tools.find((t: {name: string}) => t.name === 'TaskOutput')).toMatchObject({access: 'read', deferred: true, offered: {plan: true}})
    // The rarely used tools are deferred (loaded by ToolSearch); ExitPlanMode is not: plan mode ends without a search.
    expect(tools.filter((t: {deferred: boolean}) => t.deferred).map((t: {name: string}) => t.name)).toEqual([
      'LS',
      'TaskOutput',
      'TaskStop',
      'WebFetch',
      'TodoWrite',
      'AskUserQuestion',
      'EnterPlanMode',
    ])

    const text = await wave(['tools'])
    expect(text.stdout).toMatch(/^TOOL\s+ACCESS\s+DEFERRED\s+DEFAULT\s+/m)
    expect(text.stdout).toMatch(/^Bash\s+execute\s+-\s+with a rule\s+with a rule\s+yes\s+yes$/m)
    expect(text.stdout).toMatch(/^TaskOutput\s+read\s+yes\s+with a rule\s+with a rule\s+yes\s+yes$/m)
    expect(text.stdout).toMatch(/^TaskStop\s+execute\s+yes\s+with a rule\s+with a rule\s+yes\s+yes$/m)
    expect(text.stdout).toMatch(/^TodoWrite\s+control\s+yes\s+yes\s+yes\s+yes\s+yes$/m)
    expect(text.stdout).toMatch(/^ToolSearch\s+read\s+-\s+yes\s+yes\s+yes\s+yes$/m)
  })

  it('rejects an unknown mode with exit 2', async () => {
    expect((await wave(['tools', '--mode', 'yolo'])).code).toBe(2)
  })
})
