/**
 * Issue #27: a Claude Code user's cloud environment just works. CLAUDE_CODE_USE_BEDROCK /
 * CLAUDE_CODE_USE_VERTEX choose the cloud as WAVE_PROVIDER would, with a note on stderr; both on is a
 * usage error naming both (exit 2, no request); WAVE_PROVIDER, when set, wins and says so. `wave doctor`
 * reports the provider and what chose it. The Bedrock stand-in checks the request and relays it to the
 * scripted Messages server.
 */
import {readFileSync} from 'node:fs'

import {afterEach, describe, expect, it} from 'vitest'

import {runWave, type Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, reply, toolUse} from '../support/messages-server.js'
import {type CloudServer, startBedrockServer} from '../support/provider-servers.js'
import {useScriptedSession} from '../support/session.js'

const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'

let sandbox: Sandbox
let messages: MessagesServer
let cloud: CloudServer | undefined

useScriptedSession((session) => ({sandbox, server: messages} = session))

afterEach(async () => {
  await cloud?.close()
  cloud = undefined
})

const wave = (args: string[], env: Record<string, string | undefined>) => runWave(args, {cwd: sandbox.repo, env, home: sandbox.home})

/** The environment Claude Code's Bedrock guide has a user export, pointed at the stand-in. */
const claudeCodeBedrock = (server: CloudServer) => ({
  ANTHROPIC_BEDROCK_BASE_URL: server.url,
  AWS_ACCESS_KEY_ID: 'AKIDTESTEXAMPLE',
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_REGION: 'eu-west-3',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-never-logged-0123456789',
  CLAUDE_CODE_USE_BEDROCK: '1',
  WAVE_MODEL: BEDROCK_MODEL,
})

const warnings = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('Warning:'))

describe("Claude Code's provider switches", () => {
  it('CLAUDE_CODE_USE_BEDROCK=1 plans through Bedrock with no WAVE_PROVIDER, saying so once on stderr', async () => {
    cloud = await startBedrockServer(messages)
    messages.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Nothing.\n', file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Plan nothing'], claudeCodeBedrock(cloud))
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(result.stdout.trim(), 'utf8')).toBe('# Plan\n\n1. Nothing.\n')
    expect(cloud.requests).toHaveLength(2)
    expect(cloud.requests[0].path).toBe(`/model/${BEDROCK_MODEL}/invoke-with-response-stream`)
    expect(warnings(result.stderr)).toEqual(["Warning: CLAUDE_CODE_USE_BEDROCK=1 (Claude Code's): wave uses Amazon Bedrock, as with WAVE_PROVIDER=bedrock."])
  })

  it('CLAUDE_CODE_SKIP_BEDROCK_AUTH=1 (a gateway that signs itself): requests go unsigned, with no AWS credentials', async () => {
    cloud = await startBedrockServer(messages)
    messages.push((request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})), reply('Planned.'))
    const {AWS_ACCESS_KEY_ID: _id, AWS_SECRET_ACCESS_KEY: _secret, ...env} = claudeCodeBedrock(cloud)
    const result = await wave(['plan', '--task', 'Plan nothing'], {...env, CLAUDE_CODE_SKIP_BEDROCK_AUTH: '1'})
    expect(result.code, result.stderr).toBe(0)
    expect(cloud.requests).toHaveLength(2)
    expect(cloud.requests[0].headers.authorization).toBeUndefined()
    expect(cloud.requests[0].headers['x-amz-date']).toBeUndefined()
  })

  it('a plan failing at the credentials names the provider and what chose it (exit 2, no request)', async () => {
    const bedrock = await wave(['plan', '--task', 'x'], {ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_USE_BEDROCK: 'true'})
    expect(bedrock.code).toBe(2)
    expect(bedrock.stderr).toMatch(
      /^Error: AWS_REGION is not set: wave needs it to reach the model through Amazon Bedrock \(CLAUDE_CODE_USE_BEDROCK=true\)\.$/m,
    )
    expect(bedrock.stderr).not.toContain('ANTHROPIC_API_KEY')

    const vertex = await wave(['plan', '--task', 'x'], {ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_USE_VERTEX: '1'})
    expect(vertex.code).toBe(2)
    expect(vertex.stderr).toMatch(/^Error: CLOUD_ML_REGION is not set: wave needs it to reach the model through Vertex AI \(CLAUDE_CODE_USE_VERTEX=1\)\.$/m)

    // Control: switched off (as Claude Code reads 0), the Anthropic API and its key are what is missing.
    const off = await wave(['plan', '--task', 'x'], {ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_USE_BEDROCK: '0'})
    expect(off.code).toBe(2)
    expect(off.stderr).toMatch(/^Error: ANTHROPIC_API_KEY is not set/m)
    expect(warnings(off.stderr)).toEqual([])
    expect(messages.requests).toHaveLength(0)
  })

  it('both switches on: exit 2 naming both, before any request', async () => {
    const result = await wave(['plan', '--task', 'x'], {CLAUDE_CODE_USE_BEDROCK: '1', CLAUDE_CODE_USE_VERTEX: '1'})
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^Error: Both CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX are set: /m)
    expect(result.stderr).toMatch(/Hint: .*WAVE_PROVIDER=bedrock or WAVE_PROVIDER=vertex/)
    expect(messages.requests).toHaveLength(0)
  })

  it('WAVE_PROVIDER set and differing wins, with a note; the switch is ignored', async () => {
    messages.push((request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})), reply('Planned.'))
    const result = await runWave(['plan', '--task', 'x'], {
      cwd: sandbox.repo,
      env: {CLAUDE_CODE_USE_BEDROCK: '1', WAVE_PROVIDER: 'anthropic'},
      home: sandbox.home,
      server: messages,
    })
    expect(result.code, result.stderr).toBe(0)
    expect(messages.messageRequests).toHaveLength(2)
    expect(warnings(result.stderr)).toEqual(["Warning: WAVE_PROVIDER=anthropic is used; CLAUDE_CODE_USE_BEDROCK=1 (Claude Code's) is ignored."])
  })
})

describe('wave doctor: the provider chosen and why', () => {
  type Check = {name: string; status: string; detail: string}
  const doctor = async (env: Record<string, string | undefined>) => {
    const result = await wave(['doctor', '--offline', '--json'], {ANTHROPIC_API_KEY: undefined, ...env})
    const {checks} = JSON.parse(result.stdout) as {checks: Check[]}
    const byName = Object.fromEntries(checks.map((check) => [check.name, check])) as Record<string, Check>
    return {code: result.code, credentials: byName.credentials, provider: byName.provider}
  }

  it('names the Claude Code switch, the WAVE_PROVIDER that overrules it, or the default', async () => {
    const bedrock = await doctor({AWS_REGION: 'us-east-1', CLAUDE_CODE_USE_BEDROCK: '1'})
    expect(bedrock.provider).toMatchObject({status: 'pass'})
    expect(bedrock.provider.detail).toMatch(/^bedrock, chosen by CLAUDE_CODE_USE_BEDROCK=1: /)
    expect(bedrock.credentials).toMatchObject({status: 'pass'})

    const overruled = await doctor({ANTHROPIC_API_KEY: 'sk-x', CLAUDE_CODE_USE_VERTEX: '1', WAVE_PROVIDER: 'anthropic'})
    expect(overruled.provider.detail).toBe(
      "anthropic, chosen by WAVE_PROVIDER=anthropic: WAVE_PROVIDER=anthropic is used; CLAUDE_CODE_USE_VERTEX=1 (Claude Code's) is ignored.",
    )

    const both = await doctor({CLAUDE_CODE_USE_BEDROCK: '1', CLAUDE_CODE_USE_VERTEX: 'yes'})
    expect(both.code).toBe(1)
    expect(both.provider).toMatchObject({status: 'fail'})
    expect(both.provider.detail).toMatch(/Both CLAUDE_CODE_USE_BEDROCK and CLAUDE_CODE_USE_VERTEX are set/)

    // Control: nothing set, the default, in the text table too.
    const text = await wave(['doctor', '--offline'], {ANTHROPIC_API_KEY: 'sk-x'})
    expect(text.stdout).toMatch(/^provider\s+ok\s+anthropic, chosen by the default$/m)
  })
})
