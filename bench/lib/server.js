/**
 * The test suite's scripted Messages API server (src/scripted/server.ts, which the tests use), compiled on the fly
 * with the project's TypeScript (a dev dependency, there after `npm ci`), plus what the benchmarks need
 * on top: when each response ended. The server records when a request arrived (`receivedAt`); the end
 * of each response is taken here, where `ServerResponse#end` is called, on the same clock.
 */
import {readFileSync} from 'node:fs'
import {ServerResponse} from 'node:http'
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath} from 'node:url'

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

let loaded
/** The module's exports (startMessagesServer, reply, toolUse, text, toolResults, systemText, ...). */
export async function messagesServerModule() {
  if (loaded) return loaded
  const {default: ts} = await import('typescript')
  const source = readFileSync(path.join(projectRoot, 'src/scripted/server.ts'), 'utf8')
  const {outputText} = ts.transpileModule(source, {
    compilerOptions: {module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022},
    fileName: 'messages-server.ts',
  })
  loaded = await import(`data:text/javascript;base64,${Buffer.from(outputText).toString('base64')}`)
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
