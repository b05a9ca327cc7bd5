// The package as it is published, and what the scripts that make and check it share (scripts/pack.js,
// scripts/release-check.js): where the project is, their command lines, and the tarball itself.
import {execFileSync} from 'node:child_process'
import {cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {parseArgs} from 'node:util'

export const PROJECT_ROOT = dirname(dirname(fileURLToPath(import.meta.url)))

/**
 * A script's options, read with node:util's parseArgs (strict: an unknown option or a missing value is
 * refused). A wrong command line is one line naming the script and its usage on stderr, and exit 2.
 */
export function scriptOptions(script, usage, options) {
  try {
    return parseArgs({args: process.argv.slice(2), options, strict: true}).values
  } catch (error) {
    console.error(`${script}: ${error.message.split('\n')[0]} (usage: ${usage})`)
    process.exit(2)
  }
}

/** The published manifest: the repository's, without scripts (none runs in an installed package). */
export function publishedManifest(manifest) {
  const {scripts, ...published} = manifest
  return published
}

const npm = (args, cwd) => execFileSync('npm', args, {cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit']})

/**
 * Packs the built repository into `destination` as it is published: npm's own choice of files (`files`,
 * plus README, LICENSE and package.json), staged with the published manifest. Answers npm's description
 * of the tarball (files, sizes, integrity) with `tarball`, its path. Needs the build (dist/); the
 * manifest in the repository is left untouched. Without the build it throws an error with exitCode 2.
 *
 * The stage holds everything npm could choose from (each entry `files` starts at, and the files npm always
 * takes at the top), and npm chooses there by the same `files`: one pack, where asking npm for its list
 * first (`npm pack --dry-run`) compressed the whole package once more only to list it (~3.5 CPU-seconds).
 */
export function packTarball(destination) {
  if (!existsSync(join(PROJECT_ROOT, 'dist', 'bundles')))
    throw Object.assign(new Error('dist/ is missing: run `npm run build` (npm ci runs it) first.'), {exitCode: 2})
  const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'))
  const tops = new Set(manifest.files.map((pattern) => pattern.split('/')[0]))
  for (const name of readdirSync(PROJECT_ROOT)) if (/^(readme|licen[cs]e|notice)/i.test(name)) tops.add(name)
  const stage = mkdtempSync(join(tmpdir(), 'wave-pack-'))
  try {
    for (const top of tops) {
      if (/[*?[{!]/.test(top)) throw new Error(`package.json's files: ${top} is a pattern at the top; scripts/tarball.js stages named entries`)
      if (existsSync(join(PROJECT_ROOT, top))) cpSync(join(PROJECT_ROOT, top), join(stage, top), {recursive: true})
    }
    writeFileSync(join(stage, 'package.json'), `${JSON.stringify(publishedManifest(manifest), null, 2)}\n`)
    const target = resolve(destination)
    mkdirSync(target, {recursive: true})
    const [packed] = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', target], stage))
    return {...packed, tarball: join(target, packed.filename)}
  } finally {
    rmSync(stage, {force: true, recursive: true})
  }
}
