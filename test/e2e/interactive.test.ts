/**
 * `wave approve --interactive` in a real pseudo-terminal: keys in, the approval record's fields out.
 *
 * The terminal is node-pty (a devDependency, built from source by node-gyp at install), or tmux when
 * node-pty cannot load; with neither, the terminal tests are skipped with a message saying so.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {BIN_RUN, makeSandbox, runWave, type Sandbox, waveEnv, writePlanFile} from '../support/cli.js'
import {renderMarkdown, visibleLength} from '../../src/output/markdown.js'
import {cycleMode, interactiveProblem} from '../../src/output/interactive-review.js'

const PLAN = `# Plan: add an extra module

Add a **small** module. See \`src/app.ts\`.

1. Add src/extra.ts.
2. Run the **tests**.
`

const KEY = {
  ctrlC: '\u0003',
  down: '\u001B[B',
  enter: '\r',
  shiftTab: '\u001B[Z',
} as const

const ANSI = /\u001B(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007]*\u0007|[()][0-9A-B]|[=>78])/g
const plain = (text: string) => text.replaceAll(ANSI, '').replaceAll('\r', '')

// ---------------------------------------------------------------------------------------------------
// A terminal: node-pty, else tmux

interface Terminal {
  /**
   * What was shown, ANSI sequences removed: node-pty gives the whole output stream (redraws one after
   * another), tmux the screen and its history (redraws in place). Either way the last match is now.
   */
  screen(): string
  /** Bytes typed at the keyboard. */
  type(keys: string): void
  /** Sends a signal to wave itself. */
  signal(name: NodeJS.Signals): void
  /** Resolves with the exit code. */
  exited: Promise<number | null>
  dispose(): void
}

interface TerminalSpawn {
  args: string[]
  cwd: string
  env: NodeJS.ProcessEnv
}

type Backend = {name: string; spawn(options: TerminalSpawn): Terminal}

type NodePty = typeof import('node-pty')

async function nodePtyBackend(): Promise<Backend | string> {
  let pty: NodePty
  try {
    const loaded = (await import('node-pty')) as NodePty & {default?: NodePty}
    pty = loaded.default ?? loaded
    // Loading is lazy in places: make sure the native part really works.
    const probe = pty.spawn(process.execPath, ['-e', ''], {cols: 20, rows: 5})
    await new Promise<void>((resolve) => probe.onExit(() => resolve()))
  } catch (error) {
    return `node-pty cannot run here (${(error as Error).message.split('\n')[0]})`
  }

  return {
    name: 'node-pty',
    spawn({args, cwd, env}) {
      const child = pty.spawn(process.execPath, [BIN_RUN, ...args], {cols: 100, cwd, env: env as Record<string, string>, name: 'xterm-256color', rows: 40})
      let output = ''
      child.onData((data) => {
        output += data
      })
      const exited = new Promise<number | null>((resolve) => child.onExit(({exitCode}) => resolve(exitCode)))
      return {
        dispose: () => {
          try {
            child.kill()
          } catch {}
        },
        exited,
        screen: () => plain(output),
        signal: (name) => child.kill(name),
        type: (keys) => child.write(keys),
      }
    },
  }
}

function tmuxBackend(): Backend | string {
  if (spawnSync('tmux', ['-V']).status !== 0) return 'tmux is not installed'
  let count = 0
  return {
    name: 'tmux',
    spawn({args, cwd, env}) {
      const session = `wave-e2e-${process.pid}-${++count}`
      const exitFile = path.join(env.HOME ?? cwd, `.exit-${session}`)
      const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`
      const command = `${[process.execPath, BIN_RUN, ...args].map(quote).join(' ')}; echo $? > ${quote(exitFile)}; sleep 600`
      // A server of its own (-L) started with exactly this env, which the session's command inherits.
      const serverEnv = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<string, string>
      execFileSync('tmux', ['-L', session, '-f', '/dev/null', 'new-session', '-d', '-s', session, '-x', '100', '-y', '40', '-c', cwd, 'sh', '-c', command], {
        env: serverEnv,
      })
      const tmux = (...more: string[]) => execFileSync('tmux', ['-L', session, ...more], {encoding: 'utf8'})
      const exited = new Promise<number | null>((resolve) => {
        const poll = setInterval(() => {
          if (!existsSync(exitFile)) return
          const text = readFileSync(exitFile, 'utf8').trim()
          if (!text) return
          clearInterval(poll)
          resolve(Number(text))
        }, 50)
      })
      let last = ''
      return {
        dispose: () => {
          try {
            tmux('kill-server')
          } catch {}
        },
        exited,
        screen: () => {
          try {
            last = plain(tmux('capture-pane', '-p', '-J', '-S', '-', '-t', session))
          } catch {}
          return last
        },
        signal(name) {
          // The pane runs sh, whose child is wave.
          const shell = tmux('list-panes', '-t', session, '-F', '#{pane_pid}').trim()
          const child = execFileSync('ps', ['-o', 'pid=', '--ppid', shell], {encoding: 'utf8'}).trim().split(/\s+/)[0]
          process.kill(Number(child), name)
        },
        type: (keys) => tmux('send-keys', '-t', session, '-H', ...[...Buffer.from(keys)].map((b) => b.toString(16).padStart(2, '0'))),
      }
    },
  }
}

/** WAVE_TEST_TERMINAL=tmux runs these tests in tmux even where node-pty works. */
const backend: Backend | undefined = await (async () => {
  const pty = process.env.WAVE_TEST_TERMINAL === 'tmux' ? 'WAVE_TEST_TERMINAL=tmux' : await nodePtyBackend()
  if (typeof pty !== 'string') return pty
  const tmux = tmuxBackend()
  if (typeof tmux !== 'string') return tmux
  console.warn(`Skipping the terminal tests of wave approve --interactive: ${pty}, and ${tmux}.`)
  return undefined
})()

// ---------------------------------------------------------------------------------------------------

let sandbox: Sandbox
const terminals: Terminal[] = []
const ended = new WeakSet<Terminal>()

beforeEach(() => {
  sandbox = makeSandbox()
})

afterEach(() => {
  for (const terminal of terminals.splice(0)) terminal.dispose()
  sandbox.cleanup()
})

const writePlan = (content: string | Uint8Array = PLAN, name?: string) => writePlanFile(sandbox, content, name)

/**
 * Env that makes wave list every module the ESM loader resolves in `file` (the benchmark's tracer), to
 * check that the Markdown renderer loads only for a review.
 */
const TRACE_LOADS = fileURLToPath(new URL('../../bench/lib/trace-loads.js', import.meta.url))
const tracingLoads = (file: string) => ({NODE_OPTIONS: `--import ${TRACE_LOADS}`, WAVE_BENCH_LOADS_FILE: file})
// A package loads from node_modules, or from its build under dist/vendor/ (marked, marked-terminal: scripts/bundle.js).
const loadedPackages = (file: string) =>
  new Set([...readFileSync(file, 'utf8').matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)\/|\/dist\/vendor\/([^/]+?)\.c?js\b/g)].map((m) => m[1] ?? m[2]))

const recordPathOf = (planPath: string) => planPath.replace(/\.md$/, '.approval.json')
const readRecord = (planPath: string) => JSON.parse(readFileSync(recordPathOf(planPath), 'utf8'))

/** `wave ...args` at a terminal, with CI unset (unless env says otherwise). */
function waveAtTerminal(args: string[], env: Record<string, string | undefined> = {}): Terminal {
  const terminal = backend!.spawn({args, cwd: sandbox.repo, env: waveEnv({env: {CI: undefined, TERM: 'xterm-256color', ...env}, home: sandbox.home})})
  terminals.push(terminal)
  void terminal.exited.then(() => ended.add(terminal))
  return terminal
}

async function waitUntil(terminal: Terminal, what: string, seen: (screen: string) => boolean, timeoutMs = 15_000): Promise<void> {
  const started = Date.now()
  while (!seen(terminal.screen())) {
    if (ended.has(terminal) && !seen(terminal.screen())) throw new Error(`wave exited before showing ${what}; the screen:\n${terminal.screen()}`)
    if (Date.now() - started > timeoutMs) throw new Error(`Timed out waiting for ${what}; the screen:\n${terminal.screen()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const lastMatch = (screen: string, pattern: RegExp) => [...screen.matchAll(pattern)].at(-1)?.[1]
const after = (screen: string, marker: string) => (screen.includes(marker) ? screen.slice(screen.lastIndexOf(marker)) : '')

/** Waits until `text` has been shown. */
const waitFor = (terminal: Terminal, text: string) => waitUntil(terminal, JSON.stringify(text), (screen) => screen.includes(text))

/** Waits until the mode indicator shows `mode`. */
const waitForMode = (terminal: Terminal, mode: string) => waitUntil(terminal, `mode ${mode}`, (screen) => lastMatch(screen, /mode: ‹(\w+)›/g) === mode)

/** Waits until the menu's cursor is on `label`. */
const waitForChoice = (terminal: Terminal, label: string) =>
  waitUntil(terminal, `the cursor on ${label}`, (screen) => lastMatch(screen, /❯ (Approve|Request changes|Reject)/g) === label)

/** Exit code, failing the test (with the screen) if the process hangs. */
async function exitOf(terminal: Terminal, timeoutMs = 15_000): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`wave did not exit; the screen:\n${terminal.screen()}`)), timeoutMs)
  })
  try {
    return await Promise.race([terminal.exited, timeout])
  } finally {
    clearTimeout(timer)
  }
}

const MENU_READY = 'shift+tab to cycle'

describe.skipIf(!backend)(`wave approve --interactive at a terminal (${backend?.name ?? 'no terminal'})`, () => {
  it('shows the rendered plan and the mode, and Shift+Tab moves to the next mode before approving', async () => {
    const planPath = writePlan()
    const loads = path.join(sandbox.root, 'loads.txt')
    const terminal = waveAtTerminal(['approve', planPath, '--interactive', '--approver', 'reviewer'], tracingLoads(loads))
    await waitFor(terminal, MENU_READY)

    const screen = terminal.screen()
    expect(screen).toContain('Plan: add an extra module')
    expect(screen).not.toContain('# Plan: add an extra module') // rendered, not raw Markdown
    expect(screen).not.toContain('**')
    expect(screen).toMatch(/1\. Add src\/extra\.ts\./)
    expect(screen).toMatch(/2\. Run the tests\./) // inline Markdown in a list item is rendered too
    expect(loadedPackages(loads)).toContain('marked-terminal')
    expect(screen).toMatch(/❯ Approve/)
    expect(screen).toContain('mode: ‹acceptEdits›  (shift+tab to cycle)')

    terminal.type(KEY.shiftTab)
    await waitForMode(terminal, 'default')
    terminal.type(KEY.enter)

    expect(await exitOf(terminal)).toBe(0)
    expect(terminal.screen()).toContain(recordPathOf(planPath))
    const record = readRecord(planPath)
    expect(record).toMatchObject({approver: 'reviewer', decision: 'approved', feedback: null, mode: 'default', plan: {name: 'brave-otter'}})
    expect(record.history).toHaveLength(1)
  })

  it('skips plan in the cycle: from default, Shift+Tab twice comes back to default; --mode sets the start', async () => {
    const planPath = writePlan()
    const terminal = waveAtTerminal(['approve', planPath, '-i', '--mode', 'default'])
    await waitFor(terminal, MENU_READY)
    expect(terminal.screen()).toContain('mode: ‹default›')

    terminal.type(KEY.shiftTab)
    await waitForMode(terminal, 'acceptEdits')
    terminal.type(KEY.shiftTab)
    await waitForMode(terminal, 'default')
    expect(terminal.screen()).not.toContain('‹plan›')
    terminal.type(KEY.enter)

    expect(await exitOf(terminal)).toBe(0)
    expect(readRecord(planPath)).toMatchObject({decision: 'approved', mode: 'default'})
  })

  it('records Request changes with the typed feedback', async () => {
    const planPath = writePlan()
    const terminal = waveAtTerminal(['approve', planPath, '-i'])
    await waitFor(terminal, MENU_READY)
    terminal.type(KEY.down)
    await waitForChoice(terminal, 'Request changes')
    terminal.type(KEY.enter)
    await waitFor(terminal, 'What should change?')
    terminal.type('Keep the public API unchanged')
    await waitFor(terminal, 'Keep the public API unchanged')
    terminal.type(KEY.enter)

    expect(await exitOf(terminal)).toBe(0)
    const record = readRecord(planPath)
    expect(record).toMatchObject({decision: 'changes_requested', feedback: 'Keep the public API unchanged', mode: 'acceptEdits'})
    expect(record.history[0]).toMatchObject({decision: 'changes_requested', feedback: 'Keep the public API unchanged'})
  })

  it('records Reject with no feedback when the feedback line is left empty', async () => {
    const planPath = writePlan()
    const terminal = waveAtTerminal(['approve', planPath, '-i'])
    await waitFor(terminal, MENU_READY)
    terminal.type('x')
    await waitForChoice(terminal, 'Reject')
    terminal.type(KEY.enter)
    await waitFor(terminal, 'Why reject it?')
    terminal.type(KEY.enter)

    expect(await exitOf(terminal)).toBe(0)
    expect(readRecord(planPath)).toMatchObject({decision: 'rejected', feedback: null, mode: 'acceptEdits'})
  })

  it('aborts on Ctrl+C with exit 130 and writes no record, at the menu and at the feedback prompt', async () => {
    const planPath = writePlan()
    const atMenu = waveAtTerminal(['approve', planPath, '-i'])
    await waitFor(atMenu, MENU_READY)
    atMenu.type(KEY.ctrlC)
    expect(await exitOf(atMenu)).toBe(130)
    expect(atMenu.screen()).toContain('no decision recorded')
    expect(existsSync(recordPathOf(planPath))).toBe(false)

    const atPrompt = waveAtTerminal(['approve', planPath, '-i'])
    await waitFor(atPrompt, MENU_READY)
    atPrompt.type('r')
    await waitForChoice(atPrompt, 'Request changes')
    atPrompt.type(KEY.enter)
    await waitFor(atPrompt, 'What should change?')
    atPrompt.type('half a thought')
    await waitFor(atPrompt, 'half a thought')
    atPrompt.type(KEY.ctrlC)
    expect(await exitOf(atPrompt)).toBe(130)
    expect(existsSync(recordPathOf(planPath))).toBe(false)
  })

  it('ends the review on SIGTERM from outside (exit 143), writing no record', async () => {
    const planPath = writePlan()
    const terminal = waveAtTerminal(['approve', planPath, '-i'])
    await waitFor(terminal, MENU_READY)
    terminal.signal('SIGTERM')
    expect(await exitOf(terminal)).toBe(143)
    expect(existsSync(recordPathOf(planPath))).toBe(false)
  })

  it('goes back to the menu when the change request is left empty', async () => {
    const planPath = writePlan()
    const terminal = waveAtTerminal(['approve', planPath, '-i'])
    await waitFor(terminal, MENU_READY)
    terminal.type('r')
    await waitForChoice(terminal, 'Request changes')
    terminal.type(KEY.enter)
    await waitFor(terminal, 'What should change?')
    terminal.type(KEY.enter)
    await waitUntil(terminal, 'the menu again', (screen) => after(screen, 'What should change?').includes(MENU_READY))
    terminal.type('a')
    await waitForChoice(terminal, 'Approve')
    terminal.type(KEY.enter)

    expect(await exitOf(terminal)).toBe(0)
    expect(readRecord(planPath)).toMatchObject({decision: 'approved', feedback: null})
  })

  it('refuses --interactive at a terminal when CI is set (exit 2), without waiting for keys', async () => {
    const planPath = writePlan()
    const terminal = waveAtTerminal(['approve', planPath, '-i'], {CI: 'true'})
    expect(await exitOf(terminal)).toBe(2)
    expect(terminal.screen()).toMatch(/--interactive needs someone at a terminal, but CI is set/)
    expect(existsSync(recordPathOf(planPath))).toBe(false)
  })

  it('keeps plain wave approve non-interactive at a terminal: it approves without a key', async () => {
    const planPath = writePlan()
    const terminal = waveAtTerminal(['approve', planPath])
    expect(await exitOf(terminal)).toBe(0)
    expect(terminal.screen()).not.toContain(MENU_READY)
    expect(readRecord(planPath)).toMatchObject({decision: 'approved', mode: 'acceptEdits'})
  })
})

describe('wave approve --interactive without a terminal', () => {
  it('loads no Markdown renderer for a decision without a review', async () => {
    const planPath = writePlan()
    const loads = path.join(sandbox.root, 'loads.txt')
    const result = await runWave(['approve', planPath], {cwd: sandbox.repo, env: tracingLoads(loads), home: sandbox.home})
    expect(result.code).toBe(0)
    expect(readFileSync(loads, 'utf8')).toContain('/dist/commands/approve.js') // the tracer saw the command load
    const packages = loadedPackages(loads)
    // (marked itself reads the plan's Scope and Verification sections for the record: only its terminal renderer waits for a review.)
    expect(packages).not.toContain('marked-terminal')
  })

  it('is a usage error (exit 2) when stdin is not a TTY, and writes nothing', async () => {
    const planPath = writePlan()
    const result = await runWave(['approve', planPath, '-i'], {cwd: sandbox.repo, env: {CI: undefined}, home: sandbox.home})
    expect(result.code).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/^Error: --interactive needs someone at a terminal, but stdin is not a terminal\.$/m)
    expect(existsSync(recordPathOf(planPath))).toBe(false)
  })

  it('is a usage error (exit 2) when CI is set, even with input on stdin', async () => {
    const planPath = writePlan()
    const result = await runWave(['approve', planPath, '--interactive'], {cwd: sandbox.repo, home: sandbox.home, input: '\r'})
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('CI is set')
    expect(existsSync(recordPathOf(planPath))).toBe(false)
  })

  it.each([[['--reject']], [['--request-changes', 'more tests']], [['--feedback', 'nice']]])('refuses -i with %j (exit 2)', async (flags) => {
    const planPath = writePlan()
    const result = await runWave(['approve', planPath, '-i', ...flags], {cwd: sandbox.repo, env: {CI: undefined}, home: sandbox.home})
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^Error: --interactive cannot be combined with --(reject|request-changes|feedback): /m)
    expect(existsSync(recordPathOf(planPath))).toBe(false)
  })
})

describe('review helpers', () => {
  it('cycles default → acceptEdits → default (plan skipped); bypassPermissions only when it was the start', () => {
    expect(cycleMode('default', 'acceptEdits')).toBe('acceptEdits')
    expect(cycleMode('acceptEdits', 'acceptEdits')).toBe('default')
    expect(cycleMode('acceptEdits', 'bypassPermissions')).toBe('bypassPermissions')
    expect(cycleMode('bypassPermissions', 'bypassPermissions')).toBe('default')
  })

  it('says why a review cannot happen', () => {
    expect(interactiveProblem({isTTY: true}, {isTTY: true}, {})).toBeUndefined()
    expect(interactiveProblem({isTTY: true}, {isTTY: true}, {CI: 'true'})).toBe('CI is set')
    expect(interactiveProblem({isTTY: false}, {isTTY: true}, {})).toBe('stdin is not a terminal')
    expect(interactiveProblem({isTTY: true}, {}, {})).toBe('stderr is not a terminal')
  })

  it('renders Markdown as terminal text, and drops control characters a plan could use on the terminal', async () => {
    const text = await renderMarkdown('# Title\n\nSome **bold** `code` and [a link](https://example.com).\n\n- one\n- [x] two\n\n\u001B[2Jcleared? \u0007\n', {
      color: false,
      width: 80,
    })
    expect(text).toBe('Title\n=====\n\nSome bold `code` and a link (https://example.com).\n\n• one\n• [x] two\n\n[2Jcleared?\n')
    const coloured = await renderMarkdown('## Steps\n\nA **bold** word.\n', {color: true, width: 80})
    expect(coloured).toContain('\u001B[1mbold\u001B[22m')
    expect(coloured).toContain('Steps')
  })

  it('renders lists with their inline Markdown, task boxes once, and nested lists under their item', async () => {
    const text = await renderMarkdown('1. Edit **src/a.ts** and `b.ts`\n2. Then:\n   - [x] done &amp; dusted\n   - [ ] *not yet*\n', {color: false, width: 80})
    expect(text).toBe('1. Edit src/a.ts and `b.ts`\n2. Then:\n   • [x] done & dusted\n   • [ ] not yet\n')
  })

  it('keeps paragraphs, list items and quotes within the width, and shows code, tables and links', async () => {
    const long = 'The renderer wraps this sentence, which is much longer than the width it is given, at word boundaries.'
    const markdown = `# Heading\n\n${long}\n\n- ${long}\n  - ${long}\n\n> ${long}\n\n\`\`\`ts\nconst x = 1\n\`\`\`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nSee [the docs](https://example.com/docs).\n`
    for (const color of [false, true]) {
      const text = await renderMarkdown(markdown, {color, width: 40})
      const lines = text.split('\n')
      expect(Math.max(...lines.map((line) => visibleLength(line)))).toBeLessThanOrEqual(40)
      const plainText = text.replaceAll(/\u001B\[[0-?]*[ -/]*[@-~]/g, '')
      expect(plainText.replaceAll(/\s+/g, ' ')).toContain(
        'The renderer wraps this sentence, which is much longer than the width it is given, at word boundaries.',
      )
      expect(plainText).toMatch(/^ {4}const x = 1$/m)
      expect(plainText).toMatch(/│ a │ b │/)
      expect(plainText).toContain('the docs (https://example.com/docs)')
      expect(plainText).not.toMatch(/[#*`>]/)
    }
  })
})
