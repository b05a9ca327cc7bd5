/**
 * The `/wave` comment grammar. Comments are untrusted text and never reach a shell: arguments are split
 * here by a small tokenizer (quotes as a shell would read them, nothing expanded), and free text (a task,
 * feedback, a reason) is passed on as it was written.
 *
 *   /wave plan <task, may span lines>
 *   /wave approve [<plan>] [--sha256 HEX] [--mode M] [--allow RULE]... [--sandbox-network-allow HOST]...
 *   /wave resume [<plan>]
 *   /wave request-changes [<plan>] <feedback, may span lines>
 *   /wave reject [<plan>] [reason]
 *   /wave help
 */
import {networkHostProblem} from '../base/process/proxy.js'
import {ruleSchema} from '../policy/policy.js'
import {EXECUTION_MODES, type ExecutionMode} from '../policy/modes.js'

type WaveComment =
  | {command: 'plan'; task: string}
  | {command: 'approve'; plan?: string; sha256?: string; mode?: ExecutionMode; allow?: string[]; networkAllow?: string[]}
  /** Go on with a run that stopped at its checks (exit 7) or a limit (exit 5), under the same approval; or with a planning session stopped at a limit. */
  | {command: 'resume'; plan?: string}
  /** `text` may start with the plan's name: only the thread knows its plans, so the caller splits it (planNamed). */
  | {command: 'request-changes'; text: string}
  | {command: 'reject'; text: string}
  | {command: 'help'}

export const COMMAND_HELP = [
  '/wave plan <task>    (or the name of a plan here: its task again, on the current head)',
  '/wave approve [<plan>] [--sha256 <hex>] [--mode default|acceptEdits|bypassPermissions] [--allow RULE]... [--sandbox-network-allow HOST]...',
  '/wave resume [<plan>]',
  '/wave request-changes [<plan>] <what to change>',
  '/wave reject [<plan>] [reason]',
].join('\n')

/** A `/wave` comment that does not parse; its message is one line, for a reply. */
export class CommentSyntaxError extends Error {}

const PREFIX = /^\s*\/wave(?=\s|$)/

/** Whether a comment is addressed to wave: its body starts with `/wave` (then white space or nothing). */
export const isWaveComment = (body: string) => PREFIX.test(body)

/** The shortest prefix of a sha256 an approval may name: 48 bits, too many to forge a match by chance. */
const MIN_SHA_PREFIX = 12

export function parseWaveComment(body: string): WaveComment {
  const text = body.replaceAll('\r\n', '\n').replace(PREFIX, '')
  const match = /^[ \t]*(\S*)([\s\S]*)$/.exec(text)!
  const [, word, rest] = match
  switch (word) {
    case '':
    case 'help': {
      return {command: 'help'}
    }

    case 'plan': {
      const task = rest.trim()
      if (!task) throw new CommentSyntaxError('/wave plan needs a task: /wave plan <what to do>')
      return {command: 'plan', task}
    }

    case 'approve': {
      // Only the first line holds arguments: a reviewer may write more below it ("LGTM, thanks").
      return parseApprove(tokenize(rest.split('\n')[0]))
    }

    case 'resume': {
      const words = tokenize(rest.split('\n')[0])
      if (words.length > 1 || words[0]?.startsWith('--')) throw new CommentSyntaxError('/wave resume takes at most a plan name: /wave resume [<plan>]')
      return {command: 'resume', plan: words[0]}
    }

    case 'request-changes': {
      const feedback = rest.trim()
      if (!feedback) throw new CommentSyntaxError('/wave request-changes needs feedback: /wave request-changes <what to change>')
      return {command: 'request-changes', text: feedback}
    }

    case 'reject': {
      return {command: 'reject', text: rest.trim()}
    }

    default: {
      throw new CommentSyntaxError(`Unknown command /wave ${word.slice(0, 40)}: wave knows plan, approve, resume, request-changes, reject and help.`)
    }
  }
}

function parseApprove(tokens: string[]): WaveComment {
  const approve: Extract<WaveComment, {command: 'approve'}> = {command: 'approve'}
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]
    if (!token.startsWith('--')) {
      if (approve.plan !== undefined) throw new CommentSyntaxError(`Unexpected argument "${token}": /wave approve takes one plan name.`)
      approve.plan = token
      continue
    }

    const equals = token.indexOf('=')
    const flag = equals === -1 ? token : token.slice(0, equals)
    const value = equals === -1 ? tokens[++i] : token.slice(equals + 1)
    if (!['--allow', '--mode', '--sha256', '--sandbox-network-allow'].includes(flag)) {
      throw new CommentSyntaxError(`Unknown option ${flag.slice(0, 40)}: /wave approve takes --sha256, --mode, --allow and --sandbox-network-allow.`)
    }

    if (value === undefined || value === '') throw new CommentSyntaxError(`${flag} needs a value.`)
    if (flag === '--mode') {
      if (!(EXECUTION_MODES as readonly string[]).includes(value)) {
        throw new CommentSyntaxError(`--mode must be one of ${EXECUTION_MODES.join(', ')} (got "${value.slice(0, 40)}").`)
      }

      approve.mode = value as ExecutionMode
    } else if (flag === '--allow') {
      const rule = ruleSchema.safeParse(value)
      if (!rule.success) throw new CommentSyntaxError(`--allow ${value.slice(0, 80)}: ${rule.error.issues[0].message}`)
      approve.allow = [...(approve.allow ?? []), value]
    } else if (flag === '--sandbox-network-allow') {
      const problem = networkHostProblem(value)
      if (problem) throw new CommentSyntaxError(`--sandbox-network-allow ${problem}.`)
      approve.networkAllow = [...new Set([...(approve.networkAllow ?? []), value])]
    } else {
      if (!new RegExp(`^[0-9a-f]{${MIN_SHA_PREFIX},64}$`, 'i').test(value)) {
        throw new CommentSyntaxError(`--sha256 takes the plan's sha256 as wave shows it beside the plan (at least ${MIN_SHA_PREFIX} hex digits).`)
      }

      approve.sha256 = value.toLowerCase()
    }
  }

  return approve
}

/**
 * `text` split into a plan's name and the rest, when its first word names one of `plans`; else the whole
 * text. For request-changes and reject, whose free text may start with the name.
 */
export function planNamed(text: string, plans: string[]): {plan?: string; rest: string} {
  const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(text)
  if (match && plans.includes(match[1])) return {plan: match[1], rest: (match[2] ?? '').trim()}
  return {rest: text}
}

const OPENING_QUOTES: Record<string, string> = {'"': '"', "'": "'", '\u201C': '\u201D', '\u2018': '\u2019'}

/**
 * Splits one line into words the way a shell reads quoting, and does nothing else: no expansion, no
 * globbing, no operators. `"..."` keeps white space and takes `\"` and `\\` as escapes; `'...'` is
 * literal; typographic quotes (“...”, ‘...’, which phones and some editors put in comments) count as
 * quotes; a backslash outside quotes escapes the next character.
 */
export function tokenize(line: string): string[] {
  const tokens: string[] = []
  let current = ''
  let inToken = false
  let closing: string | undefined
  for (let i = 0; i < line.length; i++) {
    const char = line[i]
    if (closing !== undefined) {
      if (char === closing) closing = undefined
      else if (closing === '"' && char === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\')) current += line[++i]
      else current += char
    } else if (/\s/.test(char)) {
      if (inToken) tokens.push(current)
      current = ''
      inToken = false
    } else if (char in OPENING_QUOTES) {
      closing = OPENING_QUOTES[char]
      inToken = true
    } else if (char === '\\' && i + 1 < line.length) {
      current += line[++i]
      inToken = true
    } else {
      current += char
      inToken = true
    }
  }

  if (closing !== undefined) throw new CommentSyntaxError(`A quote is not closed (expected ${closing}).`)
  if (inToken) tokens.push(current)
  return tokens
}
