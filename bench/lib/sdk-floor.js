/**
 * The floor under wave's model figures: a bare node script that imports the SDK, streams a request to
 * ANTHROPIC_BASE_URL and, while the reply asks for a tool, reads the named file and sends it back: the
 * least any SDK-based agent loop does. Same clocks, same server as wave's runs.
 *
 *   node bench/lib/sdk-floor.js <workspace>
 */
import {readFileSync} from 'node:fs'
import path from 'node:path'

const {default: Anthropic} = await import('@anthropic-ai/sdk')
const client = new Anthropic({logLevel: 'off', maxRetries: 0})
const workspace = process.argv[2]
/** @type {import('@anthropic-ai/sdk/resources/messages').Tool[]} */
const tools = [
  {
    description: 'Read a file',
    input_schema: {properties: {file_path: {type: 'string'}}, required: ['file_path'], type: 'object'},
    name: 'Read',
  },
]
/** @type {import('@anthropic-ai/sdk/resources/messages').MessageParam[]} */
const messages = [{content: 'Task: read the files.', role: 'user'}]
for (let turn = 0; turn < 50; turn++) {
  const message = await client.messages.stream({max_tokens: 1000, messages, model: 'claude-bench', tools}).finalMessage()
  messages.push({content: message.content, role: 'assistant'})
  const calls = message.content.filter((block) => block.type === 'tool_use')
  if (calls.length === 0) break
  messages.push({
    content: calls.map((call) => ({
      content: readFileSync(path.resolve(workspace, /** @type {{file_path: string}} */ (call.input).file_path), 'utf8'),
      tool_use_id: call.id,
      type: /** @type {const} */ ('tool_result'),
    })),
    role: 'user',
  })
}
