/**
 * Issue 48: which hooks run in the sandbox. A user's hook that runs a file the session could have written
 * (or a program that runs the project's files) is contained; one that only names, reads or writes
 * workspace files, or runs the user's own script, runs as the user's command (the control).
 */
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {hookSandbox, workspaceCodeIn} from '../../../../src/tools/hooks/containment.js'

const workspace = mkdtempSync(path.join(tmpdir(), 'wave-hook-containment-'))
mkdirSync(path.join(workspace, 'scripts'))
writeFileSync(path.join(workspace, 'scripts', 'stop-check.sh'), 'echo ok\n')
writeFileSync(path.join(workspace, '.hook-log'), '')
afterAll(() => rmSync(workspace, {force: true, recursive: true}))

describe('a user hook that runs the workspace', () => {
  it.each([
    ['sh ./scripts/stop-check.sh'],
    ['./scripts/stop-check.sh'],
    ['bash scripts/stop-check.sh --fast'],
    ['FOO=1 sh scripts/stop-check.sh'],
    ['echo start; sh scripts/stop-check.sh'],
    ['test -e x || node scripts/stop-check.sh'],
    ['"$CLAUDE_PROJECT_DIR"/tools/check'],
    ['npm run lint'],
    ['make check'],
  ])('%s: in the sandbox', (command) => {
    expect(workspaceCodeIn(command, workspace)).toBeDefined()
  })

  it.each([
    ['echo formatted >> .hook-log'],
    ['cat .hook-log'],
    ['sh ~/hooks/stop-check.sh'],
    ['/usr/bin/env true'],
    ['sh ./scripts/missing.sh'],
    ['sh ../outside.sh'],
  ])('%s: the user’s own command (control)', (command) => {
    expect(workspaceCodeIn(command, workspace)).toBeUndefined()
  })
})

describe('hookSandbox', () => {
  const session = {enabled: true, network: false}
  const hook = (scope: 'project' | 'user', command: string) => ({command, event: 'Stop', file: 'x', scope, timeout: 60}) as never

  it("runs a project's hook in the sandbox, throwaway in plan mode", () => {
    expect(hookSandbox(hook('project', 'touch x'), session, workspace, 'acceptEdits')).toMatchObject({enabled: true})
    expect(hookSandbox(hook('project', 'touch x'), session, workspace, 'acceptEdits').throwaway).toBeUndefined()
    expect(hookSandbox(hook('project', 'touch x'), session, workspace, 'plan')).toMatchObject({enabled: true, throwaway: true})
  })

  it("runs a user's workspace script in the sandbox, and the user's own command outside it", () => {
    expect(hookSandbox(hook('user', 'sh scripts/stop-check.sh'), session, workspace, 'bypassPermissions')).toMatchObject({enabled: true})
    expect(hookSandbox(hook('user', 'echo hi >> .hook-log'), session, workspace, 'plan')).toMatchObject({enabled: false})
  })
})
