// The package as a user gets it: packed (scripts/pack.js) and installed with npm into a prefix of its own,
// measured (bytes on disk, packages). Used by the suite's package test (test/build/package.test.ts) and the
// bench's install row (bench/install.js), so both measure the same thing.
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, lstatSync, readdirSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

export const PROJECT_ROOT = dirname(dirname(fileURLToPath(import.meta.url)))

/** The targets of issue 27: what `npm install -g wave-cli` may bring. */
export const INSTALL_LIMITS = {bytes: 40e6, packages: 60}

/** The environment for npm: the caller's, without what an enclosing `npm test` sets for its own npm. */
function npmEnv(extra = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)))
  return {...env, NO_UPDATE_NOTIFIER: '1', npm_config_update_notifier: 'false', ...extra}
}

/** Packs the built repository into `destination`: npm's description of the tarball (`tarball`: its path). */
export function pack(destination) {
  const out = execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts/pack.js'), '--destination', destination, '--json'], {
    encoding: 'utf8',
    env: npmEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return JSON.parse(out)
}

/**
 * `npm install -g <tarball>` into `prefix`: what npm printed on stderr (its warnings), and the install
 * measured: bytes of every file under the prefix's node_modules, and packages (directories with a
 * package.json directly under a node_modules, wave-cli included).
 */
export function install(tarball, prefix) {
  const npm = spawnSync('npm', ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel=warn', tarball], {
    encoding: 'utf8',
    env: npmEnv(),
  })
  if (npm.status !== 0) throw new Error(`npm install of ${tarball} failed (exit ${npm.status}): ${npm.stderr || npm.error?.message}`)
  const stderr = npm.stderr
  const modules = join(prefix, 'lib', 'node_modules')
  return {bin: join(prefix, 'bin', 'wave'), bytes: sizeOf(modules), packages: packagesIn(modules), root: join(modules, 'wave-cli'), stderr}
}

function sizeOf(path) {
  const stat = lstatSync(path)
  if (!stat.isDirectory()) return stat.size
  return readdirSync(path).reduce((sum, name) => sum + sizeOf(join(path, name)), 0)
}

function packagesIn(modules) {
  if (!existsSync(modules)) return 0
  let count = 0
  for (const name of readdirSync(modules)) {
    if (name.startsWith('.')) continue
    const dirs = name.startsWith('@') ? readdirSync(join(modules, name)).map((sub) => join(modules, name, sub)) : [join(modules, name)]
    for (const dir of dirs) {
      if (!existsSync(join(dir, 'package.json'))) continue
      count += 1 + packagesIn(join(dir, 'node_modules'))
    }
  }
  return count
}
