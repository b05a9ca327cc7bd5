/**
 * `wave approve --interactive`: review a plan at a terminal. The plan is shown as rendered Markdown
 * (markdown.ts) on stderr, then a menu asks for a decision (Approve, Request changes, Reject) with the
 * execution mode beside it; Shift+Tab cycles the mode. stdout is left alone: the command still prints
 * only the record.
 *
 * The caller decides whether a review may happen at all (`interactiveProblem`): no command ever waits
 * for keyboard input when stdin is not a TTY or CI is set.
 */
import {emitKeypressEvents, createInterface, clearScreenDown, moveCursor} from 'node:readline'
import type {ReadStream, WriteStream} from 'node:tty'

import type {Decision} from '../plans/lifecycle.js'
import type {RevisionDiff} from '../plans/revisions.js'
import {ExitCode, WaveError} from '../base/errors.js'
import {MODE_DESCRIPTIONS} from '../policy/modes.js'
import {type ExecutionMode, nextMode} from '../policy/policy.js'
import {renderMarkdown, visibleLength, withoutControls} from './markdown.js'

/** Ctrl+C (or Ctrl+D) during a review: nothing is recorded, and the command exits 130. */
class ReviewAborted extends WaveError {
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

export interface TerminalDecision {
  decision: Decision
  mode: ExecutionMode
  /** Typed feedback; undefined when none was given. */
  feedback?: string
}

interface InteractiveReviewOptions {
  /** The plan's Markdown, exactly the text whose bytes the record binds. */
  planText: string
  /** Shown in the header: the plan's path as given. */
  planLabel: string
  /** The initial execution mode (`--mode`). */
  mode: ExecutionMode
  /** The run's permission rules, shown for context. */
  allow?: string[]
  /** How the run's commands will be contained, shown beside the rules ("sandbox OFF ..." above all). */
  sandbox?: string
  /** What the plan was made for (the plan's state), shown above it. */
  task?: string
  /** The scope and checks the approval will bind (a Markdown table), shown beside the plan. */
  contract?: string
  /** What changed since the reviewer's last decision on this plan, shown before the plan. */
  changes?: RevisionDiff
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
] as const satisfies ReadonlyArray<{decision: Decision; hint: string; hotkey: string; label: string}>

/** Shows the plan, then asks for a decision. Throws ReviewAborted on Ctrl+C; never writes a record. */
export async function reviewPlan(options: InteractiveReviewOptions): Promise<TerminalDecision> {
  const input = options.input ?? (process.stdin as ReadStream)
  const output = options.output ?? (process.stderr as WriteStream)
  const style = styles(useColor(output, options.env ?? process.env))
  const width = Math.max(20, Math.min(output.columns || 80, 100))

  const rule = style.dim('─'.repeat(width))
  const task = options.task ? `${style.dim('Task:')} ${withoutControls(options.task).replaceAll('\n', ' ')}\n` : ''
  const plan = await renderMarkdown(options.planText, {color: style.enabled, width})
  output.write(`${rule}\n${style.dim(`Plan ${options.planLabel}`)}\n${task}\n${plan}\n${rule}\n`)
  if (options.changes) output.write(`${changesBlock(options.changes, style)}${rule}\n`)
  if (options.contract) output.write((await renderMarkdown(options.contract, {color: style.enabled, width})) + '\n')
  if (options.allow?.length) output.write(`${style.dim('allow:')} ${options.allow.join(', ')}\n`)
  if (options.sandbox) output.write(`${style.dim('sandbox:')} ${options.sandbox}\n`)

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

/** "changed since your last review": the unified diff, added lines green and removed ones red where color is on. */
function changesBlock(changes: RevisionDiff, style: Styles): string {
  const lines = withoutControls(changes.patch).trimEnd().split('\n').slice(2)
  const painted = lines.map((line) =>
    line.startsWith('+') ? style.added(line) : line.startsWith('-') ? style.removed(line) : line.startsWith('@@') ? style.dim(line) : line,
  )
  const heading = style.bold(`Changed since your last review (${changes.from.label} → ${changes.to.label}: +${changes.added} −${changes.removed})`)
  return `${heading}\n${painted.join('\n')}\n`
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
      const lines = menuLines(choice, mode, style).map((line) => clip(line, columns - 1))
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
    `      ${style.dim(MODE_DESCRIPTIONS[mode].summary)}`,
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
  added(text: string): string
  removed(text: string): string
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
  magenta: sgr(35, 39),
  red: sgr(31, 39),
  yellow: sgr(33, 39),
}

function styles(enabled: boolean): Styles {
  const plain = (text: string) => text
  if (!enabled) return {accent: plain, added: plain, bold: plain, dim: plain, enabled, mode: (_mode, text) => text, removed: plain}
  const modeColour: Record<ExecutionMode, (text: string) => string> = {
    acceptEdits: ANSI.magenta,
    bypassPermissions: ANSI.red,
    default: ANSI.yellow,
  }
  return {
    accent: ANSI.cyan,
    added: ANSI.green,
    bold: ANSI.bold,
    dim: ANSI.dim,
    enabled,
    mode: (mode, text) => ANSI.bold(modeColour[mode](text)),
    removed: ANSI.red,
  }
}

/** Cuts a line to `columns` visible characters (keeping its ANSI sequences balanced by a reset). */
function clip(line: string, columns: number): string {
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
