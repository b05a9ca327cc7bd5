import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {type Sandbox, snapshotTree} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, reply, systemText, toolNames, toolResults, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))
const firstUserText = (index: number) => {
  const content = server.messageRequests[index].body.messages[0].content
  return typeof content === 'string' ? content : content.map((b: {text?: string}) => b.text ?? '').join('')
}

describe('request changes, revise, approve again', () => {
  it('revises the same file with the feedback in view; the old approval no longer matches', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Rename greet.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const plan = (await wave(['plan', '--task', 'Rename greet to welcome'])).stdout.trim()
    const oldApproval = path.join(sandbox.root, 'old.approval.json')
    expect((await wave(['approve', plan, '--out', oldApproval])).code).toBe(0)
    const requested = await wave(['approve', plan, '--request-changes', 'Also update README.md'])
    expect(requested.code).toBe(0)

    const before = server.messageRequests.length
    server.push(
      reply(toolUse('Read', {file_path: plan})),
      (request) => {
        expect(systemText(request)).toContain(`A plan file already exists at ${plan}.`)
        return reply(toolUse('Edit', {file_path: plan, new_string: '1. Rename greet.\n2. Update README.md.', old_string: '1. Rename greet.'}))
      },
      reply('Revised.'),
    )
    const revised = await wave(['plan', '--revise', plan])
    expect(revised.stderr).not.toContain('Error')
    expect(revised.code).toBe(0)
    expect(revised.stdout).toBe(plan + '\n')
    expect(readFileSync(plan, 'utf8')).toBe('# Plan\n\n1. Rename greet.\n2. Update README.md.\n')
    const opening = firstUserText(before)
    expect(opening).toContain('Rename greet to welcome')
    expect(opening).toContain('Also update README.md')
    expect(systemText(server.messageRequests[before])).toMatch(/A plan file already exists at .*\nYou should build your plan incrementally/)
    // A revision is plan mode: Bash runs there only in its throwaway sandbox.
    expect(toolNames(server.messageRequests[before])).toContain('Bash')
    expect(systemText(server.messageRequests[before])).toContain('throwaway sandbox')

    // The approval given before the revision binds the old bytes: refused, with no request made.
    const count = server.requests.length
    const stale = await wave(['run', plan, '--approval', oldApproval])
    expect(stale.code).toBe(4)
    expect(stale.stderr).toMatch(/changed since it was approved/)
    const pending = await wave(['run', plan])
    expect(pending.code).toBe(3)
    expect(pending.stderr).toMatch(/changes requested/)
    expect(server.requests.length).toBe(count)

    const record = JSON.parse(readFileSync(plan.replace(/\.md$/, '.approval.json'), 'utf8'))
    expect(record.history.map((h: {decision: string}) => h.decision)).toEqual(['changes_requested'])

    expect((await wave(['approve', plan])).code).toBe(0)
    const history = JSON.parse(readFileSync(plan.replace(/\.md$/, '.approval.json'), 'utf8')).history
    expect(history.map((h: {decision: string}) => h.decision)).toEqual(['changes_requested', 'approved'])

    server.push(reply(toolUse('Edit', {file_path: 'src/util.ts', new_string: 'welcome', old_string: 'greet'})), reply('Renamed.'))
    const run = await wave(['run', plan])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe('Renamed.\n')
    expect(readFileSync(path.join(sandbox.repo, 'src/util.ts'), 'utf8')).toContain('export function welcome(')
  })

  it('takes --feedback over the record, and picks up a plan whose session failed', async () => {
    server.push(reply('I wrote nothing.'))
    const failed = await wave(['plan', '--task', 'Add a CHANGELOG'])
    expect(failed.code).toBe(1)
    const stateFile = readdirSync(sandbox.plansDir).find((file) => file.endsWith('.state.json'))!
    const planPath = path.join(sandbox.plansDir, JSON.parse(readFileSync(path.join(sandbox.plansDir, stateFile), 'utf8')).name + '.md')
    expect(existsSync(planPath)).toBe(false)

    const before = server.messageRequests.length
    server.push((request) => {
      expect(systemText(request)).toContain(`No plan file exists yet. You should create your plan at ${planPath}`)
      return reply(toolUse('Write', {content: '# CHANGELOG plan\n', file_path: planPath}))
    }, reply('Done.'))
    const revised = await wave(['plan', '--revise', planPath, '--feedback', 'Use Keep a Changelog'])
    expect(revised.code).toBe(0)
    expect(firstUserText(before)).toContain('Use Keep a Changelog')
    expect(readFileSync(planPath, 'utf8')).toBe('# CHANGELOG plan\n')
  })

  it('refuses to revise a file outside the plans directory', async () => {
    const outside = path.join(sandbox.root, 'elsewhere.md')
    writeFileSync(outside, '# Plan\n')
    const result = await wave(['plan', '--revise', outside])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/not a plan in/)
    expect(server.requests).toHaveLength(0)
  })
})

describe('wave run --task with EnterPlanMode and ExitPlanMode', () => {
  /** The model enters plan mode, tries a source write, writes the plan, then leaves plan mode. */
  function scriptPlanning() {
    server.push(
      reply(toolUse('EnterPlanMode', {reason: 'a rename touches several files'})),
      (request) =>
        reply(
          toolUse('Write', {content: 'evil', file_path: 'src/app.ts'}),
          toolUse('Write', {content: '# Plan\n\n1. Rename greet.\n', file_path: planPathIn(request)}),
        ),
      // ExitPlanMode ends the planning session: no further request is made in it.
      reply(toolUse('ExitPlanMode', {})),
    )
  }

  it('stops with exit 10 and the plan path when not approved', async () => {
    scriptPlanning()
    const before = snapshotTree(sandbox.repo)
    const result = await wave(['run', '--task', 'Rename greet to welcome'])
    expect(result.stderr).not.toContain('Error')
    expect(result.code).toBe(10)
    const requests = server.messageRequests
    const planPath = result.stdout.trim()
    expect(path.dirname(planPath)).toBe(sandbox.plansDir)
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\n1. Rename greet.\n')

    // Before: the run's tools plus EnterPlanMode. After: plan mode's, with ExitPlanMode instead.
    expect(toolNames(requests[0])).toContain('EnterPlanMode')
    expect(toolNames(requests[0])).toContain('Write')
    expect(toolNames(requests[0])).not.toContain('ExitPlanMode')
    expect(toolNames(requests[1])).toContain('ExitPlanMode')
    expect(toolNames(requests[1])).not.toContain('EnterPlanMode')
    // Plan mode's Bash runs in its throwaway sandbox, whatever the run's own sandbox.
    expect(systemText(requests[1])).toContain('throwaway sandbox')
    expect(systemText(requests[0])).not.toContain('## Plan File Info:')
    expect(systemText(requests[1])).toMatch(new RegExp(`No plan file exists yet\\. You should create your plan at ${planPath.replaceAll('.', '\\.')} using`))
    // The reminder stays as plan mode began, after the plan's Write too (the prompt cache's prefix).
    expect(systemText(requests[2])).toBe(systemText(requests[1]))

    // The source write between EnterPlanMode and ExitPlanMode was refused; nothing changed.
    const [sourceWrite, planWrite] = toolResults(requests[2])
    expect(sourceWrite.is_error).toBe(true)
    expect(sourceWrite.text).toMatch(/plan file/)
    expect(planWrite.is_error ?? false).toBe(false)
    expect(snapshotTree(sandbox.repo)).toEqual(before)
    expect(requests).toHaveLength(3)
    expect(existsSync(planPath.replace(/\.md$/, '.approval.json'))).toBe(false)
  })

  it('with --approve, writes the record and executes in a fresh context', async () => {
    scriptPlanning()
    server.push(reply(toolUse('Edit', {file_path: 'src/util.ts', new_string: 'welcome', old_string: 'greet'})), reply('Renamed greet to welcome.'))
    const result = await wave(['run', '--task', 'Rename greet to welcome', '--approve', '--json'])
    expect(result.stderr).not.toContain('Error')
    expect(result.code).toBe(0)
    const output = JSON.parse(result.stdout)
    expect(output).toMatchObject({outcome: 'completed', version: 1})
    expect(output.filesChanged).toEqual(['src/util.ts'])

    const requests = server.messageRequests
    const fresh = requests[3]
    expect(fresh.body.messages).toHaveLength(1)
    expect(firstUserText(3)).toContain('1. Rename greet.')
    expect(firstUserText(3)).toContain('Rename greet to welcome')
    expect(toolNames(fresh)).not.toContain('EnterPlanMode')
    expect(toolNames(fresh)).not.toContain('ExitPlanMode')
    const record = JSON.parse(readFileSync(output.planPath.replace(/\.md$/, '.approval.json'), 'utf8'))
    expect(record).toMatchObject({decision: 'approved', mode: 'acceptEdits'})
    expect(readFileSync(path.join(sandbox.repo, 'src/util.ts'), 'utf8')).toContain('welcome')
  })

  it('with --approve, the run of the plan takes --verify-retries (0: a failed check ends it at once, exit 7)', async () => {
    server.push(
      reply(toolUse('EnterPlanMode', {})),
      (request) => reply(toolUse('Write', {content: '# Plan\n\n## Verification\n- `test -f done.txt`\n', file_path: planPathIn(request)})),
      reply(toolUse('ExitPlanMode', {})),
      reply('Done.'),
      // Only a retry would ask again (control: the default of 2 retries would take this turn).
      reply('Retried.'),
    )
    const result = await wave(['run', '--task', 'Make done.txt', '--approve', '--verify-retries', '0'])
    expect(result.code, result.stderr).toBe(7)
    expect(result.stderr).toContain('test -f done.txt failed')
    expect(server.messageRequests).toHaveLength(4)
  })

  it('checks ExitPlanMode with care: no plan, another file, an empty plan', async () => {
    server.push(
      reply(toolUse('ExitPlanMode', {})),
      reply(toolUse('EnterPlanMode', {})),
      reply(toolUse('ExitPlanMode', {}), toolUse('EnterPlanMode', {})),
      (request) => reply(toolUse('Write', {content: '  \n\n', file_path: planPathIn(request)}), toolUse('ExitPlanMode', {})),
      reply(toolUse('ExitPlanMode', {plan_path: 'src/app.ts'})),
      // The plan path in another spelling is still the session's plan: accepted, and the session ends.
      (request) =>
        reply(
          toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)}),
          toolUse('ExitPlanMode', {plan_path: `~/.wave/plans/../plans/${path.basename(planPathIn(request))}`}),
        ),
    )
    const result = await wave(['run', '--task', 'Plan carefully'])
    expect(result.code).toBe(10)
    const r = (i: number) => toolResults(server.messageRequests[i])
    expect(r(1)[0]).toMatchObject({is_error: true})
    expect(r(1)[0].text).toMatch(/not available|not active/)
    expect(r(3)[0].text).toMatch(/No plan file exists yet/)
    expect(r(3)[1].is_error).toBe(true)
    expect(r(3)[1].text).toMatch(/not available|already active/)
    expect(r(4)[1].text).toMatch(/is empty/)
    expect(r(5)[0].text).toMatch(/not this session's plan file/)
    expect(server.messageRequests).toHaveLength(6)
    expect(readFileSync(result.stdout.trim(), 'utf8')).toBe('# Plan\n')
  })

  it('without plan mode, the task just runs', async () => {
    server.push(reply(toolUse('Write', {content: 'notes\n', file_path: 'NOTES.md'})), reply('Wrote NOTES.md.'))
    const result = await wave(['run', '--task', 'Write notes'])
    expect(result.code).toBe(0)
    expect(result.stdout).toBe('Wrote NOTES.md.\n')
    expect(readFileSync(path.join(sandbox.repo, 'NOTES.md'), 'utf8')).toBe('notes\n')
  })
})
