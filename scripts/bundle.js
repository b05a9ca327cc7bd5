#!/usr/bin/env node
// Build step, after tsc: bundles the SDK into one file, oclif into one file, and each command with wave's
// own modules and zod into one file, so that a command loads a handful of files instead of hundreds.
import {readdirSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const pjson = (await import(join(root, 'package.json'), {with: {type: 'json'}})).default
const common = {bundle: true, format: 'esm', logLevel: 'warning', platform: 'node', target: 'node20'}
/** CommonJS code in an ES module bundle uses require(), __filename and __dirname: node's, for the bundle's own location. */
const commonJsBanner = [
  "import {createRequire as __createRequire} from 'node:module';",
  "import {dirname as __pathDirname} from 'node:path';",
  "import {fileURLToPath as __fileURLToPath} from 'node:url';",
  'const require = __createRequire(import.meta.url);',
  'const __filename = __fileURLToPath(import.meta.url);',
  'const __dirname = __pathDirname(__filename);',
].join(' ')

await build({...common, entryPoints: [join(root, 'node_modules/@anthropic-ai/sdk/index.mjs')], outfile: join(root, 'dist/vendor/anthropic-sdk.js')})

// oclif as one ES module (package.json maps `#oclif` to it): requiring its ~150 CommonJS modules one by one
// cost more than starting node. bin/run.js and every command import this one copy, so wave's commands and
// oclif's Config, Command and errors are one instance. An ES module, not CommonJS: node would scan a
// CommonJS file of this size for its export names on every start. oclif's own require() calls (plugins,
// their manifests) get node's require. TypeScript and ts-node are only for plugins in development: left out.
const oclifExports = Object.keys(createRequire(join(root, 'package.json'))('@oclif/core'))
await build({
  ...common,
  banner: {js: commonJsBanner},
  external: ['typescript', 'ts-node', 'tsx'],
  outfile: join(root, pjson.imports['#oclif']),
  stdin: {contents: `export {${oclifExports.join(', ')}} from '@oclif/core'`, resolveDir: root},
})

// What a command imports at start and is plain JavaScript goes into its bundle: for a package left out,
// node's ESM loader would resolve it and scan it for its export names, file by file. The rest stays a
// package: oclif (the one copy above), what loads lazily (the model SDKs, MCP, listr2, turndown,
// marked), and what finds files beside its own (tree-sitter's WebAssembly).
const BUNDLED = ['ignore', 'picomatch', 'unique-names-generator', 'write-file-atomic', 'zod']
const external = Object.keys(pjson.dependencies).filter((name) => !BUNDLED.includes(name))
const oclifVendored = {
  name: 'oclif-vendored',
  setup(build) {
    build.onResolve({filter: /^@oclif\/core$/}, () => ({external: true, path: '#oclif'}))
  },
}
/**
 * zod evaluates its ~40 translations of error messages when it loads, a third of its start-up; wave
 * uses the English one (zod's default). The others stay exported under their names, each loaded from
 * zod's CommonJS build the first time it is called (`z.locales.fr()`), so a plugin given wave's `z` sees
 * the same API.
 */
const zodLocalesOnDemand = {
  name: 'zod-locales-on-demand',
  setup(build) {
    build.onLoad({filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/}, async ({path}) => {
      const source = await readFile(path, 'utf8')
      const locales = [...source.matchAll(/export \{ default as (\w+) \} from "\.\/([\w-]+)\.js";/g)].map(([, name, file]) => ({file, name}))
      const lines = locales.map(({file, name}) =>
        name === 'en' ? `export {default as en} from './en.js'` : `export const ${name} = (...args) => load('${file}')(...args)`,
      )
      return {
        // zod's CommonJS locale module is the locale function itself (module.exports = exports.default).
        contents: [`const load = (file) => require('zod/v4/locales/' + file + '.cjs')`, ...lines].join('\n'),
        resolveDir: dirname(path),
      }
    })
  },
}
const commands = join(root, 'dist/commands')
await build({
  ...common,
  allowOverwrite: true,
  // Topics' commands too (commands/plans/rm.js is `wave plans rm`), each bundled where it was.
  entryPoints: readdirSync(commands, {recursive: true}).filter((file) => file.endsWith('.js')).map((file) => join(commands, file)),
  external: [...external, ...external.map((name) => `${name}/*`)],
  banner: {js: commonJsBanner},
  outbase: commands,
  outdir: commands,
  plugins: [oclifVendored, zodLocalesOnDemand],
})
