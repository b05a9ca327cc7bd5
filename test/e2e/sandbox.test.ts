/**
 * Issue #11's sandbox as a user meets it: `wave doctor` with and without bubblewrap on PATH, a run whose
 * Bash call is refused with the fix named when the sandbox cannot start, and `--sandbox` on approve.
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {TEST_API_KEY, writePlanFile} from '../support/cli.js'
import {reply, toolResults, toolUse} from '../support/messages-server.js'
import {type ScriptedSession, useScriptedSession, waveIn} from '../support/session.js'

let session: ScriptedSession
useScriptedSession((ready) => (session = ready))
const wave = waveIn(() => session)

/**
 * PATH as it is, but with every directory that holds bwrap replaced by a copy (of symlinks) without it:
 * node, git and the rest stay where wave finds them.
 */
function pathWithoutBwrap(): string {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)
  return dirs
    .map((dir, i) => {
      if (!existsSync(path.join(dir, 'bwrap'))) return dir
      const shadow = path.join(session.sandbox.root, `path-${i}`)
      mkdirSync(shadow)
      for (const name of readdirSync(dir)) if (name !== 'bwrap') symlinkSync(path.join(dir, name), path.join(shadow, name))
      return shadow
    })
    .join(path.delimiter)
}

const FIX = /bubblewrap \(bwrap\) is not installed or not on PATH\. Fix: install it \(sudo apt-get install bubblewrap/

describe('wave doctor', () => {
  let endpoint: Server
  let endpointUrl: string
  beforeEach(async () => {
    // Any HTTP answer shows the endpoint is reachable: this one answers 404 to everything.
    // Lists models for the test key, refuses any other (as the API does), and is a 404 for anything else.
    endpoint = createServer((request, response) => {
      if (request.url?.startsWith('/v1/models')) response.statusCode = request.headers['x-api-key'] === TEST_API_KEY ? 200 : 401
      else response.statusCode = 404
      response.end(response.statusCode === 200 ? '{"data": [], "has_more": false}' : '')
    })
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve))
    endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}`
  })
  afterEach(() => new Promise<void>((resolve) => endpoint.close(() => resolve())))

  const env = (extra: Record<string, string | undefined> = {}) => ({ANTHROPIC_API_KEY: TEST_API_KEY, ANTHROPIC_BASE_URL: endpointUrl, ...extra})

  it('says the endpoint refused the key, and fails (exit 1), with a request that costs nothing', async () => {
    const refused = await wave(['doctor'], env({ANTHROPIC_API_KEY: 'sk-refused-key'}))
    expect(refused.code).toBe(1)
    expect(refused.stdout).toMatch(/^endpoint\s+FAIL\s+http:\/\/127\.0\.0\.1:\d+ refused the credentials \(HTTP 401\)\. Fix: check ANTHROPIC_API_KEY/m)
    expect(refused.stdout + refused.stderr).not.toContain('sk-refused-key')
    // Control: the key the endpoint accepts.
    const accepted = await wave(['doctor'], env())
    expect(accepted.code, accepted.stdout).toBe(0)
    expect(accepted.stdout).toMatch(/^endpoint\s+ok\s+http:\/\/127\.0\.0\.1:\d+ accepted the credentials \(HTTP 200, listing models\)/m)
  })

  it('passes every check where the sandbox starts, and never shows the key', async () => {
    const result = await wave(['doctor'], env())
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^CHECK\s+RESULT\s+DETAIL$/)
    expect(lines.slice(1).map((line) => line.split(/\s+/).slice(0, 2).join(' '))).toEqual([
      'sandbox ok',
      'shell-grammar ok',
      'provider ok',
      'credentials ok',
      'endpoint ok',
      'settings ok',
      'telemetry skipped',
    ])
    expect(result.stdout).toMatch(/sandbox\s+ok\s+bubblewrap [\d.]+ at \S+\/bwrap starts a sandbox here/)
    expect(result.stdout).toContain('ANTHROPIC_API_KEY is set (value not shown)')
    expect(result.stdout).toContain(`${endpointUrl} accepted the credentials (HTTP 200, listing models)`)
    expect(result.stdout + result.stderr).not.toContain(TEST_API_KEY)
  })

  it('takes the provider from the user settings file, as a session does', async () => {
    mkdirSync(path.join(session.sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(session.sandbox.home, '.wave', 'settings.json'), JSON.stringify({provider: 'bedrock'}))
    const result = await wave(['doctor', '--offline'], env({ANTHROPIC_API_KEY: undefined, AWS_REGION: 'us-east-1'}))
    expect(result.code, result.stdout + result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^provider\s+ok\s+bedrock, chosen by the user settings' provider$/m)
    expect(result.stdout).toMatch(/credentials\s+ok\s+provider bedrock: its settings are set/)
    expect(result.stdout).toMatch(/endpoint\s+skipped\s+provider bedrock: the endpoint is the cloud's/)
  })

  it('fails with exit 1 and names the fix when bwrap is not on PATH', async () => {
    const result = await wave(['doctor'], env({PATH: pathWithoutBwrap()}))
    expect(result.code, result.stderr).toBe(1)
    const sandboxLine = result.stdout.split('\n').find((line) => line.startsWith('sandbox'))
    expect(sandboxLine).toMatch(/^sandbox\s+FAIL\s+The sandbox cannot start: /)
    expect(sandboxLine).toMatch(FIX)
    expect(result.stdout).toMatch(/credentials\s+ok/)
  })

  it('--json: {version, ok, checks}; a missing key fails, an unreachable endpoint only warns', async () => {
    const result = await wave(['doctor', '--json'], env({ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', PATH: pathWithoutBwrap()}))
    expect(result.code, result.stderr).toBe(1)
    const output = JSON.parse(result.stdout)
    expect(output).toMatchObject({ok: false, version: 1})
    const byName = Object.fromEntries(output.checks.map((check: {name: string}) => [check.name, check]))
    expect(Object.keys(byName)).toEqual(['sandbox', 'shell-grammar', 'provider', 'credentials', 'endpoint', 'settings', 'telemetry'])
    expect(byName.telemetry).toMatchObject({required: false, status: 'skip'})
    expect(byName.sandbox).toMatchObject({required: true, status: 'fail'})
    expect(byName.sandbox.detail).toMatch(FIX)
    expect(byName['shell-grammar']).toMatchObject({required: true, status: 'pass'})
    expect(byName.credentials).toMatchObject({required: true, status: 'fail'})
    expect(byName.credentials.detail).toMatch(/ANTHROPIC_API_KEY/)
    expect(byName.endpoint).toMatchObject({required: false, status: 'warn'})
    expect(byName.endpoint.detail).toMatch(/ECONNREFUSED/)
    expect(byName.settings).toMatchObject({required: true, status: 'pass'})
  })

  it('fails on an invalid settings file, naming it', async () => {
    mkdirSync(path.join(session.sandbox.repo, '.wave'))
    writeFileSync(path.join(session.sandbox.repo, '.wave', 'settings.json'), '{"sandbox": {"env": ["NOT A NAME"]}}')
    const result = await wave(['doctor', '--offline'], env())
    expect(result.code, result.stderr).toBe(1)
    expect(result.stdout).toMatch(/settings\s+FAIL\s+Invalid settings file .*\.wave\/settings\.json: sandbox\.env/)
    expect(result.stdout).toMatch(/endpoint\s+skipped/)
  })
})

describe('a run granted commands when the sandbox cannot start', () => {
  it('refuses to start (exit 2) with the fix named: no model request, no record, the command never runs', async () => {
    const planPath = writePlanFile(session.sandbox, '# Plan\n\n1. Touch a file.\n')
    session.server.push(reply(toolUse('Bash', {command: 'touch from-bash.txt'})), reply('Could not run it.'))
    const result = await wave(['run', planPath, '--approve', '--allow', 'Bash(touch:*)'], {PATH: pathWithoutBwrap()})
    expect(result.code, result.stderr).toBe(2)
    expect(result.stdout).toBe('')
    const [first] = result.stderr.split('\n')
    expect(first).toMatch(/^Error: The approval grants commands, and the sandbox they would run in cannot start here, so the run does not start: /)
    expect(first).toMatch(FIX)
    expect(session.server.messageRequests).toHaveLength(0)
    expect(existsSync(planPath.replace(/\.md$/, '.approval.json'))).toBe(false)
    expect(existsSync(path.join(session.sandbox.repo, 'from-bash.txt'))).toBe(false)
  })

  it('refuses a recorded approval with a Bash rule the same way, and a plain acceptEdits approval still runs (control)', async () => {
    const granted = writePlanFile(session.sandbox, '# Plan\n\n1. Run the tests.\n')
    expect((await wave(['approve', granted, '--allow', 'Bash(npm test:*)'])).code).toBe(0)
    const noBwrap = pathWithoutBwrap()
    const refused = await wave(['run', granted], {PATH: noBwrap})
    expect(refused.code, refused.stderr).toBe(2)
    expect(refused.stderr).toMatch(FIX)
    expect(session.server.messageRequests).toHaveLength(0)

    // No command granted: nothing needs the sandbox, and the run starts.
    const plain = writePlanFile(session.sandbox, '# Plan\n\n1. Say hello.\n')
    expect((await wave(['approve', plain])).code).toBe(0)
    session.server.push(reply('Hello.'))
    const ran = await wave(['run', plain], {PATH: noBwrap})
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout.trim()).toBe('Hello.')
  })

  it("counts a refused call in the run's closing tally", async () => {
    const planPath = writePlanFile(session.sandbox, '# Plan\n\n1. Read a file outside the workspace.\n')
    session.server.push(reply(toolUse('Bash', {command: 'curl https://example.com'})), reply('Could not.'))
    const result = await wave(['run', planPath, '--approve', '--allow', 'Bash(npm test:*)'])
    expect(result.code, result.stderr).toBe(0)
    expect(toolResults(session.server.messageRequests[1])[0].is_error).toBe(true)
    expect(result.stderr).toMatch(/^done in 2 turns; 0 files changed; 1 call denied; /m)
  })
})

describe('wave approve --sandbox', () => {
  const recordOf = async (...flags: string[]) => {
    const planPath = writePlanFile(session.sandbox, '# Plan\n\n1. Do it.\n')
    const result = await wave(['approve', planPath, ...flags])
    expect(result.code, result.stderr).toBe(0)
    return {record: JSON.parse(readFileSync(result.stdout.trim(), 'utf8')), stderr: result.stderr}
  }

  it('records the sandbox on with no network by default', async () => {
    const {record, stderr} = await recordOf()
    expect(record.sandbox).toEqual({enabled: true, network: false})
    expect(stderr).toMatch(/^approved: .*\(mode acceptEdits, sandbox on; no scope, no checks\)$/m)
  })

  it('records --sandbox off, and says so', async () => {
    const {record, stderr} = await recordOf('--sandbox', 'off')
    expect(record.sandbox).toEqual({enabled: false, network: false})
    expect(stderr).toMatch(/^approved: .*\(mode acceptEdits, sandbox OFF \(commands run unsandboxed\); no scope, no checks\)$/m)
  })

  it('records --sandbox-network, and says so', async () => {
    const {record, stderr} = await recordOf('--sandbox-network')
    expect(record.sandbox).toEqual({enabled: true, network: true})
    expect(stderr).toMatch(/\(mode acceptEdits, sandbox on, network on; no scope, no checks\)$/m)
  })

  it('refuses --sandbox-network with --sandbox off (exit 2), writing nothing', async () => {
    const planPath = writePlanFile(session.sandbox, '# Plan\n')
    const result = await wave(['approve', planPath, '--sandbox', 'off', '--sandbox-network'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^Error: --sandbox-network applies only to sandboxed commands/)
    expect(existsSync(planPath.replace(/\.md$/, '.approval.json'))).toBe(false)
  })
})

describe('a run with the sandbox off', () => {
  it('run --approve --sandbox off records it, runs Bash unsandboxed, and says so in progress, JSON, the job summary and wave plans', async () => {
    const planPath = writePlanFile(session.sandbox, '# Plan\n\n1. Say where HOME is.\n')
    writeFileSync(path.join(session.sandbox.home, 'marker.txt'), 'the real home\n')
    session.server.push(reply(toolUse('Bash', {command: 'cat "$HOME/marker.txt"'})), reply('Done.'))
    const summary = path.join(session.sandbox.root, 'summary.md')
    const result = await wave(['run', planPath, '--approve', '--mode', 'bypassPermissions', '--sandbox', 'off', '--json'], {GITHUB_STEP_SUMMARY: summary})
    expect(result.code, result.stderr).toBe(0)
    // Unsandboxed, the command sees the real HOME; in the sandbox it would be a private, empty one.
    const [ran] = toolResults(session.server.messageRequests[1])
    expect(ran.is_error).toBeFalsy()
    expect(ran.text).toContain('the real home')
    const record = JSON.parse(readFileSync(planPath.replace(/\.md$/, '.approval.json'), 'utf8'))
    expect(record.sandbox).toEqual({enabled: false, network: false})
    expect(JSON.parse(result.stdout).sandbox).toEqual({enabled: false, network: false})
    expect(result.stderr).toContain('sandbox OFF')
    expect(readFileSync(summary, 'utf8')).toMatch(/\| Sandbox \| sandbox OFF/)
    const plans = await wave(['plans'])
    expect(plans.stdout).toMatch(/ran \(sandbox off\)/)
  })

  it('refuses --sandbox on a run of a recorded plan (the record decides), exit 2, no request', async () => {
    const planPath = writePlanFile(session.sandbox, '# Plan\n')
    await wave(['approve', planPath])
    const result = await wave(['run', planPath, '--sandbox', 'off'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^Error: --mode, --allow and --sandbox choose how an inline approval runs/)
    expect(session.server.messageRequests).toHaveLength(0)
  })
})
