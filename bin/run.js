#!/usr/bin/env node
// `wave --help` (-h), `wave --version` (-v) and a bare `wave` answer without loading oclif, whose import alone
// costs more than starting node (bench/RESULTS.md): --version is one line, and the root help is the text
// oclif printed at build time (scripts/cache-root-help.js). Anything that could change what oclif would
// print (a terminal, colours, a width in COLUMNS, OCLIF_* settings, user-installed plugins, DEBUG) goes to oclif.
// WAVE_NO_FAST_START=1 turns this off, and the lean oclif load below.
import {existsSync, readFileSync} from 'node:fs'
import module from 'node:module'
import {arch, homedir, platform, release} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const argv = process.argv.slice(2)
const helpAsked = argv.some((arg) => arg === '--help' || arg === '-h')
const output = fastOutput(argv)
if (output === undefined) {
  // Node 22.1 and later keep the compiled code of the modules outside the bundles (packages loaded on
  // demand) between runs; the bundles have their own cache (src/base/bundles.ts), Node 20 included.
  module.enableCompileCache?.()
  // The bundles' loader is read (off the main thread, by the ESM loader) while the snapshot starts.
  const bundles = import('../dist/base/bundles.js')
  if (startsSession(argv)) {
    // git reads the repository on another core while oclif and the command load (snapshot.ts).
    const {beginStartupSnapshot} = await import('../dist/base/workspace/snapshot.js')
    beginStartupSnapshot(process.cwd(), {changes: argv[0] === 'run'})
  }

  // oclif as one bundle loaded with V8's code cache (src/base/bundles.ts), the one copy wave's commands use too.
  // Not from inside the repository wave starts in, or the one --cwd names: a sandboxed command there could have written it.
  const {useCodeCache} = await bundles
  useCodeCache({start: process.cwd(), workspaces: cwdFlags(argv)})
  // Its check of node's version against its package's engines looks for a package.json beside the bundle,
  // where there is none: it can't warn, but loads semver to try (3–5 ms). Off while oclif loads.
  // Output to a pipe or file has no terminal to ask its width, where oclif wraps help at 80 columns: COLUMNS,
  // where set, stands for it (as for ls and man). OCLIF_COLUMNS, oclif's own setting, still wins.
  const columns = Number.parseInt(process.env.COLUMNS ?? '', 10)
  if (!process.stdout.isTTY && columns > 0) globalThis.oclif = {...globalThis.oclif, columns}
  const engineCheck = process.env.OCLIF_DISABLE_ENGINE_WARNING
  process.env.OCLIF_DISABLE_ENGINE_WARNING = '1'
  const {execute, Plugin} = await import('#oclif')
  if (engineCheck === undefined) delete process.env.OCLIF_DISABLE_ENGINE_WARNING
  else process.env.OCLIF_DISABLE_ENGINE_WARNING = engineCheck
  await execute({dir: import.meta.url, loadOptions: await ownCommandConfig(Plugin, argv)})
} else {
  process.stdout.on('error', () => {}) // A closed pipe (`wave --help | head -1`) is not an error.
  process.stdout.write(output)
}

/**
 * For one of wave's own commands, when no plugin is installed (and no help asked for), oclif's load
 * options with wave alone as its plugin: @oclif/plugin-help and @oclif/plugin-plugins bring commands
 * (help, plugins) and no hook such a command runs, so finding and reading them would be time spent for
 * nothing. Anything else (a plugin command, help, a typo oclif may correct) gets oclif's full load.
 */
async function ownCommandConfig(Plugin, args) {
  // No command named (a bare `wave`, a flag such as `-v` at a terminal): oclif's full load answers it.
  if (process.env.WAVE_NO_FAST_START || helpAsked || !args[0] || args[0].startsWith('-')) return undefined
  const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  if (userPluginsInstalled(pjson)) return undefined
  const plugin = new Plugin({isRoot: true, pjson, root})
  // Plugin#load sorts the commands with localeCompare, whose first call builds ICU's collator (~8 ms on
  // the way to the first request). The order only shows in help, which this load never prints (help asked
  // for takes oclif's full load): a plain comparison sorts them meanwhile.
  const localeCompare = String.prototype.localeCompare
  String.prototype.localeCompare = function compare(that) {
    return this < that ? -1 : this > that ? 1 : 0
  }
  try {
    await plugin.load()
  } finally {
    String.prototype.localeCompare = localeCompare
  }
  const command = plugin.commands.find((command) => command.id === args[0])
  if (!command) return undefined
  // A session's command module (its bundle, ~25 ms to evaluate) starts loading now, so that it evaluates
  // while oclif's Config.load waits on the file system; oclif's own import of it then finds it loaded.
  if ((args[0] === 'plan' || args[0] === 'run') && command.relativePath) import(pathToFileURL(join(root, ...command.relativePath)).href).catch(() => {})
  return {plugins: new Map([[plugin.name, plugin]]), root}
}

/** `wave plan` and `wave run` in the directory they start in (not --cwd, which names another workspace). */
function startsSession(args) {
  return (args[0] === 'plan' || args[0] === 'run') && !helpAsked && !args.some((arg) => arg === '--cwd' || arg.startsWith('--cwd='))
}

/** The directories --cwd names (`--cwd DIR`, `--cwd=DIR`), as given. */
function cwdFlags(args) {
  const dirs = []
  for (const [at, arg] of args.entries()) {
    if (arg === '--cwd' && args[at + 1]) dirs.push(args[at + 1])
    else if (arg.startsWith('--cwd=')) dirs.push(arg.slice('--cwd='.length))
  }
  return dirs
}

/** What oclif would print for these arguments, or undefined to let oclif run. */
function fastOutput(args) {
  try {
    // -h and -v are oclif's additionalHelpFlags and additionalVersionFlags (package.json): the same answers.
    const flag = new Map([
      ['--help', 'help'],
      ['--version', 'version'],
      ['-h', 'help'],
      ['-v', 'version'],
    ]).get(args[0] ?? '--help')
    if (args.length > 1 || !flag) return undefined
    const env = process.env
    if (env.WAVE_NO_FAST_START || env.DEBUG || env.FORCE_COLOR || process.stdout.isTTY) return undefined
    if (env.COLUMNS && env.COLUMNS !== '80') return undefined // the cached help is 80 columns wide
    if (Object.keys(env).some((key) => key.startsWith('OCLIF_'))) return undefined
    if (isWsl()) return undefined // oclif names the platform `wsl`
    const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    if (userPluginsInstalled(pjson)) return undefined // they add to the help

    const userAgent = `${pjson.name}/${pjson.version} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}`
    if (flag === 'version') return `${userAgent}\n`
    const cached = JSON.parse(readFileSync(join(root, 'dist', 'root-help.json'), 'utf8'))
    if (!cached.userAgent.startsWith(`${pjson.name}/${pjson.version} `)) return undefined // built from another version
    return cached.help.replace(cached.userAgent, userAgent)
  } catch {
    return undefined
  }
}

/** Whether `wave plugins install|link` left a plugin list where oclif looks for one (its data directory). */
function userPluginsInstalled(pjson) {
  const env = process.env
  const dataDir = env.WAVE_DATA_DIR || join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local/share'), pjson.oclif?.dirname ?? pjson.name)
  return existsSync(join(dataDir, 'package.json'))
}

function isWsl() {
  if (platform() !== 'linux') return false
  if (release().toLowerCase().includes('microsoft')) return true
  try {
    return readFileSync('/proc/version', 'utf8').toLowerCase().includes('microsoft')
  } catch {
    return false
  }
}
