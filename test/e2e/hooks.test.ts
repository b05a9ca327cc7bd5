/**
 * Hooks in Claude Code's format, end to end: real hook scripts on disk, run by bin/run.js against the
 * scripted Messages server, judged by what a user would check (files on disk, what the model received,
 * exit codes, stderr, the approval record).
 */
import {existsSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {readJson, type Sandbox, writePlanFile} from '../support/cli.js'
import {hookLog as hookLogIn, hooks, lastUserText, nodeHook as nodeHookIn, script as scriptIn, userSettingsIn, writeJson} from '../support/hook-scripts.js'
import {type MessagesServer, planPathIn, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const userSettings = () => userSettingsIn(sandbox)
const script = (name: string, body: string) => scriptIn(sandbox, name, body)
const nodeHook = (name: string, main: string) => nodeHookIn(sandbox, name, main)
const hookLog = (name: string) => hookLogIn(sandbox, name)
const recordOf = (plan: string) => plan.replace(/\.md$/, '.approval.json')

describe('hooks', () => {
  it('a PostToolUse hook formats the written file; stream-json reports it; the hook gets Claude Code input', async () => {
    const formatter = nodeHook(
      'format',
      `(input) => {
        const file = input.tool_input.file_path
        fs.writeFileSync(file, fs.readFileSync(file, 'utf8').split('\\n').map((line) => line.replace(/\\t/g, '  ').trimEnd()).join('\\n'))
      }`,
    )
    writeJson(userSettings(), hooks('PostToolUse', formatter, {matcher: 'Edit|Write'}))
    server.push(reply(toolUse('Write', {content: 'const a = 1   \n\tconst b = 2\n', file_path: 'src/new.ts'})), reply('Wrote it.'))
    const result = await wave(['run', '--task', 'Add src/new.ts', '--mode', 'acceptEdits', '--output-format', 'stream-json'])
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, 'src/new.ts'), 'utf8')).toBe('const a = 1\n  const b = 2\n')
    const [input] = hookLog('format')
    expect(input).toMatchObject({
      cwd: sandbox.repo,
      hook_event_name: 'PostToolUse',
      permission_mode: 'acceptEdits',
      tool_input: {file_path: path.join(sandbox.repo, 'src/new.ts')},
      tool_name: 'Write',
    })
    expect(input.session_id).toMatch(/^[0-9a-f-]{36}$/)
    expect(input.tool_response).toBeDefined()
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events).toContainEqual(expect.objectContaining({command: formatter, event: 'PostToolUse', exitCode: 0, outcome: 'ok', scope: 'user', type: 'hook'}))
  })

  it('a PreToolUse hook that exits 2 blocks a Bash command: the model gets its stderr, nothing ran; another command runs', async () => {
    const guard = script(
      'guard.sh',
      '#!/bin/bash\ninput=$(cat)\ncase "$input" in *forbidden*) echo "forbidden files are not made here" >&2; exit 2;; esac\nexit 0\n',
    )
    writeJson(userSettings(), hooks('PreToolUse', guard, {matcher: 'Bash'}))
    server.push(reply(toolUse('Bash', {command: 'touch forbidden.txt'}), toolUse('Bash', {command: 'touch allowed.txt'})), reply('Done.'))
    const result = await wave(['run', '--task', 'Touch files', '--mode', 'bypassPermissions'])
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'forbidden.txt'))).toBe(false)
    expect(existsSync(path.join(sandbox.repo, 'allowed.txt'))).toBe(true)
    const [blocked, allowed] = toolResults(server.messageRequests[1])
    expect(blocked.is_error).toBe(true)
    expect(blocked.text).toContain('forbidden files are not made here')
    expect(blocked.text).toContain(guard)
    expect(allowed.is_error).toBeUndefined()
  })

  it.each([
    ['deny', 'secrets are not written by the model', /secrets are not written by the model/],
    ['ask', 'a person should look first', /no one can confirm it in a headless run/],
  ])('a JSON permissionDecision %s refuses the call; a call it lets through runs', async (decision, reason, said) => {
    const guard = nodeHook(
      'decide',
      `(input) => input.tool_input.file_path.includes('secrets')
        ? {hookSpecificOutput: {hookEventName: 'PreToolUse', permissionDecision: ${JSON.stringify(decision)}, permissionDecisionReason: ${JSON.stringify(reason)}}}
        : {hookSpecificOutput: {hookEventName: 'PreToolUse', additionalContext: 'house style: two spaces'}}`,
    )
    writeJson(userSettings(), hooks('PreToolUse', guard, {matcher: 'Write'}))
    // Hostile to the answer: bash given a socket for stdin sources ~/.bashrc, whose output would spoil the JSON.
    writeFileSync(path.join(sandbox.home, '.bashrc'), 'echo bashrc-noise\n')
    server.push(
      reply(toolUse('Write', {content: 'k=1\n', file_path: 'secrets/key.txt'}), toolUse('Write', {content: 'ok\n', file_path: 'notes.txt'})),
      reply('Done.'),
    )
    const result = await wave(['run', '--task', 'Write files', '--mode', 'acceptEdits'])
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'secrets/key.txt'))).toBe(false)
    expect(readFileSync(path.join(sandbox.repo, 'notes.txt'), 'utf8')).toBe('ok\n')
    const [refused, written] = toolResults(server.messageRequests[1])
    expect(refused.is_error).toBe(true)
    expect(refused.text).toMatch(said)
    expect(written.text).toContain('house style: two spaces')
  })

  it('a hook that allows everything does not allow a plan-mode write the policy refuses', async () => {
    const allowAll = nodeHook('allow', `() => ({hookSpecificOutput: {hookEventName: 'PreToolUse', permissionDecision: 'allow'}})`)
    writeJson(userSettings(), hooks('PreToolUse', allowAll))
    server.push(
      reply(toolUse('Write', {content: 'hacked\n', file_path: 'src/app.ts'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Plan a change'])
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, 'src/app.ts'), 'utf8')).not.toContain('hacked')
    const [refused] = toolResults(server.messageRequests[1])
    expect(refused.is_error).toBe(true)
    expect(refused.text).toMatch(/^Permission denied/)
    // Control: the plan file, which the policy allows, was written; the hook ran for that call only.
    expect(readFileSync(result.stdout.trim(), 'utf8')).toBe('# Plan\n')
    expect(hookLog('allow').map((input) => input.tool_input.file_path)).toEqual([result.stdout.trim()])
  })

  it('a Stop hook sends the model back once, with its reason', async () => {
    const stop = nodeHook('stop', `(input) => input.stop_hook_active ? undefined : {decision: 'block', reason: 'Also write NOTES.md before you stop.'}`)
    writeJson(userSettings(), hooks('Stop', stop))
    server.push(reply('Done.'), reply(toolUse('Write', {content: 'notes\n', file_path: 'NOTES.md'})), reply('Done, with notes.'))
    const result = await wave(['run', '--task', 'Do it', '--mode', 'acceptEdits'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe('Done, with notes.')
    expect(lastUserText(server.messageRequests[1])).toBe('Also write NOTES.md before you stop.')
    expect(existsSync(path.join(sandbox.repo, 'NOTES.md'))).toBe(true)
    expect(server.messageRequests).toHaveLength(3)
    expect(hookLog('stop').map((input) => input.stop_hook_active)).toEqual([false, true])
  })

  it('a hook that hangs is stopped at its timeout, named in the result and on stderr; the guarded call did not run', async () => {
    const hang = script('hang.sh', '#!/bin/bash\nsleep 30\n')
    writeJson(userSettings(), hooks('PreToolUse', hang, {matcher: 'Bash', timeout: 1}))
    server.push(reply(toolUse('Bash', {command: 'touch ran.txt'})), reply('Done.'))
    const started = Date.now()
    const result = await wave(['run', '--task', 'Touch', '--mode', 'bypassPermissions', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(JSON.parse(result.stdout).hookErrors).toEqual([
      `PreToolUse hook "${hang}": timed out after 1s (its timeout; set "timeout" in seconds in ${userSettings()})`,
    ])
    expect(existsSync(path.join(sandbox.repo, 'ran.txt'))).toBe(false)
    const [refused] = toolResults(server.messageRequests[1])
    expect(refused.text).toContain(`PreToolUse hook "${hang}"`)
    expect(refused.text).toContain('timed out after 1s')
    expect(result.stderr).toContain(`PreToolUse hook "${hang}" (${userSettings()}) timed out after 1s`)
  })

  it('failed hooks are named in a failed result too: a run stopped at its turn limit (--json), a prompt a failing hook blocked (stream-json)', async () => {
    const noisy = script('noisy.sh', '#!/bin/bash\ncat >/dev/null\necho "formatter crashed" >&2\nexit 1\n')
    writeJson(userSettings(), hooks('PostToolUse', noisy, {matcher: 'Write'}))
    server.push(reply(toolUse('Write', {content: 'x\n', file_path: 'x.txt'})))
    const stopped = await wave(['run', '--task', 'Write', '--mode', 'acceptEdits', '--max-turns', '1', '--json'])
    expect(stopped.code, stopped.stderr).toBe(5)
    const body = JSON.parse(stopped.stdout)
    expect(body.ok).toBe(false)
    expect(body.hookErrors).toEqual([`PostToolUse hook "${noisy}": formatter crashed`])

    const hang = script('hang-prompt.sh', '#!/bin/bash\nsleep 30\n')
    writeJson(userSettings(), hooks('UserPromptSubmit', hang, {timeout: 1}))
    const requests = server.messageRequests.length
    const thrown = await wave(['run', '--task', 'Write', '--mode', 'acceptEdits', '--output-format', 'stream-json'])
    expect(thrown.code, thrown.stderr).toBe(2)
    expect(server.messageRequests).toHaveLength(requests)
    const result = JSON.parse(thrown.stdout.trim().split('\n').at(-1)!)
    expect(result).toMatchObject({ok: false, type: 'result'})
    expect(result.hookErrors).toEqual([`UserPromptSubmit hook "${hang}": timed out after 1s (its timeout; set "timeout" in seconds in ${userSettings()})`])
  })

  it('a hook that prints JSON wave cannot read is an error naming it, not skipped', async () => {
    const bad = script('bad.sh', '#!/bin/bash\ncat >/dev/null\necho \'{"decision": "maybe"\'\n')
    writeJson(userSettings(), hooks('PreToolUse', bad, {matcher: 'Write'}))
    server.push(reply(toolUse('Write', {content: 'x\n', file_path: 'x.txt'})), reply('Done.'))
    const result = await wave(['run', '--task', 'Write', '--mode', 'acceptEdits'])
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'x.txt'))).toBe(false)
    expect(toolResults(server.messageRequests[1])[0].text).toContain('printed JSON wave cannot read')
    expect(result.stderr).toContain(`PreToolUse hook "${bad}"`)
  })

  it.each([['.wave/settings.json'], ['.claude/settings.json'], ['.claude/settings.local.json']])(
    "a project's hook in %s: not run untrusted; trusted, run in the sandbox",
    async (file) => {
      // A file beside the repository, which wave's own processes see and the sandbox hides (its /tmp is private).
      const marker = path.join(sandbox.root, 'marker')
      writeFileSync(marker, 'x')
      const command = `touch hook-ran; if test -e ${marker}; then echo visible; else echo hidden; fi > hook-sees`
      writeJson(path.join(sandbox.repo, file), hooks('PostToolUse', command, {matcher: 'Write'}))
      const turns = () => [reply(toolUse('Write', {content: 'x\n', file_path: 'x.txt'})), reply('Done.')]
      server.push(...turns())
      const untrusted = await wave(['run', '--task', 'Write', '--mode', 'acceptEdits'])
      expect(untrusted.code, untrusted.stderr).toBe(0)
      expect(existsSync(path.join(sandbox.repo, 'x.txt'))).toBe(true)
      expect(existsSync(path.join(sandbox.repo, 'hook-ran'))).toBe(false)
      expect(untrusted.stderr).toContain(`${path.join(sandbox.repo, file)}: hooks (PostToolUse "${command}") ignored, since project settings are not trusted`)

      // Control: the user's own hook, run as the user's command, sees the file.
      writeJson(userSettings(), hooks('PostToolUse', `if test -e ${marker}; then echo visible; else echo hidden; fi > user-sees`))
      server.push(...turns())
      const trusted = await wave(['run', '--task', 'Write', '--mode', 'acceptEdits'], {WAVE_TRUST_PROJECT_SETTINGS: '1'})
      expect(trusted.code, trusted.stderr).toBe(0)
      expect(existsSync(path.join(sandbox.repo, 'hook-ran'))).toBe(true)
      expect(readFileSync(path.join(sandbox.repo, 'hook-sees'), 'utf8')).toBe('hidden\n')
      expect(readFileSync(path.join(sandbox.repo, 'user-sees'), 'utf8')).toBe('visible\n')
    },
  )

  it('SessionStart and UserPromptSubmit add context to the first message; a prompt a hook blocks is never sent (exit 2)', async () => {
    const start = script('start.sh', '#!/bin/bash\ncat >/dev/null\necho "This repository builds with pnpm."\n')
    const prompt = nodeHook(
      'prompt',
      `(input) => input.prompt.includes('password') ? {decision: 'block', reason: 'no passwords in prompts'} : {hookSpecificOutput: {hookEventName: 'UserPromptSubmit', additionalContext: 'Ticket: WAVE-37'}}`,
    )
    writeJson(userSettings(), {hooks: {...hooks('SessionStart', start).hooks, ...hooks('UserPromptSubmit', prompt).hooks}})
    server.push(reply('Fine.'))
    const ok = await wave(['run', '--task', 'Tidy the README', '--mode', 'acceptEdits'])
    expect(ok.code, ok.stderr).toBe(0)
    const first = lastUserText(server.messageRequests[0])
    expect(first).toContain('Tidy the README')
    expect(first).toContain('This repository builds with pnpm.')
    expect(first).toContain('Ticket: WAVE-37')

    const blocked = await wave(['run', '--task', 'Use the password hunter2', '--mode', 'acceptEdits'])
    expect(blocked.code).toBe(2)
    expect(blocked.stderr).toContain('no passwords in prompts')
    expect(server.messageRequests).toHaveLength(1)
  })

  it("the approval records the hooks' digest; a run with other hooks refuses before any request (exit 4) unless --allow-hook-drift", async () => {
    const first = script('first.sh', '#!/bin/bash\nexit 0\n')
    const second = script('second.sh', '#!/bin/bash\nexit 0\n')
    writeJson(userSettings(), hooks('PostToolUse', first))
    const plan = writePlanFile(sandbox, '# Plan\n\nSay hello.\n')
    const approved = await wave(['approve', plan])
    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stderr).toContain(`Hooks in effect (their digest is recorded): PostToolUse "${first}"`)
    const record = readJson(approved.stdout.trim())
    expect(record.hooks.digest).toMatch(/^[0-9a-f]{64}$/)
    expect(record.hooks.list).toEqual([`PostToolUse "${first}" (user, ${userSettings()})`])

    // Control: the same hooks run without a word about them.
    server.push(reply('Hello.'))
    const same = await wave(['run', plan])
    expect(same.code, same.stderr).toBe(0)
    expect(same.stderr).not.toContain('differ from those approved')

    writeJson(userSettings(), {
      hooks: {
        PostToolUse: [
          {
            hooks: [
              {command: first, type: 'command'},
              {command: second, type: 'command'},
            ],
          },
        ],
      },
    })
    await wave(['approve', plan])
    writeJson(userSettings(), hooks('PostToolUse', first))
    const requests = server.messageRequests.length
    const changed = await wave(['run', plan])
    expect(changed.code).toBe(4)
    expect(changed.stderr).toContain(`The hooks in effect differ from those approved in ${recordOf(plan)}: approved but not in effect: PostToolUse "${second}"`)
    expect(changed.stderr).toContain('--allow-hook-drift')
    expect(server.messageRequests).toHaveLength(requests)

    writeJson(userSettings(), hooks('PostToolUse', second))
    await wave(['approve', plan, '--scope', 'src', '--scope-enforce', 'strict'])
    writeJson(userSettings(), hooks('PostToolUse', first))
    const strict = await wave(['run', plan])
    expect(strict.code).toBe(4)
    expect(strict.stderr).toContain(
      `approved but not in effect: PostToolUse "${second}" (user, ${userSettings()}); in effect but not approved: PostToolUse "${first}"`,
    )
    expect(server.messageRequests).toHaveLength(requests)

    // --allow-hook-drift runs it, saying what differs.
    server.push(reply('Hello.'))
    const drifted = await wave(['run', plan, '--allow-hook-drift'])
    expect(drifted.code, drifted.stderr).toBe(0)
    expect(drifted.stderr).toContain('The run goes on without the approved hooks (--allow-hook-drift).')
  })

  it('a missing approved hook (a project hook where its settings are not trusted at run time) refuses before any request; control: trusted, it runs', async () => {
    writeJson(path.join(sandbox.repo, '.claude/settings.json'), hooks('PostToolUse', 'echo formatted >> .hook-log', {matcher: 'Write'}))
    // Planned in the repository: the approval reads the hooks in effect where the plan was made.
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\nWrite x.txt.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const planned = await wave(['plan', '--task', 'Write x.txt'], {WAVE_TRUST_PROJECT_SETTINGS: '1'})
    expect(planned.code, planned.stderr).toBe(0)
    const plan = planned.stdout.trim()
    // The hook formatted the plan file as it was written: what follows counts the run's writes only.
    rmSync(path.join(sandbox.repo, '.hook-log'), {force: true})
    const approved = await wave(['approve', plan], {WAVE_TRUST_PROJECT_SETTINGS: '1'})
    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stderr).toContain('Hooks in effect (their digest is recorded): PostToolUse(Write) "echo formatted >> .hook-log" (project,')

    const requests = server.requests.length
    const untrusted = await wave(['run', plan])
    expect(untrusted.code).toBe(4)
    expect(untrusted.stderr).toContain('approved but not in effect: PostToolUse(Write) "echo formatted >> .hook-log" (project,')
    expect(server.requests).toHaveLength(requests)
    expect(existsSync(path.join(sandbox.repo, '.hook-log'))).toBe(false)

    // Control: where the project's settings are trusted, as they were at approval, the run goes on and the hook runs.
    server.push(reply(toolUse('Write', {content: 'x\n', file_path: 'x.txt'})), reply('Done.'))
    const trusted = await wave(['run', plan], {WAVE_TRUST_PROJECT_SETTINGS: '1'})
    expect(trusted.code, trusted.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, '.hook-log'), 'utf8')).toBe('formatted\n')
  })

  it('wave doctor and wave prompt list the hooks; an event wave does not fire is warned, naming the file', async () => {
    const fmt = script('fmt.sh', '#!/bin/bash\nexit 0\n')
    writeJson(userSettings(), {hooks: {...hooks('PostToolUse', fmt, {matcher: 'Write'}).hooks, Notification: [{hooks: [{command: 'true', type: 'command'}]}]}})
    const doctor = await wave(['doctor', '--offline', '--json'])
    const checks = JSON.parse(doctor.stdout).checks as Array<{name: string; detail: string; status: string}>
    expect(checks.find((check) => check.name === 'hooks')?.detail).toContain(`PostToolUse(Write) "${fmt}"`)
    expect(checks.find((check) => check.name === 'settings')?.detail).toContain(`${userSettings()}: hooks for Notification are not run`)
    const prompt = await wave(['prompt', '--mode', 'run', '--json'])
    expect(JSON.parse(prompt.stdout).hooks).toEqual([`PostToolUse(Write) "${fmt}" (user, ${userSettings()})`])
  })
})
