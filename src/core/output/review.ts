/**
 * `wave approve --interactive`: review a plan at a terminal. The plan is shown as rendered Markdown on
 * stderr, then a menu asks for a decision (Approve, Request changes, Reject) with the execution mode
 * beside it; Shift+Tab cycles the mode. stdout is left alone: the command still prints only the record.
 *
 * The caller decides whether a review may happen at all (`interactiveProblem`): no command ever waits
 * for keyboard input when stdin is not a TTY or CI is set.
 */
import {emitKeypressEvents, createInterface, clearScreenDown, moveCursor} from 'node:readline'
import type {ReadStream, WriteStream} from 'node:tty'

import {type Token, type Tokens, Lexer} from 'marked'

import type {DecisionKind} from '../plans/approval.js'
import {ExitCode, WaveError} from '../errors.js'
import {type ExecutionMode, nextMode} from '../policy/policy.js'

/** Ctrl+C (or Ctrl+D) during a review: nothing is recorded, and the command exits 130. */
export class ReviewAborted extends WaveError {
  constructor() {
    super('Review aborted: no decision recorded.', ExitCode.interrupted)
    this.name = 'ReviewAborted'
  }
}

/** Why an interactive review cannot happen here, or undefined when it can. */
export function interactiveProblem(
  input: {isTTY?: boolean} = process.stdin,
  output: {isTTY?: boolean} = process.stderr,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (env.CI) return 'CI is set'
  if (!input.isTTY) return 'stdin is not a terminal'
  if (!output.isTTY) return 'stderr is not a terminal'
  return undefined
}

/**
 * The next mode when Shift+Tab is pressed: the design's cycle default → acceptEdits → plan → default,
 * skipping plan (a plan is approved to be executed). bypassPermissions joins the cycle, after
 * acceptEdits, only when the review started in it (`--mode bypassPermissions`), as in Claude Code: it is
 * never offered to someone who did not ask for it on the command line.
 */
export function cycleMode(mode: ExecutionMode, initial: ExecutionMode): ExecutionMode {
  if (mode === 'acceptEdits' && initial === 'bypassPermissions') return 'bypassPermissions'
  if (mode === 'bypassPermissions') return 'default'
  return nextMode(mode, ['plan']) as ExecutionMode
}

/** What each execution mode lets the run do (the policy's table, in one line). */
export const MODE_SUMMARIES: Record<ExecutionMode, string> = {
  acceptEdits: 'edits allowed; Bash only where an --allow rule matches',
  bypassPermissions: 'every tool allowed inside the workspace',
  default: 'read-only; edits and commands only where an --allow rule matches',
}

export interface ReviewOutcome {
  decision: DecisionKind
  mode: ExecutionMode
  /** Typed feedback; undefined when none was given. */
  feedback?: string
}

export interface ReviewOptions {
  /** The plan's Markdown, exactly the text whose bytes the record binds. */
  planText: string
  /** Shown in the header: the plan's path as given. */
  planLabel: string
  /** The initial execution mode (`--mode`). */
  mode: ExecutionMode
  /** The run's permission rules, shown for context. */
  allow?: string[]
  /** What the plan was made for (the plan's state), shown above it. */
  task?: string
  /** A signal (SIGINT, SIGTERM from outside) ends the review: it rejects with the signal's reason. */
  signal?: AbortSignal
  input?: ReadStream
  output?: WriteStream
  env?: NodeJS.ProcessEnv
}

const CHOICES = [
  {decision: 'approved', hint: 'run it as planned', hotkey: 'a', label: 'Approve'},
  {decision: 'changes_requested', hint: 'ask for a revision, with feedback', hotkey: 'r', label: 'Request changes'},
  {decision: 'rejected', hint: 'decline it, optionally saying why', hotkey: 'x', label: 'Reject'},
] as const satisfies ReadonlyArray<{decision: DecisionKind; hint: string; hotkey: string; label: string}>

/** Shows the plan, then asks for a decision. Throws ReviewAborted on Ctrl+C; never writes a record. */
export async function reviewPlan(options: ReviewOptions): Promise<ReviewOutcome> {
  const input = options.input ?? (process.stdin as ReadStream)
  const output = options.output ?? (process.stderr as WriteStream)
  const style = styles(useColor(output, options.env ?? process.env))
  const width = Math.max(20, Math.min(output.columns || 80, 100))

  const rule = style.dim('─'.repeat(width))
  const task = options.task ? `${style.dim('Task:')} ${sanitize(options.task).replaceAll('\n', ' ')}\n` : ''
  output.write(`${rule}\n${style.dim(`Plan ${options.planLabel}`)}\n${task}\n${renderMarkdown(options.planText, {color: style.enabled, width})}\n${rule}\n`)
  if (options.allow?.length) output.write(`${style.dim('allow:')} ${options.allow.join(', ')}\n`)

  const io: Io = {input, output, signal: options.signal}
  let state: MenuState = {choice: 0, initialMode: options.mode, mode: options.mode}
  for (;;) {
    state = await pickChoice(io, style, state)
    const {decision} = CHOICES[state.choice]
    if (decision === 'approved') return {decision, mode: state.mode}
    if (decision === 'changes_requested') {
      const feedback = await askLine(io, `${style.bold('What should change?')} ${style.dim('(an empty line goes back)')} `)
      if (feedback) return {decision, feedback, mode: state.mode}
      continue
    }

    const feedback = await askLine(io, `${style.bold('Why reject it?')} ${style.dim('(optional, enter to skip)')} `)
    return {decision, feedback: feedback || undefined, mode: state.mode}
  }
}

interface Io {
  input: ReadStream
  output: WriteStream
  signal?: AbortSignal
}

/** Calls `onAbort` when the signal fires (at once if it has); returns the function that stops listening. */
function onAbort(signal: AbortSignal | undefined, abort: (reason: Error) => void): () => void {
  if (!signal) return () => {}
  const listener = () => abort(signal.reason instanceof Error ? signal.reason : new ReviewAborted())
  if (signal.aborted) {
    queueMicrotask(listener)
    return () => {}
  }

  signal.addEventListener('abort', listener, {once: true})
  return () => signal.removeEventListener('abort', listener)
}

interface MenuState {
  choice: number
  mode: ExecutionMode
  initialMode: ExecutionMode
}

/** The menu in raw mode: arrows, j/k, a/r/x or 1-3 choose, Shift+Tab cycles the mode, Enter confirms. */
function pickChoice({input, output, signal}: Io, style: Styles, start: MenuState): Promise<MenuState> {
  return new Promise((resolve, reject) => {
    let {choice, mode} = start
    let drawn = 0
    const draw = () => {
      if (drawn) {
        moveCursor(output, 0, -drawn)
        clearScreenDown(output)
      }

      const columns = output.columns || 80
      const lines = menuLines(choice, mode, style).map((line) => fit(line, columns - 1))
      output.write(lines.join('\n') + '\n')
      drawn = lines.length
    }

    let stopListening = () => {}
    // Should the process end some other way (a second signal forces an exit), the cursor comes back.
    const showCursor = () => output.write(SHOW_CURSOR)
    const finish = (error?: Error) => {
      stopListening()
      process.off('exit', showCursor)
      input.off('keypress', onKey)
      if (input.isTTY) input.setRawMode(false)
      input.pause()
      if (!error) {
        // The menu gives way to one line saying what was chosen.
        moveCursor(output, 0, -drawn)
        clearScreenDown(output)
        output.write(`${style.bold('Your decision:')} ${style.accent(CHOICES[choice].label)}  ${style.dim('mode:')} ${style.mode(mode, `‹${mode}›`)}\n`)
      }

      showCursor()
      if (error) reject(error)
      else resolve({...start, choice, mode})
    }

    const onKey = (text: string | undefined, key: {name?: string; ctrl?: boolean; shift?: boolean; meta?: boolean} = {}) => {
      if (key.ctrl && (key.name === 'c' || key.name === 'd')) return finish(new ReviewAborted())
      if (key.name === 'tab' && key.shift) mode = cycleMode(mode, start.initialMode)
      else if (key.name === 'up' || key.name === 'k' || (key.ctrl && key.name === 'p')) choice = (choice + CHOICES.length - 1) % CHOICES.length
      else if (key.name === 'down' || key.name === 'j' || (key.ctrl && key.name === 'n')) choice = (choice + 1) % CHOICES.length
      else if (key.name === 'return' || key.name === 'enter') return finish()
      else {
        const hotkey = CHOICES.findIndex((c, i) => !key.ctrl && !key.meta && (text === c.hotkey || text === String(i + 1)))
        if (hotkey === -1) return
        choice = hotkey
      }

      draw()
    }

    emitKeypressEvents(input)
    if (input.isTTY) input.setRawMode(true)
    output.write(HIDE_CURSOR)
    process.on('exit', showCursor)
    draw()
    input.on('keypress', onKey)
    input.resume()
    stopListening = onAbort(signal, (reason) => {
      output.write('\n')
      finish(reason)
    })
  })
}

function menuLines(choice: number, mode: ExecutionMode, style: Styles): string[] {
  const width = Math.max(...CHOICES.map((c) => c.label.length))
  const lines = [style.bold('Your decision:')]
  for (const [i, c] of CHOICES.entries()) {
    const active = i === choice
    const label = c.label.padEnd(width)
    lines.push(active ? `${style.accent('❯')} ${style.accent(style.bold(label))}  ${style.dim(c.hint)}` : `  ${label}  ${style.dim(c.hint)}`)
  }

  lines.push(
    '',
    `mode: ${style.mode(mode, `‹${mode}›`)}  ${style.dim('(shift+tab to cycle)')}`,
    `      ${style.dim(MODE_SUMMARIES[mode])}`,
    style.dim('↑/↓ or a/r/x to choose · enter to confirm · ctrl+c to abort'),
  )
  return lines
}

/** One line of input with line editing (readline); an empty answer is ''. Ctrl+C aborts. */
function askLine({input, output, signal}: Io, prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({input, output, terminal: true})
    let settled = false
    let stopListening = () => {}
    const settle = (fn: () => void) => {
      if (settled) return
      settled = true
      stopListening()
      rl.close()
      input.pause()
      fn()
    }

    rl.on('SIGINT', () => {
      output.write('\n')
      settle(() => reject(new ReviewAborted()))
    })
    // Ctrl+D on an empty line closes the interface: treat it as Ctrl+C.
    rl.on('close', () => {
      if (!settled) output.write('\n')
      settle(() => reject(new ReviewAborted()))
    })
    stopListening = onAbort(signal, (reason) => {
      output.write('\n')
      settle(() => reject(reason))
    })
    rl.question(prompt, (answer) => settle(() => resolve(answer.trim())))
  })
}

// ---------------------------------------------------------------------------------------------------
// Terminal styles

const HIDE_CURSOR = '\u001B[?25l'
const SHOW_CURSOR = '\u001B[?25h'

interface Styles {
  enabled: boolean
  bold(text: string): string
  dim(text: string): string
  accent(text: string): string
  mode(mode: ExecutionMode, text: string): string
}

/** Colour on a terminal unless NO_COLOR is set or TERM is dumb (FORCE_COLOR forces it). */
function useColor(output: {isTTY?: boolean}, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR) return false
  if (env.FORCE_COLOR && env.FORCE_COLOR !== '0') return true
  return Boolean(output.isTTY) && env.TERM !== 'dumb'
}

const sgr = (open: number, close: number) => (text: string) => `\u001B[${open}m${text}\u001B[${close}m`

const ANSI = {
  bold: sgr(1, 22),
  cyan: sgr(36, 39),
  dim: sgr(2, 22),
  green: sgr(32, 39),
  italic: sgr(3, 23),
  magenta: sgr(35, 39),
  red: sgr(31, 39),
  strike: sgr(9, 29),
  underline: sgr(4, 24),
  yellow: sgr(33, 39),
}

function styles(enabled: boolean): Styles {
  const plain = (text: string) => text
  if (!enabled) return {accent: plain, bold: plain, dim: plain, enabled, mode: (_mode, text) => text}
  const modeColour: Record<ExecutionMode, (text: string) => string> = {
    acceptEdits: ANSI.magenta,
    bypassPermissions: ANSI.red,
    default: ANSI.yellow,
  }
  return {accent: ANSI.cyan, bold: ANSI.bold, dim: ANSI.dim, enabled, mode: (mode, text) => ANSI.bold(modeColour[mode](text))}
}

// ---------------------------------------------------------------------------------------------------
// Markdown → terminal text

const ANSI_SEQUENCE = /\u001B\[[0-?]*[ -/]*[@-~]/g
// Control characters a plan must not smuggle to the terminal (escape sequences, bells, C1 codes).
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g

/** Text without the control characters that could drive the terminal. */
const sanitize = (text: string) => text.replaceAll(CONTROL, '')

/** Visible width of a line: ANSI sequences take no room. */
export const visibleLength = (text: string) => [...text.replaceAll(ANSI_SEQUENCE, '')].length

/** Cuts a line to `columns` visible characters (keeping its ANSI sequences balanced by a reset). */
function fit(line: string, columns: number): string {
  if (visibleLength(line) <= columns) return line
  let out = ''
  let seen = 0
  for (let i = 0; i < line.length && seen < columns - 1; ) {
    const match = /^\u001B\[[0-?]*[ -/]*[@-~]/.exec(line.slice(i))
    if (match) {
      out += match[0]
      i += match[0].length
      continue
    }

    const char = String.fromCodePoint(line.codePointAt(i)!)
    out += char
    i += char.length
    seen++
  }

  return out + '…\u001B[0m'
}

const ENTITIES: Record<string, string> = {amp: '&', apos: "'", gt: '>', lt: '<', nbsp: ' ', quot: '"'}
const decodeEntities = (text: string) =>
  text.replaceAll(/&(#x[\da-f]+|#\d+|[a-z]+);/gi, (whole, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10)
      return code > 31 && code < 0x11_0000 && !(code >= 0x7f && code <= 0x9f) ? String.fromCodePoint(code) : whole
    }

    return ENTITIES[name.toLowerCase()] ?? whole
  })

/** Word-wraps text holding ANSI sequences to `width`, prefixing the first line and indenting the rest. */
function wrap(text: string, width: number, first = '', rest = first): string[] {
  const out: string[] = []
  const prefix = () => (out.length === 0 ? first : rest)
  for (const paragraph of text.split('\n')) {
    let words: string[] = []
    let length = 0
    for (const word of paragraph.split(/ +/)) {
      if (!word) continue
      const wordLength = visibleLength(word)
      const room = Math.max(10, width - visibleLength(prefix()))
      if (words.length > 0 && length + 1 + wordLength > room) {
        out.push(prefix() + words.join(' '))
        words = [word]
        length = wordLength
      } else {
        length += (words.length > 0 ? 1 : 0) + wordLength
        words.push(word)
      }
    }

    out.push(prefix() + words.join(' '))
  }

  return out
}

export interface MarkdownRenderOptions {
  color: boolean
  /** Wrap width in columns. */
  width: number
}

/**
 * Renders Markdown (CommonMark + GFM, parsed by marked) as terminal text: headings emphasised (underlined
 * with = or - without colour), wrapped paragraphs, bullets and numbers, task boxes, indented code,
 * quotes, rules and aligned tables. Control characters in the source are dropped, so a plan cannot
 * drive the terminal.
 */
export function renderMarkdown(markdown: string, options: MarkdownRenderOptions): string {
  const tokens = new Lexer({gfm: true}).lex(sanitize(markdown.replaceAll('\r\n', '\n')))
  return renderBlocks(tokens, options).join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n'
}

function renderBlocks(tokens: Token[], options: MarkdownRenderOptions): string[] {
  const blocks: string[] = []
  for (const token of tokens) {
    const block = renderBlock(token, options)
    if (block !== undefined) blocks.push(block)
  }

  return blocks
}

function renderBlock(token: Token, options: MarkdownRenderOptions): string | undefined {
  const {color, width} = options
  const style = (fn: (text: string) => string, text: string) => (color ? fn(text) : text)
  switch (token.type) {
    case 'space':
    case 'def': {
      return undefined
    }

    case 'heading': {
      const {depth, tokens} = token as Tokens.Heading
      const text = renderInline(tokens, color)
      if (color) return (depth === 1 ? ANSI.bold(ANSI.underline(text)) : depth === 2 ? ANSI.bold(ANSI.cyan(text)) : ANSI.bold(text)) + '\n'
      const underline = depth === 1 ? '=' : depth === 2 ? '-' : ''
      return underline ? `${text}\n${underline.repeat(Math.min(visibleLength(text), width))}\n` : `${text}\n`
    }

    case 'paragraph': {
      return wrap(renderInline((token as Tokens.Paragraph).tokens, color), width).join('\n') + '\n'
    }

    case 'text': {
      const text = token as Tokens.Text
      return wrap(text.tokens ? renderInline(text.tokens, color) : decodeEntities(text.text), width).join('\n') + '\n'
    }

    case 'code': {
      const {lang, text} = token as Tokens.Code
      const label = lang ? style(ANSI.dim, `    ${lang}`) + '\n' : ''
      return label + text.split('\n').map((line) => style(ANSI.green, `    ${line}`)).join('\n') + '\n'
    }

    case 'blockquote': {
      const inner = renderBlocks((token as Tokens.Blockquote).tokens, {color, width: width - 2}).join('\n').trimEnd()
      const bar = style(ANSI.dim, '│ ')
      return inner.split('\n').map((line) => bar + (color ? ANSI.italic(line) : line)).join('\n') + '\n'
    }

    case 'list': {
      return renderList(token as Tokens.List, options) + '\n'
    }

    case 'hr': {
      return style(ANSI.dim, '─'.repeat(Math.min(width, 40))) + '\n'
    }

    case 'table': {
      return renderTable(token as Tokens.Table, options) + '\n'
    }

    case 'html': {
      return decodeEntities((token as Tokens.HTML).text).trimEnd() + '\n'
    }

    default: {
      const generic = token as Tokens.Generic
      if (generic.tokens) return renderBlocks(generic.tokens, options).join('\n')
      return typeof generic.raw === 'string' ? generic.raw : undefined
    }
  }
}

function renderList(list: Tokens.List, options: MarkdownRenderOptions): string {
  const start = typeof list.start === 'number' ? list.start : 1
  const markerWidth = list.ordered ? `${start + list.items.length - 1}.`.length : 1
  const lines: string[] = []
  for (const [i, item] of list.items.entries()) {
    let marker = (list.ordered ? `${start + i}.` : '•').padEnd(markerWidth) + ' '
    if (item.task) marker += item.checked ? '[x] ' : '[ ] '
    const indent = ' '.repeat(marker.length)
    const blocks = renderBlocks(
      item.tokens.filter((t) => t.type !== 'checkbox'),
      {...options, width: options.width - indent.length},
    )
    const body = blocks.map((b) => b.trimEnd()).join(item.loose ? '\n\n' : '\n')
    const bodyLines = body.split('\n')
    lines.push((options.color ? ANSI.bold(marker) : marker) + bodyLines[0], ...bodyLines.slice(1).map((line) => (line ? indent + line : line)))
    if (item.loose && i < list.items.length - 1) lines.push('')
  }

  return lines.join('\n')
}

function renderTable(table: Tokens.Table, options: MarkdownRenderOptions): string {
  const header = table.header.map((cell) => renderInline(cell.tokens, options.color))
  const rows = table.rows.map((row) => row.map((cell) => renderInline(cell.tokens, options.color)))
  const widths = header.map((h, i) => Math.max(visibleLength(h), ...rows.map((row) => visibleLength(row[i] ?? ''))))
  const pad = (text: string, i: number) => {
    const room = widths[i] - visibleLength(text)
    if (table.align[i] === 'right') return ' '.repeat(room) + text
    if (table.align[i] === 'center') return ' '.repeat(Math.floor(room / 2)) + text + ' '.repeat(Math.ceil(room / 2))
    return text + ' '.repeat(room)
  }

  const line = (cells: string[]) => cells.map((cell, i) => pad(cell, i)).join(' │ ').trimEnd()
  const head = line(header)
  const separator = widths.map((w) => '─'.repeat(w)).join('─┼─')
  return [options.color ? ANSI.bold(head) : head, separator, ...rows.map((row) => line(row))].join('\n')
}

function renderInline(tokens: Token[] | undefined, color: boolean): string {
  if (!tokens) return ''
  let out = ''
  for (const token of tokens) {
    switch (token.type) {
      case 'text': {
        const text = token as Tokens.Text
        out += text.tokens ? renderInline(text.tokens, color) : decodeEntities(text.text)
        break
      }

      case 'escape': {
        out += (token as Tokens.Escape).text
        break
      }

      case 'strong': {
        const inner = renderInline((token as Tokens.Strong).tokens, color)
        out += color ? ANSI.bold(inner) : inner
        break
      }

      case 'em': {
        const inner = renderInline((token as Tokens.Em).tokens, color)
        out += color ? ANSI.italic(inner) : inner
        break
      }

      case 'del': {
        const inner = renderInline((token as Tokens.Del).tokens, color)
        out += color ? ANSI.strike(inner) : `~${inner}~`
        break
      }

      case 'codespan': {
        const {text} = token as Tokens.Codespan
        out += color ? ANSI.cyan(text) : `\`${text}\``
        break
      }

      case 'link': {
        const link = token as Tokens.Link
        const inner = renderInline(link.tokens, color)
        const plainInner = inner.replaceAll(ANSI_SEQUENCE, '')
        const href = link.href.replace(/^mailto:/, '')
        out += color ? ANSI.underline(inner) : inner
        if (href && href !== plainInner) out += color ? ANSI.dim(` (${href})`) : ` (${href})`
        break
      }

      case 'image': {
        const image = token as Tokens.Image
        out += `[image: ${image.text || image.href}]`
        break
      }

      case 'br': {
        out += '\n'
        break
      }

      case 'html': {
        // Inline tags (<b>, <br>) are markup, not text: drop them, keep what they wrap.
        const {text} = token as Tokens.Tag
        if (/^<br\s*\/?>$/i.test(text)) out += '\n'
        else if (!/^<\/?[a-z][^>]*>$/i.test(text)) out += decodeEntities(text)
        break
      }

      default: {
        const generic = token as Tokens.Generic
        out += generic.tokens ? renderInline(generic.tokens, color) : typeof generic.text === 'string' ? generic.text : (generic.raw ?? '')
      }
    }
  }

  return out
}
