/**
 * oclif's parser errors (unknown flag, missing or unexpected argument, a value not among a flag's options,
 * conflicting flags, a mistyped command) as wave's own one line, exit 2, with "did you mean" where a
 * name was mistyped. oclif's classes for them are not exported, and their messages are its API: each is
 * recognised by its wording (test/e2e/cli-errors.test.ts holds every form). Loaded only once a command
 * has failed.
 */
import {stripVTControlCharacters} from 'node:util'

import {ExitCode, WaveError} from '../base/errors.js'
import {didYouMean, typedCommand, unknownCommandLine} from '../base/suggestions.js'

/** What of a command's definition the lines name: its id (`plans:prune`), flags and arguments. */
export interface CommandShape {
  id: string
  flags: Record<string, {char?: string; allowNo?: boolean; hidden?: boolean; options?: readonly string[]}>
  args: Record<string, unknown>
}

/** The command as typed: `wave plans prune`. */
const commandName = (id: string) => `wave ${id.replaceAll(':', ' ')}`

/**
 * The one-line usage error an oclif parser error becomes, or undefined when `error` is none of them.
 * A WaveError a flag's own parser threw keeps its exit code; every other is exit 2.
 */
export function usageErrorOf(error: Error, command: CommandShape): WaveError | undefined {
  const message = stripVTControlCharacters(error.message)
  const line = applyRules(PARSER_RULES, message, error, command)
  if (line === undefined) return undefined
  const exitCode = error instanceof WaveError ? error.exitCode : ExitCode.usage
  const hint = error instanceof WaveError ? error.hint : undefined
  const name = commandName(command.id)
  return new WaveError(`${name}: ${line}. See ${name} --help.`, exitCode, hint)
}

/** `wave plann`: the line for a command that does not exist ("did you mean plan?"), or for the words typed after one. */
export function unknownCommandError(typedId: string, commands: CommandShape[]): WaveError {
  const meant = typedCommand(typedId, commands)
  if (meant.command) return usageErrorOf(new Error(`Unexpected arguments: ${meant.rest.join(', ')}`), meant.command)!
  return new WaveError(unknownCommandLine(meant), ExitCode.usage)
}

/** The flags a command takes, as typed (`--task`, `--no-verify`, and `--json` and `--help`, which every command takes). */
function flagNames(command: CommandShape): string[] {
  const names = ['--help', '--json']
  for (const [name, flag] of Object.entries(command.flags)) {
    if (flag.hidden) continue
    names.push(`--${name}`)
    if (flag.allowNo) names.push(`--no-${name}`)
  }

  return names
}

/** A form of oclif's message, and the line it becomes (undefined: not this form after all). */
type Rule = [RegExp, (match: RegExpMatchArray, error: Error, command: CommandShape) => string | undefined]

/** The first rule whose pattern matches `text`, applied. */
function applyRules(rules: Rule[], text: string, error: Error, command: CommandShape): string | undefined {
  for (const [pattern, line] of rules) {
    const match = text.match(pattern)
    if (match) return line(match, error, command)
  }

  return undefined
}

const PARSER_RULES: Rule[] = [
  // NonExistentFlagsError: `Nonexistent flags: --tsk, -x`
  [
    /^Nonexistent flags?: (.+)$/m,
    ([, flags], _error, command) => {
      const given = flags.split(', ')
      const known = flagNames(command)
      const named = given.map((flag) => {
        const name = flag.split('=')[0]
        return `${name}${name.startsWith('--') ? didYouMean(name, known) : ''}`
      })
      return `unknown flag${given.length > 1 ? 's' : ''} ${named.join(', ')}`
    },
  ],
  // UnexpectedArgsError: `Unexpected arguments: a, b`
  [
    /^Unexpected arguments?: (.+)$/m,
    ([, extra], _error, command) => {
      const args = Object.keys(command.args)
      const takes =
        args.length === 0
          ? `it takes no arguments${'task' in command.flags ? '; the task goes in --task "..."' : ''}`
          : `it takes ${args.length === 1 ? 'one argument' : `${args.length} arguments`}, ${args.join(' and ')}`
      return `unexpected argument${extra.includes(', ') ? 's' : ''} ${extra} (${takes})`
    },
  ],
  // RequiredArgsError: `Missing 1 required arg:\nplan  The plan: ...`
  [
    /^Missing \d+ required args?/,
    (_match, error, command) => {
      const missing = ((error as {args?: Array<{name?: string}>}).args ?? []).map((arg) => arg.name).filter(Boolean)
      const names = missing.length > 0 ? missing : Object.keys(command.args)
      return `missing the ${names.join(' and ')} argument${names.length > 1 ? 's' : ''}`
    },
  ],
  // FlagInvalidOptionError: `Expected --effort=hihg to be one of: low, medium, high`
  [
    /^Expected --([\w-]+)=(.*) to be one of: (.+)$/m,
    ([, flag, value, options]) => `--${flag} ${value || '""'} is not one of ${options}${didYouMean(value, options.split(', '))}`,
  ],
  // ArgInvalidOptionError: `Expected x to be one of: a, b`
  [/^Expected (.*) to be one of: (.+)$/m, ([, value, options]) => `${value || '""'} is not one of ${options}${didYouMean(value, options.split(', '))}`],
  // The tokenizer's own: `Flag --task expects a value`, `... expects one of these values: a, b`, `... can only be specified once`.
  [/^Flag --([\w-]+) expects a value/, ([, flag]) => `--${flag} needs a value`],
  [/^Flag --([\w-]+) expects one of these values: (.+)$/m, ([, flag, options]) => `--${flag} needs a value, one of ${options}`],
  [/^Flag --([\w-]+) can only be specified once/, ([, flag]) => `--${flag} is given more than once; it takes one value`],
  // A flag's own parser failed (an integer below its minimum, a budget that is not a number):
  // `Parsing --max-turns \n\tExpected an integer greater than or equal to 1 but received: 0\nSee more help with --help`
  [
    /^Parsing --([\w-]+)\s*\n\s*([^\n]+)/,
    ([, flag, detail]) => {
      const said = detail.trim().replace(/\.$/, '')
      return `--${flag}: ${said.charAt(0).toLowerCase()}${said.slice(1)}`
    },
  ],
  // FailedFlagValidationError and ViolatedFlagConstraintError: `The following errors occurred:\n  reason\n  reason`
  [
    /^The following errors? occurred:/,
    ({input}, error, command) => {
      const reasons = (input ?? '')
        .split('\n')
        .slice(1)
        .map((reason) => reason.trim())
        .filter((reason) => reason && !reason.startsWith('See more help'))
      return [...new Set(reasons.map((reason) => applyRules(VALIDATION_RULES, reason, error, command) ?? reason))].join('; ')
    },
  ],
]

/** oclif's reasons a flag failed its relationships, reworded; both flags of a conflict named, in the order given. */
const VALIDATION_RULES: Rule[] = [
  [/^Missing required flag ([\w-]+)$/, ([, flag]) => `--${flag} is required`],
  // exclusive (`--task-file=y cannot also be provided when using --task`) and exactlyOne (`--a cannot also ...`)
  [
    /^--([\w-]+)(?:=.*)? cannot also be provided when using --([\w-]+)$/s,
    ([, other, flag], error) => {
      const pair = inOrderGiven([other, flag], error)
      // --json is --output-format json: any other format contradicts it.
      if (pair.includes('json') && pair.includes('output-format')) {
        const format = (error as {parse?: {output?: {flags?: Record<string, unknown>}}}).parse?.output?.flags?.['output-format']
        return `--json and --output-format ${String(format)} contradict each other (--json is --output-format json): give one of them`
      }

      return `--${pair[0]} and --${pair[1]} cannot be used together`
    },
  ],
  [/^All of the following must be provided when using --([\w-]+): (.+)$/, ([, flag, needed]) => `--${flag} needs ${needed.split(', ').join(' and ')}`],
  [/^One of the following must be provided when using --([\w-]+): (.+)$/, ([, flag, needed]) => `--${flag} needs one of ${needed}`],
  [/^Only the following can be provided when using --([\w-]+): (.+)$/, ([, flag, allowed]) => `--${flag} goes only with ${allowed}`],
  [/^Exactly one of the following must be provided: (.+)$/, ([, flags]) => `give exactly one of ${flags}`],
  [/^At least one of the following must be provided: (.+)$/, ([, flags]) => `give at least one of ${flags}`],
]

/** Two flag names in the order they were given on the command line (as oclif's raw tokens recorded them). */
function inOrderGiven(pair: [string, string], error: Error): [string, string] {
  const raw = (error as {parse?: {output?: {raw?: Array<{flag?: string; type: string}>}}}).parse?.output?.raw ?? []
  const at = (name: string) => {
    const index = raw.findIndex((token) => token.type === 'flag' && token.flag === name)
    return index === -1 ? Number.POSITIVE_INFINITY : index
  }

  return at(pair[1]) < at(pair[0]) ? [pair[1], pair[0]] : pair
}
