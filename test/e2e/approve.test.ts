import {existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {gitHead, readJson, type Sandbox, sha256, writePlanFile} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, reply, systemText, toolUse} from '../support/messages-server.js'

const PLAN = '# Plan\n\n1. Add src/extra.ts.\n2. Run the tests.\n'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const writePlan = (content: string | Uint8Array = PLAN, name?: string) => writePlanFile(sandbox, content, name)

const recordPathOf = (planPath: string) => planPath.replace(/\.md$/, '.approval.json')
const statePathOf = (planPath: string) => planPath.replace(/\.md$/, '.state.json')

/** A decidedAt written by wave: an ISO 8601 UTC timestamp, close to now. */
function expectFreshIso(value: unknown) {
  expect(typeof value).toBe('string')
  expect(new Date(value as string).toISOString()).toBe(value)
  expect(Math.abs(Date.now() - Date.parse(value as string))).toBeLessThan(60_000)
}

describe('wave approve', () => {
  it('writes the record beside the plan and prints exactly its path', async () => {
    const planPath = writePlan()
    const result = await wave(['approve', planPath, '--approver', 'ci-bot'])

    expect(result.stderr).not.toMatch(/Error/)
    expect(result.code).toBe(0)
    const recordPath = recordPathOf(planPath)
    expect(result.stdout).toBe(recordPath + '\n')
    const record = readJson(recordPath)
    expect(record).toMatchObject({
      allow: [],
      approver: 'ci-bot',
      decision: 'approved',
      mode: 'acceptEdits',
      plan: {name: 'brave-otter', sha256: sha256(PLAN)},
      version: 1,
    })
    expect(record.feedback ?? null).toBeNull()
    expectFreshIso(record.decidedAt)
    expect(record.history).toHaveLength(1)
    expect(record.history[0]).toMatchObject({approver: 'ci-bot', decidedAt: record.decidedAt, decision: 'approved', planSha256: sha256(PLAN)})
    // Approving makes no model request and leaves the plan alone.
    expect(server.requests).toHaveLength(0)
    expect(readFileSync(planPath, 'utf8')).toBe(PLAN)
  })

  it('binds the sha256 of the bytes, not of a decoded and re-encoded text', async () => {
    const bytes = Buffer.from('\uFEFF# Plan\r\n\r\n1. Keep CRLF and the BOM.\r\n', 'utf8')
    const planPath = writePlan(bytes)
    const result = await wave(['approve', planPath])
    expect(result.code).toBe(0)
    expect(readJson(recordPathOf(planPath)).plan.sha256).toBe(sha256(bytes))
  })

  it('records --mode and every --allow rule', async () => {
    const planPath = writePlan()
    const result = await wave(['approve', planPath, '--mode', 'bypassPermissions', '--allow', 'Bash(npm test:*)', '--allow', 'WebFetch(domain:example.com)'])
    expect(result.code).toBe(0)
    const record = readJson(recordPathOf(planPath))
    expect(record.mode).toBe('bypassPermissions')
    expect(record.allow).toEqual(['Bash(npm test:*)', 'WebFetch(domain:example.com)'])
  })

  it('records --sandbox-network-allow hosts and shows them with the decision; refuses them with --sandbox off or --sandbox-network, or a URL', async () => {
    const planPath = writePlan()
    const result = await wave(['approve', planPath, '--sandbox-network-allow', 'registry.npmjs.org', '--sandbox-network-allow', '*.pythonhosted.org'])
    expect(result.code, result.stderr).toBe(0)
    expect(readJson(recordPathOf(planPath)).sandbox).toEqual({enabled: true, network: false, networkAllow: ['registry.npmjs.org', '*.pythonhosted.org']})
    expect(result.stderr).toContain('sandbox on, network to registry.npmjs.org, *.pythonhosted.org only')

    for (const args of [
      ['--sandbox', 'off', '--sandbox-network-allow', 'registry.npmjs.org'],
      ['--sandbox-network', '--sandbox-network-allow', 'registry.npmjs.org'],
      ['--sandbox-network-allow', 'https://registry.npmjs.org/'],
    ]) {
      const refused = await wave(['approve', planPath, ...args])
      expect(refused.code, args.join(' ')).toBe(2)
      expect(refused.stderr.trim().split('\n')[0]).toMatch(/^Error: .*(--sandbox-network|not a host name)/)
    }

    // Control: the record of the first approval stands.
    expect(readJson(recordPathOf(planPath)).sandbox.networkAllow).toEqual(['registry.npmjs.org', '*.pythonhosted.org'])
  })

  it('takes the approver from --approver, else GITHUB_ACTOR, else git user.name', async () => {
    const planPath = writePlan()
    await wave(['approve', planPath, '--approver', 'alice'], {GITHUB_ACTOR: 'octocat'})
    expect(readJson(recordPathOf(planPath)).approver).toBe('alice')
    await wave(['approve', planPath], {GITHUB_ACTOR: 'octocat'})
    expect(readJson(recordPathOf(planPath)).approver).toBe('octocat')
    await wave(['approve', planPath], {GITHUB_ACTOR: undefined})
    expect(readJson(recordPathOf(planPath)).approver).toBe('wave e2e') // the sandbox repository's user.name
  })

  it('prints the record as one JSON object with --json', async () => {
    const planPath = writePlan()
    const result = await wave(['approve', planPath, '--json', '--approver', 'ci-bot', '--allow', 'Bash(npm test:*)'])
    expect(result.code).toBe(0)
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
    const output = JSON.parse(result.stdout)
    const record = readJson(recordPathOf(planPath))
    expect(output.version).toBe(1)
    expect(output.recordPath).toBe(recordPathOf(planPath))
    expect(output).toMatchObject(record)
    expect(output).toMatchObject({allow: ['Bash(npm test:*)'], approver: 'ci-bot', decision: 'approved', mode: 'acceptEdits', plan: {sha256: sha256(PLAN)}})
  })

  it('writes to --out instead of beside the plan', async () => {
    const planPath = writePlan()
    const out = path.join(sandbox.root, 'review', 'decision.json')
    mkdirSync(path.dirname(out))
    const result = await wave(['approve', planPath, '--out', out])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(out + '\n')
    expect(readJson(out)).toMatchObject({decision: 'approved', plan: {sha256: sha256(PLAN)}})
    expect(existsSync(recordPathOf(planPath))).toBe(false)
  })

  it('records --reject and --request-changes with their feedback, keeping the history newest last', async () => {
    const planPath = writePlan()
    const recordPath = recordPathOf(planPath)

    let result = await wave(['approve', planPath, '--request-changes', 'Keep the public API unchanged', '--approver', 'rev-1'])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe(recordPath + '\n')
    expect(readJson(recordPath)).toMatchObject({approver: 'rev-1', decision: 'changes_requested', feedback: 'Keep the public API unchanged'})

    result = await wave(['approve', planPath, '--reject', '--feedback', 'Out of scope', '--approver', 'rev-2'])
    expect(result.code).toBe(0)
    expect(readJson(recordPath)).toMatchObject({approver: 'rev-2', decision: 'rejected', feedback: 'Out of scope'})

    // The plan is revised, then approved: the history keeps every decision and the bytes each was about.
    const revised = PLAN + '3. Keep the public API unchanged.\n'
    writeFileSync(planPath, revised)
    result = await wave(['approve', planPath, '--approver', 'rev-3'])
    expect(result.code).toBe(0)
    const record = readJson(recordPath)
    expect(record).toMatchObject({approver: 'rev-3', decision: 'approved', plan: {sha256: sha256(revised)}})
    expect(record.feedback ?? null).toBeNull()
    expect(record.history.map((h: {decision: string}) => h.decision)).toEqual(['changes_requested', 'rejected', 'approved'])
    expect(record.history.map((h: {approver: string}) => h.approver)).toEqual(['rev-1', 'rev-2', 'rev-3'])
    expect(record.history.map((h: {planSha256: string}) => h.planSha256)).toEqual([sha256(PLAN), sha256(PLAN), sha256(revised)])
    expect(record.history[0].feedback).toBe('Keep the public API unchanged')
    expect(record.history[1].feedback).toBe('Out of scope')
    const times = record.history.map((h: {decidedAt: string}) => Date.parse(h.decidedAt))
    expect([...times].sort((a, b) => a - b)).toEqual(times)
    expect(record.history.at(-1).decidedAt).toBe(record.decidedAt)
  })

  it('prints a --reject decision as JSON too', async () => {
    const planPath = writePlan()
    const result = await wave(['approve', planPath, '--reject', '--json'])
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({decision: 'rejected', version: 1})
  })

  it('carries the task and the repository state of a plan made by wave plan, and updates its status', async () => {
    let planFile = ''
    server.push((request) => {
      planFile = /create your plan at (\/\S+?) using/.exec(systemText(request))![1]
      return reply(toolUse('Write', {content: PLAN, file_path: planFile}))
    }, reply('Planned.'))
    const planned = await wave(['plan', '--task', 'Add an extra module'])
    expect(planned.code).toBe(0)
    const planPath = planned.stdout.trim()
    expect(planPath).toBe(planFile)

    const result = await wave(['approve', planPath, '--approver', 'ci-bot'])
    expect(result.code).toBe(0)
    const record = readJson(result.stdout.trim())
    expect(record.task).toBe('Add an extra module')
    expect(record.plan).toEqual({name: path.basename(planPath, '.md'), sha256: sha256(PLAN)})
    expect(record.repository).toMatchObject({branch: 'main', dirty: false, head: gitHead(sandbox.repo)})
    expect(readJson(statePathOf(planPath)).status).toBe('approved')

    await wave(['approve', planPath, '--request-changes', 'More tests'])
    expect(readJson(statePathOf(planPath)).status).toBe('changes_requested')
    await wave(['approve', planPath, '--reject'])
    expect(readJson(statePathOf(planPath)).status).toBe('rejected')
  })
})

describe('wave approve: refusals (exit 2, nothing written)', () => {
  const refuses = async (args: string[], message: RegExp) => {
    const result = await wave(args)
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toMatch(message)
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(result.stdout).toBe('')
    expect(server.requests).toHaveLength(0)
    return result
  }

  const noRecords = () => expect(existsSync(sandbox.plansDir) ? readdirSync(sandbox.plansDir).filter((f) => f.endsWith('.approval.json')) : []).toEqual([])

  it('refuses a missing plan file', async () => {
    await refuses(['approve', path.join(sandbox.plansDir, 'no-such-plan.md')], /not found/)
    noRecords()
  })

  it('refuses an empty or whitespace-only plan', async () => {
    await refuses(['approve', writePlan('')], /empty/)
    await refuses(['approve', writePlan(' \n\t\n', 'blank-plan')], /empty/)
    noRecords()
  })

  it('refuses a directory and a non-UTF-8 file', async () => {
    mkdirSync(path.join(sandbox.plansDir, 'dir-plan.md'), {recursive: true})
    await refuses(['approve', path.join(sandbox.plansDir, 'dir-plan.md')], /directory/)
    await refuses(['approve', writePlan(Buffer.from([0x23, 0x20, 0xff, 0xfe, 0x0a]), 'latin-plan')], /UTF-8/)
    noRecords()
  })

  it('refuses --mode plan, an unknown mode, and a malformed --allow rule', async () => {
    const planPath = writePlan()
    await refuses(['approve', planPath, '--mode', 'plan'], /mode/)
    await refuses(['approve', planPath, '--mode', 'yolo'], /mode/)
    await refuses(['approve', planPath, '--allow', 'Bash('], /rule/)
    noRecords()
  })

  it('refuses --request-changes without feedback, and --reject with --request-changes', async () => {
    const planPath = writePlan()
    await refuses(['approve', planPath, '--request-changes', ''], /feedback/)
    await refuses(['approve', planPath, '--request-changes', '   '], /feedback/)
    await refuses(['approve', planPath, '--reject', '--request-changes', 'x'], /Error/)
    noRecords()
  })

  it('refuses a missing plan argument', async () => {
    await refuses(['approve'], /Error/)
  })

  // The design: "Errors are one clear line". oclif's parse errors span several lines, and the first
  // ("The following errors occurred:", "Missing 1 required arg:") says nothing of what was wrong.
  it('says what was wrong in the one error line of a flag or argument error', async () => {
    const planPath = writePlan()
    const conflict = await wave(['approve', planPath, '--reject', '--request-changes', 'x'])
    expect(conflict.code).toBe(2)
    expect(conflict.stderr.split('\n')[0]).toMatch(/--reject.*--request-changes|--request-changes.*--reject/)
    const missing = await wave(['approve'])
    expect(missing.code).toBe(2)
    expect(missing.stderr.split('\n')[0]).toMatch(/plan/)
  })

  it('answers a refusal with a JSON error object under --json', async () => {
    const result = await wave(['approve', writePlan(''), '--json'])
    expect(result.code).toBe(2)
    expect(JSON.parse(result.stdout)).toMatchObject({error: {exitCode: 2}, ok: false, version: 1})
  })
})
