#!/usr/bin/env node
// `wave --help` (-h), `wave --version` (-v) and a bare `wave` answer without loading oclif, whose import alone
// costs more than starting node (bench/RESULTS.md): --version is one line, and the root help is the text
// oclif printed at build time (scripts/cache-root-help.js). Anything that could change what oclif would
// print (a terminal, colours, OCLIF_* settings, user-installed plugins, DEBUG) goes to oclif.
// WAVE_NO_FAST_START=1 turns this off.
import {existsSync, readFileSync} from 'node:fs'
import {arch, homedir, platform, release} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const argv = process.argv.slice(2)
const output = fastOutput(argv)
if (output === undefined) {
  // A command that will call the model starts loading the SDK now: its module graph is read while
  // oclif and the command load, instead of after them.
  if (callsModel(argv)) import('../dist/vendor/anthropic-sdk.js').catch(() => {})
  const {execute} = await import('@oclif/core')
  await execute({dir: import.meta.url})
} else {
  process.stdout.on('error', () => {}) // A closed pipe (`wave --help | head -1`) is not an error.
  process.stdout.write(output)
}

function callsModel(args) {
  const key = process.env.ANTHROPIC_API_KEY?.trim() || process.env.ANTHROPIC_AUTH_TOKEN?.trim()
  return (args[0] === 'plan' || args[0] === 'run') && !args.includes('--help') && !args.includes('-h') && Boolean(key)
}

/** What oclif would print for these arguments, or undefined to let oclif run. */
function fastOutput(args) {
  try {
    // -h and -v are oclif's additionalHelpFlags and additionalVersionFlags (package.json): the same answers.
    const flag = new Map([['--help', 'help'], ['--version', 'version'], ['-h', 'help'], ['-v', 'version']]).get(args[0] ?? '--help')
    if (args.length > 1 || !flag) return undefined
    const env = process.env
    if (env.WAVE_NO_FAST_START || env.DEBUG || env.FORCE_COLOR || process.stdout.isTTY) return undefined
    if (Object.keys(env).some((key) => key.startsWith('OCLIF_'))) return undefined
    if (isWsl()) return undefined // oclif names the platform `wsl`
    const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    const oclif = pjson.oclif ?? {}
    const dataDir = env.WAVE_DATA_DIR || join(env.XDG_DATA_HOME || join(env.HOME || homedir(), '.local/share'), oclif.dirname ?? pjson.name)
    if (existsSync(join(dataDir, 'package.json'))) {
      return undefined // user-installed plugins add to the help
    }

    const userAgent = `${pjson.name}/${pjson.version} ${platform()}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}`
    if (flag === 'version') return `${userAgent}\n`
    const cached = JSON.parse(readFileSync(join(root, 'dist', 'root-help.json'), 'utf8'))
    if (!cached.userAgent.startsWith(`${pjson.name}/${pjson.version} `)) return undefined // built from another version
    return cached.help.replace(cached.userAgent, userAgent)
  } catch {
    return undefined
  }
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
