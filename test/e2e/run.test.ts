import {copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {gitCommitAll, gitHead, readJson, type Sandbox, SANDBOX_FILES, sha256, snapshotTree, TEST_API_KEY, writePlanFile} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, type RecordedRequest, reply, systemText, toolNames, toolResults, toolUse} from '../support/messages-server.js'

const PLAN =
  '# Plan: add a farewell\n\n1. Create src/farewell.ts exporting farewell(name).\n2. Say "hi" instead of "hello" in src/util.ts.\n3. Touch from-bash.txt to show a command ran.\n'
const FAREWELL = 'export function farewell(name: string): string {\n  return `bye ${name}`\n}\n'
const READ_TOOLS = ['Glob', 'Grep', 'LS', 'Read']
/** What a run with Bash allowed is offered, sorted: the full set, never the plan-mode controls. */
const RUN_TOOLS = ['Agent', 'AskUserQuestion', 'Bash', 'Edit', 'Glob', 'Grep', 'LS', 'Read', 'TaskOutput', 'TaskStop', 'TodoWrite', 'ToolSearch', 'Write']

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const sidecar = (planPath: string, suffix: string) => planPath.replace(/\.md$/, suffix)

const writePlan = (content: string | Uint8Array = PLAN, name?: string) => writePlanFile(sandbox, content, name)

/** A record written by hand, as another tool following the README's schema would. */
function writeRecord(planPath: string, record: Record<string, unknown>, file = sidecar(planPath, '.approval.json')): string {
  writeFileSync(file, JSON.stringify(record, null, 2))
  return file
}

/** Approve with `wave approve`, asserting it worked. */
async function approve(planPath: string, ...flags: string[]) {
  const result = await wave(['approve', planPath, ...flags])
  expect(result.code, result.stderr).toBe(0)
  return result.stdout.trim()
}

/** The text of a message as sent (string content, or its text blocks joined). */
function messageText(message: {content: unknown}): string {
  if (typeof message.content === 'string') return message.content
  return (message.content as Array<{type: string; text?: string}>)
    .filter((b) => b.type === 'text')
    .map((b) => b.text)
    .join('\n')
}

/** The requests of the run: those after the first `skip` (a planning session's). */
const runRequests = (skip = 0): RecordedRequest[] => server.messageRequests.slice(skip)

describe('wave plan → wave approve → wave run', () => {
  it('executes the approved plan in a fresh conversation: files written, edited, a command run', async () => {
    server.push(
      (request) => reply(toolUse('Write', {content: PLAN, file_path: /create your plan at (\/\S+?) using/.exec(systemText(request))![1]})),
      reply('Planned.'),
    )
    const planned = await wave(['plan', '--task', 'Add a farewell function'])
    expect(planned.code, planned.stderr).toBe(0)
    const planPath = planned.stdout.trim()
    const planning = server.messageRequests.length

    const recordPath = await approve(planPath, '--allow', 'Bash(touch:*)', '--approver', 'ci-bot')
    expect(recordPath).toBe(sidecar(planPath, '.approval.json'))
    expect(readJson(sidecar(planPath, '.state.json')).status).toBe('approved')

    server.push(
      reply(
        'Starting.',
        toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'}),
        toolUse('Edit', {file_path: 'src/util.ts', new_string: 'hi ${name}', old_string: 'hello ${name}'}),
      ),
      reply(toolUse('Bash', {command: 'touch from-bash.txt'})),
      reply('Added src/farewell.ts, edited src/util.ts, and touched from-bash.txt.'),
    )
    const result = await wave(['run', planPath])

    expect(result.stderr).not.toMatch(/Error/)
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('Added src/farewell.ts, edited src/util.ts, and touched from-bash.txt.\n')

    // What the run did, on disk.
    expect(readFileSync(path.join(sandbox.repo, 'src/farewell.ts'), 'utf8')).toBe(FAREWELL)
    expect(readFileSync(path.join(sandbox.repo, 'src/util.ts'), 'utf8')).toBe(SANDBOX_FILES['src/util.ts'].replace('hello ${name}', 'hi ${name}'))
    expect(existsSync(path.join(sandbox.repo, 'from-bash.txt'))).toBe(true)

    // A new conversation: the first request holds exactly one message, with the task and the plan.
    const requests = runRequests(planning)
    expect(requests).toHaveLength(3)
    const first = requests[0].body.messages
    expect(first).toHaveLength(1)
    expect(first[0].role).toBe('user')
    expect(messageText(first[0])).toContain(PLAN.trimEnd())
    expect(messageText(first[0])).toContain('Add a farewell function')
    expect(JSON.stringify(first)).not.toContain('Planned.')
    expect(systemText(requests[0])).not.toContain('Plan File Info')
    expect(systemText(requests[0])).toContain('acceptEdits')

    // Tools: the full set filtered by mode and rules, never the plan-mode controls.
    expect(toolNames(requests[0]).sort()).toEqual(RUN_TOOLS)
    expect(toolResults(requests[1]).map((r) => r.is_error ?? false)).toEqual([false, false])
    expect(toolResults(requests[2])[0].is_error ?? false).toBe(false)

    // What happened is recorded beside the plan.
    const state = readJson(sidecar(planPath, '.state.json'))
    expect(state.status).toBe('ran')
    expect(state.runs).toHaveLength(1)
    const run = state.runs[0]
    expect(run).toMatchObject({exitCode: 0})
    expect(run.changedFiles.sort()).toEqual(['from-bash.txt', 'src/farewell.ts', 'src/util.ts'])
    expect(Date.parse(run.startedAt)).toBeLessThanOrEqual(Date.parse(run.endedAt))
    expect(new Date(run.startedAt).toISOString()).toBe(run.startedAt)
    expect(new Date(run.endedAt).toISOString()).toBe(run.endedAt)
    expect(existsSync(sidecar(planPath, '.lock'))).toBe(false)

    // The transcript has the run's messages; the key is nowhere.
    const transcript = readFileSync(sidecar(planPath, '.transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(transcript.some((entry) => entry.session === 'run')).toBe(true)
    expect(result.stdout + result.stderr).not.toContain(TEST_API_KEY)
    for (const file of readdirSync(sandbox.plansDir)) {
      expect(readFileSync(path.join(sandbox.plansDir, file), 'utf8')).not.toContain(TEST_API_KEY)
    }
  })

  it('refuses a plan made against another HEAD (exit 4), and runs it with --allow-stale', async () => {
    server.push(
      (request) => reply(toolUse('Write', {content: PLAN, file_path: /create your plan at (\/\S+?) using/.exec(systemText(request))![1]})),
      reply('Planned.'),
    )
    const planPath = (await wave(['plan', '--task', 'Add a farewell function'])).stdout.trim()
    await approve(planPath)
    writeFileSync(path.join(sandbox.repo, 'later.txt'), 'a later commit\n')
    const head = gitCommitAll(sandbox.repo, 'later')
    const requestsBefore = server.requests.length

    const stale = await wave(['run', planPath])
    expect(stale.code).toBe(4)
    expect(stale.stderr).toMatch(/stale/)
    expect(stale.stderr).toMatch(/--allow-stale/)
    expect(stale.stdout).toBe('')
    expect(server.requests).toHaveLength(requestsBefore)
    expect(readJson(sidecar(planPath, '.state.json')).runs).toEqual([])

    server.push(reply('Ran anyway.'))
    const forced = await wave(['run', planPath, '--allow-stale'])
    expect(forced.code, forced.stderr).toBe(0)
    expect(forced.stdout).toBe('Ran anyway.\n')
    expect(gitHead(sandbox.repo)).toBe(head)
    expect(readJson(sidecar(planPath, '.state.json'))).toMatchObject({runs: [{exitCode: 0}], status: 'ran'})
  })
})

describe('wave run', () => {
  it('prints one JSON object with --json: version, outcome, filesChanged, turns, usage', async () => {
    const planPath = writePlan()
    await approve(planPath)
    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'))
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
    const output = JSON.parse(result.stdout)
    expect(output).toMatchObject({filesChanged: ['src/farewell.ts'], outcome: 'completed', result: 'Done.', turns: 2, version: 1})
    expect(output.usage.input_tokens).toBeGreaterThan(0)
    expect(output.usage.output_tokens).toBeGreaterThan(0)

    await approve(planPath) // a plan runs once per approval
    server.push(reply('Again.'))
    const format = await wave(['run', planPath, '--output-format', 'json'])
    expect(format.code, format.stderr).toBe(0)
    expect(JSON.parse(format.stdout)).toMatchObject({filesChanged: [], outcome: 'completed', turns: 1, version: 1})
  })

  it('runs a plan written beside no state sidecar, starting its state from the record', async () => {
    const planPath = writePlan()
    await approve(planPath)
    server.push(reply('Nothing to do.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    const state = readJson(sidecar(planPath, '.state.json'))
    expect(state).toMatchObject({name: 'brave-otter', status: 'ran', workspace: sandbox.repo})
    expect(state.runs).toHaveLength(1)
    expect(state.runs[0]).toMatchObject({approvalSha256: sha256(PLAN), changedFiles: [], exitCode: 0})
  })

  it('runs a plan copied to another directory together with its approval record', async () => {
    const planPath = writePlan()
    await approve(planPath, '--approver', 'ci-bot')
    const elsewhere = path.join(sandbox.root, 'artifacts')
    mkdirSync(elsewhere)
    const copy = path.join(elsewhere, 'brave-otter.md')
    copyFileSync(planPath, copy)
    copyFileSync(sidecar(planPath, '.approval.json'), sidecar(copy, '.approval.json'))

    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done from the copy.'))
    const result = await wave(['run', copy])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('Done from the copy.\n')
    expect(messageText(server.messageRequests[0].body.messages[0])).toContain(PLAN.trimEnd())
    expect(readFileSync(path.join(sandbox.repo, 'src/farewell.ts'), 'utf8')).toBe(FAREWELL)
    expect(readJson(sidecar(copy, '.state.json'))).toMatchObject({runs: [{changedFiles: ['src/farewell.ts'], exitCode: 0}], status: 'ran'})
  })

  it("counts only the model's changes as files changed when the plan travels inside the repository", async () => {
    const planPath = writePlan()
    await approve(planPath)
    const inRepo = path.join(sandbox.repo, 'plans')
    mkdirSync(inRepo)
    const copy = path.join(inRepo, 'brave-otter.md')
    copyFileSync(planPath, copy)
    copyFileSync(sidecar(planPath, '.approval.json'), sidecar(copy, '.approval.json'))

    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'))
    const result = await wave(['run', copy, '--json'])
    expect(result.code, result.stderr).toBe(0)
    // wave's own bookkeeping beside the plan (state, transcript, lock) is not a change the run made.
    expect(JSON.parse(result.stdout).filesChanged).toEqual(['src/farewell.ts'])
    expect(readJson(sidecar(copy, '.state.json')).runs[0].changedFiles).toEqual(['src/farewell.ts'])
  })

  it('takes the workspace from --cwd', async () => {
    const planPath = writePlan()
    await approve(planPath)
    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'))
    const result = await wave(['run', planPath, '--cwd', sandbox.repo], undefined, sandbox.root)
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, 'src/farewell.ts'), 'utf8')).toBe(FAREWELL)
    expect(existsSync(path.join(sandbox.root, 'src'))).toBe(false)
    expect(systemText(server.messageRequests[0])).toContain(sandbox.repo)
  })

  it('exits 5 at --max-turns and records the failed run', async () => {
    const planPath = writePlan()
    await approve(planPath)
    server.push(reply(toolUse('LS', {path: '.'})), reply(toolUse('LS', {path: 'src'})))
    const result = await wave(['run', planPath, '--max-turns', '2'])
    expect(result.code).toBe(5)
    expect(result.stderr).toMatch(/turn limit/)
    expect(result.stdout).toBe('')
    expect(server.messageRequests).toHaveLength(2)
    const state = readJson(sidecar(planPath, '.state.json'))
    expect(state.status).toBe('failed')
    expect(state.runs[0]).toMatchObject({exitCode: 5})
    expect(state.runs[0].endedAt).toEqual(expect.any(String))
    expect(existsSync(sidecar(planPath, '.lock'))).toBe(false)
  })

  it('exits 1 when the model API fails, and records the failed run', async () => {
    const planPath = writePlan()
    await approve(planPath)
    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})))
    const result = await wave(['run', planPath, '--json']) // the second request finds the script exhausted: a 500
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/script exhausted/)
    expect(JSON.parse(result.stdout)).toMatchObject({error: {exitCode: 1}, ok: false, version: 1})
    const state = readJson(sidecar(planPath, '.state.json'))
    expect(state.status).toBe('failed')
    expect(state.runs[0]).toMatchObject({changedFiles: ['src/farewell.ts'], exitCode: 1})
  })

  it("refuses to run a plan another live process is running, and takes over a dead one's lock", async () => {
    const planPath = writePlan()
    await approve(planPath)
    writeFileSync(sidecar(planPath, '.lock'), String(process.pid))
    const busy = await wave(['run', planPath])
    expect(busy.code).toBe(1)
    expect(busy.stderr).toMatch(/already running/)
    expect(server.requests).toHaveLength(0)

    writeFileSync(sidecar(planPath, '.lock'), '2147483646')
    server.push(reply('Done.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(sidecar(planPath, '.lock'))).toBe(false)
  })
})

describe('wave run: refusals before any model request', () => {
  /** Runs, expects the exit code and message, no request, no run recorded, nothing changed. */
  async function refused(args: string[], code: number, message: RegExp, env?: Record<string, string | undefined>) {
    const before = snapshotTree(sandbox.repo)
    const result = await wave(args, env)
    expect(result.code, result.stderr).toBe(code)
    expect(result.stderr).toMatch(message)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(result.stdout).toBe('')
    expect(server.requests).toHaveLength(0)
    expect(snapshotTree(sandbox.repo)).toEqual(before)
    return result
  }

  const noRunRecorded = (planPath: string) => {
    const state = sidecar(planPath, '.state.json')
    if (existsSync(state)) expect(readJson(state).runs).toEqual([])
    expect(existsSync(sidecar(planPath, '.lock'))).toBe(false)
  }

  it('refuses an unapproved plan (exit 3)', async () => {
    const planPath = writePlan()
    const result = await refused(['run', planPath], 3, /No approval record/)
    expect(result.stderr).toMatch(/wave approve/)
    noRunRecorded(planPath)
  })

  it('refuses a rejected plan (exit 3)', async () => {
    const planPath = writePlan()
    await approve(planPath, '--reject', '--feedback', 'Out of scope', '--approver', 'rev')
    await refused(['run', planPath], 3, /rejected by rev: Out of scope/)
    noRunRecorded(planPath)
  })

  it('refuses a plan with changes requested (exit 3)', async () => {
    const planPath = writePlan()
    await approve(planPath, '--request-changes', 'Add tests first')
    await refused(['run', planPath], 3, /changes requested.*Add tests first/)
    noRunRecorded(planPath)
  })

  it('refuses a plan changed since approval (exit 4), --allow-stale notwithstanding', async () => {
    const planPath = writePlan()
    await approve(planPath)
    writeFileSync(planPath, PLAN + '4. Also delete the tests.\n')
    await refused(['run', planPath], 4, /changed since it was approved/)
    await refused(['run', planPath, '--allow-stale'], 4, /changed since it was approved/)
    noRunRecorded(planPath)
  })

  it("refuses a tampered record whose sha256 is not the plan's (exit 4)", async () => {
    const planPath = writePlan()
    writeRecord(planPath, {decision: 'approved', plan: {sha256: sha256('another plan')}, version: 1})
    await refused(['run', planPath], 4, /changed since it was approved/)
  })

  it("refuses a stale plan (exit 4) from a hand-written record's repository.head, unless --allow-stale", async () => {
    const planPath = writePlan()
    writeRecord(planPath, {decision: 'approved', plan: {sha256: sha256(PLAN)}, repository: {head: 'f'.repeat(40)}, version: 1})
    await refused(['run', planPath], 4, /stale/)
    noRunRecorded(planPath)

    server.push(reply('Ran anyway.'))
    const result = await wave(['run', planPath, '--allow-stale'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('Ran anyway.\n')
  })

  const malformed: Array<[string, string]> = [
    ['not JSON', '{"version": 1, "decision": '],
    ['an array', '[]'],
    ['no decision', JSON.stringify({plan: {sha256: sha256(PLAN)}, version: 1})],
    ['an unknown decision', JSON.stringify({decision: 'maybe', plan: {sha256: sha256(PLAN)}, version: 1})],
    ['no plan', JSON.stringify({decision: 'approved', version: 1})],
    ['a short sha256', JSON.stringify({decision: 'approved', plan: {sha256: 'abc123'}, version: 1})],
    ['another version', JSON.stringify({decision: 'approved', plan: {sha256: sha256(PLAN)}, version: 2})],
    ['no version', JSON.stringify({decision: 'approved', plan: {sha256: sha256(PLAN)}})],
    ['mode plan', JSON.stringify({decision: 'approved', mode: 'plan', plan: {sha256: sha256(PLAN)}, version: 1})],
    ['a bad rule', JSON.stringify({allow: ['Bash('], decision: 'approved', plan: {sha256: sha256(PLAN)}, version: 1})],
    ['allow as a string', JSON.stringify({allow: 'Bash(npm test:*)', decision: 'approved', plan: {sha256: sha256(PLAN)}, version: 1})],
  ]
  for (const [what, text] of malformed) {
    it(`refuses a malformed record: ${what} (exit 3)`, async () => {
      const planPath = writePlan()
      writeFileSync(sidecar(planPath, '.approval.json'), text)
      await refused(['run', planPath], 3, /Malformed approval record/)
      noRunRecorded(planPath)
    })
  }

  it('answers a refusal with a JSON error object under --json', async () => {
    const planPath = writePlan()
    const result = await wave(['run', planPath, '--json'])
    expect(result.code).toBe(3)
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
    expect(JSON.parse(result.stdout)).toMatchObject({error: {exitCode: 3}, ok: false, version: 1})
    expect(server.requests).toHaveLength(0)
  })

  it('refuses a missing, empty, directory or non-UTF-8 plan (exit 2)', async () => {
    await refused(['run', path.join(sandbox.plansDir, 'missing-plan.md')], 2, /not found/)
    await refused(['run', writePlan('', 'empty-plan')], 2, /empty/)
    await refused(['run', writePlan('  \n\n', 'blank-plan')], 2, /empty/)
    mkdirSync(path.join(sandbox.plansDir, 'dir-plan.md'))
    await refused(['run', path.join(sandbox.plansDir, 'dir-plan.md')], 2, /directory/)
    await refused(['run', writePlan(Buffer.from([0x23, 0x20, 0xc3, 0x28, 0x0a]), 'binary-plan')], 2, /UTF-8/)
    await refused(['run'], 2, /plan/)
  })

  it('refuses bad flags (exit 2): --mode or --allow without --approve, --approve --mode plan, a bad rule, a missing --cwd', async () => {
    const planPath = writePlan()
    await approve(planPath)
    await refused(['run', planPath, '--mode', 'bypassPermissions'], 2, /Error/)
    await refused(['run', planPath, '--allow', 'Bash(rm:*)'], 2, /Error/)
    await refused(['run', planPath, '--approve', '--mode', 'plan'], 2, /Error/)
    await refused(['run', planPath, '--approve', '--allow', 'Bash('], 2, /rule/)
    await refused(['run', planPath, '--cwd', path.join(sandbox.root, 'nowhere')], 2, /Error/)
    await refused(['run', planPath, '--max-turns', '0'], 2, /Error/)
    // None of them touched the record.
    expect(readJson(sidecar(planPath, '.approval.json'))).toMatchObject({decision: 'approved', history: [{decision: 'approved'}], mode: 'acceptEdits'})
  })

  it('refuses without an API key (exit 2), naming ANTHROPIC_API_KEY', async () => {
    const planPath = writePlan()
    await approve(planPath)
    const result = await refused(['run', planPath], 2, /ANTHROPIC_API_KEY/, {ANTHROPIC_API_KEY: undefined})
    expect(result.stderr.trim().split('\n').length).toBeLessThanOrEqual(2)
    noRunRecorded(planPath)
  })
})

describe('wave run --approve', () => {
  it('writes an approved record first, then runs in the given mode with the given rules', async () => {
    const planPath = writePlan()
    server.push(reply(toolUse('Bash', {command: 'touch from-bash.txt'})), reply('Done.'))
    const result = await wave(['run', planPath, '--approve', '--mode', 'acceptEdits', '--allow', 'Bash(touch:*)', '--json'], {GITHUB_ACTOR: 'pipeline'})
    expect(result.code, result.stderr).toBe(0)
    const record = readJson(sidecar(planPath, '.approval.json'))
    expect(record).toMatchObject({
      allow: ['Bash(touch:*)'],
      approver: 'pipeline',
      decision: 'approved',
      mode: 'acceptEdits',
      plan: {name: 'brave-otter', sha256: sha256(PLAN)},
      version: 1,
    })
    expect(new Date(record.decidedAt).toISOString()).toBe(record.decidedAt)
    expect(toolNames(server.messageRequests[0])).toContain('Bash')
    expect(toolResults(server.messageRequests[1])[0].is_error ?? false).toBe(false)
    expect(existsSync(path.join(sandbox.repo, 'from-bash.txt'))).toBe(true)
    expect(JSON.parse(result.stdout).filesChanged).toEqual(['from-bash.txt'])
    expect(readJson(sidecar(planPath, '.state.json')).status).toBe('ran')
  })

  it('defaults to acceptEdits, and overrides an earlier rejection with --force, the audit trail kept', async () => {
    const planPath = writePlan()
    await approve(planPath, '--reject', '--feedback', 'not yet')
    server.push(reply('Done.'))
    const result = await wave(['run', planPath, '--approve', '--force'])
    expect(result.code, result.stderr).toBe(0)
    const record = readJson(sidecar(planPath, '.approval.json'))
    expect(record).toMatchObject({allow: [], decision: 'approved', mode: 'acceptEdits'})
    expect(record.history.map((h: {decision: string}) => h.decision)).toEqual(['rejected', 'approved'])
    expect(toolNames(server.messageRequests[0])).not.toContain('Bash')
  })

  it('refuses --approve with --approval FILE (exit 2): one reads a record, the other writes one', async () => {
    const planPath = writePlan()
    const out = path.join(sandbox.root, 'inline.approval.json')
    const result = await wave(['run', planPath, '--approve', '--approval', out])
    expect(result.code).toBe(2)
    expect(server.requests).toHaveLength(0)
    expect(existsSync(out)).toBe(false)
    expect(existsSync(sidecar(planPath, '.approval.json'))).toBe(false)
  })

  it('still refuses a stale plan, with the approval on record', async () => {
    const planPath = writePlan()
    writeFileSync(
      sidecar(planPath, '.state.json'),
      JSON.stringify({
        createdAt: new Date().toISOString(),
        model: 'm',
        name: 'brave-otter',
        repository: {branch: 'main', dirty: false, head: 'e'.repeat(40), root: sandbox.repo},
        runs: [],
        status: 'draft',
        task: 'Add a farewell function',
        updatedAt: new Date().toISOString(),
        version: 1,
        workspace: sandbox.repo,
      }),
    )
    const result = await wave(['run', planPath, '--approve'])
    expect(result.code).toBe(4)
    expect(result.stderr).toMatch(/stale/)
    expect(server.requests).toHaveLength(0)
    expect(readJson(sidecar(planPath, '.approval.json'))).toMatchObject({
      decision: 'approved',
      repository: {head: 'e'.repeat(40)},
      task: 'Add a farewell function',
    })
  })
})

describe('wave run: records written by other tools', () => {
  it("accepts a minimal record from the README's schema (version, decision, plan.sha256): mode acceptEdits", async () => {
    const planPath = writePlan()
    writeRecord(planPath, {decision: 'approved', plan: {sha256: sha256(PLAN)}, version: 1})
    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0]).sort()).toEqual([
      'Agent',
      'AskUserQuestion',
      'Edit',
      'Glob',
      'Grep',
      'LS',
      'Read',
      'TodoWrite',
      'ToolSearch',
      'Write',
    ])
    expect(systemText(server.messageRequests[0])).toContain('acceptEdits')
    expect(readFileSync(path.join(sandbox.repo, 'src/farewell.ts'), 'utf8')).toBe(FAREWELL)
  })

  it('accepts a full record: every optional field, an upper-case sha256, --approval FILE', async () => {
    const planPath = writePlan()
    const file = path.join(sandbox.root, 'review-bot.json')
    writeRecord(
      planPath,
      {
        allow: ['Bash(touch:*)'],
        approver: 'review-bot',
        decidedAt: '2025-01-02T03:04:05.000Z',
        decision: 'approved',
        feedback: 'LGTM',
        history: [
          {approver: 'review-bot', decidedAt: '2025-01-01T00:00:00.000Z', decision: 'changes_requested', feedback: 'tests?', planSha256: sha256('older')},
          {approver: 'review-bot', decidedAt: '2025-01-02T03:04:05.000Z', decision: 'approved', planSha256: sha256(PLAN)},
        ],
        mode: 'bypassPermissions',
        plan: {name: 'brave-otter', sha256: sha256(PLAN).toUpperCase()},
        repository: {branch: 'main', dirty: false, head: gitHead(sandbox.repo)},
        task: 'A task from the review bot',
        version: 1,
      },
      file,
    )
    server.push(reply(toolUse('Bash', {command: 'echo made > bash-made.txt && cat bash-made.txt'})), reply('Done.'))
    const result = await wave(['run', planPath, '--approval', file])
    expect(result.code, result.stderr).toBe(0)
    const [first] = server.messageRequests
    expect(messageText(first.body.messages[0])).toContain('A task from the review bot')
    expect(messageText(first.body.messages[0])).toContain(PLAN.trimEnd())
    expect(systemText(first)).toContain('bypassPermissions')
    expect(toolNames(first)).toContain('Bash')
    expect(toolResults(server.messageRequests[1])[0]).toMatchObject({text: 'made'})
    expect(readFileSync(path.join(sandbox.repo, 'bash-made.txt'), 'utf8')).toBe('made\n')
  })

  it('accepts a record whose repository is null (a plan made outside git)', async () => {
    const planPath = writePlan()
    writeRecord(planPath, {decision: 'approved', plan: {sha256: sha256(PLAN)}, repository: null, version: 1})
    server.push(reply('Done.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
  })
})

describe('wave run: permission modes', () => {
  it('acceptEdits without a Bash rule: Bash is not offered, and a call is denied with is_error', async () => {
    const planPath = writePlan()
    await approve(planPath)
    server.push(reply(toolUse('Bash', {command: 'touch pwned'})), reply('Could not run it.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    const [first, second] = server.messageRequests
    expect(toolNames(first)).not.toContain('Bash')
    expect(toolNames(first)).not.toContain('EnterPlanMode')
    expect(toolNames(first)).not.toContain('ExitPlanMode')
    const [denied] = toolResults(second)
    expect(denied.is_error).toBe(true)
    expect(denied.text).toMatch(/Bash/)
    expect(existsSync(path.join(sandbox.repo, 'pwned'))).toBe(false)
  })

  it('acceptEdits with Bash(git status:*): a matching command runs, others are denied with is_error', async () => {
    const planPath = writePlan()
    await approve(planPath, '--allow', 'Bash(git status:*)')
    server.push(
      reply(
        toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'}),
        toolUse('Bash', {command: 'git status --porcelain'}),
        toolUse('Bash', {command: 'touch pwned'}),
        toolUse('Bash', {command: 'git status && touch pwned2'}),
        toolUse('Bash', {command: 'git status $(touch pwned3)'}),
      ),
      reply('Checked.'),
    )
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).toContain('Bash')
    const [write, status, touch, chained, substituted] = toolResults(server.messageRequests[1])
    expect(write.is_error ?? false).toBe(false)
    expect(status.is_error ?? false).toBe(false)
    expect(status.text).toContain('?? src/farewell.ts')
    for (const denied of [touch, chained, substituted]) {
      expect(denied.is_error, denied.text).toBe(true)
      expect(denied.text).toMatch(/Permission denied/)
    }

    for (const file of ['pwned', 'pwned2', 'pwned3']) expect(existsSync(path.join(sandbox.repo, file))).toBe(false)
  })

  it('default: reads only; Write is refused headless and nothing is written', async () => {
    const planPath = writePlan()
    await approve(planPath, '--mode', 'default')
    server.push(
      reply(
        toolUse('Read', {file_path: 'README.md'}),
        toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'}),
        toolUse('Edit', {file_path: 'src/util.ts', new_string: 'x', old_string: 'hello'}),
        toolUse('Bash', {command: 'touch pwned'}),
      ),
      reply('I could only read.'),
    )
    const before = snapshotTree(sandbox.repo)
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0]).sort()).toEqual(['Agent', 'AskUserQuestion', ...READ_TOOLS, 'TodoWrite', 'ToolSearch'].sort())
    expect(systemText(server.messageRequests[0])).toContain('default')
    const [read, write, edit, bash] = toolResults(server.messageRequests[1])
    expect(read.is_error ?? false).toBe(false)
    expect(read.text).toContain('# demo')
    for (const denied of [write, edit, bash]) expect(denied.is_error, denied.text).toBe(true)
    expect(snapshotTree(sandbox.repo)).toEqual(before)
    expect(JSON.parse(result.stdout)).toMatchObject({denials: 3, filesChanged: []})
  })

  it('bypassPermissions: Bash is offered and runs', async () => {
    const planPath = writePlan()
    await approve(planPath, '--mode', 'bypassPermissions')
    server.push(reply(toolUse('Bash', {command: 'echo made > bash-made.txt && cat bash-made.txt'})), reply('Done.'))
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0]).sort()).toEqual(RUN_TOOLS)
    expect(toolResults(server.messageRequests[1])[0]).toMatchObject({text: 'made'})
    expect(readFileSync(path.join(sandbox.repo, 'bash-made.txt'), 'utf8')).toBe('made\n')
    expect(JSON.parse(result.stdout).filesChanged).toEqual(['bash-made.txt'])
  })

  it('refuses EnterPlanMode and ExitPlanMode in a run', async () => {
    const planPath = writePlan()
    await approve(planPath, '--mode', 'bypassPermissions')
    server.push(reply(toolUse('EnterPlanMode', {}), toolUse('ExitPlanMode', {})), reply('Done.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(toolNames(server.messageRequests[0])).not.toContain('EnterPlanMode')
    expect(toolNames(server.messageRequests[0])).not.toContain('ExitPlanMode')
    for (const r of toolResults(server.messageRequests[1])) expect(r.is_error).toBe(true)
  })
})

describe('wave run: the workspace is a boundary', () => {
  for (const mode of ['acceptEdits', 'bypassPermissions']) {
    it(`refuses a symlink escape in ${mode}, and the session goes on`, async () => {
      const outside = path.join(sandbox.root, 'outside')
      mkdirSync(outside)
      writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n')
      symlinkSync(outside, path.join(sandbox.repo, 'link-out'))
      symlinkSync(path.join(outside, 'secret.txt'), path.join(sandbox.repo, 'secret-link'))
      const planPath = writePlan()
      await approve(planPath, '--mode', mode)

      const hostile = [
        toolUse('Write', {content: 'x', file_path: 'link-out/via-link.txt'}),
        toolUse('Write', {content: 'x', file_path: 'secret-link'}),
        toolUse('Edit', {file_path: 'secret-link', new_string: 'evil', old_string: 'outside'}),
        toolUse('Edit', {file_path: 'link-out/secret.txt', new_string: 'evil', old_string: 'outside'}),
        toolUse('Read', {file_path: 'secret-link'}),
        toolUse('Read', {file_path: 'link-out/secret.txt'}),
        toolUse('Write', {content: 'x', file_path: '../escape.txt'}),
        toolUse('Write', {content: 'x', file_path: path.join(outside, 'abs.txt')}),
        toolUse('LS', {path: 'link-out'}),
        toolUse('Grep', {path: 'link-out', pattern: 'secret'}),
        toolUse('Glob', {path: 'link-out', pattern: '*'}),
      ]
      server.push(reply(...hostile), reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'))
      const outsideBefore = snapshotTree(outside)
      const repoBefore = snapshotTree(sandbox.repo)

      const result = await wave(['run', planPath, '--json'])
      expect(result.code, result.stderr).toBe(0)
      const results = toolResults(server.messageRequests[1])
      expect(results).toHaveLength(hostile.length)
      for (const [i, r] of results.entries()) {
        expect(r.is_error, `call ${i}: ${r.text}`).toBe(true)
        expect(r.text).not.toContain('outside secret')
      }

      expect(results[0].text).toMatch(/outside the workspace/)
      expect(snapshotTree(outside)).toEqual(outsideBefore)
      expect(existsSync(path.join(sandbox.root, 'escape.txt'))).toBe(false)
      // Only the legitimate write landed.
      expect(toolResults(server.messageRequests[2])[0].is_error ?? false).toBe(false)
      expect(snapshotTree(sandbox.repo)).toEqual({...repoBefore, 'src/farewell.ts': sha256(FAREWELL)})
      expect(JSON.parse(result.stdout).filesChanged).toEqual(['src/farewell.ts'])
    })
  }
})
