/**
 * The build's bundles load with V8's code cache (src/base/bundles.ts): written at the exit of a run that
 * had none, used untouched by the next, replaced when V8 rejects it, never kept in a directory others
 * can write to, and not at all with NODE_DISABLE_COMPILE_CACHE. (The suite's other tests share one cache
 * directory, test/support/cli.ts; these name their own.)
 */
import {chmodSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {makeSandbox, runWave, type Sandbox} from '../support/cli.js'
import {planPathIn, type RecordedRequest, reply, startMessagesServer, text, toolResults, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let cacheDir: string
beforeEach(() => {
  sandbox = makeSandbox()
  cacheDir = path.join(sandbox.root, 'compile-cache')
})
afterEach(() => sandbox.cleanup())

const tools = (env: Record<string, string | undefined> = {}) =>
  runWave(['tools'], {cwd: sandbox.repo, env: {WAVE_COMPILE_CACHE: cacheDir, ...env}, home: sandbox.home})
const cacheFiles = () => readdirSync(cacheDir).sort()
const stamps = () => Object.fromEntries(cacheFiles().map((file) => [file, statSync(path.join(cacheDir, file)).mtimeMs]))

describe('the compile cache of the bundles', () => {
  it('is written by the first run, used as it is by the next, and changes nothing a user sees', async () => {
    const first = await tools()
    expect(first.code, first.stderr).toBe(0)
    expect(cacheFiles()).toEqual([
      expect.stringMatching(/^commands-tools-[0-9a-f]{16}-v[\d.]+-\w+\.bin$/),
      expect.stringMatching(/^vendor-oclif-[0-9a-f]{16}-v[\d.]+-\w+\.bin$/),
    ])
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700)
    const written = stamps()

    const second = await tools()
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toBe(first.stdout)
    expect(second.stderr).toBe(first.stderr)
    expect(stamps()).toEqual(written) // accepted: nothing rewritten
  })

  // A session runs WebAssembly as Liftoff compiled it (src/base/wasm.ts): V8 flags set mid-run, which a cache
  // written at exit would carry. Each session here loads the shell grammar (a Bash call) and node's HTTP parser.
  it('is written by a session that ran WebAssembly in a form the next session uses as it is', async () => {
    const plan = async () => {
      const server = await startMessagesServer()
      const finish = (request: RecordedRequest) => reply(toolUse('Write', {content: '# Plan\n\n## Scope\n- `README.md`\n', file_path: planPathIn(request)}))
      server.push(reply(toolUse('Bash', {command: 'echo looked'})), finish, reply(text('Planned.')))
      try {
        const result = await runWave(['plan', '--task', 'Look around'], {cwd: sandbox.repo, env: {WAVE_COMPILE_CACHE: cacheDir}, home: sandbox.home, server})
        expect(result.code, result.stderr).toBe(0)
        expect(toolResults(server.messageRequests[1])[0].content).toContain('looked') // the grammar ran the command's check
      } finally {
        await server.close()
      }
    }

    await plan()
    expect(cacheFiles()).toEqual([
      expect.stringMatching(/^commands-plan-/),
      expect.stringMatching(/^vendor-anthropic-sdk-/),
      expect.stringMatching(/^vendor-marked-/), // the plan's contract read
      expect.stringMatching(/^vendor-oclif-/),
    ])
    const written = stamps()
    await plan()
    expect(stamps()).toEqual(written) // accepted: nothing rewritten
  })

  it('replaces data V8 rejects, and keeps the newest three of a bundle’s caches (other builds, other node versions)', async () => {
    expect((await tools()).code).toBe(0)
    const reference = await tools()
    for (const file of cacheFiles()) writeFileSync(path.join(cacheDir, file), Buffer.alloc(4096, 7))
    // Caches of other builds, oldest first, and another bundle's.
    const earlier = ['0000000000000001', '0000000000000002', '0000000000000003'].map((digest) => `vendor-oclif-${digest}-v20.0.0-x64.bin`)
    earlier.forEach((file, index) => {
      writeFileSync(path.join(cacheDir, file), 'an earlier build')
      utimesSync(path.join(cacheDir, file), 1_000_000 + index, 1_000_000 + index)
    })
    writeFileSync(path.join(cacheDir, 'commands-tools-extra-0123456789abcdef-v20.0.0-x64.bin'), 'another bundle')

    const result = await tools()
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe(reference.stdout)
    const files = cacheFiles()
    expect(files.filter((file) => file.startsWith('vendor-oclif-'))).toHaveLength(3)
    expect(files).not.toContain(earlier[0])
    expect(files).toContain(earlier[2])
    expect(files).toContain('commands-tools-extra-0123456789abcdef-v20.0.0-x64.bin')
    for (const file of files.filter((name) => !name.includes('-v20.0.0-'))) {
      expect(readFileSync(path.join(cacheDir, file)).equals(Buffer.alloc(4096, 7))).toBe(false)
    }
  })

  it('is neither read nor written in a directory others can write to, or when turned off', async () => {
    mkdirSync(cacheDir)
    chmodSync(cacheDir, 0o777)
    const shared = await tools()
    expect(shared.code, shared.stderr).toBe(0)
    expect(cacheFiles()).toEqual([])

    chmodSync(cacheDir, 0o700)
    const off = await tools({NODE_DISABLE_COMPILE_CACHE: '1'})
    expect(off.code, off.stderr).toBe(0)
    expect(off.stdout).toBe(shared.stdout)
    expect(cacheFiles()).toEqual([])
  })

  it('lives in the user’s cache directory unless WAVE_COMPILE_CACHE names another', async () => {
    const home = await tools({WAVE_COMPILE_CACHE: undefined})
    expect(home.code, home.stderr).toBe(0)
    expect(readdirSync(path.join(sandbox.home, '.cache', 'wave', 'v8'))).toContainEqual(expect.stringMatching(/^vendor-oclif-.*\.bin$/))

    const xdg = path.join(sandbox.root, 'xdg-cache')
    const elsewhere = await tools({WAVE_COMPILE_CACHE: undefined, XDG_CACHE_HOME: xdg})
    expect(elsewhere.code, elsewhere.stderr).toBe(0)
    expect(readdirSync(path.join(xdg, 'wave', 'v8'))).toContainEqual(expect.stringMatching(/^commands-tools-.*\.bin$/))
  })
})
