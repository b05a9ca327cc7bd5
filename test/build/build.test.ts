/**
 * A quiet build (issue 27), the control: the build as `npm ci` runs it (prepare: `npm run --silent build`)
 * prints nothing at all, which test/build/install-wave.test.ts checks on the build its install step makes
 * (one whole build for both); here a type error in a copy of the repository is still printed (errors reach
 * the user) and fails the build, which stops at the compiler. The copy has the build's own files (its
 * scripts and configuration) and a src/ of the one broken module: the compiler checks every file before
 * it fails, and checking all of wave's again would say nothing more (~15 s of the build tier).
 */
import {spawnSync} from 'node:child_process'
import {cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
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

beforeAll(() => {
  copy = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-build-')))
  const tracked = spawnSync('git', ['ls-files', '-z'], {cwd: PROJECT_ROOT, encoding: 'utf8'}).stdout.split('\0').filter(Boolean)
  for (const file of tracked.filter((file) => !/^(src|test|bench|docs)\//.test(file))) {
    if (existsSync(path.join(PROJECT_ROOT, file))) cpSync(path.join(PROJECT_ROOT, file), path.join(copy, file), {recursive: true})
  }
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(copy, 'node_modules'))
})

afterAll(() => rmSync(copy, {force: true, recursive: true}))

describe('the build', () => {
  it('run as prepare runs it, still prints a type error and fails', {timeout: 600_000}, () => {
    mkdirSync(path.join(copy, 'src'))
    writeFileSync(path.join(copy, 'src', 'broken.ts'), 'export const broken: number = "not a number"\n')
    const broken = npm(['run', '--silent', 'build'])
    expect(broken.status).not.toBe(0)
    expect(broken.stdout + broken.stderr).toMatch(/src\/broken\.ts.*TS2322/)
  })
})
