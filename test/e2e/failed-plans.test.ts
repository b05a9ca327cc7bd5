/**
 * Issue #27: a plan whose planning session failed before its file was written is listed by `wave
 * plans` (status failed, and why), in `--json`, and shown by `wave plans NAME`, which says there is no
 * plan file. Controls: a plan that was written lists as a draft, with no reason and its file.
 */
import {existsSync, readdirSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {fault, type MessagesServer, planPathIn, reply, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const REFUSAL = 'invalid x-api-key (refused by the stand-in)'

describe('wave plans: a plan that failed before its file was written', () => {
  it('is listed as failed with the reason, in text and --json, and `wave plans NAME` says there is no plan file', async () => {
    server.push(fault(401, {error: {message: REFUSAL}}))
    const failed = await wave(['plan', '--task', 'Plan the refused thing'])
    expect(failed.code, failed.stderr).toBe(2)
    const planPath = planPathIn(server.messageRequests[0])
    const name = path.basename(planPath, '.md')
    // The session failed at its first request: no plan file, only wave's state beside where it would be.
    expect(existsSync(planPath)).toBe(false)
    expect(readdirSync(sandbox.plansDir)).toContain(`${name}.state.json`)

    const text = await wave(['plans'])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stderr).not.toContain('No plans yet')
    const line = text.stdout.split('\n').find((row) => row.startsWith(name))
    expect(line).toMatch(new RegExp(`^${name}\\s+failed\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+Plan the refused thing\\s+\\(no plan file: .*401`))
    expect(line).toContain(REFUSAL)

    const json = JSON.parse((await wave(['plans', '--json'])).stdout)
    expect(json.version).toBe(1)
    expect(json.plans).toEqual([
      expect.objectContaining({
        name,
        path: planPath,
        planFile: false,
        reason: expect.stringContaining(REFUSAL),
        status: 'failed',
        task: 'Plan the refused thing',
      }),
    ])

    const shown = await wave(['plans', name])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`${name}  failed`)
    expect(shown.stdout).toContain(`Plan: none: ${planPath} was never written`)
    expect(shown.stdout).toMatch(new RegExp(`^Failed: .*${REFUSAL.replaceAll(/[()]/g, '\\$&')}`, 'm'))
    const shownJson = JSON.parse((await wave(['plans', 'show', name, '--json'])).stdout)
    expect(shownJson).toMatchObject({name, planFile: false, status: 'failed'})
    expect(shownJson.reason).toContain(REFUSAL)

    // Control: a plan that was written lists as a draft with its file and no reason; the failed one stays.
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Step.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const made = await wave(['plan', '--task', 'Plan a good thing'])
    expect(made.code, made.stderr).toBe(0)
    const good = path.basename(made.stdout.trim(), '.md')
    const listed = JSON.parse((await wave(['plans', '--json'])).stdout).plans
    expect(listed.map((plan: {name: string}) => plan.name).sort()).toEqual([good, name].sort())
    expect(listed.find((plan: {name: string}) => plan.name === good)).toMatchObject({planFile: true, reason: null, status: 'draft'})
    const goodLine = (await wave(['plans'])).stdout.split('\n').find((row) => row.startsWith(good))
    expect(goodLine).toMatch(/draft\s+\S+ \S+\s+Plan a good thing$/)

    // A revision that writes the plan makes it a draft, and forgets the failure.
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Now written.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const revised = await wave(['plan', '--revise', name])
    expect(revised.code, revised.stderr).toBe(0)
    expect(JSON.parse((await wave(['plans', '--json'])).stdout).plans.find((plan: {name: string}) => plan.name === name)).toMatchObject({
      planFile: true,
      reason: null,
      status: 'draft',
    })
  })

  it('budget exceeded on the first turn: failed, with the budget named', async () => {
    server.push(reply('Thinking about it at length.'))
    const failed = await wave(['plan', '--task', 'An expensive plan', '--max-budget-usd', '0.000001'])
    expect(failed.code, failed.stderr).toBe(5)
    const name = path.basename(planPathIn(server.messageRequests[0]), '.md')
    const listed = JSON.parse((await wave(['plans', '--json'])).stdout).plans
    expect(listed).toEqual([expect.objectContaining({name, planFile: false, status: 'failed'})])
    expect(listed[0].reason).toMatch(/budget/)
  })
})
