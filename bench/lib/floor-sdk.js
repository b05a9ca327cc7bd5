/**
 * The SDK as the floor script loads it (bench/lib/sdk-floor.js): the package bundled into one ES module,
 * as a careful script would ship it. Built here, into `dir`, with the options wave's build used for its own
 * SDK bundle before wave moved to code-cached scripts (src/base/bundles.ts), so the floor stays the one
 * earlier figures were measured against. Returns the file's path.
 */
import path from 'node:path'

import {build} from 'esbuild'

import {PROJECT_ROOT} from './sandbox.js'

export async function buildFloorSdk(dir) {
  const outfile = path.join(dir, 'anthropic-sdk.js')
  await build({
    bundle: true,
    entryPoints: [path.join(PROJECT_ROOT, 'node_modules/@anthropic-ai/sdk/index.mjs')],
    format: 'esm',
    logLevel: 'warning',
    outfile,
    platform: 'node',
    target: 'node20',
  })
  return outfile
}
