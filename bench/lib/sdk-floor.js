/**
 * The floor under wave's model figures: a bare node script that imports the SDK wave ships (the build's
 * one-file bundle, dist/vendor/anthropic-sdk.js; the package when there is no build), streams a request
 * to ANTHROPIC_BASE_URL and, while the reply asks for a tool, reads the named file and sends it back: the
 * least any SDK-based agent loop does. Same clocks, same server as wave's runs.
 *
 *   node bench/lib/sdk-floor.js <workspace> [<request.json>]
 *
 * With a request file (the JSON body wave sent first), the first request is that one, byte for byte the
 * same model, system prompt, tools and messages: the floor under wave's time to its first request.
 */
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const bundle = fileURLToPath(new URL('../../dist/vendor/anthropic-sdk.js', import.meta.url))
const {default: Anthropic} = existsSync(bundle) ? await import(bundle) : await import('@anthropic-ai/sdk')
const client = new Anthropic({logLevel: 'off', maxRetries: 0})
const [workspace, requestFile] = process.argv.slice(2)
const tools = [
  {
    description: 'Read a file',
    input_schema: {properties: {file_path: {type: 'string'}}, required: ['file_path'], type: 'object'},
    name: 'Read',
  },
]
const {stream: _stream, ...first} = requestFile ? JSON.parse(readFileSync(requestFile, 'utf8')) : {}
const messages = first.messages ?? [{content: 'Task: read the files.', role: 'user'}]
const params = requestFile ? first : {max_tokens: 1000, model: 'claude-bench', tools}
for (let turn = 0; turn < 50; turn++) {
  const message = await client.messages.stream({...params, messages}).finalMessage()
  messages.push({content: message.content, role: 'assistant'})
  const calls = message.content.filter((block) => block.type === 'tool_use')
  if (calls.length === 0) break
  messages.push({
    content: calls.map((call) => ({content: readFileSync(path.resolve(workspace, call.input.file_path), 'utf8'), tool_use_id: call.id, type: 'tool_result'})),
    role: 'user',
  })
}
