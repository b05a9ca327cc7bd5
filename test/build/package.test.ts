/**
 * The package as a user installs it (issue 27): `npm run pack`'s tarball installed with npm into a
 * temporary prefix (the registry gives its few dependencies), then the installed `wave` runs the demo,
 * `doctor --offline` and a plugin link. Held to the targets: the install at most 40 MB and 60 packages,
 * no npm warnings (no install scripts, none of the manifest's own), exactly the files that run.
 * Needs the build (npm test builds first) and the npm registry.
 */
import {isAscii} from 'node:buffer'
import {cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

// @ts-expect-error: a JavaScript module of the build scripts, without types
import {INSTALL_LIMITS, install, pack, PROJECT_ROOT} from '../../scripts/package-install.js'
import {makeSandbox, runNode, type Sandbox} from '../support/cli.js'

interface Packed {
  tarball: string
  files: {path: string}[]
}

interface Installed {
  bin: string
  bytes: number
  packages: number
  root: string
  stderr: string
}

let work: string
let packed: Packed
let installed: Installed
let sandbox: Sandbox

beforeAll(() => {
  work = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-package-')))
  packed = pack(path.join(work, 'dist')) as Packed
  installed = install(packed.tarball, path.join(work, 'prefix')) as Installed
  sandbox = makeSandbox()
  console.log(`wave-cli installed from its tarball: ${(installed.bytes / 1e6).toFixed(1)} MB, ${installed.packages} packages`)
}, 300_000)

afterAll(() => {
  sandbox?.cleanup()
  if (work) rmSync(work, {force: true, recursive: true})
})

/** The installed wave (its bin/run.js, as npm's `wave` link runs it), in the sandbox with a clean environment. */
const wave = (args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 60_000) =>
  runNode(path.join(installed.root, 'bin', 'run.js'), args, {cwd: sandbox.repo, env: {WAVE_COMPILE_CACHE: undefined, ...env}, home: sandbox.home, timeoutMs})

describe('the packed package', () => {
  it('holds what runs and the docs, and no sources, tests, build scripts or dev entry points', () => {
    const files = packed.files.map((file) => file.path)
    for (const needed of [
      'bin/run.js',
      'dist/bundles/commands/run.cjs',
      'dist/bundles/commands/plugins/install.cjs',
      'dist/bundles/vendor/oclif.cjs',
      'dist/commands/run.js',
      'dist/grammar/tree-sitter-bash.wasm',
      'dist/plugins/index.js',
      'dist/plugins/index.d.ts',
      'dist/tools/search/content.js',
      'docs/ci/github-actions.md',
      'docs/reference.md',
      'oclif.manifest.json',
      'CHANGELOG.md',
      'LICENSE',
      'README.md',
      'package.json',
    ]) {
      expect(files, needed).toContain(needed)
    }
    expect(files.filter((file) => /^(src|test|scripts|bench|examples|\.github|\.ci)\//.test(file) || file === 'bin/dev.js' || file === 'action.yml')).toEqual(
      [],
    )
    // Of the compiler's JavaScript only the modules that run outside the bundles: no second copy of wave.
    const loose = files.filter((file) => /^dist\/(?!bundles\/|vendor\/|commands\/|oclif\/)[^/]+\/.*\.js$/.test(file))
    expect(loose.sort()).toEqual([
      'dist/base/bundles.js',
      'dist/base/wasm.js',
      'dist/base/workspace/snapshot.js',
      'dist/plugins/index.js',
      'dist/tools/search/content.js',
    ])
  })

  it('has a manifest without scripts, with a license, repository, homepage and bugs, and only what the bundles load as dependencies', () => {
    const tarManifest = JSON.parse(readFileSync(path.join(installed.root, 'package.json'), 'utf8'))
    expect(tarManifest.scripts).toBeUndefined()
    expect(tarManifest).toMatchObject({license: 'MIT', name: 'wave-cli'})
    expect(tarManifest.repository.url).toMatch(/^git\+https:\/\/github\.com\//)
    expect(tarManifest.homepage).toMatch(/^https:\/\//)
    expect(tarManifest.bugs.url).toMatch(/^https:\/\//)
    expect(Object.keys(tarManifest.dependencies).sort()).toEqual(['re2js', 'web-tree-sitter'])
    expect(readFileSync(path.join(installed.root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/)
  })

  it('carries its bundles as pure ASCII, which the loader reads as Latin-1 (src/base/bundles.ts)', () => {
    const bundles = packed.files.map((file) => file.path).filter((file) => file.startsWith('dist/bundles/') && file.endsWith('.cjs'))
    expect(bundles.length).toBeGreaterThan(10)
    const notAscii = bundles.filter((file) => !isAscii(readFileSync(path.join(installed.root, file))))
    expect(notAscii).toEqual([])
  })
})

describe('npm install -g of the tarball', () => {
  it(`stays within ${INSTALL_LIMITS.bytes / 1e6} MB and ${INSTALL_LIMITS.packages} packages, with no npm warnings`, () => {
    expect(installed.bytes).toBeLessThanOrEqual(INSTALL_LIMITS.bytes)
    expect(installed.packages).toBeLessThanOrEqual(INSTALL_LIMITS.packages)
    // A warning about the machine's own npm configuration (an ~/.npmrc key npm 11 no longer knows) is not the package's.
    const warnings = installed.stderr.split('\n').filter((line) => /warn|script/i.test(line) && !/Unknown (user|global|project|env) config/.test(line))
    expect(warnings).toEqual([])
  })

  it('runs the demo: plan, approve with a Bash rule, run in the sandbox', async () => {
    const result = await wave(['demo'], {}, 180_000)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/demo done in/)
  }, 200_000)

  it('passes doctor --offline, the shell grammar included', async () => {
    const result = await wave(['doctor', '--offline'], {ANTHROPIC_API_KEY: 'sk-package-test'})
    expect(result.code, result.stdout + result.stderr).toBe(0)
    expect(result.stdout).toMatch(/^shell-grammar\s+ok\s+/m)
  })

  it('links a plugin with the bundled plugins commands, installing its dependencies with the npm on PATH', async () => {
    const plugin = path.join(work, 'wave-plugin-wordcount')
    cpSync(path.join(PROJECT_ROOT, 'examples', 'wave-plugin-wordcount'), plugin, {recursive: true})
    const linked = await wave(['plugins', 'link', plugin])
    expect(linked.code, linked.stderr).toBe(0)
    const tools = await wave(['tools', '--json'])
    expect(tools.code, tools.stderr).toBe(0)
    expect(JSON.parse(tools.stdout).tools.map((tool: {name: string}) => tool.name)).toContain('WordCount')
  }, 120_000)

  it('names the fix in one line when the shell grammar is missing from the install (and fails closed)', async () => {
    const grammar = path.join(installed.root, 'dist', 'grammar', 'tree-sitter-bash.wasm')
    const saved = readFileSync(grammar)
    rmSync(grammar)
    try {
      const result = await wave(['doctor', '--offline'], {ANTHROPIC_API_KEY: 'sk-package-test'})
      expect(result.code).toBe(1)
      const line = result.stdout.split('\n').find((row) => row.startsWith('shell-grammar'))
      expect(line).toMatch(
        /^shell-grammar\s+FAIL\s+no Bash rule can match: dist\/grammar\/tree-sitter-bash\.wasm is missing from wave's install: reinstall wave-cli$/,
      )
    } finally {
      // The demo and the other tests use the grammar: put it back.
      writeFileSync(grammar, saved)
    }
  })
})
