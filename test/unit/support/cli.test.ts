import {existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {gitHead, gitStatus, makeSandbox, runNode, runWave, type Sandbox, SANDBOX_SECRET, snapshotTree, TEST_API_KEY, waveEnv} from '../../support/cli.js'
import {apiKeyOf, reply, startMessagesServer, text, type MessagesServer} from '../../support/messages-server.js'

let sandbox: Sandbox | undefined
let server: MessagesServer | undefined

afterEach(async () => {
  await server?.close()
  server = undefined
  sandbox?.cleanup()
  sandbox = undefined
})

// A stand-in for bin/run.js: prints its env and stdin as JSON, optionally calls the Messages API with the SDK.
const PROBE = `
import {readFileSync} from 'node:fs'
const out = {env: process.env, cwd: process.cwd(), stdin: readFileSync(0, 'utf8'), isTTY: Boolean(process.stdin.isTTY)}
if (process.argv[2] === 'call') {
  const {default: Anthropic} = await import(${JSON.stringify(import.meta.resolve('@anthropic-ai/sdk'))})
  const msg = await new Anthropic({maxRetries: 0}).messages.stream({model: 'm', max_tokens: 10, messages: [{role: 'user', content: 'hi'}]}).finalMessage()
  out.reply = msg.content[0].text
}
if (process.argv[2] === 'hang') await new Promise(() => setInterval(() => {}, 1000))
process.stdout.write(JSON.stringify(out))
process.exitCode = 7
`

function probe(sb: Sandbox): string {
  const file = join(sb.root, 'probe.mjs')
  writeFileSync(file, PROBE)
  return file
}

describe('e2e harness', () => {
  it('makes a sandbox: temp home, a git repo with committed files and an ignored secret', () => {
    sandbox = makeSandbox()
    expect(existsSync(join(sandbox.repo, '.git'))).toBe(true)
    expect(gitHead(sandbox.repo)).toMatch(/^[0-9a-f]{40}$/)
    expect(gitStatus(sandbox.repo)).toBe('')
    expect(readFileSync(join(sandbox.repo, 'ignored/secret.txt'), 'utf8')).toBe(SANDBOX_SECRET)
    expect(Object.keys(snapshotTree(sandbox.repo))).toEqual(['.gitignore', 'README.md', 'ignored/', 'ignored/secret.txt', 'src/', 'src/app.ts', 'src/util.ts'])
    const root = sandbox.root
    sandbox.cleanup()
    sandbox = undefined
    expect(existsSync(root)).toBe(false)
  })

  it('snapshotTree sees content changes, new dirs and symlinks, and skips .git', () => {
    sandbox = makeSandbox()
    const before = snapshotTree(sandbox.repo)
    expect(snapshotTree(sandbox.repo)).toEqual(before)
    writeFileSync(join(sandbox.repo, '.git', 'noise'), 'x')
    expect(snapshotTree(sandbox.repo)).toEqual(before)
    writeFileSync(join(sandbox.repo, 'README.md'), 'changed')
    mkdirSync(join(sandbox.repo, 'empty'))
    symlinkSync('/etc/passwd', join(sandbox.repo, 'link'))
    const after = snapshotTree(sandbox.repo)
    expect(after['README.md']).not.toBe(before['README.md'])
    expect(after['empty/']).toBe('<dir>')
    expect(after.link).toBe('-> /etc/passwd')
  })

  it('runs a child asynchronously with a clean env, against the in-process server', async () => {
    sandbox = makeSandbox()
    server = await startMessagesServer([reply(text('from server'))])
    process.env.WAVE_LEAK = 'leak'
    process.env.ANTHROPIC_AUTH_TOKEN = 'leak'
    try {
      const res = await runNode(probe(sandbox), ['call'], {
        home: sandbox.home,
        cwd: sandbox.repo,
        server,
        env: {EXTRA: 'yes', NO_COLOR: undefined},
      })
      expect(res.stderr).toBe('')
      expect(res.code).toBe(7)
      const out = JSON.parse(res.stdout)
      expect(out.reply).toBe('from server')
      expect(out.cwd).toBe(sandbox.repo)
      expect(out.stdin).toBe('')
      expect(out.isTTY).toBe(false)
      expect(out.env.HOME).toBe(sandbox.home)
      expect(out.env.CI).toBe('1')
      expect(out.env.EXTRA).toBe('yes')
      expect(out.env.ANTHROPIC_BASE_URL).toBe(server.url)
      expect(out.env.ANTHROPIC_API_KEY).toBe(TEST_API_KEY)
      expect(out.env).not.toHaveProperty('NO_COLOR')
      expect(out.env).not.toHaveProperty('WAVE_LEAK')
      expect(out.env).not.toHaveProperty('ANTHROPIC_AUTH_TOKEN')
      expect(apiKeyOf(server.requests[0])).toBe(TEST_API_KEY)
    } finally {
      delete process.env.WAVE_LEAK
      delete process.env.ANTHROPIC_AUTH_TOKEN
    }
  })

  it('feeds input on stdin, and kills at the timeout', async () => {
    sandbox = makeSandbox()
    const script = probe(sandbox)
    const fed = await runNode(script, [], {home: sandbox.home, cwd: sandbox.repo, input: 'y\n'})
    expect(JSON.parse(fed.stdout).stdin).toBe('y\n')

    const hung = await runNode(script, ['hang'], {home: sandbox.home, cwd: sandbox.repo, timeoutMs: 500})
    expect(hung.timedOut).toBe(true)
    expect(hung.signal).toBe('SIGKILL')
    expect(hung.code).toBeNull()
  })

  it('without a server, no ANTHROPIC vars reach the child', () => {
    const env = waveEnv({home: '/h'})
    // The one WAVE_ variable the harness sets: where the suite's code cache lives, no setting of wave's.
    expect(env.WAVE_COMPILE_CACHE).toBeTruthy()
    expect(Object.keys(env).filter((k) => (k.startsWith('ANTHROPIC_') || k.startsWith('WAVE_')) && k !== 'WAVE_COMPILE_CACHE')).toEqual([])
  })

  it.skipIf(!existsSync(new URL('../../../dist/commands', import.meta.url)))('runs bin/run.js --help', async () => {
    sandbox = makeSandbox()
    const res = await runWave(['--help'], {home: sandbox.home, cwd: sandbox.repo})
    expect(res.code).toBe(0)
    expect(res.stdout).toMatch(/wave/i)
  })
})
