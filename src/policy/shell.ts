import {createRequire} from 'node:module'
import path from 'node:path'

import type {Node, Parser} from 'web-tree-sitter'

import {liftoffOnly} from '../base/wasm.js'

/**
 * What a Bash command is, as bash's own grammar (tree-sitter-bash) reads it: the simple commands it runs
 * and their words after quote removal. Rules match these words, never the command's text, so a quoted
 * `"a|b"` is one argument and an expansion can never pass for a literal.
 */
export interface ShellAnalysis {
  /** The simple commands in source order, each as its words after quote removal. */
  commands: string[][]
  /**
   * Whether the whole command is simple commands of literal words (plain, '…' or "…" without
   * expansions), joined by `;`, `&`, `&&`, `||`, `|`, `!`, `( )` or `{ }`, with no redirection but to
   * /dev/null or between descriptors, and no builtin that evaluates its words as code (`eval`, `trap`,
   * `let`, `test -v 'a[…]'` ...). Only then can an allow rule match.
   */
  literal: boolean
  /** Why the command is not literal, for the model. */
  problem?: string
  /**
   * The commands a deny rule looks at besides `commands`: those run through wrappers (`env`, `sudo`,
   * `timeout 5`, `xargs`, `find -exec` ...) and inside `bash -c` strings.
   */
  reached: string[][]
  /**
   * Commands run by a command that takes more of their words from its input (`xargs rm`): the words
   * written, to which the input may add any. Also in `reached`.
   */
  fed: string[][]
  /** Set when a command runs code the analysis cannot see (a shell reading a script, `env -S`); says what. */
  opaque?: string
}

/**
 * Whether every simple command of the line matches this one rule: `npm test:*` matches `npm test` and
 * `npm test -- --watch`; `npm test` matches only itself. The policy allows a line whose commands each
 * match some allow rule (`commandAllowed`).
 */
export function allowMatches(specifier: string, analysis: ShellAnalysis): boolean {
  if (!analysis.literal || analysis.commands.length === 0) return false
  return analysis.commands.every((words) => commandAllowed(specifier, words))
}

/** Whether one simple command (its words after quote removal) matches an allow rule's specifier. */
export function commandAllowed(specifier: string, words: string[]): boolean {
  return words.length > 0 && commandPattern(specifier).regex.test(words.join(SEPARATOR))
}

/**
 * A deny rule matches when any command the analysis found matches it, including those behind
 * wrappers and in `bash -c` strings, also when named by a path (`/bin/rm`), and a command fed by
 * `xargs` when its input could complete it into a match; a command that could not be fully analysed
 * matches every deny rule.
 */
export function denyMatches(specifier: string, analysis: ShellAnalysis): boolean {
  if (!analysis.literal || analysis.opaque !== undefined) return true
  const pattern = commandPattern(specifier)
  const spellings = (words: string[]) => {
    const base = words.length > 0 && words[0].includes('/') ? [path.posix.basename(words[0]), ...words.slice(1)] : undefined
    return base ? [words, base] : [words]
  }

  if (
    [...analysis.commands, ...analysis.reached].some((words) =>
      spellings(words).some((spelled) => words.length > 0 && pattern.regex.test(spelled.join(SEPARATOR))),
    )
  ) {
    return true
  }

  return analysis.fed.some((words) => spellings(words).some((spelled) => completable(pattern, spelled)))
}

// ------------------------------------------------------------------------------------------------ rules

/** Between a command's words when a rule's pattern is matched: no word holds it. */
const SEPARATOR = '\0'

/** A Bash rule's specifier as wave reads it. */
interface CommandPattern {
  /** Matches a command's words joined by SEPARATOR. */
  regex: RegExp
  /** The rule's words: each literal, or null where it holds a wildcard. */
  words: Array<string | null>
  /** Whether more words may follow (`:*`, or a last word ` *`). */
  open: boolean
}

const patterns = new Map<string, CommandPattern>()

/**
 * Reads a Bash rule's specifier as Claude Code documents it: words split at blanks, quotes removed
 * (`git commit -m "fix bug"` names three words and the argument `fix bug`); `:*` at the end, or a last
 * word `*` after a blank, lets any further words follow (`npm run test *` matches `npm run test` and
 * `npm run test --watch`, not `npm run testing`); an unquoted `*` elsewhere matches any characters, blanks
 * included (`*gcloud*`, `git * main`). Throws, saying why, for a specifier it cannot read: unbalanced
 * quotes, `:*` other than at the end, or shell syntax (a rule names one command's words).
 */
export function commandPattern(specifier: string): CommandPattern {
  const known = patterns.get(specifier)
  if (known) return known
  let body = specifier.trim()
  let open = false
  if (body.endsWith(':*')) {
    open = true
    body = body.slice(0, -2)
  }

  if (body.includes(':*')) throw new Error(':* may only end the rule (npm test:*)')
  const words = splitRule(body)
  const last = words.at(-1)
  if (words.length > 1 && last?.length === 1 && last[0] === WILDCARD) {
    words.pop()
    open = true
  }

  const source = words.map((parts) => parts.map((part) => (part === WILDCARD ? '[\\s\\S]*' : escapeRegExp(part))).join('')).join(SEPARATOR)
  const tail = open ? (words.length === 0 ? '[\\s\\S]*' : `(?:${SEPARATOR}[\\s\\S]*)?`) : ''
  const pattern: CommandPattern = {
    open,
    regex: new RegExp(`^${source}${tail}$`),
    words: words.map((parts) => (parts.includes(WILDCARD) ? null : parts.join(''))),
  }
  patterns.set(specifier, pattern)
  return pattern
}

const WILDCARD = Symbol('*')
type RulePart = string | typeof WILDCARD

/** Characters that in a command would be shell syntax, not a word: a rule holding one unquoted names no single command. */
const RULE_SYNTAX = new Set([';', '&', '|', '<', '>', '(', ')', '$', '`', '\n'])

/** A rule's words, each as literal parts and wildcards, quotes removed. */
function splitRule(body: string): RulePart[][] {
  const words: RulePart[][] = []
  let word: RulePart[] | undefined
  const push = (part: RulePart) => {
    word ??= []
    const previous = word.at(-1)
    if (typeof part === 'string' && typeof previous === 'string') word[word.length - 1] = previous + part
    else word.push(part)
  }

  for (let at = 0; at < body.length; at++) {
    const char = body[at]
    if (char === ' ' || char === '\t') {
      if (word) words.push(word)
      word = undefined
    } else if (char === "'") {
      const end = body.indexOf("'", at + 1)
      if (end === -1) throw new Error("an unbalanced ' quote")
      push(body.slice(at + 1, end))
      at = end
    } else if (char === '"') {
      let value = ''
      let end = at + 1
      for (; end < body.length && body[end] !== '"'; end++) {
        if (body[end] === '\\' && end + 1 < body.length && '$`"\\'.includes(body[end + 1])) end++
        value += body[end]
      }

      if (end >= body.length) throw new Error('an unbalanced " quote')
      push(value)
      at = end
    } else if (char === '\\') {
      if (at + 1 >= body.length) throw new Error('a backslash at the end')
      push(body[++at])
    } else if (char === '*') {
      push(WILDCARD)
    } else if (RULE_SYNTAX.has(char)) {
      throw new Error(
        `shell syntax (${JSON.stringify(char)}); a rule names one command's words, so write one rule per command, and quote a character meant literally`,
      )
    } else {
      push(char)
    }
  }

  if (word) words.push(word)
  return words
}

function escapeRegExp(text: string): string {
  return text.replaceAll(/[\\^$.*+?()[\]{}|]/g, String.raw`\$&`)
}

/**
 * Whether words that input will add to could match the rule: they match its first words, and where
 * the rule has a wildcard, what follows could be anything. Errs towards yes: it decides denials.
 */
function completable(pattern: CommandPattern, words: string[]): boolean {
  if (words.length > 0 && pattern.regex.test(words.join(SEPARATOR))) return true
  for (const [at, word] of words.entries()) {
    if (at >= pattern.words.length) return pattern.words.includes(null)
    const want = pattern.words[at]
    if (want === null) return true
    if (want !== word) return false
  }

  return true
}

// ------------------------------------------------------------------------------------------------ parsing

let parser: Promise<Parser> | undefined

/** Loaded on first use: the WebAssembly grammar costs ~15 ms, which sessions without Bash never pay. */
function shellParser(): Promise<Parser> {
  parser ??= loadParser().catch((error: unknown) => {
    parser = undefined
    throw error
  })
  return parser
}

async function loadParser(): Promise<Parser> {
  const {Language, Parser} = await import('web-tree-sitter').catch(() => {
    throw new Error("the web-tree-sitter package is missing from wave's install: reinstall wave-cli")
  })
  // The grammar run as Liftoff compiled it (base/wasm.ts): left to V8's default, its lexer (one large function,
  // hot from the first command) is recompiled by TurboFan on background threads, ~1.2 CPU-seconds a process,
  // more than all the rest of a session, for no gain on commands a line long (bench/RESULTS.md).
  liftoffOnly()
  await Parser.init()
  const language = await Language.load(grammarFile())
  const loaded = new Parser()
  loaded.setLanguage(language)
  return loaded
}

/**
 * The Bash grammar's WebAssembly: the build's copy (dist/grammar, through package.json's `imports`), which
 * is all an installed wave has of tree-sitter-bash, else the package's (running from src/, in the tests).
 */
function grammarFile(): string {
  const require = createRequire(import.meta.url)
  for (const specifier of ['#grammar/tree-sitter-bash.wasm', 'tree-sitter-bash/tree-sitter-bash.wasm']) {
    try {
      return require.resolve(specifier)
    } catch {}
  }
  throw new Error("dist/grammar/tree-sitter-bash.wasm is missing from wave's install: reinstall wave-cli")
}

/** Loads the shell grammar, or says in one line why it can't (`wave doctor`'s check). */
export async function checkShellGrammar(): Promise<string | undefined> {
  try {
    await shellParser()
    return undefined
  } catch (error) {
    return (error as Error).message.split('\n')[0]
  }
}

/** Nested `bash -c` strings deeper than this are not followed: such a command counts as opaque. */
const MAX_DEPTH = 3

export async function analyseShell(command: string): Promise<ShellAnalysis> {
  return analyse(command, 0)
}

async function analyse(command: string, depth: number): Promise<ShellAnalysis> {
  let shell: Parser
  try {
    shell = await shellParser()
  } catch (error) {
    // One line that reads on after "it has" in the policy's messages (an error's first line: no require stack).
    const reason = (error as Error).message.split('\n')[0]
    return {commands: [], fed: [], literal: false, problem: `no analysis: wave's shell grammar could not load (${reason})`, reached: []}
  }

  const tree = shell.parse(command)
  if (!tree) return {commands: [], fed: [], literal: false, problem: 'the shell parser gave no result', reached: []}
  const walker = new Walker(command)
  try {
    if (tree.rootNode.hasError) throw new NotLiteral('a syntax error, or syntax the shell grammar does not fully understand')
    walker.program(tree.rootNode)
  } catch (error) {
    if (!(error instanceof NotLiteral)) throw error
    return {commands: walker.commands, fed: [], literal: false, problem: error.message, reached: []}
  } finally {
    tree.delete()
  }

  const analysis: ShellAnalysis = {commands: walker.commands, fed: [], literal: true, reached: []}
  for (const words of walker.commands) {
    await reach(words, depth, analysis)
  }

  return analysis
}

class NotLiteral extends Error {}

/** Separators between the statements of a program, a subshell or a group. */
const SEPARATORS = new Set([';', '&', '\n'])
/** Words bash reads as syntax in a command's first position; the grammar should never leave them as a name. */
const RESERVED = new Set([
  '!',
  '[[',
  ']]',
  'case',
  'coproc',
  'do',
  'done',
  'elif',
  'else',
  'esac',
  'fi',
  'for',
  'function',
  'if',
  'in',
  'select',
  'then',
  'until',
  'while',
  '{',
  '}',
])
/** Characters that stand for themselves unquoted; anything else must be quoted or escaped to be literal. */
const PLAIN = /^[\w\-./:,+=@%^#]$/
const ASSIGNMENT = /^[A-Za-z_]\w*(\[|\+?=)/
/** Redirections that touch no file but the null device: `>/dev/null`, `2>>/dev/null`, `&>/dev/null`, `</dev/null`. */
const NULL_DEVICE_OPERATORS = new Set(['>', '>>', '&>', '&>>', '>|', '<'])

const DESCRIPTIONS: Record<string, string> = {
  ansi_c_string: "ANSI-C quoting ($'…')",
  arithmetic_expansion: 'arithmetic expansion ($((…)) or $[…])',
  brace_expression: 'brace expansion',
  c_style_for_statement: 'a for loop',
  case_statement: 'a case statement',
  command_substitution: 'command substitution ($(…) or backticks)',
  comment: 'a comment',
  declaration_command: 'a declaration (export, declare, local …)',
  expansion: 'a parameter expansion (${…})',
  for_statement: 'a for loop',
  function_definition: 'a function definition',
  heredoc_redirect: 'a here-document',
  herestring_redirect: 'a here-string',
  if_statement: 'an if statement',
  process_substitution: 'process substitution (<(…) or >(…))',
  simple_expansion: 'a parameter expansion ($name)',
  test_command: 'a [[ … ]] test',
  translated_string: 'locale quoting ($"…")',
  unset_command: 'unset',
  variable_assignment: 'a variable assignment or an environment prefix (NAME=value command)',
  while_statement: 'a loop',
}

function describe(node: Node): string {
  if (node.type === '$') return 'a $ the grammar does not read as literal (such as locale quoting $"…")'
  return DESCRIPTIONS[node.type] ?? `shell syntax wave does not analyse (${node.type})`
}

/**
 * Walks the syntax tree, accepting only what it positively recognises. Between the pieces it accepts,
 * the source may hold only blanks (and newlines between statements): whatever the grammar skipped over
 * bash might have read otherwise.
 */
class Walker {
  readonly commands: string[][] = []

  constructor(private readonly source: string) {}

  /** The whole command: the source before and after the root node is checked too. */
  program(root: Node): void {
    this.sequence(root, 0, root.childCount, 0, this.source.length)
  }

  /** Statements and their separators: the children [from, to) of a node, between the offsets start and end. */
  private sequence(node: Node, from: number, to: number, start: number, end: number): void {
    let at = start
    for (let index = from; index < to; index++) {
      const child = node.child(index)!
      this.accepted(child)
      this.gap(at, child.startIndex, true, at === start)
      if (child.isNamed || !SEPARATORS.has(child.type)) this.statement(child)
      at = child.endIndex
    }

    this.gap(at, end, true, true)
  }

  statement(node: Node): void {
    this.accepted(node)
    switch (node.type) {
      case 'command': {
        this.simpleCommand(node)
        return
      }

      case 'list':
      case 'pipeline': {
        this.joined(node, node.type === 'list' ? ['&&', '||'] : ['|', '|&'])
        return
      }

      case 'negated_command': {
        this.joined(node, ['!'])
        return
      }

      case 'subshell':
      case 'compound_statement': {
        const [open, close] = node.type === 'subshell' ? ['(', ')'] : ['{', '}']
        const count = node.childCount
        if (count < 2) throw new NotLiteral(describe(node))
        const first = node.child(0)!
        const last = node.child(count - 1)!
        if (first.type !== open || last.type !== close || node.startIndex !== first.startIndex || node.endIndex !== last.endIndex) {
          throw new NotLiteral(describe(node))
        }

        this.sequence(node, 1, count - 1, first.endIndex, last.startIndex)
        return
      }

      case 'redirected_statement': {
        if (!node.childForFieldName('body')) throw new NotLiteral('a redirection without a command')
        this.children(node, true, (child, field) => {
          if (field === 'body') this.statement(child)
          else if (field === 'redirect') this.redirect(child)
          else throw new NotLiteral(describe(child))
        })
        return
      }

      default: {
        throw new NotLiteral(describe(node))
      }
    }
  }

  /** Statements joined by operators: `a && b`, `a | b`, `! a`. */
  private joined(node: Node, operators: string[]): void {
    this.children(node, true, (child) => {
      if (child.isNamed) this.statement(child)
      else if (!operators.includes(child.type)) throw new NotLiteral(describe(child))
    })
  }

  private simpleCommand(node: Node): void {
    const words: string[] = []
    let named = false
    this.children(node, false, (child, field) => {
      if (field === 'redirect') {
        this.redirect(child)
      } else if (field === 'name' && child.type === 'command_name' && child.namedChildCount === 1 && child.childCount === 1) {
        const raw = this.source.slice(child.startIndex, child.endIndex)
        if (RESERVED.has(raw)) throw new NotLiteral(`the reserved word ${raw} where a command name was expected`)
        if (ASSIGNMENT.test(raw)) throw new NotLiteral(DESCRIPTIONS.variable_assignment)
        words.push(this.word(child.child(0)!))
        named = true
      } else if (field === 'argument' && named) {
        words.push(this.word(child))
      } else {
        throw new NotLiteral(describe(child))
      }
    })
    if (!named) throw new NotLiteral('a command without a name')
    const evaluated = evaluation(words)
    if (evaluated) throw new NotLiteral(evaluated)
    this.commands.push(words)
  }

  /** Only redirections that open no file: `N>&M`, `>&N`, and to or from /dev/null. */
  private redirect(node: Node): void {
    if (node.type !== 'file_redirect') throw new NotLiteral(describe(node))
    let operator: string | undefined
    let destination: Node | undefined
    let previous: Node | undefined
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index)!
      this.accepted(child)
      const field = node.fieldNameForChild(index)
      if (field === 'descriptor' && index === 0 && child.type === 'file_descriptor' && /^\d+$/.test(child.text)) {
        // `2>`: the digits touch the operator, or they would be an argument.
      } else if (!child.isNamed && operator === undefined && destination === undefined) {
        operator = child.type
        if (previous && previous.endIndex !== child.startIndex) throw new NotLiteral(`a redirection wave does not analyse (${node.text})`)
      } else if (field === 'destination' && operator !== undefined && destination === undefined) {
        destination = child
        this.gap(previous!.endIndex, child.startIndex, false)
      } else {
        throw new NotLiteral(`a redirection wave does not analyse (${node.text})`)
      }

      previous = child
    }

    if (operator === '>&' && destination?.type === 'number' && /^\d+$/.test(destination.text)) return
    if (operator && NULL_DEVICE_OPERATORS.has(operator) && destination && this.word(destination) === '/dev/null') return
    throw new NotLiteral(`a redirection to or from a file (${node.text}); only N>&M and /dev/null are allowed`)
  }

  /** A word after quote removal; anything that would expand is not literal. */
  private word(node: Node): string {
    this.accepted(node)
    switch (node.type) {
      case 'word':
      case 'number': {
        return unquoted(node.text)
      }

      case 'raw_string': {
        const text = node.text
        if (text.length < 2 || !text.startsWith("'") || !text.endsWith("'")) throw new NotLiteral(describe(node))
        return text.slice(1, -1)
      }

      case 'string': {
        for (const child of node.children) {
          if (child && child.type !== '"' && child.type !== 'string_content') throw new NotLiteral(describe(child))
        }

        const text = node.text
        if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) throw new NotLiteral(describe(node))
        return doubleQuoted(text.slice(1, -1))
      }

      case 'concatenation': {
        let value = ''
        let at = node.startIndex
        for (const child of node.children) {
          if (!child) continue
          // The parts of one word touch; a gap would make them two words, or something else.
          if (child.startIndex !== at) throw new NotLiteral(`a word the grammar splits oddly (${node.text})`)
          if (child.type === 'concatenation') throw new NotLiteral(describe(child))
          value += this.word(child)
          at = child.endIndex
        }

        if (at !== node.endIndex) throw new NotLiteral(`a word the grammar splits oddly (${node.text})`)
        return value
      }

      default: {
        throw new NotLiteral(describe(node))
      }
    }
  }

  /**
   * The children of a node, each with its field name, checking the source between them: blanks, plus
   * newlines where statements may continue on the next line.
   */
  private children(node: Node, newlines: boolean, visit: (child: Node, field: string | null) => void): void {
    let at = node.startIndex
    for (let index = 0; index < node.childCount; index++) {
      const child = node.child(index)!
      this.accepted(child)
      this.gap(at, child.startIndex, newlines, at === node.startIndex)
      visit(child, node.fieldNameForChild(index))
      at = child.endIndex
    }

    this.gap(at, node.endIndex, newlines, true)
  }

  /** A node the grammar marked as an error or as missing is never accepted. */
  private accepted(node: Node): void {
    if (node.isError || node.isMissing || node.type === 'ERROR') throw new NotLiteral('a syntax error, or syntax the shell grammar does not fully understand')
  }

  /**
   * The source between two accepted pieces. Bash removes backslash-newline before it splits words, so
   * a continuation with no blank beside it joins the pieces into one word, which the grammar saw as two.
   */
  private gap(from: number, to: number, newlines: boolean, edge = false): void {
    if (to < from) throw new NotLiteral('overlapping syntax')
    const text = this.source.slice(from, to)
    if (text === '') return
    const joined = text.replaceAll('\\\n', '')
    const blanks = newlines ? /^[ \t\n]*$/ : /^[ \t]*$/
    if (!blanks.test(joined)) throw new NotLiteral(`characters the grammar skipped (${JSON.stringify(text)})`)
    if (joined === '' && !edge) throw new NotLiteral('a line continuation that joins two words')
  }
}

/** An unquoted word: backslash escapes a character; globs, tildes, braces and the like are not literal. */
function unquoted(text: string): string {
  if (text.startsWith('#')) throw new NotLiteral(DESCRIPTIONS.comment)
  let value = ''
  for (let at = 0; at < text.length; at++) {
    const char = text[at]
    if (char === '\\') {
      const next = text[at + 1]
      if (next === undefined) throw new NotLiteral('a backslash at the end of the command')
      at++
      if (next !== '\n') value += next
    } else if (PLAIN.test(char) || (char >= '\u0080' && !/\s/u.test(char))) {
      value += char
    } else {
      throw new NotLiteral(`the unquoted character ${JSON.stringify(char)} (${unquotedMeaning(char)}) in ${text}; quote it to pass it literally`)
    }
  }

  return value
}

function unquotedMeaning(char: string): string {
  if ('*?['.includes(char)) return 'a glob'
  if (char === '{' || char === '}') return 'brace expansion'
  if (char === '~') return 'tilde expansion'
  if (char === '$' || char === '`') return 'an expansion'
  return 'shell syntax'
}

/** Inside double quotes a backslash escapes only $ ` " \ and newline; an unescaped $ or ` expands. */
function doubleQuoted(inner: string): string {
  let value = ''
  for (let at = 0; at < inner.length; at++) {
    const char = inner[at]
    if (char === '\\') {
      const next = inner[at + 1]
      if (next !== undefined && '$`"\\'.includes(next)) {
        value += next
        at++
      } else if (next === '\n') {
        at++
      } else {
        value += char
      }
    } else if (char === '$' || char === '`') {
      throw new NotLiteral(`${char === '$' ? 'an expansion' : 'command substitution'} inside double quotes`)
    } else {
      value += char
    }
  }

  return value
}

// ------------------------------------------------------------------------------------------------ builtins

/**
 * Builtins that run or define code given as literal words: a string to evaluate (`eval`, `trap`,
 * `mapfile -C`), a file (`source`), an alias, a hashed path, an arithmetic expression (`let`).
 */
const EVALUATING = new Set([
  '.',
  'alias',
  'bind',
  'compgen',
  'complete',
  'declare',
  'enable',
  'eval',
  'export',
  'fc',
  'hash',
  'jobs',
  'let',
  'local',
  'mapfile',
  'readarray',
  'readonly',
  'shopt',
  'source',
  'trap',
  'typeset',
  'unset',
])
/** Builtins that take a variable name: an array subscript in it (`a[$(…)]`) is evaluated as arithmetic, substitutions included. */
const NAMING = new Set(['getopts', 'read', 'test', '[', 'wait'])

/** Why a command of literal words still runs code it was given as words, or undefined. */
function evaluation(words: string[]): string | undefined {
  const name = words[0]
  if (EVALUATING.has(name)) return `${name}, which evaluates or defines code given as words`
  if (NAMING.has(name) && words.slice(1).some((word) => word.includes('[')))
    return `${name} with a [ in an argument, which bash may evaluate as an array subscript`
  if (name === 'printf' && words.slice(1).some((word) => word.startsWith('-v'))) return 'printf -v, which assigns to a variable name bash may evaluate'
  if (name === 'set' && words.slice(1).some((word) => /^[-+][A-Za-z]*H|history|histexpand/.test(word))) return 'set enabling history expansion'
  return undefined
}

// ------------------------------------------------------------------------------------------------ wrappers

/** Commands that run their arguments (after options) as another command. */
const WRAPPERS = new Set([
  'builtin',
  'busybox',
  'chroot',
  'command',
  'doas',
  'env',
  'exec',
  'flock',
  'ionice',
  'nice',
  'nohup',
  'setsid',
  'stdbuf',
  'strace',
  'sudo',
  'taskset',
  'time',
  'timeout',
  'unbuffer',
  'watch',
  'xargs',
  'parallel',
])
const SHELLS = new Set(['ash', 'bash', 'dash', 'ksh', 'mksh', 'sh', 'zsh'])
/** Wrappers that add words from their input to the command they run. */
const FEEDERS = new Set(['parallel', 'xargs'])
const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir'])

/**
 * What `words` runs besides itself, for deny rules. A wrapper's options are not parsed: every later
 * word is taken as a possible command, which may deny too much but never too little.
 */
async function reach(words: string[], depth: number, analysis: ShellAnalysis): Promise<void> {
  const seen = new Set<number>([0])
  const starts = [0]
  /** Starts behind xargs: their input adds words. */
  const fed = new Set<number>()
  const add = (start: number, input: boolean) => {
    if (start >= words.length) return
    if (input && !fed.has(start)) {
      fed.add(start)
      // `{}` (and -I's replacement) stands for input: what the rule sees ends there.
      const end = words.findIndex((word, at) => at > start && word.includes('{}'))
      analysis.fed.push(words.slice(start, end === -1 ? undefined : end))
    }

    if (seen.has(start)) return
    seen.add(start)
    starts.push(start)
    const reached = words.slice(start)
    const evaluated = evaluation(reached)
    if (evaluated) analysis.opaque ??= evaluated
    analysis.reached.push(reached)
  }

  for (let next = 0; next < starts.length; next++) {
    const start = starts[next]
    const name = path.posix.basename(words[start])
    const input = fed.has(start)
    if (name === 'command' && lookupOnly(words.slice(start + 1))) {
      // `command -v NAME` says where NAME is; it runs nothing.
    } else if (WRAPPERS.has(name)) {
      if (name === 'env' && words.slice(start + 1).some((word) => /^-[^-]*S|^--split-string/.test(word))) {
        analysis.opaque ??= 'env -S splits a string into a command'
      }

      for (let at = start + 1; at < words.length; at++) add(at, input || FEEDERS.has(name))
    } else if (SHELLS.has(name) && input) {
      analysis.opaque ??= `${name} run by xargs may take its script from the input`
    } else if (name === 'find') {
      for (let at = start + 1; at < words.length; at++) if (FIND_ACTIONS.has(words[at])) add(at + 1, input)
    } else if (SHELLS.has(name)) {
      await reachShell(name, words.slice(start + 1), depth, analysis)
    }
  }
}

/** Whether `command`'s options are -v or -V (it prints what a name is, and runs nothing) before the name. */
function lookupOnly(args: string[]): boolean {
  let lookup = false
  for (const arg of args) {
    if (arg === '--' || !arg.startsWith('-') || arg === '-') break
    if (!/^-[pvV]+$/.test(arg)) return false
    if (/[vV]/.test(arg)) lookup = true
  }

  return lookup
}

/** `bash -c '…'`: the string is parsed in turn; a shell reading a script or stdin is opaque. */
async function reachShell(name: string, args: string[], depth: number, analysis: ShellAnalysis): Promise<void> {
  let script: string | undefined
  let command = false
  for (let at = 0; at < args.length; at++) {
    const arg = args[at]
    if (arg === '--' || !/^[-+]/.test(arg)) {
      if (command) script = arg
      break
    }

    if (/^[-+][oO]$/.test(arg))
      at++ // `-o pipefail` takes a value
    else if (/^-[A-Za-z]*c[A-Za-z]*$/.test(arg)) command = true
  }

  if (script === undefined) {
    analysis.opaque ??= `${name} runs a script wave cannot see`
    return
  }

  if (depth + 1 > MAX_DEPTH) {
    analysis.opaque ??= `${name} strings nested too deep`
    return
  }

  const inner = await analyse(script, depth + 1)
  if (!inner.literal) {
    analysis.opaque ??= `the ${name} string has ${inner.problem}`
    return
  }

  if (inner.opaque) analysis.opaque ??= inner.opaque
  analysis.reached.push(...inner.commands, ...inner.reached)
}
