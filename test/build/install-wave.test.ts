/**
 * The Action's install step (scripts/ci/install-wave.sh, which action.yml and setup/action.yml run), as
 * a runner runs it but without GitHub: from a copy of the repository (the Action's checkout at its
 * ref), with no registry at all (wave-cli is on none) and npm's cache empty, it builds this ref's wave;
 * a second run restores it from the cache in seconds. A release's tarball is installed only when its
 * sha256 is the pinned one: a tampered tarball is refused before anything is installed.
 * Needs the build (dist/) for the release tarball, and the npm registry for its two runtime packages.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

// @ts-expect-error: a JavaScript module of the build scripts, without types
import {pack, PROJECT_ROOT} from '../../scripts/package-install.js'

const VERSION = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).version as string
let work: string
let copy: string
let tarball: string

beforeAll(() => {
  work = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-install-')))
  // The Action's checkout: the repository's files at this ref (tracked, and changed ones), nothing built.
  copy = path.join(work, 'wave')
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {cwd: PROJECT_ROOT, encoding: 'utf8'}).split('\0')
  for (const file of files.filter((f) => f && existsSync(path.join(PROJECT_ROOT, f)))) {
    mkdirSync(path.dirname(path.join(copy, file)), {recursive: true})
    cpSync(path.join(PROJECT_ROOT, file), path.join(copy, file))
  }
  // The lockfile's packages, as `npm ci` would lay them out (installing 470 MB of them again here would
  // test npm, not the step): the step finds node_modules and needs no registry.
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(copy, 'node_modules'))
  tarball = (pack(path.join(work, 'packed')) as {tarball: string}).tarball
}, 120_000)

afterAll(() => {
  if (work) rmSync(work, {force: true, recursive: true})
})

/** The step's script with a runner's variables: its own RUNNER_TEMP, GITHUB_PATH and GITHUB_OUTPUT files. */
function runStep(env: Record<string, string>, args: string[] = [], script = path.join(copy, 'scripts/ci/install-wave.sh')) {
  const runnerTemp = mkdtempSync(path.join(work, 'runner-'))
  const githubPath = path.join(runnerTemp, 'path')
  const githubOutput = path.join(runnerTemp, 'output')
  writeFileSync(githubPath, '')
  writeFileSync(githubOutput, '')
  const base = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
  const started = Date.now()
  const step = spawnSync('bash', [script, ...args], {
    cwd: runnerTemp,
    encoding: 'utf8',
    env: {...base, GITHUB_OUTPUT: githubOutput, GITHUB_PATH: githubPath, HOME: path.join(work, 'home'), RUNNER_TEMP: runnerTemp, ...env},
    timeout: 900_000,
  })
  const outputs = Object.fromEntries(
    readFileSync(githubOutput, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(/=(.*)/s).slice(0, 2)),
  )
  return {...step, githubPath: readFileSync(githubPath, 'utf8'), outputs, seconds: (Date.now() - started) / 1000}
}

/** What npm itself says about this machine's own configuration (an unknown key in ~/.npmrc), not the build's. */
const machineNotes = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^npm warn Unknown (?:env|user|global) config /.test(line))
    .join('\n')

const sha256Of = (file: string) => execFileSync('sha256sum', [file], {encoding: 'utf8'}).split(' ')[0]

describe("the Action's install step, from its own checkout", () => {
  it("builds this ref's wave with no registry and npm's cache empty, then restores it from the cache in seconds", () => {
    const cache = path.join(work, 'install-cache')
    const npmCache = path.join(work, 'npm-cache')
    mkdirSync(npmCache)
    // No registry answers: none has wave-cli, and nothing may need one.
    const offline = {WAVE_INSTALL_CACHE: cache, npm_config_cache: npmCache, npm_config_registry: 'http://127.0.0.1:9/'}

    const key = runStep(offline, ['--key'])
    expect(key.status, key.stderr).toBe(0)
    expect(key.outputs.key).toMatch(/^wave-source-Linux-node\d+-[0-9a-f]{32}$/)
    expect(key.outputs.path).toBe(path.join(cache, key.outputs.key))

    // NO_UPDATE_NOTIFIER: npm's own notice about a newer npm is this machine's, not the build's.
    const built = runStep({...offline, NO_UPDATE_NOTIFIER: '1'})
    expect(built.status, built.stderr).toBe(0)
    // The build inside the step is `npm run --silent build`, as npm ci's prepare runs it: it prints nothing at all
    // (no "wrote manifest to", no update notice, no deprecation block); the step's own two lines are all there is.
    // (test/build/build.test.ts has the control: a type error is printed.)
    expect(machineNotes(built.stderr).split('\n')).toEqual([`Building wave from ${copy}...`, expect.stringMatching(/^pack: wave-cli-[\d.]+\.tgz: \d+ files, /)])
    expect(built.outputs).toEqual({bin: path.join(key.outputs.path, 'bin', 'wave'), from: 'built', version: VERSION})
    expect(built.githubPath.trim()).toBe(path.join(key.outputs.path, 'bin'))
    // This ref's wave: it has what only this checkout has (wave gitlab --triage).
    const help = spawnSync(built.outputs.bin, ['gitlab', '--help'], {encoding: 'utf8'})
    expect(help.stdout).toContain('--triage')
    // Nothing came from a registry into npm's cache (npm keeps only its own bookkeeping there).
    const fetched = existsSync(path.join(npmCache, '_cacache', 'index-v5'))
      ? spawnSync('grep', ['-rl', 'registry', path.join(npmCache, '_cacache', 'index-v5')], {encoding: 'utf8'}).stdout.trim()
      : ''
    expect(fetched).toBe('')

    // The next job: the cache restored, the checkout without a build or node_modules.
    rmSync(path.join(copy, 'dist'), {force: true, recursive: true})
    rmSync(path.join(copy, 'node_modules'))
    const restored = runStep(offline)
    expect(restored.status, restored.stderr).toBe(0)
    expect(restored.outputs).toEqual({bin: built.outputs.bin, from: 'restored', version: VERSION})
    expect(restored.stdout).toContain(`wave-cli/${VERSION} `)
    console.log(`install-wave.sh: built in ${built.seconds.toFixed(0)} s, restored in ${restored.seconds.toFixed(1)} s`)
    expect(restored.seconds).toBeLessThan(10)

    // Control: another checkout (one file changed) is another key.
    appendFileSync(path.join(copy, 'README.md'), '\nchanged\n')
    expect(runStep(offline, ['--key']).outputs.key).not.toBe(key.outputs.key)
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(copy, 'node_modules'))
  }, 900_000)
})

describe("the Action's install step, a pinned release", () => {
  /** A release directory as GitHub serves it: v<version>/wave-cli-<version>.tgz, here through file://. */
  function releaseOf(bytes: Buffer): string {
    const releases = mkdtempSync(path.join(work, 'releases-'))
    mkdirSync(path.join(releases, `v${VERSION}`))
    writeFileSync(path.join(releases, `v${VERSION}`, `wave-cli-${VERSION}.tgz`), bytes)
    return `file://${releases}`
  }

  it('installs the release whose tarball has the pinned sha256; refuses a tampered one, and one with no sha256', () => {
    const bytes = readFileSync(tarball)
    const pinned = sha256Of(tarball)
    const cache = path.join(work, 'release-cache')

    const tampered = Buffer.from(bytes)
    tampered[tampered.length - 100] ^= 0xff
    const refused = runStep({WAVE_INSTALL_CACHE: cache, WAVE_RELEASE_URL: releaseOf(tampered), WAVE_SHA256: pinned, WAVE_VERSION: VERSION})
    expect(refused.status).not.toBe(0)
    expect(refused.stdout).toMatch(
      new RegExp(
        `^::error::wave-cli-${VERSION.replaceAll('.', '\\.')}\\.tgz has sha256 [0-9a-f]{64}, not the pinned ${pinned}: refusing to install it\\.$`,
        'm',
      ),
    )
    expect(existsSync(cache) ? readdirSync(cache) : []).toEqual([])
    expect(refused.outputs).toEqual({})

    const unpinned = runStep({WAVE_INSTALL_CACHE: cache, WAVE_RELEASE_URL: releaseOf(bytes), WAVE_VERSION: VERSION})
    expect(unpinned.status).toBe(2)
    expect(unpinned.stdout).toContain(`::error::version ${VERSION} needs its tarball's sha256`)

    // Control: the very tarball, pinned, installs and runs.
    const installed = runStep({WAVE_INSTALL_CACHE: cache, WAVE_RELEASE_URL: releaseOf(bytes), WAVE_SHA256: pinned, WAVE_VERSION: VERSION})
    expect(installed.status, installed.stderr).toBe(0)
    expect(installed.outputs.from).toBe('release')
    expect(spawnSync(installed.outputs.bin, ['--version'], {encoding: 'utf8'}).stdout).toContain(`wave-cli/${VERSION} `)
  }, 300_000)

  it('a tarball given as package is checked against sha256 when one is given', () => {
    const tampered = path.join(work, 'tampered.tgz')
    const bytes = Buffer.from(readFileSync(tarball))
    bytes[bytes.length - 100] ^= 0xff
    writeFileSync(tampered, bytes)
    const refused = runStep({WAVE_PACKAGE: tampered, WAVE_SHA256: sha256Of(tarball)})
    expect(refused.status).not.toBe(0)
    expect(refused.stdout).toContain('::error::tampered.tgz has sha256')
    expect(refused.outputs).toEqual({})
  }, 120_000)
})
