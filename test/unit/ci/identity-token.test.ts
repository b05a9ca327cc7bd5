/**
 * scripts/ci/identity-token.sh, the Action's keyless step: it asks GitHub's OIDC endpoint (here a local
 * stand-in answering as GitHub does, `{"value": "<jwt>"}`) for the job's token with the rule's audience,
 * writes it where only this user reads it, masks it, and names the file to the next steps.
 */
import {execFile} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createServer, type IncomingMessage} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

import {afterEach, describe, expect, it} from 'vitest'

const SCRIPT = fileURLToPath(new URL('../../../scripts/ci/identity-token.sh', import.meta.url))
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJyZXBvOmFjbWUvYXBwIn0.c2ln'
let dir: string
afterEach(() => rmSync(dir, {force: true, recursive: true}))

async function run(env: Record<string, string>) {
  dir = mkdtempSync(path.join(tmpdir(), 'wave-idtoken-'))
  const githubEnv = path.join(dir, 'github-env')
  writeFileSync(githubEnv, '')
  const base = {GITHUB_ENV: githubEnv, PATH: process.env.PATH ?? '', RUNNER_TEMP: dir}
  try {
    const {stdout} = await promisify(execFile)('bash', [SCRIPT], {env: {...base, ...env}})
    return {code: 0, githubEnv: readFileSync(githubEnv, 'utf8'), stdout}
  } catch (error) {
    const failed = error as {code: number; stdout: string}
    return {code: failed.code, githubEnv: readFileSync(githubEnv, 'utf8'), stdout: failed.stdout}
  }
}

describe('the Action fetches the job OIDC token for workload identity federation', () => {
  it('asks with the request token and the audience, writes the token for this user only, masks it, and names the file', async () => {
    const asked: IncomingMessage[] = []
    const server = createServer((req, res) => {
      asked.push(req)
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({count: 1, value: TOKEN}))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const {port} = server.address() as AddressInfo
    try {
      const result = await run({
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: 'request-token',
        ACTIONS_ID_TOKEN_REQUEST_URL: `http://127.0.0.1:${port}/token?api-version=2.0`,
        WAVE_IDENTITY_AUDIENCE: 'https://api.anthropic.com',
      })
      expect(result.code, result.stdout).toBe(0)
      expect(asked).toHaveLength(1)
      expect(asked[0].headers.authorization).toBe('bearer request-token')
      expect(asked[0].url).toBe('/token?api-version=2.0&audience=https%3A%2F%2Fapi.anthropic.com')
      const file = path.join(dir, 'wave-identity', 'token')
      expect(readFileSync(file, 'utf8')).toBe(`${TOKEN}\n`)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
      expect(result.githubEnv).toBe(`ANTHROPIC_IDENTITY_TOKEN_FILE=${file}\n`)
      expect(result.stdout).toContain(`::add-mask::${TOKEN}`)
    } finally {
      server.close()
    }
  })

  it('without id-token: write (no request URL) fails the step with the fix named, and names no file', async () => {
    const result = await run({})
    expect(result.code).toBe(1)
    expect(result.stdout).toContain(
      "::error::federation-rule-id is set, but this job cannot fetch an OIDC token: give the workflow 'permissions: id-token: write'.",
    )
    expect(result.githubEnv).toBe('')
  })
})
