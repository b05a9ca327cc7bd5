/**
 * The build's bundles (scripts/bundle.js: oclif, the SDK, each command with wave's modules and zod),
 * loaded as classic scripts with V8's code cache.
 *
 * Why not ES modules: Node 20 keeps no compiled code between runs for an ES module (Node 22's
 * `module.enableCompileCache` does), so every start compiled ~3 MB of JavaScript again, and its ESM
 * loader evaluates a large module more slowly than a script. A `vm.Script` given the cached data of an
 * earlier run skips the parse and the lazy compilation of every function that run used: oclif's bundle
 * 58 → ~20 ms, the SDK's 40 → ~15 ms (bench/RESULTS.md). Cached data used with another source would run
 * stale code: V8 rejects data made by another V8 version or with other flags, but of the source it checks
 * only the length. So a cache file is named by the bundle's digest, which the build records
 * (digests.json): not by mtime, which npm sets to one date for every file of a package, so a cache made
 * while wave was built (its manifest step loads every bundle) serves the same build installed elsewhere.
 *
 * The cache lives in the user's cache directory (`~/.cache/wave/v8`, or under XDG_CACHE_HOME; where
 * oclif keeps a CLI's caches), or where WAVE_COMPILE_CACHE says; a directory others can write to is not
 * used (cached data is code), nor one inside a workspace wave may sandbox there (below): a sandboxed command
 * runs as the same user and writes anywhere in its workspace. NODE_DISABLE_COMPILE_CACHE=1 (node's own switch) turns it off. A bundle
 * whose cache was missing or rejected writes a new one when the process exits, with the functions that
 * run compiled, as Node 22's compile cache does.
 *
 * This module imports nothing but node's own modules and base/wasm.ts (which imports only those), and is
 * never bundled: a bundle's `require` of it (`#wave-bundles`, scripts/bundle.js) gets this one copy, so each
 * bundle has one instance per process.
 */
import {isAscii} from 'node:buffer'
import {existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {homedir} from 'node:os'
import path from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import vm from 'node:vm'

import {defaultTiers, withNodeTiers} from './wasm.js'

/** Where the build writes the bundles: dist/bundles/, beside this module's dist/base/. */
const BUNDLES = fileURLToPath(new URL('../bundles/', import.meta.url))

/** Bundles by the name a bundle's `require` uses for them: one instance each per process. */
const ALIASES: Record<string, string> = {'#oclif': 'vendor/oclif'}
const SELF = '#wave-bundles'

interface Loaded {
  exports: unknown
  script: vm.Script
  /** Where to write its cache at exit, when the cache was missing or rejected. */
  writeTo?: string
}

const loaded = new Map<string, Loaded>()
let exitHook = false
let codeCache = false
/** Where a session of this process may work: the repository around the start directory, and `--cwd`. */
let places: CachePlaces = {}

interface CachePlaces {
  /** Where wave starts: the git repository around it is a workspace a session there sandboxes. */
  start?: string
  /** `--cwd`: each one a workspace, as is the repository around it. */
  workspaces?: string[]
}

/**
 * Turns the code cache on for this process: wave's executable does (bin/run.js). Other hosts of the
 * bundles, such as oclif's manifest step at build time, load them without one: a cache made by a run
 * that is not a session holds little, and once accepted it is never replaced. `places`: the directories
 * a session may work in (the start directory, `--cwd`); a cache inside the repository around one of them
 * is not used, since a sandboxed command of an earlier session there could have written it. The session
 * itself refuses to start with the cache inside its workspace (settings.ts), so it never writes one there.
 */
export function useCodeCache(where: CachePlaces = {}): void {
  codeCache = true
  places = where
}

/** Whether wave runs from its build's bundles (not from its TypeScript sources, as in the in-process tests). */
export function runningFromBundles(): boolean {
  return loaded.size > 0
}

/**
 * The exports of bundle `name` (`vendor/oclif`, `vendor/anthropic-sdk`, `commands/plan`), evaluated once.
 * `metaUrl` is what `import.meta.url` means in its code: for a command, the URL of the module oclif
 * loads (dist/commands/plan.js), which the code's relative URLs were written against.
 */
export function loadBundle<T = unknown>(name: string, metaUrl?: string): T {
  const known = loaded.get(name)
  if (known) return known.exports as T
  const file = path.join(BUNDLES, `${name}.cjs`)
  const source = readSource(file)
  const cacheFile = cachePath(name)
  const cachedData = cacheFile ? readCache(cacheFile) : undefined
  // The wrapper is CommonJS's, plus the bundle's import.meta.url (esbuild's `define`) and its import()
  // (scripts/bundle.js rewrites each one to `__waveImport`: a script compiled from cached data can't import).
  const wrapper = `(function (exports, require, module, __filename, __dirname, __waveMetaUrl, __waveImport) {${source}\n})`
  const script = withNodeTiers(() => new vm.Script(wrapper, {cachedData, filename: file}))
  const entry: Loaded = {exports: undefined, script, writeTo: cacheFile && (!cachedData || script.cachedDataRejected) ? cacheFile : undefined}
  if (entry.writeTo && !exitHook) {
    exitHook = true
    process.once('exit', writeCaches)
  }

  const module = {exports: {} as unknown}
  loaded.set(name, Object.assign(entry, {exports: module.exports}))
  const nodeRequire = createRequire(file)
  const require = Object.assign(
    (id: string) => (id === SELF ? {codeCacheDirectory, loadBundle, runningFromBundles} : id in ALIASES ? loadBundle(ALIASES[id]) : nodeRequire(id)),
    nodeRequire,
  )
  try {
    const url = metaUrl ?? pathToFileURL(file).href
    const importModule = (specifier: string, options?: ImportCallOptions) =>
      import(specifier.startsWith('.') ? new URL(specifier, url).href : specifier, options)
    script.runInThisContext()(module.exports, require, module, file, path.dirname(file), url, importModule)
  } catch (error) {
    loaded.delete(name)
    throw error
  }

  entry.exports = module.exports
  return module.exports as T
}

/**
 * A bundle's text. The build leaves every bundle pure ASCII (scripts/bundle.js) so that it reads as
 * Latin-1, a byte a character: ~0.5 ms for the plan command's 1.6 MB where decoding UTF-8 took ~7 ms of
 * every start. Checked, not assumed (one pass, vectorised): a file that is not ASCII is read as UTF-8.
 */
function readSource(file: string): string {
  const bytes = readFileSync(file)
  return bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8')
}

let knownDigests: Record<string, string> | undefined

/** The bundles' digests (the first 16 hex digits of their SHA-256), as the build wrote them. */
function digests(): Record<string, string> {
  if (!knownDigests) {
    try {
      knownDigests = JSON.parse(readFileSync(path.join(BUNDLES, 'digests.json'), 'utf8')) as Record<string, string>
    } catch {
      knownDigests = {}
    }
  }

  return knownDigests
}

/** The cache file for a bundle, or undefined when there is no usable cache directory (or no digest). */
function cachePath(name: string): string | undefined {
  if (!codeCache || process.env.NODE_DISABLE_COMPILE_CACHE) return undefined
  try {
    const dir = codeCacheDirectory()
    if (withinWorkspace(dir) || !ownDirectory(dir)) return undefined
    const digest = digests()[name]
    if (!/^[0-9a-f]{16}$/.test(digest ?? '')) return undefined
    return path.join(dir, `${cacheKey(name)}-${digest}-${process.version}-${process.arch}.bin`)
  } catch {
    return undefined
  }
}

let withinChecked: {dir: string; within: boolean} | undefined

/**
 * Whether `dir` lies in one of `workspaces` or the git repository around it (the nearest directory
 * above holding a `.git`): a few stat calls, once per process.
 */
function withinWorkspace(dir: string): boolean {
  if (withinChecked?.dir === dir) return withinChecked.within
  const real = realOrAncestor(path.resolve(dir))
  const roots = (places.workspaces ?? []).map((place) => realOrAncestor(path.resolve(place)))
  for (const from of [...(places.start ? [realOrAncestor(path.resolve(places.start))] : []), ...roots]) {
    const top = repositoryTop(from)
    if (top) roots.push(top)
  }

  const within = roots.some((root) => isWithin(root, real))
  withinChecked = {dir, within}
  return within
}

/** The nearest directory from `dir` up that holds a `.git`, or undefined. */
function repositoryTop(dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, '.git'))) return at
    if (path.dirname(at) === at) return undefined
  }
}

/** The real path of `file`, or of its nearest existing ancestor with the rest appended. */
function realOrAncestor(file: string): string {
  try {
    return realpathSync(file)
  } catch {
    const parent = path.dirname(file)
    return parent === file ? file : path.join(realOrAncestor(parent), path.basename(file))
  }
}

function isWithin(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep)
}

/** Where the code cache is: WAVE_COMPILE_CACHE, else `wave/v8` in the user's cache directory. */
export function codeCacheDirectory(): string {
  return process.env.WAVE_COMPILE_CACHE || path.join(userCacheDirectory(), 'wave', 'v8')
}

/** Where the platform keeps a user's caches (as oclif's `cacheDir` does). */
function userCacheDirectory(): string {
  const env = process.env
  if (process.platform === 'win32') return env.LOCALAPPDATA || path.join(homedir(), 'AppData', 'Local')
  if (process.platform === 'darwin') return path.join(homedir(), 'Library', 'Caches')
  return env.XDG_CACHE_HOME || path.join(homedir(), '.cache')
}

/** The directory, made if missing; only a real directory of this user that nobody else can write to. */
function ownDirectory(dir: string): boolean {
  try {
    mkdirSync(path.dirname(dir), {recursive: true})
    mkdirSync(dir, {mode: 0o700})
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false
  }

  const stat = lstatSync(dir)
  if (!stat.isDirectory()) return false
  // POSIX modes and owners; Windows has neither (its profile directories are the user's own).
  return process.getuid === undefined || (stat.uid === process.getuid() && (stat.mode & 0o022) === 0)
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

/** Caches kept per bundle: a few builds or node versions used side by side (a global wave and a project's). */
const CACHES_PER_BUNDLE = 3

/**
 * At exit: the cache of each bundle that had none, written whole (a temporary file renamed) or not at all;
 * of the same bundle's caches (other builds, other node versions) the newest few are kept, so the
 * directory does not grow.
 */
function writeCaches(): void {
  // With V8's flags as node starts, or the next process would refuse what is written (base/wasm.ts).
  defaultTiers()
  for (const [name, {script, writeTo}] of loaded) {
    if (!writeTo) continue
    const temporary = `${writeTo}.${process.pid}.tmp`
    try {
      writeFileSync(temporary, script.createCachedData(), {mode: 0o600})
      renameSync(temporary, writeTo)
      const dir = path.dirname(writeTo)
      const same = new RegExp(`^${cacheKey(name)}-[0-9a-f]{16}-v[\\d.]+-\\w+\\.bin$`)
      const caches = readdirSync(dir)
        .filter((file) => same.test(file))
        .map((file) => ({file, mtimeMs: statSync(path.join(dir, file)).mtimeMs}))
        .sort((a, b) => b.mtimeMs - a.mtimeMs)
      for (const {file} of caches.slice(CACHES_PER_BUNDLE)) rmSync(path.join(dir, file), {force: true})
    } catch {
      // A cache is an optimisation: a full disk or a race with another process costs the next start only.
    }
  }
}

/** The start of a bundle's cache file names: `commands/plans/rm` → `commands-plans-rm`. */
function cacheKey(name: string): string {
  return name.replaceAll('/', '-')
}
