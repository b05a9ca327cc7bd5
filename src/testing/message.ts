/** The message the API answers with, built from a scripted reply. */
import type {CacheUsage} from './cache.js'
import type {RecordedRequest} from './recorded.js'
import type {Reply, StopReason, Usage} from './script.js'
import {newRedactedData, signThinking, thinkingKey} from './signatures.js'

export type ApiMessage = {
  id: string
  type: 'message'
  role: 'assistant'
  model: string
  content: Array<
    | {type: 'text'; text: string}
    | {type: 'tool_use'; id: string; name: string; input: unknown; partialJson?: string}
    | {type: 'thinking'; thinking: string; signature: string; cut?: boolean}
    | {type: 'redacted_thinking'; data: string}
  >
  stop_reason: StopReason
  stop_sequence: null
  usage: Usage
  [k: string]: unknown
}

/**
 * The API's message for a scripted reply: ids filled in, thinking signed, the stop reason and usage the
 * API would give (the prompt's tokens as the server's prompt cache accounted them, cache.ts). A turn
 * that scripts its own `input_tokens` scripts the prompt's whole count: its cache fields are then 0
 * unless it scripts them too. Records the thinking each tool call was issued with (`issuedThinking`), which a turn
 * mid-tool-loop must send back unchanged.
 */
export function buildMessage(
  turn: Reply,
  record: RecordedRequest,
  nextId: (prefix: string) => string,
  issuedThinking: Map<string, string[]>,
  cache: CacheUsage,
): ApiMessage {
  const content: ApiMessage['content'] = turn.content.map((b) => {
    switch (b.type) {
      case 'tool_use': {
        return {
          type: 'tool_use' as const,
          id: b.id ?? nextId('toolu_01'),
          name: b.name,
          input: b.input ?? {},
          ...(b.partialJson === undefined ? {} : {partialJson: b.partialJson}),
        }
      }

      case 'thinking': {
        // A block cut at max_tokens ends before its signature arrives.
        const signature = b.cut ? '' : (b.signature ?? signThinking(b.thinking))
        return {type: 'thinking' as const, thinking: b.thinking, signature, ...(b.cut ? {cut: true} : {})}
      }

      case 'redacted_thinking': {
        return {type: 'redacted_thinking' as const, data: b.data ?? newRedactedData()}
      }

      default: {
        return {type: 'text' as const, text: b.text}
      }
    }
  })
  // A turn mid-tool-loop must come back with its thinking: remember what each call was issued with.
  const issued = content.filter((b) => b.type === 'thinking' || b.type === 'redacted_thinking').map((b) => thinkingKey(b))
  for (const block of content) if (block.type === 'tool_use') issuedThinking.set(block.id, issued)
  const cut = turn.content.some((b) => (b.type === 'tool_use' && b.partialJson !== undefined) || (b.type === 'thinking' && b.cut))
  const stop_reason: StopReason = turn.stop_reason ?? (cut ? 'max_tokens' : content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
  const scripted = turn.usage?.input_tokens !== undefined
  const usage: Usage = {
    ...(scripted ? {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 0} : cache),
    output_tokens: Math.max(1, Math.ceil(JSON.stringify(content).length / 4)),
    ...turn.usage,
  }
  return {
    id: turn.id ?? nextId('msg_01'),
    type: 'message' as const,
    role: 'assistant' as const,
    model: turn.model ?? (typeof record.body.model === 'string' ? record.body.model : 'claude-test'),
    content,
    stop_reason,
    stop_sequence: null,
    stop_details: turn.stop_details ?? null,
    container: null,
    usage,
  }
}
