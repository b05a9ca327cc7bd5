/**
 * The plan as a contract, end to end on the scripted server: the plan's ## Scope and ## Verification
 * read when planning ends, bound by the approval (or replaced by the approver), revisions kept and diffed.
 */
import {createHash} from 'node:crypto'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {type Sandbox, writePlanFile} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolResults, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'))
const recordOf = (planPath: string) => planPath.replace(/\.md$/, '.approval.json')

const CONTRACT_PLAN = `# Add a farewell

## Changes
- src/util.ts: add farewell().

## Scope
- src/util.ts
- \`test/util.test.ts\`
- docs/**

## Verification
- \`npm test\`
- \`npm run lint\`
`

describe('the plan states its contract', () => {
  it('wave plan prints the summary line on stderr and the contract in JSON', async () => {
    server.push((request) => reply(toolUse('Write', {content: CONTRACT_PLAN, file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Add a farewell', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('Plan: 3 paths in scope, 2 checks (npm test, npm run lint)')
    const output = JSON.parse(result.stdout)
    expect(output.contract).toEqual({
      scope: ['src/util.ts', 'test/util.test.ts', 'docs/**'],
      verify: ['npm test', 'npm run lint'],
      unitErrors: [],
      units: [],
      warnings: [],
    })
    expect(output.revision).toBe(1)
  })

  it('a plan without the sections still plans, and says nothing will be held to', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Do it.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Do it', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('nothing will be held to')
    expect(JSON.parse(result.stdout).contract).toEqual({scope: [], unitErrors: [], units: [], verify: [], warnings: []})
  })
})

describe('the approval binds the contract', () => {
  it('takes scope and checks from the plan, enforcement warn by default', async () => {
    const planPath = writePlanFile(sandbox, CONTRACT_PLAN)
    const result = await wave(['approve', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).not.toContain('Warning')
    const record = readJson(recordOf(planPath))
    expect(record.scope).toEqual({enforce: 'warn', paths: ['src/util.ts', 'test/util.test.ts', 'docs/**']})
    expect(record.verify).toEqual([{command: 'npm test'}, {command: 'npm run lint'}])
    expect(result.stderr).toMatch(/scope 3 paths \(warn\), checks: npm test, npm run lint/)
  })

  it("--scope and --verify replace the plan's lists; --scope-enforce sets how; --no-verify approves none", async () => {
    const planPath = writePlanFile(sandbox, CONTRACT_PLAN)
    let result = await wave(['approve', planPath, '--scope', 'src/**', '--scope', './README.md', '--scope-enforce', 'strict', '--verify', 'node -e 0'])
    expect(result.code, result.stderr).toBe(0)
    let record = readJson(recordOf(planPath))
    expect(record.scope).toEqual({enforce: 'strict', paths: ['src/**', 'README.md']})
    expect(record.verify).toEqual([{command: 'node -e 0'}])

    result = await wave(['approve', planPath, '--no-verify'])
    expect(result.code, result.stderr).toBe(0)
    record = readJson(recordOf(planPath))
    expect(record.verify).toEqual([])
    expect(record.scope.paths).toEqual(['src/util.ts', 'test/util.test.ts', 'docs/**'])

    // A scope that climbs out, and --no-verify beside --verify, are usage errors: no record is written over.
    expect((await wave(['approve', planPath, '--scope', '../elsewhere'])).code).toBe(2)
    expect((await wave(['approve', planPath, '--no-verify', '--verify', 'npm test'])).code).toBe(2)
    expect(readJson(recordOf(planPath)).verify).toEqual([])
  })

  it('warns when the plan has neither section, and writes a record an old reader would', async () => {
    const planPath = writePlanFile(sandbox, '# Plan\n\n1. Do it.\n')
    const result = await wave(['approve', planPath])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/Warning: The plan has no ## Scope or ## Verification section: nothing will be held to/)
    const record = readJson(recordOf(planPath))
    expect(record).not.toHaveProperty('scope')
    expect(record).not.toHaveProperty('verify')
    // --scope-enforce strict needs a scope to hold to.
    expect((await wave(['approve', planPath, '--scope-enforce', 'strict'])).code).toBe(2)
  })
})

describe('revisions are kept and diffed', () => {
  it('plans diff shows what a revision changed since the reviewer asked for changes', async () => {
    server.push((request) => reply(toolUse('Write', {content: CONTRACT_PLAN, file_path: planPathIn(request)})), reply('Planned.'))
    const planned = await wave(['plan', '--task', 'Add a farewell'])
    expect(planned.code, planned.stderr).toBe(0)
    const planPath = planned.stdout.trim()

    expect((await wave(['approve', planPath, '--request-changes', 'Also cover the README'])).code).toBe(0)
    // Nothing changed since the decision: an empty diff.
    const unchanged = await wave(['plans', 'diff', planPath])
    expect(unchanged.code, unchanged.stderr).toBe(0)
    expect(unchanged.stdout).toBe('')

    server.push(reply(toolUse('Edit', {file_path: planPath, new_string: '- docs/**\n- README.md', old_string: '- docs/**'})), reply('Revised.'))
    const revised = await wave(['plan', '--revise', planPath])
    expect(revised.code, revised.stderr).toBe(0)
    // The revision session was asked with the feedback, and its result is revision 2.
    expect(JSON.stringify(server.messageRequests[2].body)).toContain('Also cover the README')

    const diff = await wave(['plans', 'diff', planPath])
    expect(diff.code, diff.stderr).toBe(0)
    expect(diff.stdout).toMatch(/^--- revision 1 \(last decided on\)/m)
    expect(diff.stdout).toMatch(/^\+\+\+ revision 2 \(current\)/m)
    expect(diff.stdout).toMatch(/^\+- README\.md$/m)
    expect(diff.stderr).toContain('asked for: Also cover the README')

    const json = JSON.parse((await wave(['plans', 'diff', planPath, '--from', '1', '--to', '2', '--json'])).stdout)
    expect(json).toMatchObject({added: 1, feedback: ['Also cover the README'], from: {revision: 1}, removed: 0, to: {revision: 2}})
    expect((await wave(['plans', 'diff', planPath, '--from', '9'])).code).toBe(2)

    // wave plans <name> lists the revisions and the record in force.
    const name = planPath.split('/').pop()!.replace(/\.md$/, '')
    const shown = await wave(['plans', name])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain('Revisions: 2')
    expect(shown.stdout).toContain('Decision: changes requested')
    expect((await wave(['plans', 'show', name, '--json'])).stdout).toContain('"revisions"')
  })
})

// ------------------------------------------------------------------------------------------------ runs

const lastUserText = (request: RecordedRequest): string => {
  const messages = request.body.messages as Array<{role: string; content: unknown}>
  const last = messages.at(-1)!
  if (typeof last.content === 'string') return last.content
  return (last.content as Array<{type: string; text?: string}>).map((block) => block.text ?? '').join('\n')
}

const SCOPED_PLAN = `# Touch the greeting

## Scope
- src/util.ts

## Verification
- none
`

/** In scope: src/util.ts by Write. Outside: docs/x.md by Write, outside.txt by a command. */
function pushScopedRun() {
  server.push(
    reply(toolUse('Write', {content: 'export const greet = (name: string) => `hi ${name}`\n', file_path: 'src/util.ts'})),
    reply(toolUse('Write', {content: '# x\n', file_path: 'docs/x.md'})),
    reply(toolUse('Bash', {command: 'touch outside.txt'})),
    reply('Done.'),
  )
}

describe('the run holds to the scope', () => {
  it('under warn: writes outside are allowed, and reported as outside the scope', async () => {
    const planPath = writePlanFile(sandbox, SCOPED_PLAN)
    expect((await wave(['approve', planPath, '--allow', 'Bash(touch:*)'])).code).toBe(0)
    pushScopedRun()
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'docs/x.md'))).toBe(true)
    expect(existsSync(path.join(sandbox.repo, 'outside.txt'))).toBe(true)
    const {report} = JSON.parse(result.stdout)
    expect(report).toMatchObject({
      changed: ['docs/x.md', 'outside.txt', 'src/util.ts'],
      checks: [],
      denials: [],
      enforce: 'warn',
      outOfScope: ['docs/x.md', 'outside.txt'],
      scope: ['src/util.ts'],
      untouched: [],
    })
    // The model was told of each deviation in the call's result.
    const [, afterWrite, afterBash] = server.messageRequests.slice(-3)
    expect(toolResults(afterWrite)[0].text).toMatch(/docs\/x\.md is outside the approved scope; recorded as a deviation/)
    expect(toolResults(afterBash)[0].text).toMatch(/this command changed files outside the approved scope \(src\/util\.ts\): outside\.txt/)

    // The text tally, Terraform's way.
    const planPath2 = writePlanFile(sandbox, SCOPED_PLAN, 'calm-heron')
    expect((await wave(['approve', planPath2, '--allow', 'Bash(touch:*)'])).code).toBe(0)
    server.push(reply(toolUse('Write', {content: '# y\n', file_path: 'docs/y.md'})), reply('Done.'))
    const text = await wave(['run', planPath2])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stderr).toContain('Run complete: 0 changed in scope, 1 outside (docs/y.md), 1 untouched; checks: none; 0 calls denied')
  })

  it("under strict: a write outside is refused, a command's change outside fails the run (exit 7)", async () => {
    const planPath = writePlanFile(sandbox, SCOPED_PLAN)
    expect((await wave(['approve', planPath, '--allow', 'Bash(touch:*)', '--scope-enforce', 'strict'])).code).toBe(0)
    pushScopedRun()
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(7)
    // The file tool's write never happened; the command's did, and is what failed the run.
    expect(existsSync(path.join(sandbox.repo, 'docs/x.md'))).toBe(false)
    expect(existsSync(path.join(sandbox.repo, 'outside.txt'))).toBe(true)
    expect(readFileSync(path.join(sandbox.repo, 'src/util.ts'), 'utf8')).toContain('hi ${name}')
    const output = JSON.parse(result.stdout)
    expect(output.error.message).toMatch(/did not meet its approved checks: changed outside the strict scope: outside\.txt/)
    expect(output.report.outOfScope).toEqual(['outside.txt'])
    expect(output.report.denials).toEqual([expect.objectContaining({summary: 'docs/x.md', tool: 'Write'})])
    const [, afterWrite] = server.messageRequests.slice(-3)
    expect(toolResults(afterWrite)[0]).toMatchObject({is_error: true})
    expect(toolResults(afterWrite)[0].text).toMatch(/outside the approved scope \(src\/util\.ts\).*stop, and report the deviation/)
    // Not spent: the approval still stands.
    expect(readJson(recordOf(planPath))).not.toHaveProperty('spentAt')
  })

  it('an old record without scope or checks runs as before', async () => {
    const planPath = writePlanFile(sandbox, SCOPED_PLAN)
    const bytes = readFileSync(planPath)
    writeFileSync(recordOf(planPath), JSON.stringify({decision: 'approved', plan: {sha256: createHash('sha256').update(bytes).digest('hex')}, version: 1}))
    server.push(reply(toolUse('Write', {content: '# x\n', file_path: 'docs/x.md'})), reply('Done.'))
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'docs/x.md'))).toBe(true)
    expect(JSON.parse(result.stdout).report).toMatchObject({changed: ['docs/x.md'], checks: [], outOfScope: [], scope: null})
    expect(toolResults(server.messageRequests.at(-1)!)[0].text).not.toContain('scope')
  })
})

const CHECKED_PLAN = `# Leave a marker

## Scope
- done.txt

## Verification
- \`test -f done.txt\`
`

describe('wave runs the approved checks', () => {
  it('a failing check goes back to the model, which fixes it on the retry turn (exit 0); no allow rule needed', async () => {
    const planPath = writePlanFile(sandbox, CHECKED_PLAN)
    expect((await wave(['approve', planPath])).code).toBe(0)
    server.push(reply('All done.'), reply(toolUse('Write', {content: 'ok\n', file_path: 'done.txt'})), reply('Fixed.'))
    const summary = path.join(sandbox.root, 'summary.md')
    const result = await wave(['run', planPath, '--json'], {GITHUB_STEP_SUMMARY: summary})
    expect(result.code, result.stderr).toBe(0)
    const requests = server.messageRequests
    expect(requests).toHaveLength(3)
    expect(lastUserText(requests[1])).toMatch(
      /wave ran the approved checks when you ended your turn, and 1 of 1 failed:\n\n\$ test -f done\.txt\n\(failed \(exit 1\)/,
    )
    expect(lastUserText(requests[1])).toContain('retry 1 of 2')
    const output = JSON.parse(result.stdout)
    expect(output.report.checks).toEqual([expect.objectContaining({command: 'test -f done.txt', exitCode: 0})])
    expect(output.report.changed).toEqual(['done.txt'])
    expect(readJson(recordOf(planPath)).spentAt).toBeTruthy()
    // The job summary: the report as tables.
    const written = readFileSync(summary, 'utf8')
    expect(written).toContain('**Planned versus actual**')
    expect(written).toMatch(/\| `test -f done\.txt` \| ✅ passed \|/)
  })

  it('a check never fixed ends the run with exit 7, not spent; --resume goes on with the failing output', async () => {
    const planPath = writePlanFile(sandbox, CHECKED_PLAN)
    expect((await wave(['approve', planPath])).code).toBe(0)
    server.push(reply('Done.'), reply('Still done.'))
    const failed = await wave(['run', planPath, '--verify-retries', '1'])
    expect(failed.code, failed.stderr).toBe(7)
    expect(failed.stderr).toContain('Error: The run did not meet its approved checks: test -f done.txt failed (exit 1).')
    expect(failed.stderr).toContain('Run stopped: 0 changed in scope, 0 outside, 1 untouched; checks: test -f done.txt failed (exit 1); 0 calls denied')
    expect(failed.stderr).toContain('--resume')
    expect(readJson(recordOf(planPath))).not.toHaveProperty('spentAt')
    const state = readJson(planPath.replace(/\.md$/, '.state.json'))
    expect(state.status).toBe('failed')
    expect(state.runs[0]).toMatchObject({exitCode: 7, report: {checks: [expect.objectContaining({exitCode: 1})]}})
    // Both rounds' logs are kept and named: the last round's with its failing output, the earlier one after it.
    const logOf = (round: number) => planPath.replace(/\.md$/, `.check-${round}-1.log`)
    expect(failed.stderr).toContain(`$ test -f done.txt (failed (exit 1); its whole output: ${logOf(2)})`)
    expect(failed.stderr).toContain(`Earlier rounds of the checks:\n  round 1: test -f done.txt failed (exit 1): ${logOf(1)}`)
    expect(state.runs[0].report.checkRounds).toEqual(
      [1, 2].map((round) => ({checks: [{command: 'test -f done.txt', exitCode: 1, outputFile: logOf(round)}], round})),
    )

    const before = server.messageRequests.length
    server.push(reply(toolUse('Write', {content: 'ok\n', file_path: 'done.txt'})), reply('Fixed now.'))
    const resumed = await wave(['run', planPath, '--resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    // The resumed conversation ends with the failing output wave recorded.
    expect(lastUserText(server.messageRequests[before])).toContain('$ test -f done.txt')
    expect(JSON.parse(resumed.stdout).report.checks).toEqual([expect.objectContaining({exitCode: 0})])
    // The resumed run's report goes on from the stopped run's rounds: its own is round 3, each round's log on disk.
    expect(
      JSON.parse(resumed.stdout).report.checkRounds.map(({checks, round}: {round: number; checks: Array<{exitCode: number; outputFile: string}>}) => [
        round,
        checks[0].exitCode,
        checks[0].outputFile,
      ]),
    ).toEqual([
      [1, 1, logOf(1)],
      [2, 1, logOf(2)],
      [3, 0, logOf(3)],
    ])
    for (const round of [1, 2, 3]) expect(existsSync(logOf(round))).toBe(true)
    expect(readJson(recordOf(planPath)).spentAt).toBeTruthy()
  })

  it('checks run in the sandbox: what a check writes outside the workspace never reaches the disk (control: --sandbox off)', async () => {
    // The workspace's parent is on the real disk; in the sandbox it is not writable there (a private /tmp at most).
    const plan = CHECKED_PLAN.replace('`test -f done.txt`', '`touch ../escaped.txt; echo checked`')
    const escaped = path.join(sandbox.root, 'escaped.txt')
    const planPath = writePlanFile(sandbox, plan)
    expect((await wave(['approve', planPath])).code).toBe(0)
    server.push(reply('Done.'))
    const contained = await wave(['run', planPath, '--verify-retries', '0', '--json'])
    expect(contained.code, contained.stderr).toBe(0)
    expect(JSON.parse(contained.stdout).report.checks[0]).toMatchObject({exitCode: 0, outputTail: 'checked'})
    expect(existsSync(escaped)).toBe(false)

    const control = writePlanFile(sandbox, plan, 'calm-heron')
    expect((await wave(['approve', control, '--sandbox', 'off'])).code).toBe(0)
    server.push(reply('Done.'))
    const open = await wave(['run', control, '--verify-retries', '0'])
    expect(open.code, open.stderr).toBe(0)
    expect(existsSync(escaped)).toBe(true)
  })
})
