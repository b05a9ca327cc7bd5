/**
 * The approval lets the model run its approved checks (issue 47): in acceptEdits, with no allow rule, the
 * model's Bash call of exactly a Verification command runs as wave runs it, so the model can reproduce a
 * failure and fix it; any other command is still refused. On a node --test project shaped like a real one.
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {gitCommitAll, type Sandbox, writePlanFile} from '../support/cli.js'
import {type MessagesServer, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const PROJECT: Record<string, string> = {
  'package.json': `${JSON.stringify({name: 'calc', private: true, scripts: {test: 'node --test'}, type: 'module', version: '1.0.0'}, null, 2)}\n`,
  'calc.js': 'export const add = (a, b) => a - b\n',
  'test/calc.test.js':
    "import assert from 'node:assert/strict'\nimport {test} from 'node:test'\n\nimport {add} from '../calc.js'\n\ntest('adds', () => assert.equal(add(2, 3), 5))\n",
}

const PLAN = `# Fix add

## Changes
- \`calc.js\`: add adds.

## Scope
- calc.js

## Verification
- \`node --test\`
`

function project(): void {
  for (const [file, content] of Object.entries(PROJECT)) {
    const absolute = path.join(sandbox.repo, file)
    mkdirSync(path.dirname(absolute), {recursive: true})
    writeFileSync(absolute, content)
  }

  gitCommitAll(sandbox.repo, 'calc')
}

describe('the approved checks, run by the model', () => {
  it('runs exactly the approved check in acceptEdits and answers with its output; another command is refused (control)', async () => {
    project()
    const planPath = writePlanFile(sandbox, PLAN)
    const approved = await wave(['approve', planPath])
    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stderr).toContain("The model may run: node --test (the approved checks, exactly as written, in the run's sandbox).")

    server.push(
      reply(toolUse('Bash', {command: 'node --test'})),
      reply(toolUse('Edit', {file_path: 'calc.js', new_string: 'a + b', old_string: 'a - b'}), toolUse('Bash', {command: 'node --test'})),
      // The control: the same tests through another command, which no rule allows.
      reply(toolUse('Bash', {command: 'npm test'})),
      reply('Fixed add.'),
    )
    const result = await wave(['run', planPath, '--json'])
    expect(result.code, result.stderr).toBe(0)
    const requests = server.messageRequests
    const [failing] = toolResults(requests[1])
    expect(failing.is_error ?? false).toBe(false)
    expect(failing.text).toMatch(/# fail 1/)
    expect(failing.text).toContain('Exit code: 1')
    const [, passing] = toolResults(requests[2])
    expect(passing.text).toMatch(/# pass 1/)
    expect(passing.text).not.toContain('Exit code')
    const [refused] = toolResults(requests[3])
    expect(refused.is_error).toBe(true)
    expect(refused.text).toContain('Permission denied')
    expect(refused.text).toContain('The approved checks run exactly as written: node --test.')

    const output = JSON.parse(result.stdout)
    expect(readFileSync(path.join(sandbox.repo, 'calc.js'), 'utf8')).toBe('export const add = (a, b) => a + b\n')
    expect(output.report.checks).toEqual([expect.objectContaining({command: 'node --test', exitCode: 0})])
    expect(output.report.denials).toEqual([expect.objectContaining({tool: 'Bash'})])
    // The prompt told the model which commands it may run.
    expect(JSON.stringify(requests[0].body.system)).toContain('Bash runs the approved checks exactly as written: node --test.')
  })

  it('grants nothing without approved checks: the same call is refused when the approval binds none (control)', async () => {
    project()
    const planPath = writePlanFile(sandbox, PLAN)
    const approved = await wave(['approve', planPath, '--no-verify'])
    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stderr).not.toContain('The model may run')
    server.push(reply(toolUse('Bash', {command: 'node --test'})), reply('Could not run the tests.'))
    const result = await wave(['run', planPath])
    expect(result.code, result.stderr).toBe(0)
    const [refused] = toolResults(server.messageRequests[1])
    expect(refused.is_error).toBe(true)
    expect(refused.text).toContain('Bash is not available in acceptEdits mode')
  })
})
