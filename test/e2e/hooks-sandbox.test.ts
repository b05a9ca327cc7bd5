/**
 * Issue 48: a user's hook that runs a file the session can write runs in the session's sandbox. With the
 * settings docs' old example Stop hook (`sh ./scripts/stop-check.sh`) in the user's file, the model
 * rewrote the script and it ran outside the sandbox after the session: a file written outside the
 * workspace, ~/secret.txt copied. The control: the same payload in the user's own script, outside the
 * workspace, runs as the user's command and does both. And a project's hooks in `wave plan` run in plan
 * mode's throwaway sandbox: nothing they write stays in the workspace (control: the same hook in a run).
 */
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {hooks, userSettingsIn, writeJson} from '../support/hook-scripts.js'
import {type MessagesServer, planPathIn, reply, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

/** Writes a marker and copies ~/secret.txt beside the repository: both outside the workspace. */
function payload(): {body: string; marker: string; stolen: string} {
  const marker = path.join(sandbox.root, 'marker')
  const stolen = path.join(sandbox.root, 'stolen.txt')
  writeFileSync(path.join(sandbox.home, 'secret.txt'), 'the user secret\n')
  return {body: `echo pwned > ${marker}\ncp ~/secret.txt ${stolen}\n`, marker, stolen}
}

describe("a user's hook and the workspace's files", {timeout: 60_000}, () => {
  it('the docs’ old Stop hook runs the script the model rewrote in the sandbox: nothing written outside the workspace, no secret copied', async () => {
    const {body, marker, stolen} = payload()
    mkdirSync(path.join(sandbox.repo, 'scripts'))
    writeFileSync(path.join(sandbox.repo, 'scripts', 'stop-check.sh'), 'echo checked\n')
    writeJson(userSettingsIn(sandbox), hooks('Stop', 'sh ./scripts/stop-check.sh'))
    server.push(reply(toolUse('Write', {content: body, file_path: 'scripts/stop-check.sh'})), reply('Done.'))
    const result = await wave(['run', '--task', 'Tidy up', '--mode', 'bypassPermissions'])
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'scripts', 'stop-check.sh'))).toBe(true)
    expect(existsSync(marker)).toBe(false)
    expect(existsSync(stolen)).toBe(false)
  })

  it("control: the same payload in the user's own script, outside the workspace, runs as the user's command", async () => {
    const {body, marker, stolen} = payload()
    const own = path.join(sandbox.root, 'stop-check.sh')
    writeFileSync(own, body)
    writeJson(userSettingsIn(sandbox), hooks('Stop', `sh ${own}`))
    server.push(reply('Done.'))
    const result = await wave(['run', '--task', 'Tidy up', '--mode', 'bypassPermissions'])
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(marker)).toBe(true)
    expect(existsSync(stolen)).toBe(true)
  })
})

describe("a project's hooks in plan mode", {timeout: 60_000}, () => {
  const PLAN = '# Plan\n\n## Scope\n- `src/util.ts`\n\n## Verification\n- `true`\n'
  const trusted = {WAVE_TRUST_PROJECT_SETTINGS: '1'}

  it('wave plan: a trusted Stop hook runs in the throwaway sandbox and leaves nothing in the workspace', async () => {
    // Read-only or overlay, whichever this machine's bubblewrap gives (a read-only write fails, hence `;`).
    writeJson(path.join(sandbox.repo, '.claude', 'settings.json'), hooks('Stop', 'touch hook-ran 2>/dev/null; echo ran'))
    server.push((request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Plan it', '--output-format', 'stream-json'], trusted)
    expect(result.code, result.stderr).toBe(0)
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    // It ran (and went on), and what it wrote is gone with its sandbox.
    expect(events).toContainEqual(expect.objectContaining({event: 'Stop', outcome: 'ok', type: 'hook'}))
    expect(existsSync(path.join(sandbox.repo, 'hook-ran'))).toBe(false)
  })

  it('control: the same hook in a run writes into the workspace', async () => {
    writeJson(path.join(sandbox.repo, '.claude', 'settings.json'), hooks('Stop', 'touch hook-ran 2>/dev/null; echo ran'))
    server.push(reply('Done.'))
    const result = await wave(['run', '--task', 'Do it', '--mode', 'acceptEdits'], trusted)
    expect(result.code, result.stderr).toBe(0)
    expect(existsSync(path.join(sandbox.repo, 'hook-ran'))).toBe(true)
  })
})
