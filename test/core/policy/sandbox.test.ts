import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {commandEnvironment, explainFailure, looksSecret, probeSandbox, sandboxStatus} from '../../../src/core/policy/sandbox.js'
import {mergeSettings, parseSettings, type SettingsLayer} from '../../../src/core/settings.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, {force: true, recursive: true})
})

function emptyDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'wave-sandbox-'))
  dirs.push(dir)
  return dir
}

describe('the sandbox preflight', () => {
  it('starts a sandbox here (CI installs bubblewrap)', () => {
    expect(sandboxStatus()).toEqual({available: true, bwrap: expect.stringMatching(/\/bwrap$/)})
  })

  it('names the fix when bwrap is not on PATH', () => {
    const status = probeSandbox({PATH: emptyDir()})
    expect(status.available).toBe(false)
    if (status.available) return
    expect(status.problem).toBe(
      'The sandbox cannot start: bubblewrap (bwrap) is not installed or not on PATH. Fix: install it (sudo apt-get install bubblewrap; dnf, pacman and apk call it bubblewrap too), or run unsandboxed with --sandbox off.',
    )
    expect(status.problem).not.toContain('\n')
  })

  it('refuses on a platform without a sandbox, the same way', () => {
    const status = probeSandbox(process.env, 'darwin')
    expect(status).toEqual({available: false, problem: expect.stringMatching(/^The sandbox cannot start: .*darwin.*--sandbox off\.$/)})
  })

  const sysctls = (values: Record<string, string>) => (key: string) => values[key]
  const failures: Array<[string, Record<string, string>, RegExp]> = [
    ['Ubuntu 24.04 (AppArmor)', {'kernel/apparmor_restrict_unprivileged_userns': '1'}, /AppArmor .*profile for bwrap.*sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0\.$/],
    ['Debian before 11', {'kernel/unprivileged_userns_clone': '0'}, /kernel\.unprivileged_userns_clone=0\). Fix: sudo sysctl -w kernel\.unprivileged_userns_clone=1\.$/],
    ['namespaces capped at zero', {'user/max_user_namespaces': '0'}, /user\.max_user_namespaces=0\). Fix: sudo sysctl -w user\.max_user_namespaces=15000\.$/],
    ['a container', {'kernel/apparmor_restrict_unprivileged_userns': '0'}, /^bwrap failed: No permissions to create a new namespace\. Fix: .*seccomp=unconfined.*--sandbox off\.$/],
  ]
  for (const [where, values, expected] of failures) {
    it(`says why bwrap failed and what fixes it: ${where}`, () => {
      const line = explainFailure('bwrap: No permissions to create a new namespace.', sysctls(values))
      expect(line).toMatch(expected)
      expect(line).not.toContain('\n')
    })
  }
})

describe('the environment commands get', () => {
  const source = {
    ANTHROPIC_API_KEY: 'sk-ant-1',
    ANTHROPIC_AUTH_TOKEN: 'tok-1',
    ANTHROPIC_BASE_URL: 'https://proxy.example',
    AWS_SECRET_ACCESS_KEY: 'aws-1',
    CI: '1',
    DB_PASSWORD: 'pw',
    GH_TOKEN: 'gh-1',
    GITHUB_TOKEN: 'gh-2',
    GOOGLE_APPLICATION_CREDENTIALS: '/creds.json',
    HOME: '/home/real',
    LANG: 'C.UTF-8',
    LC_ALL: 'C',
    NODE_OPTIONS: '--require /evil.js',
    NPM_CONFIG_REGISTRY: 'https://registry.example',
    NPM_TOKEN: 'npm-1',
    PATH: '/usr/bin:/bin',
    SHELL: '/bin/bash',
    SIGNING_KEY: 'k',
    STRIPE_SECRET: 's',
    TERM: 'xterm',
    TZ: 'UTC',
    USER: 'runner',
  }

  it('is the allowlist alone, with the private HOME', () => {
    expect(commandEnvironment([], {HOME: '/home/real'}, source)).toEqual({
      CI: '1',
      HOME: '/home/real',
      LANG: 'C.UTF-8',
      LC_ALL: 'C',
      PATH: '/usr/bin:/bin',
      SHELL: '/bin/bash',
      TERM: 'xterm',
      TZ: 'UTC',
      USER: 'runner',
    })
  })

  it('adds the names settings list; a pattern never passes a credential, an exact name does', () => {
    const env = commandEnvironment(['NPM_*', 'NODE_OPTIONS', 'GH_TOKEN', 'DB_*', 'AWS_*'], {}, source)
    expect(env.NPM_CONFIG_REGISTRY).toBe('https://registry.example')
    expect(env.NODE_OPTIONS).toBe('--require /evil.js')
    expect(env.GH_TOKEN).toBe('gh-1')
    for (const name of ['NPM_TOKEN', 'DB_PASSWORD', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN']) expect(env).not.toHaveProperty(name)
  })

  it("never passes wave's own model credentials, even listed", () => {
    const env = commandEnvironment(['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_*'], {}, source)
    expect(env).not.toHaveProperty('ANTHROPIC_API_KEY')
    expect(env).not.toHaveProperty('ANTHROPIC_AUTH_TOKEN')
    expect(env).not.toHaveProperty('ANTHROPIC_BASE_URL')
  })

  it('knows a credential by its name', () => {
    const secret = ['ANTHROPIC_BASE_URL', 'AWS_PROFILE', 'GOOGLE_CLOUD_PROJECT', 'GITHUB_TOKEN', 'GH_TOKEN', 'SIGNING_KEY', 'npm_config__authToken', 'STRIPE_SECRET', 'CLIENT_SECRET_ID', 'DB_PASSWORD', 'PGPASSWORD', 'SSH_PASSWD', 'SERVICE_CREDENTIALS']
    const plain = ['PATH', 'NPM_CONFIG_REGISTRY', 'KEYBOARD', 'TOKENIZERS_PARALLELISM', 'GITHUB_SHA']
    expect(secret.filter((name) => !looksSecret(name))).toEqual([])
    expect(plain.filter((name) => looksSecret(name))).toEqual([])
  })
})

describe("settings' sandbox.env", () => {
  const layer = (scope: SettingsLayer['scope'], env: string[]): SettingsLayer => ({file: `/${scope}/settings.json`, scope, settings: {sandbox: {env}}})

  it("adds the user's names, and a project's only when trusted", () => {
    const layers = [layer('user', ['NPM_*']), layer('project', ['DEPLOY_TOKEN'])]
    const untrusted = mergeSettings(layers)
    expect(untrusted.sandboxEnv).toEqual(['NPM_*'])
    expect(untrusted.ignored).toEqual([expect.stringMatching(/^\/project\/settings\.json: sandbox\.env \(DEPLOY_TOKEN\) ignored, since project settings are not trusted/)])
    expect(mergeSettings(layers, {trustProject: true}).sandboxEnv).toEqual(['NPM_*', 'DEPLOY_TOKEN'])
  })

  it('takes names and PREFIX_* patterns, nothing else', () => {
    expect(parseSettings('{"sandbox": {"env": ["NPM_TOKEN", "LC_*", "_X1"]}}', '/s.json', 'user').sandbox?.env).toEqual(['NPM_TOKEN', 'LC_*', '_X1'])
    for (const bad of ['"A B"', '"*"', '"A*B"', '"1A"', '""']) {
      expect(() => parseSettings(`{"sandbox": {"env": [${bad}]}}`, '/s.json', 'user')).toThrow(/Invalid settings file \/s\.json: sandbox\.env\[0\]: an environment variable name/)
    }
  })
})
