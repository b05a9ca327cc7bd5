#!/usr/bin/env node
// `npm run release:check [-- --tag vX.Y.Z]`: before a release, that the version, the changelog and the
// packed contents agree. Checks, each printed, exit 1 if any fails:
//   - package.json's version is a semantic version, and the tag (--tag, else GITHUB_REF_NAME when the
//     workflow runs for a tag) is `v` + that version;
//   - CHANGELOG.md has a dated, non-empty section for the version;
//   - the tarball `npm run pack` makes has that version, no scripts, the files that run (bin, bundles,
//     grammar, docs, LICENSE, CHANGELOG as in the repository) and none that don't (sources, tests,
//     build scripts, bin/dev.js), and every package the bundles load is one of its dependencies.
// `--notes vX.Y.Z` prints the version's changelog section instead (the GitHub release's notes).
import {execFileSync} from 'node:child_process'
import {builtinModules} from 'node:module'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

import {PROJECT_ROOT as root, packTarball, scriptOptions} from './tarball.js'

const options = scriptOptions('release:check', 'node scripts/release-check.js [--tag vX.Y.Z | --notes vX.Y.Z]', {
  notes: {type: 'string'},
  tag: {type: 'string'},
})

/** The changelog's section for `version`: its date and its text (up to the next version's heading). */
export function changelogSection(changelog, version) {
  const lines = changelog.split('\n')
  const escaped = version.replaceAll('.', '\\.')
  const start = lines.findIndex((line) => new RegExp(`^## \\[${escaped}\\] - (\\d{4}-\\d{2}-\\d{2})\\s*$`).test(line))
  if (start === -1) return undefined
  const date = lines[start].match(/(\d{4}-\d{2}-\d{2})/)[1]
  const end = lines.findIndex((line, i) => i > start && /^## /.test(line))
  return {
    date,
    text: lines
      .slice(start + 1, end === -1 ? undefined : end)
      .join('\n')
      .trim(),
  }
}

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8')

if (options.notes) {
  const version = options.notes.replace(/^v/, '')
  const section = changelogSection(changelog, version)
  if (!section) {
    console.error(`release:check: CHANGELOG.md has no section for ${version}`)
    process.exit(1)
  }
  process.stdout.write(`${section.text}\n`)
  process.exit(0)
}

const failures = []
const check = (ok, what) => {
  console.log(`${ok ? 'ok  ' : 'FAIL'}  ${what}`)
  if (!ok) failures.push(what)
}

const {version} = manifest
check(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version), `package.json's version ${version} is a semantic version`)
const tag = options.tag ?? (process.env.GITHUB_REF_TYPE === 'tag' ? process.env.GITHUB_REF_NAME : undefined)
if (tag !== undefined) check(tag === `v${version}`, `the tag ${tag} is v${version}`)
const section = changelogSection(changelog, version)
check(Boolean(section?.text), `CHANGELOG.md has a dated, non-empty section "## [${version}] - YYYY-MM-DD"`)

const work = mkdtempSync(join(tmpdir(), 'wave-release-check-'))
try {
  const packed = packTarball(work)
  const files = packed.files.map((file) => file.path)
  execFileSync('tar', ['xzf', packed.tarball, '-C', work])
  const pkg = join(work, 'package')
  const published = JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8'))
  check(published.version === version, `the tarball's version is ${version} (it is ${published.version})`)
  check(published.scripts === undefined, 'the published manifest has no scripts (no install script, no prepare)')
  for (const needed of [
    'bin/run.js',
    'oclif.manifest.json',
    'dist/root-help.json',
    'dist/grammar/tree-sitter-bash.wasm',
    'dist/bundles/vendor/oclif.cjs',
    'LICENSE',
    'README.md',
    'CHANGELOG.md',
    'docs/ci/github-actions.md',
    'docs/reference.md',
  ]) {
    check(files.includes(needed), `the tarball holds ${needed}`)
  }
  check(readFileSync(join(pkg, 'CHANGELOG.md'), 'utf8') === changelog, "the tarball's CHANGELOG.md is the repository's")
  const stray = files.filter((file) => /^(src|test|scripts|bench|examples|setup|\.github|\.ci)\//.test(file) || ['bin/dev.js', 'action.yml'].includes(file))
  check(
    stray.length === 0,
    `the tarball holds no sources, tests, build scripts or dev entry points${stray.length ? ` (it has ${stray.slice(0, 5).join(', ')})` : ''}`,
  )
  for (const command of Object.keys(JSON.parse(readFileSync(join(pkg, 'oclif.manifest.json'), 'utf8')).commands)) {
    const file = `dist/commands/${command.replaceAll(':', '/')}.js`
    check(files.includes(file) || files.includes(file.replace(/\.js$/, '/index.js')), `the tarball holds the command ${command}`)
  }

  // Every module a shipped module imports by a relative path is shipped too (a new import of compiler
  // output beside a bundle would otherwise fail only in an installed wave).
  const dangling = []
  for (const file of files.filter((path) => /^(bin|dist)\/.*\.js$/.test(path))) {
    const source = readFileSync(join(pkg, file), 'utf8')
    // Static imports and re-exports, and import() on lines that are not comments.
    const code = source
      .split('\n')
      .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
      .join('\n')
    for (const [, specifier] of code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm)) {
      const target = join(dirname(file), specifier).replace(/\\/g, '/')
      if (!files.includes(target)) dangling.push(`${file} → ${specifier}`)
    }
  }
  check(dangling.length === 0, `every module a shipped module imports is shipped${dangling.length ? ` (not: ${dangling.slice(0, 5).join(', ')})` : ''}`)

  // Every package a bundle loads at run time (require, or an import() the bundles route through their loader).
  const loaded = new Set()
  for (const file of files.filter((path) => /^dist\/(bundles\/.*\.cjs|plugins\/.*\.js|core\/.*\.js)$/.test(path))) {
    const source = readFileSync(join(pkg, file), 'utf8')
    // require("x"), __waveImport("x"), and createRequire(...)("x") (a lazy require).
    for (const [, specifier] of source.matchAll(/(?:\brequire|__waveImport|\)\(__waveMetaUrl\)|\(import\.meta\.url\))\("([^"./#][^"]*)"\)/g))
      loaded.add(specifier)
  }
  const builtin = new Set(builtinModules)
  const packageOf = (specifier) =>
    specifier
      .split('/')
      .slice(0, specifier.startsWith('@') ? 2 : 1)
      .join('/')
  // oclif's bundle requires these only for plugins written in TypeScript during their development.
  const devOnly = new Set(['typescript', 'ts-node', 'tsx'])
  const missing = [...loaded].filter(
    (specifier) =>
      !specifier.startsWith('node:') &&
      !builtin.has(specifier) &&
      !devOnly.has(packageOf(specifier)) &&
      !(packageOf(specifier) in (published.dependencies ?? {})),
  )
  const packages = [...new Set([...loaded].map(packageOf))].filter((name) => !name.startsWith('node:') && !builtin.has(name) && !devOnly.has(name)).sort()
  check(missing.length === 0, `every package the bundles load (${packages.join(', ')}) is a dependency${missing.length ? ` (not: ${missing.join(', ')})` : ''}`)
} catch (error) {
  // No build, npm failing, a tarball that does not unpack: one failed check, not a stack.
  check(false, `the package packs and unpacks (${error.message.split('\n')[0]})`)
} finally {
  rmSync(work, {force: true, recursive: true})
}

if (failures.length > 0) {
  console.error(`release:check: ${failures.length} ${failures.length === 1 ? 'check' : 'checks'} failed`)
  process.exit(1)
}
console.log(`release:check: wave-cli ${version} is ready to release`)
