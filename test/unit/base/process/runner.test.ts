import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {WaveError} from '../../../../src/base/errors.js'
import {assertSandboxForCommands, grantsCommands, spawnFor} from '../../../../src/base/process/runner.js'
import {resetSandboxStatus} from '../../../../src/base/process/sandbox.js'

const savedPath = process.env.PATH
const dirs: string[] = []
afterEach(() => {
  process.env.PATH = savedPath
  resetSandboxStatus()
  for (const dir of dirs.splice(0)) rmSync(dir, {force: true, recursive: true})
})

/** Makes this process see no bwrap (a PATH of one empty directory), as a machine without bubblewrap does. */
function withoutBwrap(): void {
  const dir = mkdtempSync(path.join(tmpdir(), 'wave-runner-'))
  dirs.push(dir)
  process.env.PATH = dir
  resetSandboxStatus()
}

describe('the gate before a run: an approval granting commands needs the sandbox', () => {
  it.each([
    ['a Bash rule', {allow: ['Bash(npm test:*)'], mode: 'acceptEdits'}, true],
    ['bypassPermissions', {allow: [], mode: 'bypassPermissions'}, true],
    ['approved checks', {allow: [], mode: 'acceptEdits', verify: [{command: 'npm test'}]}, true],
    ['no command at all', {allow: ['Read(./src/**)'], mode: 'acceptEdits', verify: []}, false],
  ])('%s: grants commands %s', (_name, grant, expected) => {
    expect(grantsCommands(grant)).toBe(expected)
  })

  it('refuses such a run where the sandbox cannot start (exit 2, the fix named), as spawnFor refuses its commands', () => {
    withoutBwrap()
    const refusal = (() => {
      try {
        assertSandboxForCommands({allow: [], mode: 'acceptEdits', verify: [{command: 'npm test'}]})
      } catch (error) {
        return error
      }
    })()
    expect(refusal).toBeInstanceOf(WaveError)
    expect((refusal as WaveError).exitCode).toBe(2)
    expect((refusal as WaveError).message).toMatch(/^The approval grants commands and checks, and the sandbox .* bubblewrap \(bwrap\) is not installed/)
    expect(spawnFor('npm test', {root: '/'})).toEqual({problem: expect.stringContaining('bubblewrap (bwrap) is not installed')})
  })

  it('lets the controls through: nothing granted, or an approval that turned the sandbox off', () => {
    withoutBwrap()
    expect(() => assertSandboxForCommands({allow: ['Read(./src/**)'], mode: 'acceptEdits'})).not.toThrow()
    expect(() => assertSandboxForCommands({allow: ['Bash(npm test:*)'], mode: 'acceptEdits', sandbox: {enabled: false}})).not.toThrow()
  })
})
