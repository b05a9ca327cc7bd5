/**
 * The test suite's scripted Messages API server (src/testing/, which the tests use), bundled on the fly
 * into one module with the project's esbuild (a dev dependency, there after `npm ci`), plus what the benchmarks need
 * on top: when each response ended. The server records when a request arrived (`receivedAt`); the end
 * of each response is taken here, where `ServerResponse#end` is called, on the same clock.
 */
import {ServerResponse} from 'node:http'
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath} from 'node:url'

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

let loaded
/** The module's exports (startMessagesServer, reply, toolUse, text, toolResults, systemText, ...). */
export async function messagesServerModule() {
  if (loaded) return loaded
  const {build} = await import('esbuild')
  // One module, so it loads from a data: URL (which cannot resolve the tree's relative imports).
  const {outputFiles} = await build({
    bundle: true,
    entryPoints: [path.join(projectRoot, 'src/testing/server.ts')],
    format: 'esm',
    logLevel: 'silent',
    platform: 'node',
    target: 'node20',
    write: false,
  })
  loaded = await import(`data:text/javascript;base64,${Buffer.from(outputFiles[0].contents).toString('base64')}`)
  return loaded
}

/** `performance.now()` at the end of each `/v1/messages` response, in the order they ended. */
export const responseEnds = []

/** @type {any} */
const response = ServerResponse.prototype
const originalEnd = response.end
response.end = function end(/** @type {any[]} */ ...args) {
  if (this.req?.url?.startsWith('/v1/messages')) responseEnds.push({at: performance.now(), url: this.req.url})
  return originalEnd.apply(this, args)
}
