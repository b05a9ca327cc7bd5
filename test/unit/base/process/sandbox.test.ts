import {spawn} from 'node:child_process'
import {copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {
  type CommandRequest,
  commandEnvironment,
  DEFAULT_TMP_SIZE,
  explainFailure,
  looksSecret,
  probeOverlay,
  primeThrowawayStatus,
  probeSandbox,
  resetSandboxStatus,
  sandboxedCommand,
  sandboxSettings,
  sandboxStatus,
  type SpawnPlan,
  sharedDirectories,
  throwawayStatus,
  unsandboxedCommand,
} from '../../../../src/base/process/sandbox.js'
import {spawnFor} from '../../../../src/base/process/runner.js'
import {mergeSettings, parseSettings, type SettingsLayer} from '../../../../src/config/settings.js'

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
    [
      'Ubuntu 24.04 (AppArmor)',
      {'kernel/apparmor_restrict_unprivileged_userns': '1'},
      /AppArmor .*profile for bwrap.*sysctl -w kernel\.apparmor_restrict_unprivileged_userns=0\.$/,
    ],
    [
      'Debian before 11',
      {'kernel/unprivileged_userns_clone': '0'},
      /kernel\.unprivileged_userns_clone=0\). Fix: sudo sysctl -w kernel\.unprivileged_userns_clone=1\.$/,
    ],
    ['namespaces capped at zero', {'user/max_user_namespaces': '0'}, /user\.max_user_namespaces=0\). Fix: sudo sysctl -w user\.max_user_namespaces=15000\.$/],
    [
      'a container',
      {'kernel/apparmor_restrict_unprivileged_userns': '0'},
      /^bwrap failed: No permissions to create a new namespace\. Fix: .*seccomp=unconfined.*--sandbox off\.$/,
    ],
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
    const secret = [
      'ANTHROPIC_BASE_URL',
      'AWS_PROFILE',
      'GOOGLE_CLOUD_PROJECT',
      'GITHUB_TOKEN',
      'GH_TOKEN',
      'SIGNING_KEY',
      'npm_config__authToken',
      'STRIPE_SECRET',
      'CLIENT_SECRET_ID',
      'DB_PASSWORD',
      'PGPASSWORD',
      'SSH_PASSWD',
      'SERVICE_CREDENTIALS',
    ]
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
    expect(untrusted.ignored).toEqual([
      expect.stringMatching(/^\/project\/settings\.json: sandbox\.env \(DEPLOY_TOKEN\) ignored, since project settings are not trusted/),
    ])
    expect(mergeSettings(layers, {trustProject: true}).sandboxEnv).toEqual(['NPM_*', 'DEPLOY_TOKEN'])
  })

  it('takes names and PREFIX_* patterns, nothing else', () => {
    expect(parseSettings('{"sandbox": {"env": ["NPM_TOKEN", "LC_*", "_X1"]}}', '/s.json', 'user').sandbox?.env).toEqual(['NPM_TOKEN', 'LC_*', '_X1'])
    for (const bad of ['"A B"', '"*"', '"A*B"', '"1A"', '""']) {
      expect(() => parseSettings(`{"sandbox": {"env": [${bad}]}}`, '/s.json', 'user')).toThrow(
        /Invalid settings file \/s\.json: sandbox\.env\[0\]: an environment variable name/,
      )
    }
  })
})

describe('sandboxSettings: a choice made the settings commands run in', () => {
  const choice = {enabled: true, network: false, networkAllow: ['registry.npmjs.org']}
  const merged = mergeSettings([{file: '/user/settings.json', scope: 'user', settings: {sandbox: {env: ['WAVE_SANDBOX_PROBE'], tmpSize: '8MiB'}}}])

  it('keeps every field of the choice and adds what the settings add and the proxy, dropping none', () => {
    expect(sandboxSettings(choice, merged, '/run/wave-proxy')).toEqual({
      enabled: true,
      env: ['WAVE_SANDBOX_PROBE'],
      network: false,
      networkAllow: ['registry.npmjs.org'],
      proxy: '/run/wave-proxy',
      tmpSize: 8 * 1024 ** 2,
    })
  })

  it('what it adds reaches the command: the variable settings name; without them (control) the command does not see it', async () => {
    const root = emptyDir()
    process.env.WAVE_SANDBOX_PROBE = 'seen'
    try {
      const echo = (settings: Parameters<typeof sandboxSettings>[1]) => {
        const spawned = spawnFor('echo "[$WAVE_SANDBOX_PROBE]"', {root}, sandboxSettings({enabled: false, network: false}, settings))
        if (!('plan' in spawned)) throw new Error(spawned.problem)
        return runPlan(spawned.plan, root)
      }
      expect((await echo(merged)).output.trim()).toBe('[seen]')
      expect((await echo(mergeSettings([]))).output.trim()).toBe('[]')
    } finally {
      delete process.env.WAVE_SANDBOX_PROBE
    }
  })

  it.skipIf(!sandboxStatus().available)('and in the sandbox, the private /tmp the settings size; without them (control) the default', async () => {
    const root = emptyDir()
    const size = async (settings: Parameters<typeof sandboxSettings>[1]) => {
      const spawned = spawnFor('df -B1 --output=size /tmp | tail -1', {root}, sandboxSettings({enabled: true, network: false}, settings))
      if (!('plan' in spawned)) throw new Error(spawned.problem)
      return Number((await runPlan(spawned.plan, root)).output.trim())
    }
    expect(await size(merged)).toBe(8 * 1024 ** 2)
    expect(await size(mergeSettings([]))).toBe(DEFAULT_TMP_SIZE)
  })
})

/** Runs a spawn plan; resolves with its exit code and output. `extra`: descriptors 3.. the process inherits. */
function runPlan(plan: SpawnPlan, cwd: string, extra: Array<'pipe'> = []): Promise<{code: number | null; output: string; pipes: string[]}> {
  return new Promise((resolve) => {
    const child = spawn(plan.file, plan.args, {cwd, env: plan.env, stdio: ['ignore', 'pipe', 'pipe', ...extra]})
    let output = ''
    const pipes = extra.map(() => '')
    child.stdout?.on('data', (chunk) => (output += chunk))
    child.stderr?.on('data', (chunk) => (output += chunk))
    for (const [index] of extra.entries()) (child.stdio[index + 3] as NodeJS.ReadableStream).on('data', (chunk) => (pipes[index] += chunk))
    child.on('close', (code) => resolve({code, output, pipes}))
  })
}

describe('the sandbox’s openings (issue #26)', () => {
  const request = (root: string, command: string, extra: Partial<CommandRequest> = {}): CommandRequest => ({command, cwd: root, network: false, root, ...extra})
  const bwrap = () => {
    const status = sandboxStatus()
    if (!status.available) throw new Error(status.problem)
    return status.bwrap
  }

  it('a host Unix socket under /var/tmp is out of reach; the same connect from outside reaches it (control)', async () => {
    const socket = path.join('/var/tmp', `wave-test-${process.pid}-${Date.now()}.sock`)
    let connections = 0
    const server = createServer((connection) => {
      connections++
      connection.end()
    })
    await new Promise<void>((resolve) => server.listen(socket, resolve))
    try {
      const root = emptyDir()
      const connect = `${process.execPath} -e "require('net').connect('${socket}').on('connect', () => {console.log('connected'); process.exit(0)}).on('error', (e) => {console.log(e.code); process.exit(3)})"`
      const inside = await runPlan(sandboxedCommand(request(root, connect), bwrap()), root)
      expect(inside.output).toMatch(/ENOENT|ECONNREFUSED|EACCES/)
      expect(inside.code).toBe(3)
      expect(connections).toBe(0)

      const outside = await runPlan(unsandboxedCommand(request(root, connect)), root)
      expect(outside.output.trim()).toBe('connected')
      expect(connections).toBe(1)
    } finally {
      await new Promise((resolve) => server.close(resolve))
      rmSync(socket, {force: true})
    }
  })

  it('hides /var/tmp and /run behind empty directories', () => {
    expect(sharedDirectories()).toEqual(expect.arrayContaining(['/var/tmp']))
    expect(sharedDirectories()).not.toContain('/tmp')
  })

  it('caps the private /tmp: 1 GiB by default, as settings say otherwise; filling it fails there, not on the host', async () => {
    const root = emptyDir()
    const size = await runPlan(sandboxedCommand(request(root, 'df -B1 --output=size /tmp | tail -1'), bwrap()), root)
    expect(Number(size.output.trim())).toBe(DEFAULT_TMP_SIZE)

    const small = {tmpSize: 8 * 1024 ** 2}
    const over = await runPlan(sandboxedCommand(request(root, 'dd if=/dev/zero of=/tmp/fill bs=1M count=16 && echo filled', small), bwrap()), root)
    expect(over.output).toContain('No space left on device')
    expect(over.output).not.toContain('filled')
    expect(over.code).not.toBe(0)
    // Control: what fits is written.
    const under = await runPlan(sandboxedCommand(request(root, 'dd if=/dev/zero of=/tmp/fill bs=1M count=4 2>/dev/null && echo filled', small), bwrap()), root)
    expect(under.output.trim()).toBe('filled')
  })

  it('binds read-only folders (user skills) over the private /tmp and $HOME: readable, not writable; without them hidden (control)', async () => {
    const root = emptyDir()
    const skill = emptyDir() // under /tmp, which the sandbox hides behind its own
    writeFileSync(path.join(skill, 'run.sh'), 'echo from-the-skill\n')
    const command = `bash ${skill}/run.sh; touch ${skill}/planted; echo wrote-$?`
    const bound = await runPlan(sandboxedCommand(request(root, command, {readOnly: [skill]}), bwrap()), root)
    expect(bound.output).toContain('from-the-skill')
    expect(bound.output).toContain('Read-only file system')
    expect(existsSync(path.join(skill, 'planted'))).toBe(false)
    const throwaway = await runPlan(sandboxedCommand(request(root, command, {readOnly: [skill], throwaway: 'read-only'}), bwrap()), root)
    expect(throwaway.output).toContain('from-the-skill')
    expect(existsSync(path.join(skill, 'planted'))).toBe(false)
    const hidden = await runPlan(sandboxedCommand(request(root, command), bwrap()), root)
    expect(hidden.output).not.toContain('from-the-skill')
    expect(hidden.output).toContain('No such file or directory')
  })

  it('closes descriptors wave inherited before the command runs; without the sandbox they reach it (control)', async () => {
    const root = emptyDir()
    const write = 'echo leaked >&3; echo done'
    const inside = await runPlan(sandboxedCommand(request(root, write), bwrap()), root, ['pipe'])
    expect(inside.output).toMatch(/Bad file descriptor/)
    expect(inside.pipes[0]).toBe('')
    const control = await runPlan({args: ['-c', write], env: {PATH: process.env.PATH ?? ''}, file: '/bin/bash'}, root, ['pipe'])
    expect(control.pipes[0]).toBe('leaked\n')
  })
})

describe('a throwaway command (plan mode, issue #35)', () => {
  const bwrapPath = () => {
    const status = sandboxStatus()
    if (!status.available) throw new Error(status.problem)
    return status.bwrap
  }

  it('is probed, not assumed: bubblewrap 0.8 here has no overlay, so the workspace is read-only', () => {
    expect(probeOverlay(bwrapPath())).toBe(false)
    expect(throwawayStatus()).toMatchObject({available: true, kind: 'read-only'})
  })

  it('is not started to be refused: a compiled bwrap that does not name --overlay-src has no overlay (control: a wrapper script is probed)', () => {
    const dir = emptyDir()
    // /bin/true succeeds whatever it is given: probed, it would pass for an overlay.
    const compiled = path.join(dir, 'bwrap')
    copyFileSync('/bin/true', compiled)
    expect(probeOverlay(compiled)).toBe(false)
    const wrapper = path.join(dir, 'bwrap-wrapper')
    writeFileSync(wrapper, '#!/bin/sh\nexit 0\n', {mode: 0o755})
    expect(probeOverlay(wrapper)).toBe(true)
  })

  it('is probed without blocking on the way to plan mode’s first request, with the synchronous probe’s answer', async () => {
    const sync = throwawayStatus()
    resetSandboxStatus()
    let settled = false
    const priming = primeThrowawayStatus().then(() => {
      settled = true
    })
    // The probes run in child processes: the call returns before either has ended.
    expect(settled).toBe(false)
    await priming
    expect(throwawayStatus()).toEqual(sync)
    // Without bwrap on PATH the primed answer is the preflight's refusal, and no probe runs.
    resetSandboxStatus()
    await primeThrowawayStatus({PATH: emptyDir()})
    expect(throwawayStatus()).toEqual(probeSandbox({PATH: emptyDir()}))
    resetSandboxStatus()
  })

  it('binds the workspace read-only, or behind an overlay, and never writable', () => {
    const root = emptyDir()
    const base: CommandRequest = {command: 'true', cwd: root, network: false, root}
    const readOnly = sandboxedCommand({...base, throwaway: 'read-only'}, '/usr/bin/bwrap').args.join(' ')
    expect(readOnly).toContain(`--ro-bind ${root} ${root}`)
    expect(readOnly).not.toContain(`--bind ${root} ${root}`)
    const overlay = sandboxedCommand({...base, throwaway: 'overlay'}, '/usr/bin/bwrap').args.join(' ')
    expect(overlay).toContain(`--overlay-src ${root} --tmp-overlay ${root}`)
    expect(overlay).not.toContain(`--bind ${root} ${root}`)
    // Control: a run's command gets the writable workspace.
    expect(sandboxedCommand(base, '/usr/bin/bwrap').args.join(' ')).toContain(`--bind ${root} ${root}`)
  })

  it('fails a write with the file system’s own error, and leaves the workspace as it was', async () => {
    const root = emptyDir()
    const plan = spawnFor('echo x > made; echo "exit=$?"; echo y > /tmp/ok && cat /tmp/ok', {root}, {enabled: false, network: true, throwaway: true})
    if ('problem' in plan) throw new Error(plan.problem)
    const result = await runPlan(plan.plan, root)
    expect(result.output).toContain('Read-only file system')
    expect(result.output).toContain('exit=1')
    expect(result.output).toContain('y')
    expect(readdirSync(root)).toEqual([])
  })
})
