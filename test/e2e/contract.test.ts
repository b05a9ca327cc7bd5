/**
 * The plan as a contract, end to end on the scripted server: the plan's ## Scope and ## Verification
 * read when planning ends, bound by the approval (or replaced by the approver), revisions kept and diffed.
 */
import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {type Sandbox, writePlanFile} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, reply, toolUse} from '../support/messages-server.js'

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
    expect(output.contract).toEqual({scope: ['src/util.ts', 'test/util.test.ts', 'docs/**'], verify: ['npm test', 'npm run lint']})
    expect(output.revision).toBe(1)
  })

  it('a plan without the sections still plans, and says nothing will be held to', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Do it.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Do it', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('nothing will be held to')
    expect(JSON.parse(result.stdout).contract).toEqual({scope: [], verify: []})
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

  it('--scope and --verify replace the plan\'s lists; --scope-enforce sets how; --no-verify approves none', async () => {
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

    server.push(
      reply(toolUse('Edit', {file_path: planPath, new_string: '- docs/**\n- README.md', old_string: '- docs/**'})),
      reply('Revised.'),
    )
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
