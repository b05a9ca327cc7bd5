/** Settings files end to end: precedence as the model sees it, the plans directory, and bad files (exit 2). */
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, reply, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))
const userFile = () => path.join(sandbox.home, '.wave', 'settings.json')
const projectFile = () => path.join(sandbox.repo, '.wave', 'settings.json')

function write(file: string, content: unknown): void {
  mkdirSync(path.dirname(file), {recursive: true})
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content))
}

const planTurns = () => [
  (request: Parameters<typeof planPathIn>[0]) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})),
  reply('Planned.'),
]

describe('settings files', () => {
  it.each<[string, unknown, unknown, string[], Record<string, string>, string]>([
    ['the default', undefined, undefined, [], {}, 'claude-sonnet-5-5'],
    ['the user file', {model: 'user-model'}, undefined, [], {}, 'user-model'],
    ['a trusted project file over the user file', {model: 'user-model'}, {model: 'project-model'}, [], {WAVE_TRUST_PROJECT_SETTINGS: '1'}, 'project-model'],
    ["not an untrusted project file: its model is the user's to pay for", {model: 'user-model'}, {model: 'project-model'}, [], {}, 'user-model'],
    ['WAVE_MODEL over the files', {model: 'user-model'}, {model: 'project-model'}, [], {WAVE_MODEL: 'env-model'}, 'env-model'],
    ['--model over everything', {model: 'user-model'}, {model: 'project-model'}, ['--model', 'flag-model'], {WAVE_MODEL: 'env-model'}, 'flag-model'],
  ])('model: %s', async (_name, userSettings, projectSettings, flags, env, expected) => {
    if (userSettings) write(userFile(), userSettings)
    if (projectSettings) write(projectFile(), projectSettings)
    server.push(...planTurns())
    const result = await wave(['plan', '--task', 'Which model?', ...flags], env)
    expect(result.code, result.stderr).toBe(0)
    expect(server.messageRequests[0].body.model).toBe(expected)
  })

  it('plansDirectory in the user file moves where plans go', async () => {
    write(userFile(), {plansDirectory: 'elsewhere/plans'})
    server.push(...planTurns())
    const result = await wave(['plan', '--task', 'Where?'])
    expect(result.code, result.stderr).toBe(0)
    expect(path.dirname(result.stdout.trim())).toBe(path.join(sandbox.home, '.wave', 'elsewhere', 'plans'))
    const listed = await wave(['plans', '--json'])
    expect(listed.stdout).toContain(path.basename(result.stdout.trim(), '.md'))
  })

  it.each<[string, () => string, string, RegExp]>([
    ['a user file that is not JSON', userFile, '{"model": ', /not valid JSON/],
    ['a bad rule in the project file', projectFile, '{"permissions": {"allow": ["Bash("]}}', /permissions\.allow\[0\]: Invalid permission rule "Bash\("/],
    ['a misspelt setting', userFile, '{"permisions": {"allow": ["Edit"]}}', /: permisions: unknown setting\.$/m],
    ['plansDirectory in a project file', projectFile, '{"plansDirectory": "/tmp"}', /plansDirectory: can be set only in the user settings file/],
  ])('%s: exit 2 naming the file, the field and the problem, before any request', async (_name, file, content, problem) => {
    write(file(), content)
    for (const args of [['plan', '--task', 'x'], ['tools']]) {
      const result = await wave(args)
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toContain(`Error: Invalid settings file ${file()}: `)
      expect(result.stderr).toMatch(problem)
      expect(result.stderr).not.toContain('    at ')
    }

    expect(server.requests).toHaveLength(0)
    const json = await wave(['plan', '--task', 'x', '--json'])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toMatchObject({error: {exitCode: 2}, ok: false})
  })

  it('a bad file stops wave run too, with exit 2', async () => {
    write(userFile(), '{"permissions": {"deny": "Bash"}}')
    mkdirSync(sandbox.plansDir, {recursive: true})
    const planPath = path.join(sandbox.plansDir, 'odd-yak.md')
    writeFileSync(planPath, '# Plan\n')
    const result = await wave(['run', planPath, '--approve'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`Invalid settings file ${userFile()}: permissions.deny: `)
    expect(server.requests).toHaveLength(0)
  })
})

describe('WAVE_HOME and the workspace', () => {
  it.each([
    ['inside the workspace', () => path.join(sandbox.repo, '.wave-home')],
    ['the workspace inside WAVE_HOME', () => sandbox.root],
  ])('refuses a WAVE_HOME %s (exit 2, one line, no request, nothing written)', async (_name, home) => {
    const result = await wave(['plan', '--task', 'Anything'], {WAVE_HOME: home()})
    expect(result.code).toBe(2)
    expect(result.stderr.split('\n').filter((line) => line.startsWith('Error:'))).toHaveLength(1)
    expect(result.stderr).toMatch(/WAVE_HOME/)
    expect(server.messageRequests).toHaveLength(0)
    expect(existsSync(path.join(sandbox.repo, '.wave-home'))).toBe(false)
  })
})
