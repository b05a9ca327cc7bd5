#!/usr/bin/env node
// Build step, after tsc: bundles the SDK into one file, and each command with wave's own modules and zod
// into one file, so that a command loads a handful of files instead of hundreds.
import {readdirSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {build} from 'esbuild'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const pjson = (await import(join(root, 'package.json'), {with: {type: 'json'}})).default
const common = {bundle: true, format: 'esm', logLevel: 'warning', platform: 'node', target: 'node20'}

await build({...common, entryPoints: [join(root, 'node_modules/@anthropic-ai/sdk/index.mjs')], outfile: join(root, 'dist/vendor/anthropic-sdk.js')})

// Every dependency but zod stays a package: oclif must be one instance with its plugins, and the rest
// load lazily or are small.
const external = Object.keys(pjson.dependencies).filter((name) => name !== 'zod')
const commands = join(root, 'dist/commands')
await build({
  ...common,
  allowOverwrite: true,
  // Topics' commands too (commands/plans/rm.js is `wave plans rm`), each bundled where it was.
  entryPoints: readdirSync(commands, {recursive: true}).filter((file) => file.endsWith('.js')).map((file) => join(commands, file)),
  external: [...external, ...external.map((name) => `${name}/*`)],
  outbase: commands,
  outdir: commands,
})
