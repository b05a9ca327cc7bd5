import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {type DependencyInstall, dependencyInstall, dependencyLine, installError, installFailureMarkdown} from '../../../src/review/dependency-install.js'

const failed = (tail: string, command = 'npm ci --no-audit --no-fund'): DependencyInstall => ({
  command,
  exitCode: 1,
  setting: 'install-command',
  tail,
  version: 1,
  why: 'by package-lock.json',
})

describe('the job’s install as its comments say it (review/dependency-install.ts)', () => {
  it('one line: the command and why; none installed and why; a failure with its exit', () => {
    expect(dependencyLine({command: 'npm ci --no-audit --no-fund', exitCode: 0, setting: 'install-command', version: 1, why: 'by package-lock.json'})).toBe(
      'Dependencies: `npm ci --no-audit --no-fund` (by package-lock.json).',
    )
    expect(dependencyLine({command: '', exitCode: 0, setting: 'install-command', version: 1, why: 'no lockfile or manifest'})).toBe(
      'Dependencies: none installed (no lockfile or manifest).',
    )
    expect(dependencyLine(failed('x'))).toBe('Dependencies: **not installed**: `npm ci --no-audit --no-fund` (by package-lock.json) exited 1.')
    // A command holding backticks stays one code span.
    expect(dependencyLine({...failed(''), command: 'echo `date`', exitCode: 0})).toBe('Dependencies: `` echo `date` `` (by package-lock.json).')
    expect(dependencyLine(undefined)).toBeUndefined()
  })

  it('a failure’s tail: the last 30 lines, colours dropped, controls visible, in a fence its own backticks cannot close, no mention', () => {
    const lines = Array.from({length: 45}, (_, i) => `line ${i + 1}`)
    const tail = [...lines, '\u001B[31mnpm ERR!\u001B[0m @alice ````', '\u001B]8;;x\u0007'].join('\r\n')
    const said = installFailureMarkdown(failed(tail))
    const fence = /\n(`{5})\n([\s\S]*)\n\1\n/.exec(said)
    expect(fence, said).not.toBeNull()
    const shown = fence![2].split('\n')
    expect(shown).toHaveLength(30)
    expect(shown[0]).toBe('line 18')
    expect(shown.at(-2)).toBe('npm ERR! @\u200Balice ````')
    expect(shown.at(-1)).toBe('^[]8;;x^G')
    expect(said).toContain('set `install-command` to the command that installs')
    // Control: an install that wrote nothing says so, no empty fence.
    expect(installFailureMarkdown(failed(''))).toContain('It wrote nothing.')
  })

  it('the error a step stops on: exit 1, one line naming the command, the fix as its hint', () => {
    const error = installError(failed('boom'))
    expect(error.exitCode).toBe(1)
    expect(error.message).toBe(
      "The project's dependencies were not installed: `npm ci --no-audit --no-fund` (by package-lock.json) exited 1; wave asked no model and ran nothing.",
    )
    expect(error.hint).toContain('set install-command to the command')
  })

  describe('the record WAVE_INSTALL_RESULT names', () => {
    let dir: string
    beforeEach(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'wave-install-record-'))
    })
    afterEach(() => rmSync(dir, {force: true, recursive: true}))

    it('is read and checked; one missing or malformed is exit 1 naming it; unset, there is none', () => {
      const file = path.join(dir, 'install.json')
      expect(dependencyInstall({})).toBeUndefined()
      expect(() => dependencyInstall({WAVE_INSTALL_RESULT: file})).toThrow(/install\.json \(WAVE_INSTALL_RESULT\) does not exist/)
      writeFileSync(file, JSON.stringify({command: 'npm ci', exitCode: 'one', version: 1, why: 'by package-lock.json'}))
      expect(() => dependencyInstall({WAVE_INSTALL_RESULT: file})).toThrow(expect.objectContaining({exitCode: 1, message: expect.stringContaining('exitCode')}))
      writeFileSync(file, JSON.stringify({command: 'npm ci', exitCode: 0, version: 1, why: 'by package-lock.json'}))
      expect(dependencyInstall({WAVE_INSTALL_RESULT: file})).toEqual({
        command: 'npm ci',
        exitCode: 0,
        setting: 'install-command',
        version: 1,
        why: 'by package-lock.json',
      })
    })
  })
})
