/**
 * What the model is told: every kind of session's first request carries the environment block and its
 * kind's instructions (the plan template, the reviewer's feedback, the execution guidance), and
 * `wave prompt` prints what the scripted server then receives, byte for byte; with `--json-schema` too,
 * as `wave tools` lists StructuredOutput as such a session is offered it.
 */
import {writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {builtinRegistry} from '../../src/tools/registry.js'
import {gitCommitAll, type Sandbox, writePlanFile} from '../support/cli.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, systemText, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

const PLAN = '# Plan: rename greet\n\n1. Rename greet to welcome in src/util.ts and src/app.ts.\n'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

interface Preview {
  kind: string
  mode: string
  system: string
  tools: Array<{name: string}>
  firstMessage: string | null
}

async function preview(...args: string[]): Promise<Preview> {
  const result = await wave(['prompt', ...args, '--json'])
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout)
}

/** The tool definitions as sent, less the cache breakpoint the loop puts on the last one. */
function toolsSent(request: RecordedRequest): string {
  return JSON.stringify(request.body.tools.map(({cache_control: _breakpoint, ...tool}: {cache_control?: unknown}) => tool))
}

function firstMessage(request: RecordedRequest): string {
  const content = request.body.messages[0].content
  return typeof content === 'string' ? content : content.map((block: {text?: string}) => block.text ?? '').join('')
}

/** The environment block as this sandbox's first request must carry it: today, the branch, the change made. */
function expectEnvironment(system: string): void {
  const today = new Date()
  const date = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`
  expect(system).toContain(`# Environment\nDate: ${date}\n`)
  expect(system).toContain(`Workspace: ${sandbox.repo}\n`)
  expect(system).toContain('Git branch: main\nGit status (1 changed):\n   M README.md\nRecent commits:\n  add a changelog\n  initial commit\n')
  expect(system).toMatch(/Top level: \.gitignore CHANGELOG\.md README\.md ignored\/ src\/$/m)
}

/** A repository with history and one uncommitted change, as the environment block reports it. */
function changeTheRepository(): void {
  writeFileSync(path.join(sandbox.repo, 'CHANGELOG.md'), '# Changelog\n')
  gitCommitAll(sandbox.repo, 'add a changelog')
  writeFileSync(path.join(sandbox.repo, 'README.md'), '# demo, changed\n')
}

describe('what the model is told', () => {
  it('plan: the environment and the plan template; wave prompt prints the same system prompt and tools', async () => {
    changeTheRepository()
    const printed = await preview('--mode', 'plan', '--task', 'Rename greet to welcome')
    server.push((request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Rename greet to welcome'])
    expect(result.code, result.stderr).toBe(0)

    const [first] = server.messageRequests
    const planPath = planPathIn(first)
    const placeholder = path.join(sandbox.plansDir, '<name>.md')
    // The plan's name is drawn when the session starts: the only difference there may be.
    expect(systemText(first)).toBe(printed.system.replaceAll(placeholder, planPath))
    expect(toolsSent(first)).toBe(JSON.stringify(printed.tools))
    expect(firstMessage(first)).toBe(printed.firstMessage!.replaceAll(placeholder, planPath))
    expect(printed).toMatchObject({kind: 'plan', mode: 'plan'})

    const system = systemText(first)
    expectEnvironment(system)
    for (const section of [
      'Goal:',
      'Findings:',
      'Changes: file by file',
      'New files:',
      'Scope:',
      'Verification:',
      'Risks:',
      'Open questions:',
      'Out of scope:',
    ]) {
      expect(system).toContain(`\n- ${section}`)
    }

    // The contract sections, in the shapes wave reads (src/plans/contract.ts).
    expect(system).toContain('paths or globs the change may create, change or delete')
    expect(system).toContain('one per bullet, each in backticks (e.g. `npm test`). wave runs them itself, in a sandbox')
    expect(system).toContain('seeing only the task and the plan')
    // The environment goes before the reminder, which still ends the prompt word for word.
    expect(system.indexOf('# Environment')).toBeLessThan(system.indexOf('## Plan File Info:'))
    expect(system).toMatch(
      /## Plan File Info:\nNo plan file exists yet\. You should create your plan at \S+ using the Write tool if you need to\.\nYou should build your plan incrementally by writing to or editing this file\. NOTE that this is the only file you are allowed to edit - other than this you are only allowed to take READ-ONLY actions\.$/,
    )

    // The system prompt is the same on every turn but for the reminder's first line, once the plan exists.
    const [, second] = server.messageRequests
    expect(systemText(second).split('## Plan File Info:')[0]).toBe(system.split('## Plan File Info:')[0])
  })

  it("revise: the environment, the template, and the reviewer's feedback last in the first message", async () => {
    server.push((request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})), reply('Planned.'))
    const made = (await wave(['plan', '--task', 'Rename greet to welcome'])).stdout.trim()
    expect((await wave(['approve', made, '--request-changes', 'Also rename it in README.md.'])).code).toBe(0)
    changeTheRepository()

    const before = server.messageRequests.length
    server.push(reply('Revised.'))
    const revised = await wave(['plan', '--revise', made])
    expect(revised.code, revised.stderr).toBe(0)
    const first = server.messageRequests[before]
    const system = systemText(first)
    expectEnvironment(system)
    expect(system).toContain('\n- Verification:')
    expect(system).toContain(`A plan file already exists at ${made}.`)
    const opening = firstMessage(first)
    expect(opening.startsWith('Task:\nRename greet to welcome\n\n')).toBe(true)
    expect(opening).toContain(`the plan at ${made}`)
    expect(opening).toContain('addresses every point of the feedback below')
    expect(opening.endsWith("Reviewer's feedback:\nAlso rename it in README.md.")).toBe(true)
  })

  it('run: the environment and the execution guidance; wave prompt prints the same system prompt and tools', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    const approval = await wave(['approve', planPath, '--mode', 'bypassPermissions', '--allow', 'Bash(npm test:*)'])
    expect(approval.code, approval.stderr).toBe(0)
    changeTheRepository()

    const printed = await preview('--mode', 'run', '--permission-mode', 'bypassPermissions', '--allow', 'Bash(npm test:*)')
    server.push(reply('Done.'))
    const result = await wave(['run', planPath, '--allow-stale'])
    expect(result.code, result.stderr).toBe(0)

    const [first] = server.messageRequests
    expect(systemText(first)).toBe(printed.system)
    expect(toolsSent(first)).toBe(JSON.stringify(printed.tools))
    expect(printed).toMatchObject({firstMessage: null, kind: 'run', mode: 'bypassPermissions'})

    const system = systemText(first)
    expectEnvironment(system)
    expect(system).toContain('Permission mode bypassPermissions')
    expect(system).toContain('Allow rules: Bash(npm test:*).')
    expect(system).toContain('Follow the plan step by step.')
    expect(system).toContain('never claim a check that did not run')
    expect(system).toContain('reply with a summary: the files changed; the checks run, with their results')
    expect(system).toContain('deviations from the plan')
    expect(system).not.toContain('Plan File Info')
    expect(firstMessage(first)).toContain(PLAN.trimEnd())
  })

  it('run --task: the environment and the guidance; wave prompt prints the same, in text as in JSON', async () => {
    changeTheRepository()
    const printed = await preview('--mode', 'task', '--task', 'Rename greet to welcome')
    const text = await wave(['prompt', '--mode', 'task', '--task', 'Rename greet to welcome'])
    expect(text.code, text.stderr).toBe(0)
    server.push(reply('Done.'))
    const result = await wave(['run', '--task', 'Rename greet to welcome'])
    expect(result.code, result.stderr).toBe(0)

    const [first] = server.messageRequests
    expect(systemText(first)).toBe(printed.system)
    expect(toolsSent(first)).toBe(JSON.stringify(printed.tools))
    expect(firstMessage(first)).toBe(printed.firstMessage)
    expect(printed).toMatchObject({kind: 'task', mode: 'acceptEdits'})
    expect(text.stdout).toContain(`=====\n\n${printed.system}\n\n===== tools: ${printed.tools.map((tool) => tool.name).join(', ')} =====`)
    expect(text.stdout).toContain(`===== first message =====\n\n${printed.firstMessage}\n`)

    const system = systemText(first)
    expectEnvironment(system)
    expect(system).toContain('call EnterPlanMode first')
    expect(system).toContain('Explore first')
    expect(system).toContain('never claim a check that did not run')
    expect(printed.tools.map((tool) => tool.name)).toContain('EnterPlanMode')
  })

  it('wave tools --verbose prints every description whole, with its input schema', async () => {
    const result = await wave(['tools', '--verbose', '--json'])
    expect(result.code, result.stderr).toBe(0)
    const {tools} = JSON.parse(result.stdout)
    const fetch = tools.find((tool: {name: string}) => tool.name === 'WebFetch')
    expect(fetch.description).toContain('\n- At most 5 redirects')
    expect(fetch.input_schema).toMatchObject({properties: {url: {type: 'string'}}, required: ['url'], type: 'object'})

    // The build converted the built-ins' schemas (scripts/bundle.js): what it sends is what the sources make.
    const registry = builtinRegistry()
    const built = Object.fromEntries(tools.map((tool: {name: string; input_schema: unknown}) => [tool.name, tool.input_schema]))
    for (const tool of registry.tools) expect(built[tool.name], tool.name).toEqual(registry.apiTool(tool).input_schema)

    const text = await wave(['tools', '--verbose'])
    expect(text.stdout).toContain(
      `----- Edit (write, builtin) -----\n${tools.find((tool: {name: string}) => tool.name === 'Edit').description}\n\ninput_schema: {`,
    )
  })
})

/** A schema for the session's result, as `--json-schema` takes it. */
const SCHEMA = {properties: {count: {type: 'integer'}}, required: ['count'], type: 'object'}

describe('wave prompt and wave tools with --json-schema: what such a session sends and offers', () => {
  it('plan: the same system prompt and tools, StructuredOutput among them with the schema; without it, none (control)', async () => {
    const printed = await preview('--mode', 'plan', '--task', 'Count the files', '--json-schema', JSON.stringify(SCHEMA))
    const without = await preview('--mode', 'plan', '--task', 'Count the files')
    server.push(
      (request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})),
      reply(toolUse('StructuredOutput', {count: 3}), toolUse('ExitPlanMode', {})),
    )
    const result = await wave(['plan', '--task', 'Count the files', '--json-schema', JSON.stringify(SCHEMA)])
    expect(result.code, result.stderr).toBe(0)

    const [first] = server.messageRequests
    const placeholder = path.join(sandbox.plansDir, '<name>.md')
    expect(systemText(first)).toBe(printed.system.replaceAll(placeholder, planPathIn(first)))
    expect(toolsSent(first)).toBe(JSON.stringify(printed.tools))
    expect(printed.tools.find((tool) => tool.name === 'StructuredOutput')).toMatchObject({input_schema: SCHEMA})
    expect(without.tools.map((tool) => tool.name)).not.toContain('StructuredOutput')
  })

  it('run --task from @FILE: the same tools; wave tools --json-schema lists StructuredOutput as sent, offered in every mode', async () => {
    const file = path.join(sandbox.home, 'schema.json')
    writeFileSync(file, JSON.stringify(SCHEMA, null, 2))
    const printed = await preview('--mode', 'task', '--task', 'Count the files', '--json-schema', `@${file}`)
    server.push(reply(toolUse('StructuredOutput', {count: 3})), reply('Counted.'))
    const result = await wave(['run', '--task', 'Count the files', '--json-schema', `@${file}`])
    expect(result.code, result.stderr).toBe(0)
    const [first] = server.messageRequests
    expect(systemText(first)).toBe(printed.system)
    expect(toolsSent(first)).toBe(JSON.stringify(printed.tools))

    const listed = await wave(['tools', '--json-schema', `@${file}`, '--verbose', '--json'])
    expect(listed.code, listed.stderr).toBe(0)
    const sent = JSON.parse(toolsSent(first)).find((tool: {name: string}) => tool.name === 'StructuredOutput')
    const structured = JSON.parse(listed.stdout).tools.find((tool: {name: string}) => tool.name === 'StructuredOutput')
    expect(structured).toMatchObject({
      description: sent.description,
      input_schema: sent.input_schema,
      offers: {acceptEdits: 'yes', bypassPermissions: 'yes', default: 'yes', plan: 'yes'},
    })
    expect((await wave(['tools', '--json-schema', JSON.stringify(SCHEMA)])).stdout).toMatch(/^StructuredOutput\s+control\s+-\s+yes\s+yes\s+yes\s+yes$/m)
    // Control: without the flag, no session is offered it, and wave tools does not list it.
    expect(JSON.parse((await wave(['tools', '--json'])).stdout).tools.map((tool: {name: string}) => tool.name)).not.toContain('StructuredOutput')
  })

  it('an invalid schema is exit 2 in both, as in a session, before anything is listed', async () => {
    for (const command of [['prompt', '--mode', 'plan'], ['tools']]) {
      const result = await wave([...command, '--json-schema', '{"type":"string"}'])
      expect(result.code, command.join(' ')).toBe(2)
      expect(result.stderr).toMatch(/--json-schema/)
      expect(result.stdout).toBe('')
    }
  })
})
