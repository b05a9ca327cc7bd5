import type {AgentEvent, TokenUsage} from './agent.js'
import {scrubSecrets} from './model.js'

/** A short, one-line view of a tool call's input for the progress log. */
export function describeCall(name: string, input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>
  const main = fields.file_path ?? fields.command ?? fields.pattern ?? fields.path ?? fields.url ?? fields.plan_path ?? fields.reason
  const text = typeof main === 'string' ? main : ''
  const line = text.replaceAll(/\s+/g, ' ')
  return line.length > 80 ? `${name} ${line.slice(0, 77)}...` : `${name} ${line}`.trim()
}

export const formatUsage = (usage: TokenUsage) =>
  `tokens: ${usage.input_tokens} in, ${usage.output_tokens} out, ${usage.cache_read_input_tokens} cache read, ${usage.cache_creation_input_tokens} cache write`

export interface Progress {
  info(line: string): void
  event(event: AgentEvent): void
}

/** Progress on stderr, a plain line per step: stdout is kept for the result. */
export function createProgress(options: {quiet?: boolean; stream?: NodeJS.WritableStream} = {}): Progress {
  const stream = options.stream ?? process.stderr
  const write = (line: string) => {
    if (!options.quiet) stream.write(scrubSecrets(line) + '\n')
  }

  return {
    event(event) {
      switch (event.type) {
        case 'request': {
          write(`[${event.mode}] turn ${event.turn}`)
          break
        }

        case 'tool_call': {
          write(`  → ${describeCall(event.name, event.input)}`)
          break
        }

        case 'tool_result': {
          if (event.denied) write(`  ✗ denied: ${event.content.split('\n')[0]}`)
          else if (event.isError) write(`  ! ${event.name}: ${event.content.split('\n')[0]}`)
          break
        }

        case 'retry': {
          write(`  ↻ stream interrupted, retrying (attempt ${event.attempt}): ${event.reason}`)
          break
        }

        case 'text':
        case 'usage': {
          break
        }
      }
    },
    info: write,
  }
}
