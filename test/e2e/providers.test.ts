/**
 * WAVE_PROVIDER=bedrock|vertex (or the user settings' `provider`): wave reaches the model through the
 * SDK family's Bedrock or Vertex client, with each cloud's standard variables and credentials, and
 * without ANTHROPIC_API_KEY. The local stand-ins check the request shape and relay to the scripted
 * Messages server.
 */
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {runWave, type Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, reply, systemText, toolUse} from '../support/messages-server.js'
import {type CloudServer, startBedrockServer, startVertexServer, VERTEX_ACCESS_TOKEN, vertexCredentials} from '../support/provider-servers.js'
import {useScriptedSession} from '../support/session.js'

const AWS_KEY_ID = 'AKIDTESTEXAMPLE'
const AWS_SECRET = 'aws-secret-never-logged-0123456789'
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
const VERTEX_MODEL = 'claude-sonnet-4-5@20250929'

let sandbox: Sandbox
let messages: MessagesServer
let cloud: CloudServer | undefined

useScriptedSession((session) => ({sandbox, server: messages} = session))

afterEach(async () => {
  await cloud?.close()
  cloud = undefined
})

/** wave with no Anthropic credentials at all: only the cloud's. */
const wave = (args: string[], env: Record<string, string | undefined>) => runWave(args, {cwd: sandbox.repo, env, home: sandbox.home})

const bedrockEnv = (server: CloudServer) => ({
  ANTHROPIC_BEDROCK_BASE_URL: server.url,
  AWS_ACCESS_KEY_ID: AWS_KEY_ID,
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_REGION: 'eu-west-3',
  AWS_SECRET_ACCESS_KEY: AWS_SECRET,
  WAVE_MODEL: BEDROCK_MODEL,
  WAVE_PROVIDER: 'bedrock',
})

const vertexEnv = (server: CloudServer) => ({
  ANTHROPIC_VERTEX_BASE_URL: `${server.url}/v1`,
  ANTHROPIC_VERTEX_PROJECT_ID: 'wave-test-project',
  CLOUD_ML_REGION: 'us-east5',
  // The project is known: Google's library need not ask Cloud Resource Manager for it.
  GOOGLE_CLOUD_PROJECT: 'wave-test-project',
  GOOGLE_APPLICATION_CREDENTIALS: vertexCredentials(server, sandbox.root),
  WAVE_MODEL: VERTEX_MODEL,
})

/** A planning session of two turns: the plan written, then done. */
function scriptPlan(): void {
  messages.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Nothing.\n', file_path: planPathIn(request)})), reply('Planned.'))
}

describe('Amazon Bedrock', () => {
  it('streams through invoke-with-response-stream, SigV4-signed, with no ANTHROPIC_API_KEY', async () => {
    cloud = await startBedrockServer(messages)
    scriptPlan()
    const result = await wave(['plan', '--task', 'Plan nothing'], bedrockEnv(cloud))
    expect(result.code, result.stderr).toBe(0)
    const planPath = result.stdout.trim()
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\n1. Nothing.\n')

    expect(cloud.requests).toHaveLength(2)
    const [first] = cloud.requests
    expect(first.method).toBe('POST')
    expect(first.path).toBe(`/model/${BEDROCK_MODEL}/invoke-with-response-stream`)
    expect(first.model).toBe(BEDROCK_MODEL)
    // Bedrock's body: the version inside, no model and no stream flag.
    expect(first.body.anthropic_version).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(first.body).not.toHaveProperty('model')
    expect(first.body).not.toHaveProperty('stream')
    expect(first.headers.authorization).toMatch(
      new RegExp(`^AWS4-HMAC-SHA256 Credential=${AWS_KEY_ID}/\\d{8}/eu-west-3/bedrock/aws4_request, SignedHeaders=\\S+, Signature=[0-9a-f]{64}$`),
    )
    expect(first.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/)
    expect(first.headers['x-api-key']).toBeUndefined()

    // The model saw wave's real session: the plan-mode prompt, and the tool result of the Write.
    expect(systemText(messages.messageRequests[0])).toContain('## Plan File Info:')
    expect(JSON.stringify(messages.messageRequests[1].body.messages)).toContain('tool_result')
    expect(result.stdout + result.stderr + readFileSync(planPath.replace(/\.md$/, '.transcript.jsonl'), 'utf8')).not.toContain(AWS_SECRET)
  })

  it('needs AWS_REGION (exit 2, no request), and refuses an unknown provider', async () => {
    cloud = await startBedrockServer(messages)
    const noRegion = await wave(['plan', '--task', 'x'], {...bedrockEnv(cloud), AWS_REGION: undefined})
    expect(noRegion.code).toBe(2)
    expect(noRegion.stderr).toContain('AWS_REGION')
    expect(noRegion.stderr).not.toContain('ANTHROPIC_API_KEY')

    const unknown = await wave(['plan', '--task', 'x'], {WAVE_PROVIDER: 'azure'})
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('WAVE_PROVIDER')
    expect(cloud.requests).toHaveLength(0)
    expect(messages.requests).toHaveLength(0)
  })
})

describe('Vertex AI', () => {
  it("streams through streamRawPredict with the credentials file's access token", async () => {
    cloud = await startVertexServer(messages)
    scriptPlan()
    const result = await wave(['plan', '--task', 'Plan nothing'], {...vertexEnv(cloud), WAVE_PROVIDER: 'vertex'})
    expect(result.code, result.stderr).toBe(0)

    expect(cloud.tokenRequests.length).toBeGreaterThanOrEqual(1)
    expect(cloud.tokenRequests[0]).toMatchObject({grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: 'test-oidc-subject-token'})
    expect(cloud.requests).toHaveLength(2)
    const [first] = cloud.requests
    expect(first.path).toBe(`/v1/projects/wave-test-project/locations/us-east5/publishers/anthropic/models/${VERTEX_MODEL}:streamRawPredict`)
    expect(first.headers.authorization).toBe(`Bearer ${VERTEX_ACCESS_TOKEN}`)
    expect(first.body.anthropic_version).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(first.body).not.toHaveProperty('model')
    expect(first.body.stream).toBe(true)
    expect(systemText(messages.messageRequests[0])).toContain('## Plan File Info:')
  })

  it('is chosen by the user settings, never by a project file, and needs CLOUD_ML_REGION', async () => {
    cloud = await startVertexServer(messages)
    mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
    writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({provider: 'vertex'}))
    scriptPlan()
    const result = await wave(['plan', '--task', 'Plan nothing'], vertexEnv(cloud))
    expect(result.code, result.stderr).toBe(0)
    expect(cloud.requests).toHaveLength(2)

    const noRegion = await wave(['plan', '--task', 'x'], {...vertexEnv(cloud), CLOUD_ML_REGION: undefined})
    expect(noRegion.code).toBe(2)
    expect(noRegion.stderr).toContain('CLOUD_ML_REGION')

    mkdirSync(path.join(sandbox.repo, '.wave'))
    writeFileSync(path.join(sandbox.repo, '.wave', 'settings.json'), JSON.stringify({provider: 'bedrock'}))
    const fromProject = await wave(['plan', '--task', 'x'], vertexEnv(cloud))
    expect(fromProject.code).toBe(2)
    expect(fromProject.stderr).toMatch(/provider: can be set only in the user settings file/)
    expect(cloud.requests).toHaveLength(2)
  })
})
