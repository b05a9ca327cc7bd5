import {readFileSync} from 'node:fs'

import {Command, Flags, type Interfaces} from '@oclif/core'

import {errorLine, ExitCode, usageError, WaveError} from '../base/errors.js'
import {createSink, type Failure, OUTPUT_FORMATS, type OutputFormat, type OutputSink, type SessionReporter} from '../output/sink.js'
import {CommandRecorder, telemetryTarget} from '../output/telemetry/recorder.js'
import {failureOf, type Stopped} from '../agent/outcome.js'
import {ruleSchema} from '../policy/policy.js'
import {mcpConfigServers} from '../config/settings.js'
import type {SessionHost, SessionOptions} from '../session/context.js'
import {EFFORTS, type Effort, parseThinking, type ThinkingSetting} from '../model/reasoning.js'
import {scrubSecrets} from '../base/secrets.js'
import {networkHostProblem} from '../base/process/proxy.js'
import type {SandboxChoice} from '../base/process/sandbox.js'
import type {CommandShape} from './usage-errors.js'
import {outputSchemaArgument, type OutputSchema} from '../base/json-schema.js'
import {appendedPrompt} from '../base/input.js'
import {defaultTiers, fetchParsedByLiftoff} from '../base/wasm.js'
import {capOf} from '../model/budget.js'

export const outputFormatFlag = Flags.option({
  description: 'Result format on stdout: text, one json object, or stream-json events (one per line)',
  options: ['text', 'json', 'stream-json'] as const,
  // --json is --output-format json: with any other format given, the two contradict each other.
  relationships: [{flags: [{name: 'json', when: async (flags) => flags['output-format'] !== 'json'}], type: 'none'}],
})

/** `--max-budget-usd`: a positive number of US dollars. */
export const maxBudgetFlag = Flags.custom<number>({
  description: 'Stop with exit 5 once the session has spent more than this many US dollars',
  async parse(input) {
    const value = Number(input)
    if (!Number.isFinite(value) || value <= 0) throw new Error(`Expected a positive number of US dollars but received: ${input}`)
    return value
  },
})

/** The flags of every command that starts a model session (plan, run). */
export function sessionFlags(maxTurns: number) {
  return {
    'append-system-prompt': Flags.string({
      description: "Text added at the end of the system prompt (after the repository's AGENTS.md / CLAUDE.md); @FILE reads it from a file",
    }),
    cwd: Flags.directory({description: 'Workspace root (default: the top of the git repository holding the current directory)'}),
    'max-budget-usd': maxBudgetFlag(),
    'max-turns': Flags.integer({default: maxTurns, description: 'Stop with exit 5 after this many model turns', min: 1}),
    'max-output-tokens': Flags.integer({description: "max_tokens of each request (default 64000, within the model's output limit)", min: 1}),
    effort: Flags.option({description: 'How hard the model works (output_config.effort; default high where the model takes it)', options: EFFORTS})(),
    thinking: Flags.custom<ThinkingSetting>({
      description: 'adaptive (default where the model takes it), off, or a thinking budget in tokens (at least 1024)',
      async parse(input) {
        return parseThinking(input)
      },
    })(),
    model: Flags.string({
      description: 'Model ID, or an alias: opus, sonnet, haiku, fable (default: $WAVE_MODEL, $ANTHROPIC_MODEL, the settings files, else claude-sonnet-5-5)',
    }),
    deny: Flags.string({description: "A deny rule over the settings' (e.g. Bash(git push:*)); repeatable", multiple: true}),
    'disallowed-tools': Flags.string({
      aliases: ['disallowedTools'],
      description: "Deny rules as Claude Code's --disallowedTools takes them: tools or rules, separated by commas or spaces",
      multiple: true,
    }),
    'allowed-tools': Flags.string({
      aliases: ['allowedTools'],
      description: "Allow rules as Claude Code's --allowedTools takes them, where the command takes --allow",
      multiple: true,
    }),
    'mcp-config': Flags.string({
      description: 'MCP servers as Claude Code takes them: {"mcpServers": {...}} as JSON, @FILE or a file; repeatable',
      multiple: true,
    }),
    'strict-mcp-config': Flags.boolean({description: 'Only the --mcp-config servers: none from the settings files'}),
    'fallback-model': Flags.string({description: 'The model to go on with once --model is overloaded or unavailable after its retries'}),
    'json-schema': Flags.string({
      description:
        'A JSON Schema (JSON, or @FILE) the result must match: the model gives it through the StructuredOutput tool, wave checks it (3 tries), and the JSON result carries it as structured_output',
    }),
    'output-format': outputFormatFlag({default: 'text'}),
    quiet: Flags.boolean({char: 'q', description: 'No progress on stderr'}),
  }
}

/** The values of sessionFlags() as a command parses them. */
interface SessionFlagValues {
  cwd?: string
  deny?: string[]
  'disallowed-tools'?: string[]
  'mcp-config'?: string[]
  'strict-mcp-config'?: boolean
  'fallback-model'?: string
  'json-schema'?: string
  effort?: Effort
  'max-budget-usd'?: number
  'max-output-tokens'?: number
  'max-turns': number
  model?: string
  thinking?: ThinkingSetting
}

/** What sessionInputs read of the session flags. */
interface SessionInputs {
  appendSystemPrompt?: string
  outputSchema?: OutputSchema
}

/** `--sandbox on|off`, `--sandbox-network` and `--sandbox-network-allow`: how an approved run's commands are contained (approve, run --approve, run --task). */
export const sandboxFlags = {
  sandbox: Flags.option({
    default: 'on',
    description: "Run the plan's commands in the OS sandbox; off runs them unsandboxed (recorded, and shown wherever the run is)",
    options: ['on', 'off'] as const,
  })(),
  'sandbox-network': Flags.boolean({
    description: 'Let sandboxed commands use all of the network (--sandbox-network-allow opens it to named hosts only)',
    exclusive: ['sandbox-network-allow'],
  }),
  'sandbox-network-allow': Flags.string({
    description: "Let sandboxed commands reach this host (and no other) through wave's filtering proxy, e.g. registry.npmjs.org; repeatable",
    exclusive: ['sandbox-network'],
    multiple: true,
  }),
}

/** The sandbox the flags ask for; a network flag with `--sandbox off`, or a host that is no host name, is a usage error. */
export function sandboxFrom(flags: {sandbox?: 'off' | 'on'; 'sandbox-network'?: boolean; 'sandbox-network-allow'?: string[]}): SandboxChoice {
  const hosts = flags['sandbox-network-allow'] ?? []
  if (flags.sandbox === 'off' && (flags['sandbox-network'] || hosts.length > 0)) {
    const flag = flags['sandbox-network'] ? '--sandbox-network' : '--sandbox-network-allow'
    throw usageError(`${flag} applies only to sandboxed commands; with --sandbox off nothing restricts the network.`)
  }

  for (const host of hosts) {
    const problem = networkHostProblem(host)
    if (problem) throw usageError(`--sandbox-network-allow ${problem}.`)
  }

  return {enabled: flags.sandbox !== 'off', network: flags['sandbox-network'] === true, ...(hosts.length > 0 ? {networkAllow: [...new Set(hosts)]} : {})}
}

/**
 * Rules as Claude Code's `--allowedTools` and `--disallowedTools` take them: each value a list of tools or
 * rules separated by commas or spaces, outside the parentheses of a rule (`Bash(git log:*),Edit Read`).
 */
export function toolList(values: readonly string[] = []): string[] {
  const rules: string[] = []
  for (const value of values) {
    let depth = 0
    let current = ''
    for (const char of value) {
      if (char === '(') depth += 1
      if (char === ')') depth = Math.max(0, depth - 1)
      if (depth === 0 && (char === ',' || /\s/.test(char))) {
        if (current) rules.push(current)
        current = ''
      } else current += char
    }

    if (current) rules.push(current)
  }

  return rules
}

/** `--allow` rules as given, each checked: a malformed rule is a usage error (exit 2), before anything runs. */
export function checkedRules(rules: string[] = []): string[] {
  for (const rule of rules) {
    const checked = ruleSchema.safeParse(rule)
    if (!checked.success) throw usageError(checked.error.issues[0].message)
  }

  return rules
}

/**
 * The base of every wave command: `--json`, one output sink chosen once from the parsed flags, errors
 * as one clear line with the design's exit code in every format, and SIGINT/SIGTERM turned into an abort
 * of the running session. A command parses, makes one call into core, and hands the result to the sink.
 */
export abstract class WaveCommand extends Command {
  static enableJsonFlag = true

  /** Aborted on SIGINT or SIGTERM: the model call stops and a running command's process group is killed. */
  protected readonly interruption = new AbortController()
  private signalled?: NodeJS.Signals
  private sink?: OutputSink
  /** The command as telemetry records it, when OTEL_* variables turn it on (absent otherwise: nothing is recorded). */
  private recorder?: CommandRecorder

  public async init(): Promise<void> {
    await super.init()
    // Node's fetch (the model, the forges) parses HTTP with WebAssembly that V8 would otherwise recompile on
    // other threads, ~140 ms of CPU a process (base/wasm.ts).
    fetchParsedByLiftoff()
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

  /** Parses, then chooses the output sink once, from `--output-format` / `--json` and `--quiet`. */
  protected async parse<F extends FlagOutput, B extends FlagOutput, A extends ArgOutput>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const parsed = await super.parse(options, argv)
    const flags = parsed.flags as {json?: boolean; 'output-format'?: OutputFormat; quiet?: boolean}
    const format = flags.json ? 'json' : (flags['output-format'] ?? 'text')
    this.sink = createSink({command: this.id ?? 'wave', format, observer: this.telemetry(), quiet: flags.quiet})
    return parsed
  }

  /** The output sink (one guessed from the arguments if the command failed before parsing). */
  protected get output(): OutputSink {
    this.sink ??= createSink({command: this.id ?? 'wave', format: this.formatFromArgv(), observer: this.telemetry()})
    return this.sink
  }

  /** The recorder telemetry exports from at the end, made once when OTEL_* (or CLAUDE_CODE_ENABLE_TELEMETRY) turns it on. */
  private telemetry(): CommandRecorder | undefined {
    if (this.recorder) return this.recorder
    const target = telemetryTarget()
    if (!target) return undefined
    if ('problem' in target) {
      process.stderr.write(`Warning: telemetry is off: ${target.problem}\n`)
      return undefined
    }

    this.recorder = new CommandRecorder(`${this.id ?? 'wave'}`.replaceAll(':', ' '), target)
    return this.recorder
  }

  /**
   * After the command, whatever its ending (oclif calls this after run or catch): the record exported,
   * within telemetry's bounded wait. A collector that is down costs that wait and one line on stderr,
   * never the exit code.
   */
  public async finally(error: Error | undefined): Promise<void> {
    // The session's WebAssembly has run: V8's flags as node started, for what loads from here (base/wasm.ts).
    defaultTiers()
    if (this.recorder) {
      const exitCode = typeof process.exitCode === 'number' ? process.exitCode : Number(process.exitCode ?? 0) || 0
      const record = this.recorder.end(exitCode)
      try {
        const {exportCommand} = await import('../output/telemetry/export.js')
        const outcome = await exportCommand(record, this.recorder.target, this.config.version)
        if (!outcome.ok) process.stderr.write(`Warning: telemetry not exported: ${outcome.problem}\n`)
      } catch (problem) {
        process.stderr.write(`Warning: telemetry not exported: ${scrubSecrets(errorLine(problem))}\n`)
      }
    }

    return super.finally(error)
  }

  /** What a command gives every session it starts. */
  protected sessionHost(onEvent?: SessionHost['onEvent']): SessionHost {
    return {config: this.config, onEvent, signal: this.interruption.signal, warn: (message) => this.output.warn(message)}
  }

  /**
   * What the session flags give that must be read first, before any session starts: `--append-system-prompt`'s
   * text, and `--json-schema` checked and compiled (an invalid schema is exit 2 before any request).
   */
  protected async sessionInputs(flags: {'append-system-prompt'?: string; 'json-schema'?: string}): Promise<SessionInputs> {
    const value = flags['json-schema']
    return {
      appendSystemPrompt: await appendedPrompt(flags['append-system-prompt']),
      outputSchema: value === undefined ? undefined : await outputSchemaArgument(value),
    }
  }

  /** What every session driver takes from the session flags (sessionFlags), with the host reporting to `reporter`. */
  protected sessionOptions(flags: SessionFlagValues, inputs: SessionInputs, reporter: SessionReporter): SessionOptions {
    const deny = checkedRules([...(flags.deny ?? []), ...toolList(flags['disallowed-tools'])])
    const servers = flags['mcp-config'] ? mcpConfigServers(flags['mcp-config'], (file) => readFileSync(file, 'utf8')) : undefined
    return {
      appendSystemPrompt: inputs.appendSystemPrompt,
      cwd: flags.cwd,
      deny: deny.length > 0 ? deny : undefined,
      fallbackModel: flags['fallback-model'],
      mcp: servers || flags['strict-mcp-config'] ? {servers: servers ?? {}, strict: flags['strict-mcp-config'] === true} : undefined,
      host: this.sessionHost((event) => reporter.event(event)),
      effort: flags.effort,
      budget: capOf(flags['max-budget-usd'], {kind: 'flag'}),
      maxOutputTokens: flags['max-output-tokens'],
      maxTurns: flags['max-turns'],
      model: flags.model,
      outputSchema: inputs.outputSchema,
      thinking: flags.thinking,
    }
  }

  /** `--output-format json` is `--json`. */
  public jsonEnabled(): boolean {
    return this.formatFromArgv() === 'json'
  }

  private formatFromArgv(): OutputFormat {
    return super.jsonEnabled() ? 'json' : outputFormatIn(this.argv)
  }

  /**
   * A session that stopped before it finished (a limit, a refusal, a run's unmet checks), as its driver
   * returned it: reported like any failure, with the exit code ENDINGS gives its ending.
   */
  protected async stopped(stopped: Stopped): Promise<void> {
    const {details, exitCode, hint, message} = failureOf(stopped)
    await this.fail({details, exitCode, hint, message})
  }

  protected async catch(thrown: Interfaces.CommandError): Promise<void> {
    const error = this.signalled ? thrown : await asUsageError(thrown, {args: this.ctor.args ?? {}, flags: this.ctor.flags ?? {}, id: this.id ?? ''})
    const exitCode = this.signalled ? signalExit(this.signalled) : exitCodeOf(error)
    const hint = error instanceof WaveError ? error.hint : undefined
    const details = error instanceof WaveError ? error.details : undefined
    await this.fail({details, exitCode, hint, message: error.message})
    if (process.env.DEBUG && thrown.stack) process.stderr.write(scrubSecrets(thrown.stack) + '\n')
  }

  /** A failure through the sink: one line, the hint, the details, and the exit code. */
  private async fail(failure: Failure): Promise<void> {
    await this.output.failure({...failure, hint: failure.hint ? scrubSecrets(failure.hint) : undefined, message: scrubSecrets(firstLine(failure.message))})
    process.exitCode = failure.exitCode
  }
}

/** The output format the arguments ask for (`--json`, `--output-format F`), from the raw arguments: before or without parsing. */
export function outputFormatIn(argv: readonly string[]): OutputFormat {
  const end = argv.indexOf('--')
  const args = end === -1 ? argv : argv.slice(0, end)
  if (args.includes('--json')) return 'json'
  const at = args.indexOf('--output-format')
  const given = args.find((arg) => arg.startsWith('--output-format='))?.slice('--output-format='.length) ?? (at === -1 ? undefined : args[at + 1])
  return (OUTPUT_FORMATS as readonly string[]).includes(given ?? '') ? (given as OutputFormat) : 'text'
}

/**
 * oclif's parser errors (unknown flag, conflicting flags, ...) as wave's one line with its exit code; any
 * other error as it is. The rewording (usage-errors.ts) loads only here, once a command has failed.
 */
async function asUsageError(error: Interfaces.CommandError, command: CommandShape): Promise<Interfaces.CommandError> {
  // A WaveError is already wave's line, unless oclif wrapped it while parsing a flag ("Parsing --thinking ...").
  if (error instanceof WaveError && !error.message.startsWith('Parsing --')) return error
  const {usageErrorOf} = await import('./usage-errors.js')
  return usageErrorOf(error, command) ?? error
}

// oclif's own bounds for parse()'s type parameters (not exported by name).
// biome-ignore lint/suspicious/noExplicitAny: as oclif declares them
type FlagOutput = {[name: string]: any}
// biome-ignore lint/suspicious/noExplicitAny: as oclif declares them
type ArgOutput = {[name: string]: any}

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
