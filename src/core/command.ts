import {Command, Flags, type Interfaces} from '@oclif/core'

import {ExitCode, usageError, WaveError} from './errors.js'
import {scrubSecrets} from './session/model.js'
import {parseRule} from './policy/policy.js'
import {closeToolSources, setHostConfig} from '../plugins/sources/hook.js'

/** Version of every JSON object wave prints; bumped only on a breaking change. */
export const OUTPUT_VERSION = 1

export const outputFormatFlag = Flags.option({
  description: 'Result format on stdout: text, one json object, or stream-json events (one per line)',
  options: ['text', 'json', 'stream-json'] as const,
})

/** The flags of every command that starts a model session (plan, run). */
export function sessionFlags(maxTurns: number) {
  return {
    cwd: Flags.directory({description: 'Workspace root (default: the current directory)'}),
    'max-turns': Flags.integer({default: maxTurns, description: 'Stop with exit 5 after this many model turns', min: 1}),
    model: Flags.string({description: 'Model ID (default: $WAVE_MODEL, the settings files, else claude-sonnet-5-5)'}),
    'output-format': outputFormatFlag({default: 'text'}),
    quiet: Flags.boolean({char: 'q', description: 'No progress on stderr'}),
  }
}

/** `--allow` rules as given, each checked: a malformed rule is a usage error (exit 2), before anything runs. */
export function checkedRules(rules: string[] = []): string[] {
  for (const rule of rules) {
    try {
      parseRule(rule)
    } catch (error) {
      throw usageError((error as Error).message)
    }
  }

  return rules
}

/**
 * The base of every wave command: `--json`, and errors as one clear line with the design's exit code,
 * in text and JSON mode alike (oclif would exit 1 for a --json error otherwise).
 */
export abstract class WaveCommand extends Command {
  static enableJsonFlag = true

  /** MCP servers a session started stop with the command, whatever its outcome. */
  protected async finally(error: Error | undefined): Promise<unknown> {
    await closeToolSources()
    return super.finally(error)
  }

  /** Aborted on SIGINT or SIGTERM: the model call stops and a running command's process group is killed. */
  protected readonly interruption = new AbortController()
  private signalled?: NodeJS.Signals

  public async init(): Promise<void> {
    await super.init()
    // Plugins' tools are asked of this command's oclif config (see src/core/plugin-tools.ts).
    setHostConfig(this.config)
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        // A second signal means "now": the first one is still unwinding the session.
        if (this.signalled) process.exit(signalExit(this.signalled))
        this.signalled = signal
        process.stderr.write(`\nwave: ${signal} received, stopping (again to force)...\n`)
        this.interruption.abort(new WaveError(`Interrupted by ${signal}.`, signalExit(signal)))
      })
    }
  }

  /** `--output-format json` is `--json`. */
  public jsonEnabled(): boolean {
    if (super.jsonEnabled()) return true
    const argv = this.argv
    const at = argv.indexOf('--output-format')
    return argv.includes('--output-format=json') || (at !== -1 && argv[at + 1] === 'json')
  }

  /** `--output-format stream-json`: events on stdout as they happen, ending with a result event. */
  protected streaming(): boolean {
    const argv = this.argv
    const at = argv.indexOf('--output-format')
    return argv.includes('--output-format=stream-json') || (at !== -1 && argv[at + 1] === 'stream-json')
  }

  protected async catch(error: Interfaces.CommandError): Promise<void> {
    const exitCode = this.signalled ? signalExit(this.signalled) : exitCodeOf(error)
    const message = scrubSecrets(firstLine(error.message))
    const hint = error instanceof WaveError && error.hint ? scrubSecrets(error.hint) : undefined
    process.stderr.write(`Error: ${message}\n${hint ? `Hint: ${hint}\n` : ''}`)
    if (process.env.DEBUG && error.stack) process.stderr.write(scrubSecrets(error.stack) + '\n')
    const failure = {error: {exitCode, hint, message}, ok: false, version: OUTPUT_VERSION}
    if (this.jsonEnabled()) this.logJson(failure)
    else if (this.streaming()) this.logJson({type: 'result', ...failure})

    process.exitCode = exitCode
  }

  /** One compact line, so `--json` output can be piped to jq or read line by line. */
  public logJson(json: unknown): void {
    process.stdout.write(JSON.stringify(json) + '\n')
  }
}

const signalExit = (signal: NodeJS.Signals) => (signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated)

function exitCodeOf(error: Interfaces.CommandError): number {
  if (error instanceof WaveError) return error.exitCode
  // oclif's parse errors (unknown flag, missing value, bad option) carry exit 2: a usage error.
  const oclifExit = (error as {oclif?: {exit?: number}}).oclif?.exit
  if (typeof oclifExit === 'number' && oclifExit !== 0) return oclifExit === 2 ? ExitCode.usage : oclifExit
  return ExitCode.runtime
}

/** oclif parse errors span several lines (usage, see more help); the first says what was wrong. */
function firstLine(message: string): string {
  // oclif's parse errors put a heading ("Missing 1 required arg:", "Parsing --max-turns") above the
  // detail and end with "See more help"; fold the heading and the detail into one line.
  const lines = message
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('See more help'))
  if (lines.length === 0) return 'Unknown error'
  const [first, second] = lines
  if (second && (first.endsWith(':') || /^Parsing --[\w-]+$/.test(first) || first === 'The following errors occurred:')) {
    return `${first.replace(/:$/, '')}: ${second}`
  }

  return first
}
