/**
 * Issue #27: `wave tools` tells the truth. In plan mode Write and Edit are offered for the plan file
 * only; EnterPlanMode is offered where `wave run --task` lets the model plan first, and in plan mode it is
 * already active; a tool that needs a rule says so, and a rule in the settings makes it plainly offered.
 * Each cell is checked against what a session really sends the model (`wave prompt`).
 */
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import type {MessagesServer} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const row = (stdout: string, tool: string) => stdout.split('\n').find((line) => line.startsWith(`${tool} `))

describe('wave tools', () => {
  it('says "plan file only" for Write and Edit in plan mode, and what is true of EnterPlanMode', async () => {
    const text = await wave(['tools'])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout.split('\n')[0]).toMatch(/^TOOL\s+ACCESS\s+DEFERRED\s+DEFAULT\s+ACCEPTEDITS\s+PLAN\s+BYPASSPERMISSIONS$/)
    expect(row(text.stdout, 'Write')).toMatch(/^Write\s+write\s+-\s+with a rule\s+yes\s+plan file only\s+yes$/)
    expect(row(text.stdout, 'Edit')).toMatch(/^Edit\s+write\s+-\s+with a rule\s+yes\s+plan file only\s+yes$/)
    expect(row(text.stdout, 'EnterPlanMode')).toMatch(/^EnterPlanMode\s+control\s+yes\s+run --task only\s+run --task only\s+already active\s+run --task only$/)
    expect(row(text.stdout, 'ExitPlanMode')).toMatch(/^ExitPlanMode\s+control\s+-\s+-\s+-\s+yes\s+-$/)
    expect(row(text.stdout, 'Read')).toMatch(/^Read\s+read\s+-\s+yes\s+yes\s+yes\s+yes$/)
    expect(row(text.stdout, 'WebFetch')).toMatch(/^WebFetch\s+network\s+yes\s+with a rule\s+with a rule\s+with a rule\s+with a rule$/)

    const plan = await wave(['tools', '--mode', 'plan', '--json'])
    const {modes, tools, version} = JSON.parse(plan.stdout)
    expect({modes, version}).toEqual({modes: ['plan'], version: 1})
    const offers = Object.fromEntries(tools.map((tool: {name: string; offers: {plan: string}}) => [tool.name, tool.offers.plan]))
    // Bash in plan mode: in a throwaway sandbox, which starts here (test/e2e/plan-observe.test.ts has it off).
    expect(offers).toMatchObject({
      Agent: 'yes',
      Bash: 'yes',
      Edit: 'planFileOnly',
      EnterPlanMode: 'alreadyActive',
      ExitPlanMode: 'yes',
      Read: 'yes',
      Write: 'planFileOnly',
    })
    const defaults = JSON.parse((await wave(['tools', '--mode', 'default', '--json'])).stdout).tools
    expect(defaults.find((tool: {name: string}) => tool.name === 'EnterPlanMode')).toMatchObject({offered: {default: false}, offers: {default: 'runTaskOnly'}})
  })

  it('agrees with what sessions are sent: EnterPlanMode only to run --task, and a settings rule turns "with a rule" into yes', async () => {
    const sent = async (args: string[]) => JSON.parse((await wave(['prompt', ...args, '--json'])).stdout).tools.map((tool: {name: string}) => tool.name)
    expect(await sent(['--mode', 'task'])).toContain('EnterPlanMode')
    expect(await sent(['--mode', 'run'])).not.toContain('EnterPlanMode')
    const planning = await sent(['--mode', 'plan'])
    expect(planning).toContain('Write')
    expect(planning).not.toContain('EnterPlanMode')

    // Control: Bash in acceptEdits is "with a rule" until a settings rule allows it, then yes.
    expect(row((await wave(['tools', '--mode', 'acceptEdits'])).stdout, 'Bash')).toMatch(/^Bash\s+execute\s+-\s+with a rule$/)
    mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({permissions: {allow: ['Bash(npm test:*)']}}))
    const allowed = await wave(['tools', '--mode', 'acceptEdits'])
    expect(row(allowed.stdout, 'Bash')).toMatch(/^Bash\s+execute\s+-\s+yes$/)
    expect(row(allowed.stdout, 'TaskOutput')).toMatch(/^TaskOutput\s+read\s+yes\s+yes$/)
  })
})
