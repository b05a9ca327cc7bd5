/**
 * A Claude Code team's permissions, read as its users write them (issue 47): a `.claude/settings.json`
 * deny holds whether or not the project's settings are trusted, judged by the file on disk; what wave
 * cannot honour is named by `wave doctor` and `wave approve`.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {SANDBOX_FILES, type Sandbox} from '../support/cli.js'
import {writeJson} from '../support/hook-scripts.js'
import {type MessagesServer, planPathIn, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const util = () => readFileSync(path.join(sandbox.repo, 'src/util.ts'), 'utf8')
const settingsFile = () => path.join(sandbox.repo, '.claude', 'settings.json')

describe("Claude Code's permissions", () => {
  it('a .claude/settings.json deny holds, untrusted: the write and the command are refused, the file unchanged; without it both run (control)', async () => {
    writeJson(settingsFile(), {permissions: {deny: ['Edit(./src/util.ts)', 'Bash(rm:*)']}})
    const turns = () => [
      reply(toolUse('Write', {content: 'export const greet = () => "pwned"\n', file_path: 'src/util.ts'}), toolUse('Bash', {command: 'rm src/app.ts'})),
      reply('Done.'),
    ]
    server.push(...turns())
    const denied = await wave(['run', '--task', 'Rewrite util', '--mode', 'bypassPermissions'])
    expect(denied.code, denied.stderr).toBe(0)
    expect(util()).toBe(SANDBOX_FILES['src/util.ts'])
    expect(readFileSync(path.join(sandbox.repo, 'src/app.ts'), 'utf8')).toBe(SANDBOX_FILES['src/app.ts'])
    const [write, rm] = toolResults(server.messageRequests[1])
    expect(write.text).toContain('Edit(./src/util.ts)')
    expect(rm.text).toContain('Bash(rm:*)')

    // Control: the same calls, with no deny in the file, change the disk.
    writeJson(settingsFile(), {permissions: {}})
    server.push(...turns())
    const open = await wave(['run', '--task', 'Rewrite util', '--mode', 'bypassPermissions'])
    expect(open.code, open.stderr).toBe(0)
    expect(util()).toContain('pwned')
    expect(() => readFileSync(path.join(sandbox.repo, 'src/app.ts'))).toThrow(/ENOENT/)
  })

  it('names what wave cannot honour in wave doctor and at approve, and shows the rules in effect', async () => {
    writeJson(settingsFile(), {permissions: {additionalDirectories: ['../shared'], deny: ['Bash(curl:*)', 'WebFetch(https://internal.example)']}})
    const doctor = await wave(['doctor', '--offline', '--json'])
    const settings = (JSON.parse(doctor.stdout).checks as Array<{name: string; detail: string}>).find((check) => check.name === 'settings')
    expect(settings?.detail).toContain(`${settingsFile()}: permissions.additionalDirectories is not honoured`)
    expect(settings?.detail).toContain('the deny rule WebFetch(https://internal.example) is honoured as WebFetch, all of it')

    // Planned here: the approval reads the settings of the workspace the plan was made in.
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n\nSay hello.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const planned = await wave(['plan', '--task', 'Say hello'])
    expect(planned.code, planned.stderr).toBe(0)
    const approved = await wave(['approve', planned.stdout.trim()])
    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stderr).toContain('permissions.additionalDirectories is not honoured')
    expect(approved.stderr).toContain('Settings rules in effect')
    expect(approved.stderr).toContain('deny Bash(curl:*), WebFetch')
  })
})
