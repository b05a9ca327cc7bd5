/**
 * A quiet build (issue 27): the build as `npm ci` runs it (prepare: `npm run --silent build`), in a copy
 * of the repository, prints nothing at all: no "wrote manifest to", no update notice, no deprecation
 * block (`npm run build` adds only npm's banner for the script). Control: a type error in the copy is
 * printed (errors still reach the user) and fails the build.
 */
import {spawnSync} from 'node:child_process'
import {cpSync, existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {PROJECT_ROOT} from '../support/cli.js'

let copy: string

/** npm as a user's shell has it: without what an enclosing `npm test` sets for its own npm. */
const npm = (args: string[]) =>
  spawnSync('npm', args, {
    cwd: copy,
    encoding: 'utf8',
    env: {...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))), NO_UPDATE_NOTIFIER: '1'},
    timeout: 240_000,
  })

/** What npm itself says about this machine's own configuration (an unknown key in ~/.npmrc), not the build's. */
const machineNotes = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^npm warn Unknown (?:env|user|global) config /.test(line))
    .join('\n')

beforeAll(() => {
  copy = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-build-')))
  const tracked = spawnSync('git', ['ls-files', '-z'], {cwd: PROJECT_ROOT, encoding: 'utf8'}).stdout.split('\0').filter(Boolean)
  for (const file of tracked) {
    if (existsSync(path.join(PROJECT_ROOT, file))) cpSync(path.join(PROJECT_ROOT, file), path.join(copy, file), {recursive: true})
  }
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(copy, 'node_modules'))
})

afterAll(() => rmSync(copy, {force: true, recursive: true}))

describe('the build', () => {
  it('prints nothing when run as prepare runs it; a type error still shows', {timeout: 600_000}, () => {
    const silent = npm(['run', '--silent', 'build'])
    expect(silent.status, silent.stderr).toBe(0)
    expect(silent.stdout).toBe('')
    expect(machineNotes(silent.stderr)).toBe('')
    expect(existsSync(path.join(copy, 'oclif.manifest.json'))).toBe(true)
    expect(existsSync(path.join(copy, 'dist', 'root-help.json'))).toBe(true)

    // Control: an error is not silenced.
    writeFileSync(path.join(copy, 'src', 'broken.ts'), 'export const broken: number = "not a number"\n')
    const broken = npm(['run', '--silent', 'build'])
    expect(broken.status).not.toBe(0)
    expect(broken.stdout + broken.stderr).toMatch(/src\/broken\.ts.*TS2322/)
  })
})
