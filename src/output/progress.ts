import type {AgentEvent, TokenUsage} from '../agent/loop.js'
import {scrubSecrets} from '../base/secrets.js'
import {visible} from '../base/text.js'
import {integerFromEnv} from '../model/table.js'
import {formatUsd} from '../model/pricing.js'
import {todoProgress} from '../base/notes.js'

/** A short, one-line view of a tool call's input for the progress log. */
function describeCall(name: string, input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>
  const main = fields.file_path ?? fields.command ?? fields.pattern ?? fields.path ?? fields.url ?? fields.plan_path ?? fields.reason ?? fields.task_id
  const line = (typeof main === 'string' ? main : '').replaceAll(/\s+/g, ' ')
  return line.length > 80 ? `${name} ${line.slice(0, 77)}...` : `${name} ${line}`.trim()
}

/** A session's tokens by kind, as the progress log and the job summaries' Tokens row say them. */
export const tokenCounts = (usage: TokenUsage) =>
  `${usage.input_tokens} in, ${usage.output_tokens} out, ${usage.cache_read_input_tokens} cache read, ${usage.cache_creation_input_tokens} cache write`

export const formatUsage = (usage: TokenUsage) => `tokens: ${tokenCounts(usage)}`

/** A session's spend for people: `$0.0123`, or a note when the model has no known price. */
export const formatCost = (costUsd: number | null) => (costUsd === null ? 'cost unknown (no price for this model)' : formatUsd(costUsd))

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

    case 'agent_start': {
      return `⇉ agent ${event.subagentType}: ${event.description}`
    }

    case 'agent_call': {
      return `  ⤷ ${describeCall(event.name, event.input)}`
    }

    case 'agent_end': {
      const spent = `${event.turns} turn${event.turns === 1 ? '' : 's'}, ${formatCost(event.costUsd)}`
      return event.cut ? `⇇ agent cut (${event.cut}): ${event.description} (${spent})` : `⇇ agent done: ${event.description} (${spent})`
    }

    case 'retry': {
      return `↻ retrying (attempt ${event.attempt}): ${event.reason}`
    }

    case 'fallback': {
      return `↷ ${event.from} is overloaded or unavailable: going on with --fallback-model ${event.to}`
    }

    case 'usage': {
      return event.costUsd === null ? formatUsage(event.usage) : `${formatUsage(event.usage)}; ${formatCost(event.costUsd)}`
    }

    case 'output_limit': {
      const why = `output cut at max_tokens (${event.maxTokens})`
      if (event.action === 'raise') return `✂ ${why}: asking again with the model's whole output limit`
      if (event.action === 'continue') return `✂ ${why}: asking the model to continue its answer`
      return `✂ ${why}: the cut calls did not run; the model is asked to write in smaller pieces`
    }

    case 'check': {
      if (event.durationMs === undefined) return `▶ check: ${event.command}`
      const how = event.exitCode === 0 ? '✓ passed' : event.exitCode === null ? '✗ did not finish' : `✗ failed (exit ${event.exitCode})`
      return `${how}: ${event.command} (${(event.durationMs / 1000).toFixed(1)} s)`
    }

    case 'hook': {
      // Failures are warned by the session itself, with the file that set the hook.
      if (event.outcome === 'error') return undefined
      const how = event.outcome === 'blocked' ? `blocked${event.message ? `: ${event.message}` : ''}` : `ok (${(event.durationMs / 1000).toFixed(1)} s)`
      return `⚓ ${event.event} hook "${event.command}": ${how}`
    }

    case 'todo': {
      return `☐ ${todoProgress(event.todos)}`
    }

    case 'question': {
      return event.questions.map((q) => `? ${q.question} (no one can answer now: recorded)`).join('\n')
    }

    case 'structured_output': {
      return '✓ structured result given (it matches --json-schema)'
    }

    case 'compaction': {
      const what = [
        event.clearedToolResults > 0 ? `${event.clearedToolResults} old tool results cleared` : '',
        event.clearedToolInputs > 0 ? `${event.clearedToolInputs} old tool inputs cleared` : '',
        event.summarizedMessages > 0 ? `${event.summarizedMessages} earlier messages summarised` : '',
      ].filter(Boolean)
      const why = event.trigger === 'prompt_too_long' ? 'the prompt was too long' : 'near the context window'
      return `⇲ compacted (${why}): ${what.join(', ')}; ~${event.tokensBefore} → ~${event.tokensAfter} tokens`
    }

    default: {
      return undefined
    }
  }
}

interface ProgressOptions {
  quiet?: boolean
  /** Whether the work's result is a failure to show as one (a session that stopped before it finished), though nothing was thrown. */
  failed?(result: unknown): Error | undefined
}

/** What the header line names, printed before the first request. */
interface SessionHeader {
  /** `wave plan`, `wave run`, `wave run --task`. */
  command: string
  /** The plan's name, when there is one. */
  name?: string
  mode: string
  model: string
  /** How the session's commands are contained ("sandbox OFF ..."), where it runs commands. */
  sandbox?: string
}

/** What a session reports to while it runs. */
export interface Reporter {
  event(event: AgentEvent): void
  /** Names the session once it is known (the plan's name, the mode). */
  title(text: string): void
  /** Prints the session's header line at once: command, plan name, mode, model. */
  header(info: SessionHeader): void
}

/** How long the model may be silent before a CI log says wave is still waiting; `WAVE_HEARTBEAT_MS` sets it (tests). */
const HEARTBEAT_MS = 30_000
const SPINNER_FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
const SPINNER_MS = 100

/**
 * Progress on stderr with listr2: the live renderer at a terminal, a plain line per step when stderr
 * is not a TTY or CI is set, nothing with --quiet. stdout is never touched: it carries the result.
 * listr2 loads and the task list starts once the first model response is in: loading the renderer
 * costs nothing on the way to the first request, when the model is working anyway. Until then a life
 * sign: the header line at once (before the first request), and while the model is working, a spinner
 * with the time waited at a terminal, or in a log a "waiting for the model (N s)" line every 30 s of
 * silence.
 */
export async function withProgress<T>(title: string, options: ProgressOptions, work: (reporter: Reporter) => Promise<T>): Promise<T> {
  const progress = new ProgressList(title, options)
  let result: T
  try {
    result = await work(progress.reporter())
  } catch (error) {
    // listr shows the failure's message on the task's line: as visible as every other line.
    await progress.close(new Error(visible(scrubSecrets(error instanceof Error ? error.message : String(error)))))
    throw error
  }

  const stopped = options.failed?.(result)
  // Shown on the task's line as a thrown failure is: its control characters visible, its secrets scrubbed.
  await progress.close(stopped && new Error(visible(scrubSecrets(stopped.message))))
  return result
}

/** The state of one command's progress: its title, the header, listr's task once it runs, the lines held until then. */
class ProgressList {
  private base: string
  private headerPrinted = false
  private task: {title: string; output: string} | undefined
  private readonly pending: string[] = []
  private finish: ((error?: unknown) => void) | undefined
  private rendering: Promise<void> | undefined
  private shownTitle = ''
  private readonly stderr = process.stderr
  private readonly waiting: WaitingSign
  /** At a terminal (and not in CI): a spinner redrawn in place, else lines in a log. */
  private readonly live = Boolean(this.stderr.isTTY) && !process.env.CI

  constructor(
    title: string,
    private readonly options: ProgressOptions,
  ) {
    this.base = title
    this.waiting = new WaitingSign(
      {
        draw: (seconds, frame) => {
          if (this.task) {
            // listr draws its own spinner on the task's line: the title gains the time waited.
            const next = seconds === undefined ? this.base : `${this.base} · waiting for the model (${seconds} s)`
            if (next !== this.shownTitle) this.task.title = this.shownTitle = next
          } else if (!this.rendering) {
            this.stderr.write(seconds === undefined ? '\r\u001B[K' : `\r${frame} waiting for the model (${seconds} s)\u001B[K`)
          }
        },
        // The heartbeat must show before listr runs too (a first request that takes minutes): then as a plain line.
        line: (text) => (this.task || this.rendering ? this.line(text) : this.stderr.write(text + '\n')),
        live: this.live,
      },
      integerFromEnv('WAVE_HEARTBEAT_MS', HEARTBEAT_MS, 1, 3_600_000),
    )
  }

  /** A progress line: the task's output, kept until listr runs. */
  private line(text: string): void {
    // The model's and the plan's words (a command, a question, a to-do) with their control characters visible.
    if (this.task) this.task.output = visible(scrubSecrets(text))
    else this.pending.push(visible(scrubSecrets(text)))
  }

  private printHeader(text: string): void {
    this.headerPrinted = true
    if (!this.options.quiet) this.stderr.write(visible(scrubSecrets(text)) + '\n')
  }

  private retitle(text: string): void {
    this.base = text
    if (this.task) this.task.title = this.shownTitle = text
  }

  private start(): void {
    if (this.rendering || this.options.quiet) return
    // The spinner line before listr gives way to listr's own rendering.
    if (this.live) this.stderr.write('\r\u001B[K')
    const done = new Promise<void>((resolve, reject) => {
      this.finish = (error) => (error ? reject(error) : resolve())
    })
    this.rendering = listFor(this.base, async (wrapper) => {
      this.task = wrapper
      this.task.title = this.shownTitle = visible(this.base)
      for (const text of this.pending.splice(0)) this.task.output = text
      await done
    })
  }

  private event(event: AgentEvent): void {
    if (event.type === 'request') {
      this.base = `${this.base.split(' · ')[0]} · ${event.mode} mode · turn ${event.turn}`
      if (!this.headerPrinted) this.printHeader(this.base.replace(/ · turn \d+$/, ''))
    } else {
      this.start()
    }

    if (this.task) this.task.title = this.shownTitle = this.base
    if (this.options.quiet) return
    const text = progressLine(event)
    if (text) {
      this.line(text)
      this.waiting.spoke()
    }

    // The model is working from a request (or a compaction's, or a re-ask) until its usage is in.
    if (event.type === 'request' || event.type === 'compaction' || (event.type === 'output_limit' && event.action === 'raise')) this.waiting.begin()
    else if (event.type === 'usage') this.waiting.end()
  }

  reporter(): Reporter {
    return {
      event: (event) => this.event(event),
      header: (info) => {
        this.retitle(`${info.command}${info.name ? ` ${info.name}` : ''}`)
        this.printHeader(`${this.base} · ${info.mode} mode · ${info.model}${info.sandbox ? ` · ${info.sandbox}` : ''}`)
      },
      title: (text) => this.retitle(text),
    }
  }

  /** Ends the task list: done, or failed with `failure` shown on the task's line. */
  async close(failure: Error | undefined): Promise<void> {
    this.waiting.end()
    this.finish?.(failure)
    await (failure ? this.rendering?.catch(() => {}) : this.rendering)
  }
}

interface WaitingOutput {
  /** At a terminal: a spinner redrawn in place. Else lines in a log. */
  live: boolean
  /** Draws the live sign (seconds waited, a spinner frame), or takes it away (undefined). */
  draw(seconds: number | undefined, frame: string): void
  /** A line in the log. */
  line(text: string): void
}

/**
 * The life sign while the model works: at a terminal a spinner with the seconds waited, redrawn in
 * place; in a log, a "waiting for the model (N s)" line after each `heartbeatMs` of silence.
 */
export class WaitingSign {
  private since: number | undefined
  private timer: NodeJS.Timeout | undefined
  private frame = 0

  constructor(
    private readonly output: WaitingOutput,
    private readonly heartbeatMs: number,
  ) {}

  /** A request is on its way: the clock starts, unless it runs already. */
  begin(): void {
    if (this.since !== undefined) return
    this.since = Date.now()
    this.arm()
  }

  /** The model answered, or the session ended. */
  end(): void {
    if (this.since === undefined) return
    this.since = undefined
    clearTimeout(this.timer)
    clearInterval(this.timer)
    if (this.output.live) this.output.draw(undefined, '')
  }

  /** A progress line was printed: the silence starts again. */
  spoke(): void {
    if (this.since !== undefined && !this.output.live) this.arm()
  }

  private seconds(): number {
    return Math.floor((Date.now() - (this.since ?? Date.now())) / 1000)
  }

  private arm(): void {
    clearTimeout(this.timer)
    clearInterval(this.timer)
    if (this.output.live) {
      const draw = () => this.output.draw(this.seconds(), SPINNER_FRAMES[this.frame++ % SPINNER_FRAMES.length])
      draw()
      this.timer = setInterval(draw, SPINNER_MS)
    } else {
      this.timer = setTimeout(() => {
        this.output.line(`waiting for the model (${this.seconds()} s)`)
        this.arm()
      }, this.heartbeatMs)
    }

    // A sign of life never keeps the process alive by itself.
    this.timer.unref()
  }
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
  if (!options.quiet) process.stderr.write(visible(scrubSecrets(line)) + '\n')
}
