/**
 * `wave demo` as a newcomer runs it: no key, no network, a user environment that points elsewhere, and
 * afterwards nothing left in the temporary directory (or, with --keep, the repository and plans there).
 * Needs dist/ (`wbuild` / `npm run build`).
 */
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {createServer, type IncomingHttpHeaders, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {probeSandbox} from '../../src/base/process/sandbox.js'
import {runWave} from '../support/cli.js'

const USER_KEY = 'sk-ant-users-own-key-must-stay-home'
const sandboxHere = probeSandbox().available

let root: string
let tmp: string
let home: string
/** The endpoint the user's own ANTHROPIC_BASE_URL names: the demo must never call it. */
let userEndpoint: Server
let userRequests: IncomingHttpHeaders[]

beforeEach(async () => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-demo-e2e-')))
  tmp = path.join(root, 'tmp')
  home = path.join(root, 'home')
  mkdirSync(tmp)
  mkdirSync(home)
  userRequests = []
  userEndpoint = createServer((request, response) => {
    userRequests.push(request.headers)
    response.statusCode = 500
    response.end()
  })
  await new Promise<void>((resolve) => userEndpoint.listen(0, '127.0.0.1', resolve))
})

afterEach(async () => {
  await new Promise<void>((resolve) => userEndpoint.close(() => resolve()))
  rmSync(root, {force: true, recursive: true})
})

/** `wave demo ...args` with the user's key, endpoint and model set, and a TMPDIR of its own to inspect. */
function demo(args: string[], env: Record<string, string> = {}) {
  return runWave(['demo', ...args], {
    cwd: root,
    env: {
      ANTHROPIC_API_KEY: USER_KEY,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${(userEndpoint.address() as AddressInfo).port}`,
      TMPDIR: tmp,
      WAVE_MODEL: 'claude-users-choice',
      ...env,
    },
    home,
    timeoutMs: 60_000,
  })
}

/** The run's planned-versus-actual tally once the check passed on the retry turn. */
const TALLY = 'Planned versus actual: Run complete: 2 changed in scope, 0 outside, 0 untouched; checks: npm test passed; 0 calls denied'

describe('wave demo', {timeout: 60_000}, () => {
  it('plans, approves and runs, prints the plan, the record and the diff, and leaves nothing behind', async () => {
    const result = await demo([])

    expect(result.stderr).not.toContain('Error')
    expect(result.code).toBe(0)
    const out = result.stdout
    expect(out).toContain('== 1. wave plan --task')
    expect(out).toContain('# Plan: greet() greets the world when no name is given')
    // The plan is a contract, and the approval binds it.
    expect(out).toContain('## Scope\n\n- `src/greet.js`\n- `test/greet-default.test.js`\n')
    expect(out).toContain('## Verification\n\n- `npm test`')
    expect(out).toContain('"scope": {\n    "enforce": "warn",\n    "paths": [\n      "src/greet.js",\n      "test/greet-default.test.js"\n    ]\n  }')
    expect(out).toContain('"verify": [\n    {\n      "command": "npm test"\n    }\n  ]')
    // The check fails once, the model reads why on the retry turn and fixes it, and the check passes.
    expect(out).toMatch(
      /Write test\/greet-default\.test\.js\n {2}wave ran npm test: failed \(exit 1\) in [\d.]+ s\n {2}> npm test failed: got 'Hello, World!', expected 'Hello, world!'.*\n {2}Edit src\/greet\.js\n {2}wave ran npm test: passed in [\d.]+ s\n/,
    )
    expect(out).toContain(TALLY)
    expect(out).toContain('Files changed: src/greet.js, test/greet-default.test.js')
    expect(out).toContain("-export function greet(name) {\n+export function greet(name = 'world') {")
    expect(out).toContain('+++ b/test/greet-default.test.js')
    expect(out).toContain('\nwave approve "$PLAN"\nwave run "$PLAN"')
    // Progress on stderr, one line per step.
    expect(result.stderr).toMatch(/\[1\/3\] wave plan --task/)
    expect(result.stderr).toMatch(/\[3\/3\] wave run \S+\.md/)

    // The user's key and endpoint stayed out of it.
    expect(userRequests).toEqual([])
    expect(out + result.stderr).not.toContain(USER_KEY)
    // Temporary repository, plans, server: all gone.
    expect(readdirSync(tmp)).toEqual([])
  })

  it('--json: one object with the steps; --keep keeps the repository and the plans', async () => {
    const kept = path.join(root, 'kept')
    const result = await demo(['--json', '--keep', kept])

    expect(result.code).toBe(0)
    const lines = result.stdout.trim().split('\n')
    expect(lines).toHaveLength(1)
    const json = JSON.parse(lines[0])
    expect(json).toMatchObject({ok: true, version: 1})
    expect(json.steps.map((step: {name: string; exitCode: number}) => [step.name, step.exitCode])).toEqual([
      ['plan', 0],
      ['approve', 0],
      ['run', 0],
    ])
    expect(json.steps[0].result).toMatchObject({ok: true, planPath: json.plan.path})
    expect(json.run.filesChanged).toEqual(['src/greet.js', 'test/greet-default.test.js'])
    expect(json.steps[2].checks.map((check: {command: string; exitCode: number}) => [check.command, check.exitCode])).toEqual([
      ['npm test', 1],
      ['npm test', 0],
    ])
    expect(json.run.report).toMatchObject({changed: ['src/greet.js', 'test/greet-default.test.js'], outOfScope: [], untouched: []})
    expect(json.run.report.checks).toMatchObject([{command: 'npm test', exitCode: 0}])
    expect(json.diff).toContain("+export function greet(name = 'world') {")
    expect(json.sandbox.available).toBe(sandboxHere)
    expect(json.kept).toEqual({directory: kept, repository: path.join(kept, 'repo'), waveHome: path.join(kept, 'wave-home')})

    // What was kept is what the steps made: the changed repository, the plan and its approval record.
    expect(readFileSync(path.join(kept, 'repo', 'src', 'greet.js'), 'utf8')).toContain("greet(name = 'world')")
    expect(existsSync(path.join(kept, 'repo', 'test', 'greet-default.test.js'))).toBe(true)
    expect(path.dirname(json.plan.path)).toBe(path.join(kept, 'wave-home', 'plans'))
    expect(readFileSync(json.plan.path, 'utf8')).toBe(json.plan.text)
    const record = JSON.parse(readFileSync(json.approval.path, 'utf8'))
    expect(record).toMatchObject({allow: [], decision: 'approved', mode: 'acceptEdits', verify: [{command: 'npm test'}]})
    expect(record.sandbox.enabled).toBe(sandboxHere)
    expect(record).toEqual(json.approval.record)
    expect(JSON.parse(readFileSync(json.plan.path.replace(/\.md$/, '.state.json'), 'utf8')).status).toBe('ran')

    expect(userRequests).toEqual([])
    expect(readdirSync(tmp)).toEqual([])
  })

  it('refuses to --keep into a directory that holds files (exit 2), touching nothing', async () => {
    const kept = path.join(root, 'busy')
    mkdirSync(kept)
    writeFileSync(path.join(kept, 'notes.txt'), 'mine\n')

    const result = await demo(['--keep', kept])

    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--keep needs a new or empty directory')
    expect(readdirSync(kept)).toEqual(['notes.txt'])
    expect(readdirSync(tmp)).toEqual([])
  })

  it('still shows the contract where the sandbox cannot start, approving its check with --sandbox off and saying why', async () => {
    const result = await demo([], {PATH: pathWithoutBwrap()})

    expect(result.code).toBe(0)
    // An approved check that cannot be contained fails; the demo's approver decides, visibly, to run it unsandboxed.
    expect(result.stderr).toMatch(/\[2\/3\] wave approve \S+\.md --sandbox off/)
    expect(result.stdout).toContain('bubblewrap (bwrap) is not installed')
    expect(result.stdout).toContain('The sandbox cannot start here, so the demo approved its check with --sandbox off')
    expect(result.stdout).toContain('"sandbox": {\n    "enabled": false')
    expect(result.stdout).toContain('wave ran npm test: failed (exit 1)')
    expect(result.stdout).toContain(TALLY)
    expect(result.stdout).toContain("+export function greet(name = 'world') {")
    expect(readdirSync(tmp)).toEqual([])
  })
})

/** PATH with every directory that holds bwrap replaced by one of symlinks to all else it holds. */
function pathWithoutBwrap(): string {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir, i) => {
      if (!existsSync(path.join(dir, 'bwrap'))) return dir
      const shadow = path.join(root, `path-${i}`)
      mkdirSync(shadow)
      for (const name of readdirSync(dir)) if (name !== 'bwrap') symlinkSync(path.join(dir, name), path.join(shadow, name))
      return shadow
    })
    .join(path.delimiter)
}
