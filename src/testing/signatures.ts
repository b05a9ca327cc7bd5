import {createHash, createHmac, randomBytes} from 'node:crypto'

/**
 * Thinking signatures and redacted data are self-verifying (an HMAC under a key of this module), so a
 * block sent back is recognised as one this server issued, unchanged, even by another server instance
 * in the same or a later process (a resumed session talks to a new server).
 */
const SIGNING_KEY = 'wave scripted messages server: thinking signatures'

function mac(kind: string, payload: string): string {
  return createHmac('sha256', SIGNING_KEY).update(`${kind}\0${payload}`).digest('base64')
}

/** The signature the server gives a thinking block with this text. */
export function signThinking(thinkingText: string): string {
  return `Er${mac('thinking', thinkingText)}`
}

export function newRedactedData(): string {
  const payload = randomBytes(24).toString('base64')
  return `${payload}.${mac('redacted', payload)}`
}

export function validThinking(block: Record<string, unknown>): boolean {
  return typeof block.signature === 'string' && typeof block.thinking === 'string' && block.signature === signThinking(block.thinking)
}

export function validRedacted(block: Record<string, unknown>): boolean {
  if (typeof block.data !== 'string') return false
  const at = block.data.lastIndexOf('.')
  return at > 0 && block.data.slice(at + 1) === mac('redacted', block.data.slice(0, at))
}

/** A stable key for a thinking or redacted block, to compare what was issued with what came back. */
export function thinkingKey(block: Record<string, unknown>): string {
  return block.type === 'redacted_thinking'
    ? `r:${String(block.data)}`
    : `t:${createHash('sha256').update(String(block.thinking)).digest('base64')}:${String(block.signature)}`
}
