/**
 * Keyless: no ANTHROPIC_API_KEY, the federation variables set, and the SDK's own credential chain
 * exchanges the identity token at the scripted server's `/v1/oauth/token` (answered as the real
 * endpoint does, src/testing/oauth.ts). The server then takes only the bearer it issued: what it
 * received is judged, never a key. A refused identity token is one line, exit 2, with no message request.
 */
import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {makeSandbox, runWave, type Sandbox} from '../support/cli.js'
import {type MessagesServer, reply, startMessagesServer} from '../support/messages-server.js'

/** A JWT as a CI job's OIDC token looks (unsigned: the scripted rule trusts it by value). */
function jwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({alg: 'RS256', typ: 'JWT'})}.${part({aud: 'https://api.anthropic.com', iss: 'https://token.actions.githubusercontent.com', ...claims})}.c2lnbmF0dXJl`
}

const IDENTITY = jwt({exp: Math.floor(Date.now() / 1000) + 600, sub: 'repo:acme/app:ref:refs/heads/main'})
const RULE = 'fdrl_01TestRule'
const ORG = '00000000-0000-4000-8000-00000000000a'

let sandbox: Sandbox
let server: MessagesServer
beforeEach(async () => {
  sandbox = makeSandbox()
  server = await startMessagesServer([], {federation: {federationRuleId: RULE, identityToken: IDENTITY, organizationId: ORG}})
})
afterEach(async () => {
  await server.close()
  sandbox.cleanup()
})

const tokenRequests = () => server.requests.filter((request) => request.path === '/v1/oauth/token')

/** wave with no key: the federation variables, the identity token in a file as the Action writes it. */
function keyless(args: string[], env: Record<string, string | undefined> = {}) {
  const tokenFile = path.join(sandbox.root, 'id-token')
  writeFileSync(tokenFile, `${IDENTITY}\n`)
  return runWave(args, {
    cwd: sandbox.repo,
    env: {
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_FEDERATION_RULE_ID: RULE,
      ANTHROPIC_IDENTITY_TOKEN_FILE: tokenFile,
      ANTHROPIC_ORGANIZATION_ID: ORG,
      ...env,
    },
    home: sandbox.home,
    server,
  })
}

/** Every file wave wrote under its home (plans, transcripts, state), as one text. */
function everythingWritten(dir = sandbox.home): string {
  return readdirSync(dir, {recursive: true, withFileTypes: true})
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(path.join(entry.parentPath, entry.name), 'utf8'))
    .join('\n')
}

describe('keyless: workload identity federation', () => {
  it("exchanges the identity token through the SDK's chain, and the server receives the issued bearer, never a key", async () => {
    server.push(reply('Hello from a keyless run.'))
    const result = await keyless(['run', '--task', 'Say hello', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).result).toContain('Hello from a keyless run.')

    // The exchange, as the SDK sends it: the jwt-bearer grant with the rule and organization, its betas.
    expect(tokenRequests()).toHaveLength(1)
    const exchange = tokenRequests()[0]
    expect(exchange.body).toMatchObject({
      assertion: IDENTITY,
      federation_rule_id: RULE,
      grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
      organization_id: ORG,
    })
    expect(String(exchange.headers['anthropic-beta'])).toContain('oidc-federation-2026-04-01')

    // The message request carried the bearer the exchange issued (the server takes no other) and the OAuth beta, and no key.
    expect(server.messageRequests).toHaveLength(1)
    const sent = server.messageRequests[0]
    expect(sent.outcome).not.toBe('unauthorized')
    const bearer = /^Bearer (sk-ant-oat01-\S+)$/.exec(String(sent.headers.authorization))?.[1]
    expect(bearer).toBeDefined()
    expect(sent.headers['x-api-key']).toBeUndefined()
    expect(String(sent.headers['anthropic-beta'])).toContain('oauth-2025-04-20')

    // Neither the identity token nor the bearer is in anything wave printed or wrote.
    for (const secret of [IDENTITY, bearer!]) {
      expect(result.stdout + result.stderr).not.toContain(secret)
      expect(everythingWritten()).not.toContain(secret)
    }
  })

  it('an expired identity token is one line, exit 2, and no message is sent; control: a current one above', async () => {
    const expired = jwt({exp: Math.floor(Date.now() / 1000) - 60, sub: 'repo:acme/app:ref:refs/heads/main'})
    const result = await keyless(['run', '--task', 'Say hello'], {ANTHROPIC_IDENTITY_TOKEN: expired, ANTHROPIC_IDENTITY_TOKEN_FILE: undefined})
    expect(result.code, result.stderr).toBe(2)
    expect(result.stderr).toMatch(/^Error: The identity token was not exchanged for an access token \(HTTP 401\): .*expired/m)
    expect(result.stderr).not.toMatch(/^\s+at /m)
    expect(result.stderr).not.toContain(expired)
    expect(tokenRequests()).toHaveLength(1)
    expect(server.messageRequests).toHaveLength(0)
  })

  it('a token the rule does not trust is exit 2 too; an unreadable token file is refused before any request', async () => {
    const other = jwt({exp: Math.floor(Date.now() / 1000) + 600, sub: 'repo:evil/fork:ref:refs/heads/main'})
    const refused = await keyless(['run', '--task', 'Say hello'], {ANTHROPIC_IDENTITY_TOKEN: other, ANTHROPIC_IDENTITY_TOKEN_FILE: undefined})
    expect(refused.code, refused.stderr).toBe(2)
    expect(refused.stderr).toContain('does not match the federation rule')
    expect(server.messageRequests).toHaveLength(0)

    const missing = await keyless(['run', '--task', 'Say hello'], {ANTHROPIC_IDENTITY_TOKEN_FILE: path.join(sandbox.root, 'nope')})
    expect(missing.code, missing.stderr).toBe(2)
    expect(missing.stderr).toMatch(/The identity token file .*nope \(ANTHROPIC_IDENTITY_TOKEN_FILE\) cannot be read: ENOENT/)
    expect(tokenRequests()).toHaveLength(1)
  })

  it('wave doctor names the credential in use; with neither a key nor federation, the refusal names both ways', async () => {
    const doctor = await keyless(['doctor', '--offline'])
    expect(doctor.stdout + doctor.stderr).toContain(`workload identity federation: rule ${RULE}, organization ${ORG}`)
    expect(doctor.stdout + doctor.stderr).not.toContain(IDENTITY)

    const none = await keyless(['run', '--task', 'Say hello'], {ANTHROPIC_FEDERATION_RULE_ID: undefined})
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('ANTHROPIC_API_KEY is not set')
    expect(none.stderr).toContain('ANTHROPIC_FEDERATION_RULE_ID')
    expect(server.requests).toHaveLength(0)
  })
})
