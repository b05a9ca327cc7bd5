/**
 * Hooks' own writes are the hook's, not the model's (issue 47): a formatter hook that keeps a git-ignored
 * log does not fail a strict run, and the report lists the log on its own; the same write made by the
 * model's command fails it (exit 7).
 */
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {gitCommitAll, type Sandbox, writePlanFile} from '../support/cli.js'
import {hooks, userSettingsIn, writeJson} from '../support/hook-scripts.js'
import {type MessagesServer, reply, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const PLAN = '# Rename greet\n\n## Scope\n- src/util.ts\n'
const UTIL = 'export function greet(name: string): string {\n  return `hi ${name}`\n}\n'

async function strictRun(turn: ReturnType<typeof reply>): Promise<{code: number | null; stderr: string; report: Record<string, unknown>}> {
  const plan = writePlanFile(sandbox, PLAN)
  const approved = await wave(['approve', plan, '--scope-enforce', 'strict', '--mode', 'bypassPermissions'])
  expect(approved.code, approved.stderr).toBe(0)
  server.push(turn, reply('Done.'))
  const result = await wave(['run', plan, '--json'])
  const report = JSON.parse(result.stdout || '{}').report ?? JSON.parse(result.stdout || '{}').error?.details?.report ?? {}
  return {code: result.code, report, stderr: result.stderr}
}

describe("hooks' writes", () => {
  it("a hook's git-ignored log is the hook's: a strict run exits 0 and lists it apart; the same write by the model's command exits 7 (control)", async () => {
    writeFileSync(path.join(sandbox.repo, '.gitignore'), 'ignored/\n*.log\n')
    gitCommitAll(sandbox.repo, 'ignore logs')
    writeJson(userSettingsIn(sandbox), hooks('PostToolUse', 'echo formatted >> .hook.log', {matcher: 'Write'}))

    const hooked = await strictRun(reply(toolUse('Write', {content: UTIL, file_path: 'src/util.ts'})))
    expect(hooked.code, hooked.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, '.hook.log'), 'utf8')).toBe('formatted\n')
    expect(hooked.report).toMatchObject({changed: ['src/util.ts'], hookOutputs: ['.hook.log'], outOfScope: []})

    // Control: no hook; the model's own command writes the same ignored file, outside the strict scope.
    writeJson(userSettingsIn(sandbox), {})
    const commanded = await strictRun(
      reply(toolUse('Write', {content: UTIL, file_path: 'src/util.ts'}), toolUse('Bash', {command: 'echo formatted >> .hook.log'})),
    )
    expect(commanded.code, commanded.stderr).toBe(7)
    expect(commanded.stderr).toContain('.hook.log')
  })
})
