#!/usr/bin/env node
// Build step, after tsc: bundles the SDK into one file, oclif into one file, and each command with wave's
// own modules and zod into one file, so that a command loads a handful of files instead of hundreds.
import {createHash} from 'node:crypto'
import {mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {parse} from 'acorn'
import {simple} from 'acorn-walk'
import {build} from 'esbuild'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const pjson = (await import(join(root, 'package.json'), {with: {type: 'json'}})).default
// CommonJS, loaded by src/core/bundles.ts as classic scripts with V8's code cache (why: there). The
// wrapper it gives each bundle passes `__waveMetaUrl`, what `import.meta.url` means in the code.
const common = {bundle: true, define: {'import.meta.url': '__waveMetaUrl'}, format: 'cjs', logLevel: 'warning', platform: 'node', target: 'node20'}
const bundles = join(root, 'dist/bundles')

await build({...common, entryPoints: [join(root, 'node_modules/@anthropic-ai/sdk/index.mjs')], outfile: join(bundles, 'vendor/anthropic-sdk.cjs')})

// oclif as one bundle: requiring its ~150 CommonJS modules one by one cost more than starting node.
// bin/run.js and every command use this one instance (their `#oclif`: the bundle's require maps it, and
// package.json maps it to dist/vendor/oclif.js, which re-exports it to ES modules), so wave's commands and
// oclif's Config, Command and errors are one. oclif's own require() calls (plugins, their manifests) get
// node's. TypeScript and ts-node are only for plugins in development: left out.
const oclifExports = Object.keys(createRequire(join(root, 'package.json'))('@oclif/core'))
await build({
  ...common,
  external: ['typescript', 'ts-node', 'tsx'],
  outfile: join(bundles, 'vendor/oclif.cjs'),
  stdin: {contents: `module.exports = require('@oclif/core')`, resolveDir: root},
})
mkdirSync(join(root, 'dist/vendor'), {recursive: true})
writeFileSync(
  join(root, pjson.imports['#oclif']),
  [
    '// oclif for ES modules (package.json maps #oclif here): the bundle every command uses, one instance.',
    `import {loadBundle} from '../core/bundles.js'`,
    `const oclif = loadBundle('vendor/oclif')`,
    `export const {${oclifExports.join(', ')}} = oclif`,
    'export default oclif',
    '',
  ].join('\n'),
)

// What a command imports at start and is plain JavaScript goes into its bundle: for a package left out,
// node's ESM loader would resolve it and scan it for its export names, file by file. So does listr2,
// which every session loads when the first response arrives (its import() in the bundle is evaluated
// then, from the code cache: ~20 ms through the ESM loader, in the first turn). The rest stays a
// package: oclif (the one copy above), what loads lazily and rarely (the model SDKs, MCP, turndown,
// marked), and what finds files beside its own (tree-sitter's WebAssembly).
const BUNDLED = ['ignore', 'listr2', 'picomatch', 'unique-names-generator', 'write-file-atomic', 'zod']
const external = Object.keys(pjson.dependencies).filter((name) => !BUNDLED.includes(name))
const oclifVendored = {
  name: 'oclif-vendored',
  setup(build) {
    build.onResolve({filter: /^@oclif\/core$/}, () => ({external: true, path: '#oclif'}))
    // The loader of the bundles is never bundled: its one copy (dist/core/bundles.js) is the bundle's require's.
    build.onResolve({filter: /[\\/]bundles\.js$/}, () => ({external: true, path: '#wave-bundles'}))
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
// Topics' commands too (commands/plans/rm.js is `wave plans rm`), each bundled under dist/bundles/commands.
const entries = readdirSync(commands, {recursive: true}).filter((file) => file.endsWith('.js'))
await build({
  ...common,
  entryPoints: entries.map((file) => join(commands, file)),
  external: [...external, ...external.map((name) => `${name}/*`)],
  outbase: commands,
  outdir: join(bundles, 'commands'),
  outExtension: {'.js': '.cjs'},
  plugins: [oclifVendored, zodLocalesOnDemand],
})
// What oclif loads for a command (the module the manifest names) becomes the bundle's door: its exports,
// with import.meta.url in the bundle meaning this module's URL, which the code's relative URLs assume.
for (const file of entries) {
  const name = `commands/${file.replace(/\\/g, '/').replace(/\.js$/, '')}`
  const core = relative(dirname(join(commands, file)), join(root, 'dist/core/bundles.js')).replace(/\\/g, '/')
  writeFileSync(
    join(commands, file),
    [`import {loadBundle} from '${core.startsWith('.') ? core : `./${core}`}'`, `export default loadBundle('${name}', import.meta.url).default`, ''].join('\n'),
  )
}

/**
 * Every `import()` in a bundle becomes `__waveImport()`, the loader's (src/core/bundles.ts): on Node 20 a
 * script compiled with V8's cached data loses its dynamic-import callback (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING),
 * so the import is made by the loader, an ES module, instead. Found by parsing, not by text: only import
 * expressions change, never the word in a string or comment.
 */
function routeDynamicImports(file) {
  const source = readFileSync(file, 'utf8')
  const starts = []
  simple(parse(source, {allowHashBang: true, ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true}), {
    ImportExpression(node) {
      starts.push(node.start)
    },
  })
  let out = ''
  let at = 0
  for (const start of starts.sort((a, b) => a - b)) {
    if (source.slice(start, start + 6) !== 'import') throw new Error(`${file}: an import expression at ${start} does not start with "import"`)
    out += `${source.slice(at, start)}__waveImport`
    at = start + 6
  }
  writeFileSync(file, out + source.slice(at))
}

// Each bundle's digest, which names its code cache (src/core/bundles.ts: V8 checks a source's length only).
const digests = {}
for (const file of readdirSync(bundles, {recursive: true}).sort()) {
  if (!file.endsWith('.cjs')) continue
  routeDynamicImports(join(bundles, file))
  const name = file.replace(/\\/g, '/').replace(/\.cjs$/, '')
  digests[name] = createHash('sha256').update(readFileSync(join(bundles, file))).digest('hex').slice(0, 16)
}

writeFileSync(join(bundles, 'digests.json'), `${JSON.stringify(digests, null, 2)}\n`)
