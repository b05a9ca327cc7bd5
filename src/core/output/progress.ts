import type {AgentEvent, TokenUsage} from '../session/loop.js'
import {scrubSecrets} from '../session/model.js'

/** A short, one-line view of a tool call's input for the progress log. */
export function describeCall(name: string, input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>
  const main = fields.file_path ?? fields.command ?? fields.pattern ?? fields.path ?? fields.url ?? fields.plan_path ?? fields.reason
  const line = (typeof main === 'string' ? main : '').replaceAll(/\s+/g, ' ')
  return line.length > 80 ? `${name} ${line.slice(0, 77)}...` : `${name} ${line}`.trim()
}

export const formatUsage = (usage: TokenUsage) =>
  `tokens: ${usage.input_tokens} in, ${usage.output_tokens} out, ${usage.cache_read_input_tokens} cache read, ${usage.cache_creation_input_tokens} cache write`

/** The progress line for an event, or undefined for events the log does not show. */
export function progressLine(event: AgentEvent): string | undefined {
  switch (event.type) {
    case 'request': {
      return `turn ${event.turn} · ${event.mode} mode`
    }

    case 'tool_call': {
      return `→ ${describeCall(event.name, event.input)}`
    }

    case 'tool_result': {
      if (event.denied) return `✗ denied: ${event.content.split('\n')[0]}`
      return event.isError ? `! ${event.name}: ${event.content.split('\n')[0]}` : undefined
    }

    case 'retry': {
      return `↻ retrying (attempt ${event.attempt}): ${event.reason}`
    }

    case 'usage': {
      return formatUsage(event.usage)
    }

    default: {
      return undefined
    }
  }
}

export interface ProgressOptions {
  quiet?: boolean
}

/** What a session reports to while it runs. */
export interface Reporter {
  event(event: AgentEvent): void
  /** Names the session once it is known (the plan's name, the mode). */
  title(text: string): void
}

/**
 * Progress on stderr with listr2: the live renderer at a terminal, a plain line per step when stderr
 * is not a TTY or CI is set, nothing with --quiet. stdout is never touched: it carries the result.
 * listr2 loads and the task list starts once the first model response is in: a check that fails before
 * (no key, no approval, the API unreachable) prints its one error line and nothing else, and loading
 * the renderer costs nothing on the way to the first request, when the model is working anyway.
 */
export async function withProgress<T>(title: string, options: ProgressOptions, work: (reporter: Reporter) => Promise<T>): Promise<T> {
  let base = title
  let task: {title: string; output: string} | undefined
  const pending: string[] = []
  let finish: ((error?: unknown) => void) | undefined
  let rendering: Promise<void> | undefined

  const start = () => {
    if (rendering || options.quiet) return
    const done = new Promise<void>((resolve, reject) => {
      finish = (error) => (error ? reject(error) : resolve())
    })
    rendering = listFor(base, async (wrapper) => {
      task = wrapper
      task.title = base
      for (const line of pending.splice(0)) task.output = line
      await done
    })
  }

  const reporter: Reporter = {
    event(event) {
      if (event.type === 'request') base = `${base.split(' · ')[0]} · ${event.mode} mode · turn ${event.turn}`
      else start()
      if (task) task.title = base
      const line = progressLine(event)
      if (!line) return
      if (task) task.output = scrubSecrets(line)
      else pending.push(scrubSecrets(line))
    },
    title(text) {
      base = text
      if (task) task.title = text
    },
  }

  let result: T
  try {
    result = await work(reporter)
  } catch (error) {
    finish?.(error)
    await rendering?.catch(() => {})
    throw error
  }

  finish?.()
  await rendering
  return result
}

async function listFor(title: string, task: (wrapper: {title: string; output: string}) => Promise<void>): Promise<void> {
  const {Listr, ListrLogger, ProcessOutput} = await import('listr2')
  const stderr = process.stderr
  const logger = new ListrLogger({processOutput: new ProcessOutput(stderr, stderr), useIcons: true})
  const list = new Listr([{rendererOptions: {outputBar: 5, persistentOutput: false}, task: (_ctx, wrapper) => task(wrapper), title}], {
    exitOnError: true,
    fallbackRenderer: 'simple',
    fallbackRendererCondition: !stderr.isTTY || Boolean(process.env.CI),
    fallbackRendererOptions: {logger},
    registerSignalListeners: false,
    renderer: 'default',
    rendererOptions: {logger, showErrorMessage: false},
  })
  await list.run()
}

/** A line on stderr outside any session (a warning, a final tally), unless quiet. */
export function note(line: string, options: ProgressOptions = {}): void {
  if (!options.quiet) process.stderr.write(scrubSecrets(line) + '\n')
}
