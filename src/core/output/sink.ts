import {appendFile} from 'node:fs/promises'

import type {AgentEvent} from '../session/loop.js'
import {OUTPUT_VERSION} from '../command.js'
import {scrubSecrets} from '../session/model.js'

export const OUTPUT_FORMATS = ['text', 'json', 'stream-json'] as const
export type OutputFormat = (typeof OUTPUT_FORMATS)[number]

/** Longest tool result content a stream-json event carries; the transcript keeps all of it. */
const STREAM_CONTENT_CAP = 2000

/** Writes one stream-json event: a JSON object on its own line, with `version` and `type`. */
export function emitStreamEvent(type: string, fields: Record<string, unknown>): void {
  process.stdout.write(scrubSecrets(JSON.stringify({type, version: OUTPUT_VERSION, ...fields})) + '\n')
}

/** The stream-json form of an agent event (documented in docs/output.md). */
export function emitAgentEvent(event: AgentEvent): void {
  switch (event.type) {
    case 'request': {
      emitStreamEvent('turn_start', {mode: event.mode, turn: event.turn})
      break
    }

    case 'text': {
      emitStreamEvent('assistant', {text: event.text})
      break
    }

    case 'tool_call': {
      emitStreamEvent('tool_call', {id: event.id, input: event.input, name: event.name})
      break
    }

    case 'tool_result': {
      const content = event.content.length > STREAM_CONTENT_CAP ? event.content.slice(0, STREAM_CONTENT_CAP) + '…' : event.content
      emitStreamEvent('tool_result', {content, denied: event.denied, id: event.id, is_error: event.isError, name: event.name})
      break
    }

    case 'usage': {
      emitStreamEvent('usage', {turn: event.turn, usage: event.usage})
      break
    }

    case 'retry': {
      emitStreamEvent('retry', {attempt: event.attempt, reason: event.reason})
      break
    }
  }
}

/** In GitHub Actions, adds a Markdown section to the job summary; elsewhere does nothing. */
export async function appendStepSummary(markdown: string): Promise<void> {
  const file = process.env.GITHUB_STEP_SUMMARY
  if (!file) return
  try {
    await appendFile(file, scrubSecrets(markdown.trimEnd()) + '\n\n')
  } catch (error) {
    process.stderr.write(`warning: could not write the job summary to ${file}: ${(error as Error).message}\n`)
  }
}

export function markdownTable(rows: Array<[string, string]>): string {
  const cell = (text: string) => text.replaceAll('|', '\\|').replaceAll('\n', ' ')
  return ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${cell(k)} | ${cell(v)} |`)].join('\n')
}
