#!/usr/bin/env node
// Build step: records what oclif prints for `wave --help` (no terminal, 80 columns) in
// dist/root-help.json, so bin/run.js can answer --help without loading oclif. Byte for byte oclif's,
// because it is oclif's.
import {execFileSync} from 'node:child_process'
import {writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const env = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !key.startsWith('OCLIF_') && !['COLUMNS', 'DEBUG', 'FORCE_COLOR', 'WAVE_DATA_DIR'].includes(key)),
)
env.WAVE_NO_FAST_START = '1'
// A help run is not a session: no code cache from it (src/base/bundles.ts), which a session would then use.
env.NODE_DISABLE_COMPILE_CACHE = '1'
// An empty data directory: plugins the builder installed by hand must not end up in the cached help.
env.XDG_DATA_HOME = join(root, 'dist', '.no-user-plugins')
const run = (args) => execFileSync(process.execPath, [join(root, 'bin/run.js'), ...args], {env, stdio: ['ignore', 'pipe', 'inherit']}).toString()
writeFileSync(join(root, 'dist', 'root-help.json'), JSON.stringify({help: run(['--help']), userAgent: run(['--version']).trim()}) + '\n')
