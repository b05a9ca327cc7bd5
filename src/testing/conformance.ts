/**
 * The server's strictness: the Messages API's rules a request is checked against before it consumes a
 * turn, each refusal in the API's own words, so every test is also a conformance test of what wave sends.
 */
import {ALL_EFFORTS, CONTEXT_1M_BETA, type Effort, type ServedModel, STANDARD_WINDOW} from './models.js'
import {isObject} from './recorded.js'
import {thinkingKey, validRedacted, validThinking} from './signatures.js'

export interface CheckContext {
  /** The served model named by the request, if the server knows it. */
  model?: ServedModel
  /** The request's `anthropic-beta` values. */
  betas: string[]
  /** Thinking blocks (keys) the server issued with each tool_use id: a turn mid-tool-loop must send them back. */
  issuedThinking?: ReadonlyMap<string, string[]>
}

const THINKING_DOC = 'Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking'

/**
 * The first rule of the Messages API a request breaks, in the API's words, or undefined when the real
 * API would take it: roles alternating from a user turn; no empty message but a final assistant one;
 * text blocks non-empty and not whitespace only; each tool_use answered by its tool_result in the very
 * next user message, results first; ids unique; thinking blocks signed and unchanged when thinking is
 * on (and a turn mid-tool-loop keeping the thinking it was issued with); at most 4 cache_control
 * breakpoints, a 1h TTL never after a 5m one; max_tokens within the model's limit; thinking and effort
 * the model takes, a budget of at least 1024 below max_tokens; tool names unique, and not every tool
 * deferred (`defer_loading`: tool search needs one the model can call). checkToolReferences adds tool
 * search's rule for the references a conversation holds.
 */
export function checkRequest(body: Record<string, unknown>, context: CheckContext): string | undefined {
  const model = context.model
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required'
  const maxTokens = body.max_tokens
  if (maxTokens === undefined) return 'max_tokens: Field required'
  if (!Number.isInteger(maxTokens) || (maxTokens as number) < 1) return 'max_tokens: Input should be a valid integer greater than or equal to 1'
  if (model && (maxTokens as number) > model.max_tokens) {
    return `max_tokens: ${maxTokens} > ${model.max_tokens}, which is the maximum allowed number of output tokens for ${model.id}`
  }

  const thinkingProblem = checkThinkingConfig(body, maxTokens as number, model)
  if (thinkingProblem) return thinkingProblem
  const thinkingOn = isObject(body.thinking) && (body.thinking.type === 'enabled' || body.thinking.type === 'adaptive')

  const cacheProblem = checkCacheControl(body)
  if (cacheProblem) return cacheProblem

  if (Array.isArray(body.tools)) {
    const names = body.tools.filter(isObject).map((t) => t.name)
    if (new Set(names).size !== names.length) return 'tools: Tool names must be unique.'
    if (body.tools.length > 0 && body.tools.every((tool) => isObject(tool) && tool.defer_loading === true)) {
      return 'tools: All tools have defer_loading set. At least one tool must be non-deferred.'
    }
  }

  if (body.system !== undefined) {
    const problem = checkTextContent(body.system, 'system')
    if (problem) return problem
  }

  const messages = body.messages
  if (!Array.isArray(messages)) return 'messages: Field required'
  if (messages.length === 0) return 'messages: at least one message is required'
  const seenToolUse = new Set<string>()
  for (const [i, message] of messages.entries()) {
    const at = `messages.${i}`
    if (!isObject(message)) return `${at}: Input should be a valid dictionary`
    if (message.role !== 'user' && message.role !== 'assistant') return `${at}.role: Input should be 'user' or 'assistant'`
    if (i === 0 && message.role !== 'user') return 'messages: first message must use the "user" role'
    if (i > 0 && messages[i - 1].role === message.role) {
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`
    }

    const content = message.content
    const isFinalAssistant = i === messages.length - 1 && message.role === 'assistant'
    if (typeof content !== 'string' && !Array.isArray(content)) return `${at}.content: Field required`
    if ((typeof content === 'string' ? content.length === 0 : content.length === 0) && !isFinalAssistant) {
      return `${at}: all messages must have non-empty content except for the optional final assistant message`
    }

    const problem = checkTextContent(content, `${at}.content`)
    if (problem) return problem
    if (!Array.isArray(content)) continue

    for (const [j, block] of content.entries()) {
      if (!isObject(block)) return `${at}.content.${j}: Input should be a valid dictionary`
      const where = `${at}.content.${j}`
      if (block.type === 'tool_use') {
        if (message.role !== 'assistant') return `${where}: tool_use blocks may only appear in assistant messages`
        if (typeof block.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(block.id)) return `${where}.id: String should match pattern '^[a-zA-Z0-9_-]+$'`
        if (seenToolUse.has(block.id)) return `${where}: \`tool_use\` ids must be unique`
        seenToolUse.add(block.id)
      }

      if ((block.type === 'thinking' || block.type === 'redacted_thinking') && message.role !== 'assistant') {
        return `${where}: thinking blocks may only appear in assistant messages`
      }

      if (block.type === 'thinking' && thinkingOn) {
        if (block.signature === undefined) return `${where}.thinking.signature: Field required`
        if (!validThinking(block)) return `${where}: Invalid \`signature\` in \`thinking\` block`
      }

      if (block.type === 'redacted_thinking' && thinkingOn && !validRedacted(block)) {
        return `${where}: Invalid \`data\` in \`redacted_thinking\` block`
      }
    }

    const problemWithTools = message.role === 'assistant' ? checkToolResultsAfter(messages, i) : checkToolResultsBefore(messages, i)
    if (problemWithTools) return problemWithTools
  }

  if (thinkingOn) {
    const problem = checkThinkingKept(messages, context.issuedThinking)
    if (problem) return problem
  }

  const window = model ? (context.betas.includes(CONTEXT_1M_BETA) ? model.max_input_tokens : Math.min(model.max_input_tokens, STANDARD_WINDOW)) : undefined
  if (window !== undefined) {
    const tokens = Math.ceil(JSON.stringify({messages: body.messages, system: body.system, tools: body.tools}).length / 4)
    if (tokens > window) return `prompt is too long: ${tokens} tokens > ${window} maximum`
  }

  return undefined
}

function checkThinkingConfig(body: Record<string, unknown>, maxTokens: number, model: ServedModel | undefined): string | undefined {
  const config = body.thinking
  if (config !== undefined) {
    if (!isObject(config)) return 'thinking: Input should be a valid dictionary'
    const type = config.type
    if (type !== 'enabled' && type !== 'adaptive' && type !== 'disabled' && type !== 'between_tools') {
      return "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive', 'between_tools'"
    }

    if (type === 'enabled') {
      if (!Number.isInteger(config.budget_tokens)) return 'thinking.enabled.budget_tokens: Field required'
      if ((config.budget_tokens as number) < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'
      if ((config.budget_tokens as number) >= maxTokens)
        return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. ${THINKING_DOC}#max-tokens-and-context-window-size`
    }

    if (model && (type === 'enabled' || type === 'adaptive') && !model.thinking.includes(type)) {
      return `thinking.type: "${type}" is not supported by this model (${model.id}).`
    }

    if ((type === 'enabled' || type === 'adaptive') && body.temperature !== undefined && body.temperature !== 1) {
      return '`temperature` may only be set to 1 when thinking is enabled or in adaptive mode.'
    }
  }

  const outputConfig = body.output_config
  if (isObject(outputConfig) && outputConfig.effort !== undefined && outputConfig.effort !== null) {
    const effort = outputConfig.effort as Effort
    if (!ALL_EFFORTS.includes(effort)) return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
    if (model && !model.effort.includes(effort)) {
      return model.effort.length === 0
        ? `output_config.effort: This model (${model.id}) does not support the effort parameter.`
        : `output_config.effort: "${effort}" is not supported by this model (${model.id}); supported: ${model.effort.join(', ')}.`
    }
  }

  return undefined
}

/** Text blocks in a content (or system) array, or a string content: never empty, never whitespace only. */
function checkTextContent(content: unknown, at: string): string | undefined {
  // An empty string is an empty message, which the caller judges (allowed for a final assistant turn).
  const blocks = typeof content === 'string' ? (content ? [{text: content, type: 'text'}] : []) : Array.isArray(content) ? content : []
  const where = at.startsWith('system') ? 'system' : 'messages'
  for (const block of blocks) {
    if (!isObject(block)) continue
    if (block.type === 'text') {
      if (typeof block.text !== 'string' || block.text.length === 0) return `${where}: text content blocks must be non-empty`
      if (block.text.trim() === '') return `${where}: text content blocks must contain non-whitespace text`
    }

    if (block.type === 'tool_result' && Array.isArray(block.content)) {
      const problem = checkTextContent(block.content, at)
      if (problem) return problem
    }
  }

  return undefined
}

/** An assistant message's tool_use ids must all be answered by tool_result blocks, first, in the next message. */
function checkToolResultsAfter(messages: unknown[], i: number): string | undefined {
  const message = messages[i] as Record<string, unknown>
  const ids = Array.isArray(message.content) ? message.content.filter((b) => isObject(b) && b.type === 'tool_use').map((b) => String(b.id)) : []
  if (ids.length === 0 || i === messages.length - 1) return undefined
  const next = messages[i + 1] as Record<string, unknown>
  const nextContent = Array.isArray(next.content) ? next.content : []
  // Results first: only the leading run of tool_result blocks counts as "immediately after".
  const leading: string[] = []
  for (const block of nextContent) {
    if (!isObject(block) || block.type !== 'tool_result') break
    leading.push(String(block.tool_use_id))
  }

  const missing = ids.filter((id) => !leading.includes(id))
  if (missing.length === 0) return undefined
  return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
}

/** A user message's tool_result blocks must each answer a tool_use of the message before, once. */
function checkToolResultsBefore(messages: unknown[], i: number): string | undefined {
  const message = messages[i] as Record<string, unknown>
  if (!Array.isArray(message.content)) return undefined
  const previous = i > 0 ? (messages[i - 1] as Record<string, unknown>) : undefined
  const ids = new Set(
    previous && Array.isArray(previous.content) ? previous.content.filter((b) => isObject(b) && b.type === 'tool_use').map((b) => String(b.id)) : [],
  )
  const answered = new Set<string>()
  for (const [j, block] of message.content.entries()) {
    if (!isObject(block) || block.type !== 'tool_result') continue
    const id = String(block.tool_use_id)
    if (!ids.has(id)) {
      return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
    }

    if (answered.has(id)) return `messages.${i}.content.${j}: each \`tool_use\` id may be answered by only one \`tool_result\` block: ${id}`
    answered.add(id)
  }

  return undefined
}

/**
 * With thinking on, the last assistant turn of an ongoing tool loop (the final user message holds tool
 * results) is sent back with the thinking it was issued with, unchanged and in order, first.
 */
function checkThinkingKept(messages: unknown[], issued: ReadonlyMap<string, string[]> | undefined): string | undefined {
  if (!issued || messages.length < 2) return undefined
  const last = messages.at(-1) as Record<string, unknown>
  if (last.role !== 'user' || !Array.isArray(last.content) || !last.content.some((b) => isObject(b) && b.type === 'tool_result')) return undefined
  const index = messages.length - 2
  const turn = messages[index] as Record<string, unknown>
  if (!Array.isArray(turn.content)) return undefined
  const blocks = turn.content.filter(isObject)
  const toolUse = blocks.find((b) => b.type === 'tool_use')
  const expected = toolUse ? issued.get(String(toolUse.id)) : undefined
  if (!expected || expected.length === 0) return undefined
  const first = blocks[0]
  if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
    return `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. ${THINKING_DOC}`
  }

  const sent = blocks.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking').map(thinkingKey)
  if (sent.length !== expected.length || sent.some((key, k) => key !== expected[k])) {
    return `messages.${index}.content: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`
  }

  return undefined
}

/** At most 4 blocks with cache_control (tools, then system, then messages), and a 1h TTL never after a 5m one. */
function checkCacheControl(body: Record<string, unknown>): string | undefined {
  const marks: unknown[] = []
  const collect = (blocks: unknown) => {
    if (!Array.isArray(blocks)) return
    for (const block of blocks) {
      if (!isObject(block)) continue
      if (block.cache_control !== undefined && block.cache_control !== null) marks.push(block.cache_control)
      if (block.type === 'tool_result') collect(block.content)
    }
  }

  collect(body.tools)
  collect(body.system)
  if (Array.isArray(body.messages)) for (const message of body.messages) if (isObject(message)) collect(message.content)
  if (marks.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${marks.length}.`
  let seenShort = false
  for (const mark of marks) {
    if (!isObject(mark) || mark.type !== 'ephemeral') return "cache_control.type: Input should be 'ephemeral'"
    const ttl = mark.ttl ?? '5m'
    if (ttl !== '5m' && ttl !== '1h') return "cache_control.ttl: Input should be '5m' or '1h'"
    if (ttl === '1h' && seenShort) {
      return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`."
    }

    if (ttl === '5m') seenShort = true
  }

  return undefined
}

/** A refusal the API marks with an error code (`error.details.error_code`), which the SDK makes its own error class. */
export interface CodedProblem {
  message: string
  errorCode: string
}

/**
 * Tool search's rule, checked after checkRequest's: a `tool_reference` (in a tool_result's content) must
 * name a tool of `tools` sent with `defer_loading: true`; the API expands it into that definition. Any
 * other is refused 400 with `tool_reference_unresolved` (the SDK's ToolReferenceUnresolvedError).
 */
export function checkToolReferences(body: Record<string, unknown>): CodedProblem | undefined {
  const tools = new Map((Array.isArray(body.tools) ? body.tools.filter(isObject) : []).map((tool) => [tool.name, tool]))
  const messages = Array.isArray(body.messages) ? body.messages : []
  for (const [i, message] of messages.entries()) {
    if (!isObject(message) || !Array.isArray(message.content)) continue
    for (const [j, block] of message.content.entries()) {
      if (!isObject(block) || block.type !== 'tool_result' || !Array.isArray(block.content)) continue
      for (const [k, inner] of block.content.entries()) {
        if (!isObject(inner) || inner.type !== 'tool_reference') continue
        const name = String(inner.tool_name)
        const tool = tools.get(name)
        const where = `messages.${i}.content.${j}.content.${k}`
        if (!tool)
          return {errorCode: 'tool_reference_unresolved', message: `${where}: Tool reference '${name}' has no corresponding tool definition in \`tools\`.`}
        if (tool.defer_loading !== true) {
          return {
            errorCode: 'tool_reference_unresolved',
            message: `${where}: Tool reference '${name}' names a tool without \`defer_loading\`: only a deferred tool can be referenced.`,
          }
        }
      }
    }
  }

  return undefined
}
