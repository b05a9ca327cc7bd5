/**
 * The server-sent events the API streams for a message, and their delivery with the faults a script can
 * ask for: a connection cut after n events, an `event: error` mid-stream, a pause between events.
 */
import type {ServerResponse} from 'node:http'

import type {ApiMessage} from './message.js'
import type {Reply} from './script.js'

/** Split a string into `n` roughly equal pieces (at least one, never splitting a surrogate pair). */
function chunks(s: string, n: number): string[] {
  const chars = Array.from(s)
  if (chars.length === 0) return []
  const size = Math.max(1, Math.ceil(chars.length / n))
  const out: string[] = []
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''))
  return out
}

/** The event sequence the API streams for a message (exported for tests that want to count events). */
export function sseEvents(message: ApiMessage): Array<{type: string; [k: string]: unknown}> {
  const events: Array<{type: string; [k: string]: unknown}> = []
  events.push({
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {...message.usage, output_tokens: 0},
    },
  })
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({type: 'content_block_start', index, content_block: {type: 'text', text: ''}})
      for (const piece of chunks(block.text, 2)) {
        events.push({type: 'content_block_delta', index, delta: {type: 'text_delta', text: piece}})
      }
    } else if (block.type === 'thinking') {
      events.push({type: 'content_block_start', index, content_block: {type: 'thinking', thinking: '', signature: ''}})
      for (const piece of chunks(block.thinking, 2)) {
        events.push({type: 'content_block_delta', index, delta: {type: 'thinking_delta', thinking: piece}})
      }
      if (!block.cut) events.push({type: 'content_block_delta', index, delta: {type: 'signature_delta', signature: block.signature}})
    } else if (block.type === 'redacted_thinking') {
      events.push({type: 'content_block_start', index, content_block: {type: 'redacted_thinking', data: block.data}})
    } else {
      events.push({
        type: 'content_block_start',
        index,
        content_block: {type: 'tool_use', id: block.id, name: block.name, input: {}},
      })
      events.push({type: 'content_block_delta', index, delta: {type: 'input_json_delta', partial_json: ''}})
      for (const piece of chunks(block.partialJson ?? JSON.stringify(block.input ?? {}), 3)) {
        events.push({type: 'content_block_delta', index, delta: {type: 'input_json_delta', partial_json: piece}})
      }
    }
    events.push({type: 'content_block_stop', index})
  })
  events.push({
    type: 'message_delta',
    delta: {stop_reason: message.stop_reason, stop_sequence: null, stop_details: message.stop_details ?? null, container: null},
    usage: {
      output_tokens: message.usage.output_tokens,
      input_tokens: message.usage.input_tokens,
      cache_creation_input_tokens: message.usage.cache_creation_input_tokens,
      cache_read_input_tokens: message.usage.cache_read_input_tokens,
    },
  })
  events.push({type: 'message_stop'})
  return events
}

/** What streaming needs of the server: its sleep, whether it closed, and where the outcome is recorded. */
interface StreamControl {
  /** A sleep that the server's close() cuts short. */
  stall(ms: number): Promise<void>
  closed(): boolean
  done(outcome: string, status?: number): void
}

/** Streams the message's events, cutting or failing the stream where the turn says. */
export async function streamMessage(res: ServerResponse, message: ApiMessage, turn: Reply, requestId: string, control: StreamControl): Promise<void> {
  const events = sseEvents(message)
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'request-id': requestId,
    ...turn.headers,
  })
  res.flushHeaders()
  await turn.holdAfterHeaders?.()
  const cutAt = turn.cutAfterEvents
  const errorAt = turn.streamError?.afterEvents
  for (let i = 0; i <= events.length; i++) {
    if (cutAt !== undefined && i === cutAt) {
      control.done('cut', 200)
      res.socket?.destroy()
      res.destroy()
      return
    }
    if (errorAt !== undefined && i === errorAt) {
      control.done('stream-error', 200)
      const type = turn.streamError?.type ?? 'overloaded_error'
      const err = {type: 'error', error: {type, message: turn.streamError?.message ?? 'Overloaded'}}
      res.end(`event: error\ndata: ${JSON.stringify(err)}\n\n`)
      return
    }
    if (i === events.length) break
    if (res.destroyed || control.closed()) {
      control.done('cut', 200)
      return
    }
    const ev = events[i]
    // Wait until each event is handed to the OS, so a cut that follows cannot drop it.
    await new Promise<void>((resolve) => res.write(`event: ${ev.type}\ndata: ${JSON.stringify(ev)}\n\n`, () => resolve()))
    if (turn.eventDelayMs) await control.stall(turn.eventDelayMs)
  }
  control.done('reply', 200)
  res.end()
}
