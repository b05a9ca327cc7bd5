#!/usr/bin/env node
// Build step, after tsc: bundles the SDK into one file, oclif into one file, and each command with wave's
// own modules and zod into one file, so that a command loads a handful of files instead of hundreds.
import {createHash} from 'node:crypto'
import {copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import {createRequire} from 'node:module'
import {basename, dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {parse} from 'acorn'
import {simple} from 'acorn-walk'
import {build} from 'esbuild'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const pjson = (await import(join(root, 'package.json'), {with: {type: 'json'}})).default
// CommonJS, loaded by src/base/bundles.ts as classic scripts with V8's code cache (why: there). The
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
    `import {loadBundle} from '../base/bundles.js'`,
    `const oclif = loadBundle('vendor/oclif')`,
    `export const {${oclifExports.join(', ')}} = oclif`,
    'export default oclif',
    '',
  ].join('\n'),
)

// What a command imports goes into its bundle: for a package left out, node's ESM loader would resolve it
// and scan it for its export names, file by file. So does listr2, which every session loads when the first
// response arrives (its import() in the bundle is evaluated then, from the code cache: ~20 ms through the
// ESM loader, in the first turn). What stays a package at run time is the package's `dependencies`, all
// an installed wave needs: what finds files beside its own (tree-sitter's WebAssembly runtime) and what
// is require()d lazily (re2js). What loads on demand and rarely (a provider's SDK, MCP, turndown, marked,
// the GitHub client) is a vendor module (below); oclif and the SDK are bundles of their own (above).
const external = Object.keys(pjson.dependencies)

/**
 * Packages loaded on demand and rarely (a provider's SDK, MCP, WebFetch's HTML converter, markdown at a
 * terminal, the GitHub client), each built into one module under dist/vendor/ that the commands reach as
 * `#vendor/<file>` (package.json's `imports`), so the installed package needs none of them, nor their
 * hundreds of dependencies. Each exports what wave's code takes from it. The GitHub client is CommonJS:
 * a command bundle require()s it (a static import).
 */
const VENDORS = {
  '@anthropic-ai/bedrock-sdk': {file: 'bedrock-sdk.js', source: `export {AnthropicBedrock} from '@anthropic-ai/bedrock-sdk'`},
  '@anthropic-ai/vertex-sdk': {file: 'vertex-sdk.js', source: `export {AnthropicVertex} from '@anthropic-ai/vertex-sdk'`},
  '@modelcontextprotocol/sdk/client/index.js': {file: 'mcp.js'},
  '@modelcontextprotocol/sdk/client/stdio.js': {file: 'mcp.js'},
  '@modelcontextprotocol/sdk/client/streamableHttp.js': {file: 'mcp.js'},
  '@octokit/rest': {file: 'octokit.cjs', source: `module.exports = require('@octokit/rest')`},
  'marked-terminal': {file: 'marked-terminal.js', source: `export {markedTerminal} from 'marked-terminal'`},
  turndown: {file: 'turndown.js', source: `export {default} from 'turndown'`},
  // `--json-schema` (src/base/json-schema.ts), loaded only when a schema is given: ajv for both drafts and
  // ajv-formats in one module. Each name means what it means in its package (ajv-formats' plugin is its default).
  ajv: {
    file: 'json-schema.js',
    source: [`export {Ajv} from 'ajv'`, `export {Ajv2020} from 'ajv/dist/2020.js'`, `export {default} from 'ajv-formats'`].join('\n'),
  },
  'ajv/dist/2020.js': {file: 'json-schema.js'},
  'ajv-formats': {file: 'json-schema.js'},
  // Telemetry (src/output/telemetry/export.ts), loaded only when OTEL_* turns it on: the SDK in one module,
  // and each protocol's two exporters in one (their class names are the same in both protocols).
  '@opentelemetry/api': {
    file: 'otel-sdk.js',
    source: [
      `export {ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, trace} from '@opentelemetry/api'`,
      `export {W3CTraceContextPropagator} from '@opentelemetry/core'`,
      `export {detectResources, envDetector, resourceFromAttributes} from '@opentelemetry/resources'`,
      `export {BasicTracerProvider, BatchSpanProcessor} from '@opentelemetry/sdk-trace-base'`,
      `export {MeterProvider, PeriodicExportingMetricReader} from '@opentelemetry/sdk-metrics'`,
    ].join('\n'),
  },
  '@opentelemetry/core': {file: 'otel-sdk.js'},
  '@opentelemetry/resources': {file: 'otel-sdk.js'},
  '@opentelemetry/sdk-trace-base': {file: 'otel-sdk.js'},
  '@opentelemetry/sdk-metrics': {file: 'otel-sdk.js'},
  '@opentelemetry/exporter-trace-otlp-http': {
    file: 'otel-http.js',
    source: [
      `export {OTLPTraceExporter} from '@opentelemetry/exporter-trace-otlp-http'`,
      `export {OTLPMetricExporter} from '@opentelemetry/exporter-metrics-otlp-http'`,
    ].join('\n'),
  },
  '@opentelemetry/exporter-metrics-otlp-http': {file: 'otel-http.js'},
  '@opentelemetry/exporter-trace-otlp-proto': {
    file: 'otel-proto.js',
    source: [
      `export {OTLPTraceExporter} from '@opentelemetry/exporter-trace-otlp-proto'`,
      `export {OTLPMetricExporter} from '@opentelemetry/exporter-metrics-otlp-proto'`,
    ].join('\n'),
  },
  '@opentelemetry/exporter-metrics-otlp-proto': {file: 'otel-proto.js'},
}
const mcpSource = [
  `export {Client} from '@modelcontextprotocol/sdk/client/index.js'`,
  `export {StdioClientTransport} from '@modelcontextprotocol/sdk/client/stdio.js'`,
  `export {StreamableHTTPClientTransport} from '@modelcontextprotocol/sdk/client/streamableHttp.js'`,
].join('\n')
const vendorDir = join(root, 'dist/vendor')
for (const file of new Set(Object.values(VENDORS).map((vendor) => vendor.file))) {
  const source = file === 'mcp.js' ? mcpSource : Object.values(VENDORS).find((vendor) => vendor.file === file && vendor.source).source
  const esm = file.endsWith('.js')
  await build({
    bundle: true,
    format: esm ? 'esm' : 'cjs',
    logLevel: 'warning',
    // Telemetry's modules load only when OTEL_* turns it on, and are read by no one: minified, they weigh a third.
    minify: file.startsWith('otel-'),
    outfile: join(vendorDir, file),
    platform: 'node',
    target: 'node20',
    // The CommonJS packages inside an ES module still call require() for node's own modules.
    banner: esm ? {js: `import {createRequire as __waveCreateRequire} from 'node:module'; const require = __waveCreateRequire(import.meta.url);`} : undefined,
    stdin: {contents: source, resolveDir: root, sourcefile: `vendor-${file}`},
  })
}
// The SDK's own bundle (loaded with a code cache) as a module, for code that imports the package.
const sdkExports = Object.keys(createRequire(join(root, 'package.json'))('@anthropic-ai/sdk'))
writeFileSync(
  join(vendorDir, 'anthropic-sdk.js'),
  [
    `// The SDK's bundle (dist/bundles/vendor/anthropic-sdk.cjs) for an import of '@anthropic-ai/sdk'.`,
    `import {loadBundle} from '../base/bundles.js'`,
    `const sdk = loadBundle('vendor/anthropic-sdk')`,
    `export const {${sdkExports.filter((name) => name !== 'default').join(', ')}} = sdk`,
    'export default sdk.default ?? sdk',
    '',
  ].join('\n'),
)
VENDORS['@anthropic-ai/sdk'] = {file: 'anthropic-sdk.js'}
// marked's lexer, which every command that reads a plan's contract runs (src/plans/contract.ts), as a bundle
// loaded with a code cache like the SDK's: through the ESM loader it compiled again on every start (import
// and first lexing ~56 → ~36 ms, measured). Markdown at a terminal (marked-terminal's module) keeps its own.
await build({...common, outfile: join(bundles, 'vendor/marked.cjs'), stdin: {contents: `export {Marked} from 'marked'`, resolveDir: root}})
writeFileSync(
  join(vendorDir, 'marked.js'),
  [
    `// marked's bundle (dist/bundles/vendor/marked.cjs) for an import of 'marked'.`,
    `import {loadBundle} from '../base/bundles.js'`,
    `export const {Marked} = loadBundle('vendor/marked')`,
    '',
  ].join('\n'),
)
VENDORS.marked = {file: 'marked.js'}
const vendored = {
  name: 'vendored',
  setup(build) {
    build.onResolve({filter: /./}, ({path}) => (VENDORS[path] ? {external: true, path: `#vendor/${VENDORS[path].file}`} : undefined))
  },
}
const oclifVendored = {
  name: 'oclif-vendored',
  setup(build) {
    build.onResolve({filter: /^@oclif\/core$/}, () => ({external: true, path: '#oclif'}))
    // The loader of the bundles is never bundled: its one copy (dist/base/bundles.js) is the bundle's require's.
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
// The built-in tools' input schemas, converted from zod here once rather than by every session on the way
// to its first request (src/tools/registry.ts reads them as __WAVE_TOOL_SCHEMAS__).
const {builtinRegistry, inputSchemaOf} = await import(join(root, 'dist/tools/registry.js'))
const toolSchemas = Object.fromEntries(builtinRegistry().tools.map((tool) => [tool.name, inputSchemaOf(tool)]))
// Topics' commands too (commands/plans/rm.js is `wave plans rm`), each bundled under dist/bundles/commands.
const entries = readdirSync(commands, {recursive: true}).filter((file) => file.endsWith('.js'))
/**
 * A topic's commands share one bundle (commands/plans/topic.cjs, exporting each by name): bundled one by
 * one, each held its own copy of wave's modules, zod and the store (~0.7 MB a command), which the
 * installed package's size limit (scripts/package-install.js) pays for. Loading a neighbour's code costs
 * a `wave plans rm` little; the topic's doors all sit at one depth, so the bundle's import.meta.url holds.
 */
const TOPICS = ['plans']
const topicOf = (file) => TOPICS.find((topic) => dirname(file.replace(/\\/g, '/')) === topic)
const exportName = (file) => basename(file, '.js').replace(/\W/g, '_')
const commandBuild = {
  ...common,
  define: {...common.define, __WAVE_TOOL_SCHEMAS__: JSON.stringify(toolSchemas)},
  external: [...external, ...external.map((name) => `${name}/*`)],
  outExtension: {'.js': '.cjs'},
  plugins: [oclifVendored, vendored, zodLocalesOnDemand],
}
await build({
  ...commandBuild,
  entryPoints: entries.filter((file) => !topicOf(file)).map((file) => join(commands, file)),
  outbase: commands,
  outdir: join(bundles, 'commands'),
})
for (const topic of TOPICS) {
  const members = entries.filter((file) => topicOf(file) === topic)
  await build({
    ...commandBuild,
    outfile: join(bundles, 'commands', topic, 'topic.cjs'),
    stdin: {
      contents: members.map((file) => `export {default as ${exportName(file)}} from ${JSON.stringify(join(commands, file))}`).join('\n'),
      loader: 'js',
      resolveDir: join(commands, topic),
    },
  })
}

// oclif's `help` and `plugins` commands as wave's own, bundled like wave's: the installed package then
// needs neither package, and `wave plugins install` runs the user's own npm (the one on PATH, or the npm
// installed beside wave) instead of a copy of npm and yarn shipped to every user.
/** npm missing: plugin-plugins' own error is `not found: npm`; wave's names the fix. The build fails if its code moved. */
const npmNamed = {
  name: 'npm-named',
  setup(build) {
    build.onLoad({filter: /plugin-plugins[\\/]lib[\\/]npm\.js$/}, async ({path}) => {
      const source = await readFile(path, 'utf8')
      const lookup = `this.bin = await which('npm');`
      const missing = `throw new Errors.CLIError('npm not found');`
      if (!source.includes(lookup) || !source.includes(missing)) throw new Error(`${path}: its npm lookup changed; update scripts/bundle.js`)
      const fix = 'wave plugins installs plugins with npm, which is not on PATH: install Node.js with npm (https://nodejs.org), or put npm on PATH'
      return {
        contents: source
          .replace(lookup, `this.bin = await which('npm', {nothrow: true});`)
          .replace(missing, `throw new Errors.CLIError(${JSON.stringify(fix)});`),
        loader: 'js',
      }
    })
  },
}
const pluginCommands = []
for (const name of ['@oclif/plugin-help', '@oclif/plugin-plugins']) {
  const dir = join(root, 'node_modules', name, 'lib/commands')
  const files = readdirSync(dir, {recursive: true}).filter((file) => file.endsWith('.js'))
  await build({
    ...common,
    entryPoints: files.map((file) => join(dir, file)),
    external: [...external, ...external.map((name) => `${name}/*`)],
    outbase: dir,
    outdir: join(bundles, 'commands'),
    outExtension: {'.js': '.cjs'},
    plugins: [oclifVendored, npmNamed],
  })
  pluginCommands.push(...files)
}
// What oclif loads for a command (the module the manifest names) becomes the bundle's door: its exports,
// with import.meta.url in the bundle meaning this module's URL, which the code's relative URLs assume.
for (const file of [...entries, ...pluginCommands]) {
  const topic = topicOf(file)
  const name = topic ? `commands/${topic}/topic` : `commands/${file.replace(/\\/g, '/').replace(/\.js$/, '')}`
  const core = relative(dirname(join(commands, file)), join(root, 'dist/base/bundles.js')).replace(/\\/g, '/')
  mkdirSync(dirname(join(commands, file)), {recursive: true})
  writeFileSync(
    join(commands, file),
    [
      `import {loadBundle} from '${core.startsWith('.') ? core : `./${core}`}'`,
      `export default loadBundle('${name}', import.meta.url).${topic ? exportName(file) : 'default'}`,
      '',
    ].join('\n'),
  )
}

// What oclif loads besides the commands (package.json's oclif.hooks and oclif.helpClass: src/oclif), bundled
// as the commands are, each only when it is needed; the module oclif loads (dist/oclif/x.js) becomes the door.
const oclifParts = join(root, 'dist/oclif')
const oclifEntries = readdirSync(oclifParts).filter((file) => file.endsWith('.js'))
await build({
  ...common,
  entryPoints: oclifEntries.map((file) => join(oclifParts, file)),
  external: [...external, ...external.map((name) => `${name}/*`)],
  outbase: oclifParts,
  outdir: join(bundles, 'oclif'),
  outExtension: {'.js': '.cjs'},
  plugins: [oclifVendored, vendored, zodLocalesOnDemand],
})
for (const file of oclifEntries) {
  writeFileSync(
    join(oclifParts, file),
    [`import {loadBundle} from '../base/bundles.js'`, `export default loadBundle('oclif/${file.replace(/\.js$/, '')}', import.meta.url).default`, ''].join(
      '\n',
    ),
  )
}

// The modules that run outside a command's bundle become bundles in place, so that the package carries no
// other compiler output: the repository snapshot bin/run.js starts before oclif loads, the search's worker
// (each thread loads dist/tools/search/content.js) and the plugin contract a plugin imports ('wave-cli').
for (const entry of ['base/workspace/snapshot.js', 'tools/search/content.js', 'plugins/index.js']) {
  await build({
    allowOverwrite: true,
    banner: {js: `import {createRequire as __waveCreateRequire} from 'node:module'; const require = __waveCreateRequire(import.meta.url);`},
    bundle: true,
    entryPoints: [join(root, 'dist', entry)],
    external: [...external, ...external.map((name) => `${name}/*`)],
    format: 'esm',
    logLevel: 'warning',
    outfile: join(root, 'dist', entry),
    platform: 'node',
    plugins: [
      vendored,
      {
        // The loader of the bundles stays the one module it is (src/base/bundles.ts), beside this one in the package.
        name: 'bundles-loader',
        setup(build) {
          const loader = relative(dirname(join(root, 'dist', entry)), join(root, 'dist/base/bundles.js')).replace(/\\/g, '/')
          build.onResolve({filter: /[\\/]bundles\.js$/}, () => ({external: true, path: loader.startsWith('.') ? loader : `./${loader}`}))
        },
      },
    ],
    target: 'node20',
  })
}

// The Bash grammar's WebAssembly, the one file of tree-sitter-bash wave uses (src/policy/shell.ts
// finds it here through package.json's `imports`): the package's C sources and prebuilt binaries stay out.
mkdirSync(join(root, 'dist/grammar'), {recursive: true})
copyFileSync(createRequire(join(root, 'package.json')).resolve('tree-sitter-bash/tree-sitter-bash.wasm'), join(root, 'dist/grammar/tree-sitter-bash.wasm'))

/**
 * Every `import()` in a bundle becomes `__waveImport()`, the loader's (src/base/bundles.ts): on Node 20 a
 * script compiled with V8's cached data loses its dynamic-import callback (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING),
 * so the import is made by the loader, an ES module, instead. Found by parsing, not by text: only import
 * expressions change, never the word in a string or comment.
 *
 * And every bundle becomes pure ASCII, so that the loader can read it as Latin-1: decoding 1.6 MB of UTF-8
 * took ~7 ms of each start for a handful of characters (esbuild escapes strings, not comments or regular
 * expressions), Latin-1 under 1 ms. A character outside ASCII becomes its `\uXXXX` escape, which means the
 * same character in a string, a template, a regular expression (with or without the u flag, a surrogate
 * pair's two escapes are its code point) and, unread, in a comment; one the escape would change (in a
 * tagged template's raw text, or an identifier) stops the build instead.
 */
function finishBundle(file) {
  const source = readFileSync(file, 'utf8')
  const starts = []
  /** Ranges where an escape is not the character: tagged templates' text and identifiers. */
  const literal = []
  simple(parse(source, {allowHashBang: true, ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true}), {
    Identifier(node) {
      if (/[^\x00-\x7f]/.test(node.name)) literal.push([node.start, node.end, 'an identifier'])
    },
    ImportExpression(node) {
      starts.push(node.start)
    },
    TaggedTemplateExpression(node) {
      literal.push([node.quasi.start, node.quasi.end, 'a tagged template'])
    },
  })
  const edits = starts.map((start) => {
    if (source.slice(start, start + 6) !== 'import') throw new Error(`${file}: an import expression at ${start} does not start with "import"`)
    return {end: start + 6, start, text: '__waveImport'}
  })
  for (const match of source.matchAll(/(\\*)([^\x00-\x7f])/g)) {
    const at = match.index + match[1].length
    const inside = literal.find(([start, end]) => at >= start && at < end)
    if (inside) {
      throw new Error(
        `${file}: a character outside ASCII in ${inside[2]} at ${at} (${JSON.stringify(match[2])}): the bundle must stay ASCII (src/base/bundles.ts reads it as Latin-1)`,
      )
    }
    // An odd run of backslashes escaped the character itself (`\·` is `·`): the \u escape replaces that escape.
    const start = match[1].length % 2 === 1 ? at - 1 : at
    edits.push({end: at + 1, start, text: `\\u${match[2].charCodeAt(0).toString(16).padStart(4, '0')}`})
  }
  let out = ''
  let at = 0
  for (const edit of edits.sort((x, y) => x.start - y.start)) {
    out += source.slice(at, edit.start) + edit.text
    at = edit.end
  }
  writeFileSync(file, out + source.slice(at))
}

// Each bundle's digest, which names its code cache (src/base/bundles.ts: V8 checks a source's length only).
const digests = {}
for (const file of readdirSync(bundles, {recursive: true}).sort()) {
  if (!file.endsWith('.cjs')) continue
  finishBundle(join(bundles, file))
  const name = file.replace(/\\/g, '/').replace(/\.cjs$/, '')
  digests[name] = createHash('sha256')
    .update(readFileSync(join(bundles, file)))
    .digest('hex')
    .slice(0, 16)
}

writeFileSync(join(bundles, 'digests.json'), `${JSON.stringify(digests, null, 2)}\n`)
