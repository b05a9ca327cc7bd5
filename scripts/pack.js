#!/usr/bin/env node
// `npm run pack`: the package as it is published, a tarball of the files package.json's `files` names
// (npm's own selection) with the published manifest, which has no scripts: the repository's `prepare`
// (the build, which `npm ci` in a clone runs) is nothing an installed package runs, and npm lists it
// among a package's install scripts. The release workflow publishes this tarball.
//
//   node scripts/pack.js [--destination DIR] [--json]
//
// stdout: the tarball's path (with --json, npm's description of it: files, sizes, integrity).
// Needs the build (dist/); the manifest in the repository is left untouched.
import {execFileSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const argv = process.argv.slice(2)
const option = (name) => {
  const at = argv.indexOf(`--${name}`)
  return at === -1 ? undefined : argv[at + 1]
}
const destination = resolve(option('destination') ?? root)
const json = argv.includes('--json')

if (!existsSync(join(root, 'dist', 'bundles'))) {
  console.error('pack: dist/ is missing: run `npm run build` (npm ci runs it) first.')
  process.exit(2)
}

const npm = (args, cwd) => execFileSync('npm', args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']})

/** The published manifest: the repository's, without scripts (none runs in an installed package). */
export function publishedManifest(manifest) {
  const {scripts, ...published} = manifest
  return published
}

// npm's own choice of files (`files`, plus README, LICENSE and package.json), staged with the published manifest.
const [listing] = JSON.parse(npm(['pack', '--dry-run', '--json', '--ignore-scripts'], root))
const stage = mkdtempSync(join(tmpdir(), 'wave-pack-'))
try {
  for (const {path} of listing.files) {
    if (path === 'package.json') continue
    mkdirSync(dirname(join(stage, path)), {recursive: true})
    copyFileSync(join(root, path), join(stage, path))
  }
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(publishedManifest(manifest), null, 2)}\n`)
  mkdirSync(destination, {recursive: true})
  const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', destination], stage))
  const tarball = join(destination, packed.filename)
  process.stdout.write(json ? `${JSON.stringify({...packed, tarball}, null, 2)}\n` : `${tarball}\n`)
  console.error(
    `pack: ${packed.filename}: ${packed.entryCount} files, ${(packed.size / 1e6).toFixed(1)} MB packed, ${(packed.unpackedSize / 1e6).toFixed(1)} MB unpacked`,
  )
} finally {
  rmSync(stage, {force: true, recursive: true})
}
