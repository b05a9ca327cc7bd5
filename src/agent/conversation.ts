/**
 * The conversation as the Messages API accepts it. Real models write blocks the API refuses to be sent
 * back: an empty or whitespace-only text block before a tool call, a thinking block cut by `max_tokens`
 * before its signature. Sent back as recorded, the next request fails with a 400, and so would every
 * `--resume` of the transcript. So every request, and every resumed conversation, goes through
 * `acceptedConversation`: such blocks are left out, a message left with nothing is dropped, and the
 * neighbours it separated are joined (roles must alternate, a user message's tool results come first).
 */
import type {ContentBlockParam, MessageParam} from '@anthropic-ai/sdk/resources/messages'

/** The blocks of a message that may be sent: no empty or whitespace text, no unsigned thinking. */
export function sendableBlocks(blocks: readonly ContentBlockParam[]): ContentBlockParam[] {
  return blocks.filter((block) => {
    if (block.type === 'text') return block.text.trim() !== ''
    // A thinking block is sent back unchanged and signed, or not at all (a cut one has no signature).
    if (block.type === 'thinking') return typeof block.signature === 'string' && block.signature !== ''
    return true
  })
}

/** Whether an assistant message says or does anything: thinking alone is not a turn the API takes back. */
const substantive = (block: ContentBlockParam) => block.type !== 'thinking' && block.type !== 'redacted_thinking'

/**
 * The messages as they can be sent: unsendable blocks left out, empty messages dropped, and messages of
 * the same role that then meet joined into one. Returns `messages` itself when nothing needed changing.
 */
export function acceptedConversation(messages: MessageParam[]): MessageParam[] {
  if (messages.every(isSendable) && alternates(messages)) return messages
  const out: MessageParam[] = []
  for (const message of messages) {
    const blocks = sendableBlocks(blocksOf(message))
    if (blocks.length === 0 || (message.role === 'assistant' && !blocks.some(substantive))) continue
    const previous = out.at(-1)
    if (previous?.role === message.role) {
      const joined = [...(previous.content as ContentBlockParam[]), ...blocks]
      // The API wants a user message's tool results before anything else in it.
      if (message.role === 'user') joined.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'))
      out[out.length - 1] = {...previous, content: joined} as MessageParam
    } else {
      out.push({...message, content: blocks} as MessageParam)
    }
  }

  return out
}

function isSendable(message: MessageParam): boolean {
  if (typeof message.content === 'string') return message.content.trim() !== ''
  const blocks = sendableBlocks(message.content)
  return blocks.length === message.content.length && blocks.length > 0 && (message.role === 'user' || blocks.some(substantive))
}

function alternates(messages: MessageParam[]): boolean {
  return messages.every((message, index) => index === 0 || messages[index - 1].role !== message.role)
}

const blocksOf = (message: MessageParam): ContentBlockParam[] =>
  typeof message.content === 'string' ? [{text: message.content, type: 'text'}] : message.content
