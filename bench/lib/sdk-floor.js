/**
 * The floor under wave's model figures: a bare node script that imports the SDK bundled into one ES module
 * (WAVE_BENCH_SDK_BUNDLE, built by bench/lib/floor-sdk.js; the package when it is not set), streams a
 * request to ANTHROPIC_BASE_URL and, while the reply asks for a tool, reads the named file and sends it
 * back: the least any SDK-based agent loop does. Same clocks, same server as wave's runs.
 *
 *   node bench/lib/sdk-floor.js <workspace> [<request.json>]
 *
 * With a request file (the JSON body wave sent first), the first request is that one, byte for byte the
 * same model, system prompt, tools and messages: the floor under wave's time to its first request.
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {pathToFileURL} from 'node:url'

const bundle = process.env.WAVE_BENCH_SDK_BUNDLE
const {default: Anthropic} = bundle ? await import(pathToFileURL(bundle).href) : await import('@anthropic-ai/sdk')
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
