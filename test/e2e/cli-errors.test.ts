/**
 * Issue 27, "no rough edges", at the command line: oclif's parser messages replaced by wave's own one line
 * (exit 2, no stack unless DEBUG, the JSON error object under --json); "did you mean" for a mistyped
 * command, flag, flag value or plan name; conflicting flags refused with both named, before any model
 * request or change to a file; help wrapped once, by the width of the output.
 */
import {mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {makeSandbox, PROJECT_ROOT, runWave, type Sandbox, snapshotTree} from '../support/cli.js'
import {type MessagesServer, planPathIn, reply, startMessagesServer, toolUse} from '../support/messages-server.js'

/** Each row gets its own sandbox and server, so the rows (which only spawn wave and wait) run concurrently. */
async function withSandbox<T>(body: (sandbox: Sandbox, server: MessagesServer) => Promise<T>): Promise<T> {
  const sandbox = makeSandbox()
  const server = await startMessagesServer()
  try {
    mkdirSync(sandbox.plansDir, {recursive: true})
    // A plan, and a plan whose planning session failed before writing it (its state alone): both are named.
    writeFileSync(path.join(sandbox.plansDir, 'brave-otter.md'), '# Plan\n\n1. Do the thing.\n')
    writeFileSync(path.join(sandbox.plansDir, 'calm-river.state.json'), '{}')
    return await body(sandbox, server)
  } finally {
    await server.close()
    sandbox.cleanup()
  }
}

interface Row {
  args: (sandbox: Sandbox) => string[]
  /** The one error line, after `Error: `. */
  line: (sandbox: Sandbox) => string
  /** The hint line after it, if any. */
  hint?: RegExp
  env?: Record<string, string>
}

const row = (args: string[], line: string, hint?: RegExp): Row => ({args: () => args, hint, line: () => line})

/** oclif's own errors of the command line, each as the one line wave gives instead. */
const PARSER_ROWS: Array<[string, Row]> = [
  ['a missing required flag', row(['plans', 'prune'], 'wave plans prune: --older-than is required. See wave plans prune --help.')],
  ['a missing argument', row(['approve'], 'wave approve: missing the plan argument. See wave approve --help.')],
  ['a missing argument of a topic command', row(['plans', 'rm'], 'wave plans rm: missing the plan argument. See wave plans rm --help.')],
  ['an extra argument', row(['run', 'a', 'b'], 'wave run: unexpected argument b (it takes one argument, plan). See wave run --help.')],
  [
    'words where the task belongs',
    row(
      ['plan', 'fix', 'the', 'bug'],
      'wave plan: unexpected arguments fix, the, bug (it takes no arguments; the task goes in --task "..."). See wave plan --help.',
    ),
  ],
  ['an argument to a command taking none', row(['tools', 'extra'], 'wave tools: unexpected argument extra (it takes no arguments). See wave tools --help.')],
  ['a flag without its value', row(['plan', '--task'], 'wave plan: --task needs a value. See wave plan --help.')],
  ['a flag given twice', row(['plan', '--task', 'x', '--task', 'y'], 'wave plan: --task is given more than once; it takes one value. See wave plan --help.')],
  [
    'a value below the minimum',
    row(
      ['plan', '--task', 'x', '--max-turns', '0'],
      'wave plan: --max-turns: expected an integer greater than or equal to 1 but received: 0. See wave plan --help.',
    ),
  ],
  [
    "a value wave's own flag parser refuses",
    row(
      ['plan', '--task', 'x', '--max-budget-usd', '-1'],
      'wave plan: --max-budget-usd: expected a positive number of US dollars but received: -1. See wave plan --help.',
    ),
  ],
  ['a flag needing another', row(['plan', '--feedback', 'x'], 'wave plan: --feedback needs --revise. See wave plan --help.')],
  ['an unknown short flag', row(['plan', '-x'], 'wave plan: unknown flag -x. See wave plan --help.')],
  ['an unknown command, nothing close', row(['nonsense'], 'wave: unknown command nonsense. See wave --help.')],
  ['a flag another command has', row(['plans', '--output-format', 'text'], 'wave plans: unknown flag --output-format. See wave plans --help.')],
]

/** A mistyped name, and what wave suggests. */
const SUGGESTION_ROWS: Array<[string, Row]> = [
  ['a mistyped command', row(['plann'], 'wave: unknown command plann (did you mean plan or plans?). See wave --help.')],
  ['a mistyped command with arguments', row(['aprove', 'brave-otter'], 'wave: unknown command aprove (did you mean approve?). See wave --help.')],
  ['a mistyped topic command', row(['plugins', 'instal', 'x'], 'wave: unknown command plugins instal (did you mean plugins install?). See wave --help.')],
  ['a command mistyped for a topic command', row(['plan', 'rm', 'brave-otter'], 'wave: unknown command plan rm (did you mean plans rm?). See wave --help.')],
  ['help for a mistyped command', row(['plann', '--help'], 'wave: unknown command plann (did you mean plan or plans?). See wave --help.')],
  ['wave help for a mistyped command', row(['help', 'aprove'], 'wave: unknown command aprove (did you mean approve?). See wave --help.')],
  [
    'help for a mistyped topic command',
    row(['plugins', 'instal', '-h'], 'wave: unknown command plugins instal (did you mean plugins install?). See wave --help.'),
  ],
  ['a mistyped flag', row(['plan', '--tsk', 'x'], 'wave plan: unknown flag --tsk (did you mean --task?). See wave plan --help.')],
  ['a mistyped flag with its value', row(['plan', '--tsk=x'], 'wave plan: unknown flag --tsk (did you mean --task?). See wave plan --help.')],
  [
    'a mistyped negated flag',
    row(['approve', 'brave-otter', '--no-verfy'], 'wave approve: unknown flag --no-verfy (did you mean --no-verify?). See wave approve --help.'),
  ],
  [
    "a mistyped flag's value",
    row(
      ['plan', '--task', 'x', '--effort', 'hihg'],
      'wave plan: --effort hihg is not one of low, medium, high, xhigh, max (did you mean high?). See wave plan --help.',
    ),
  ],
  ...(
    [
      ['wave plans NAME', ['plans', 'brave-oter'], 'brave-oter', 'brave-otter'],
      ['wave approve NAME (a prefix)', ['approve', 'brave'], 'brave', 'brave-otter'],
      ['wave run NAME', ['run', 'brave-otte'], 'brave-otte', 'brave-otter'],
      ['wave plan --revise NAME (a failed plan)', ['plan', '--revise', 'calm-rivr'], 'calm-rivr', 'calm-river'],
      ['wave plans rm NAME', ['plans', 'rm', 'brave-ottr'], 'brave-ottr', 'brave-otter'],
    ] as const
  ).map(([name, args, typed, meant]): [string, Row] => [
    `a mistyped plan name: ${name}`,
    {
      args: () => [...args],
      hint: /^Hint: wave plans lists the plans by name\.$/,
      line: (sandbox) => `Plan not found: no file ${typed} here, and no plan named ${typed} in ${sandbox.plansDir} (did you mean ${meant}?).`,
    },
  ]),
  [
    'a plan name nothing is close to',
    {
      args: () => ['plans', 'extra'],
      hint: /^Hint: wave plans lists the plans by name\.$/,
      line: (sandbox) => `Plan not found: no file extra here, and no plan named extra in ${sandbox.plansDir}.`,
    },
  ],
]

/** Flags that contradict each other: refused before anything runs, both named in the order given. */
const CONFLICT_ROWS: Array<[string, Row]> = [
  [
    'run --task with --approval',
    {
      args: (sandbox) => ['run', '--task', 'Rename greet to welcome', '--approval', path.join(sandbox.plansDir, 'brave-otter.approval.json')],
      line: () => 'wave run: --task and --approval cannot be used together. See wave run --help.',
    },
  ],
  [
    'run --approval with --task-file',
    {
      args: (sandbox) => ['run', '--approval', path.join(sandbox.plansDir, 'x.json'), '--task-file', path.join(sandbox.repo, 'README.md')],
      line: () => 'wave run: --approval and --task-file cannot be used together. See wave run --help.',
    },
  ],
  [
    'run --task with --task-file',
    row(['run', '--task', 'x', '--task-file', 'y'], 'wave run: --task and --task-file cannot be used together. See wave run --help.'),
  ],
  [
    'run --task with --allow-stale',
    row(['run', '--task', 'x', '--allow-stale'], 'wave run: --task and --allow-stale cannot be used together. See wave run --help.'),
  ],
  [
    'run --task with --force',
    row(['run', '--task', 'x', '--approve', '--force'], 'wave run: --task and --force cannot be used together. See wave run --help.'),
  ],
  [
    'approve --reject with an allow rule',
    row(
      ['approve', 'brave-otter', '--reject', '--allow', 'Bash(npm test:*)'],
      'wave approve: --reject and --allow cannot be used together. See wave approve --help.',
    ),
  ],
  [
    'approve --request-changes with a mode',
    row(
      ['approve', 'brave-otter', '--request-changes', 'More tests', '--mode', 'bypassPermissions'],
      'wave approve: --request-changes and --mode cannot be used together. See wave approve --help.',
    ),
  ],
  [
    'approve --request-changes with --feedback',
    row(
      ['approve', 'brave-otter', '--feedback', 'Other words', '--request-changes', 'More tests'],
      'wave approve: --feedback and --request-changes cannot be used together. See wave approve --help.',
    ),
  ],
]

/** --json with another output format: the error is also the JSON object --json asked for. */
const JSON_CONFLICT_ROWS: Array<[string, Row]> = [
  [
    'plan --json --output-format text',
    row(
      ['plan', '--task', 'x', '--json', '--output-format', 'text'],
      'wave plan: --json and --output-format text contradict each other (--json is --output-format json): give one of them. See wave plan --help.',
    ),
  ],
  [
    'run --output-format stream-json --json',
    row(
      ['run', '--task', 'x', '--output-format', 'stream-json', '--json'],
      'wave run: --json and --output-format stream-json contradict each other (--json is --output-format json): give one of them. See wave run --help.',
    ),
  ],
]

/** Runs a row: exit 2, its line (and hint) alone on stderr, no stack, nothing on stdout but --json's object, no request, no file changed. */
function table(rows: Array<[string, Row]>) {
  it.concurrent.for(rows)('%s', async ([, row], {expect}) => {
    await withSandbox(async (sandbox, server) => {
      const before = {home: snapshotTree(sandbox.home), repo: snapshotTree(sandbox.repo)}
      const args = row.args(sandbox)
      const result = await runWave(args, {cwd: sandbox.repo, env: row.env, home: sandbox.home, server})

      const lines = result.stderr.trimEnd().split('\n')
      expect(lines[0], result.stderr).toBe(`Error: ${row.line(sandbox)}`)
      if (row.hint) expect(lines.slice(1)).toEqual([expect.stringMatching(row.hint)])
      else expect(lines, result.stderr).toHaveLength(1)
      expect(result.code, result.stderr).toBe(2)
      if (args.includes('--json')) {
        expect(JSON.parse(result.stdout)).toEqual({error: {exitCode: 2, message: row.line(sandbox)}, ok: false, version: 1})
        expect(result.stdout.trimEnd().split('\n')).toHaveLength(1)
      } else {
        expect(result.stdout).toBe('')
      }

      expect(server.requests).toHaveLength(0)
      expect(server.modelRequests).toHaveLength(0)
      expect(snapshotTree(sandbox.home)).toEqual(before.home)
      expect(snapshotTree(sandbox.repo)).toEqual(before.repo)
    })
  })
}

describe("oclif's parser errors, in wave's words", () => table(PARSER_ROWS))
describe('did you mean', () => table(SUGGESTION_ROWS))
describe('conflicting flags', () => table(CONFLICT_ROWS))
describe('--json with another output format', () => table(JSON_CONFLICT_ROWS))

describe('parser errors under --json and DEBUG', () => {
  it.concurrent.for([
    ['an unknown command', ['plann', '--json'], 'wave: unknown command plann (did you mean plan or plans?). See wave --help.'],
    ['an unknown flag', ['plan', '--tsk', 'x', '--json'], 'wave plan: unknown flag --tsk (did you mean --task?). See wave plan --help.'],
    ['a missing argument', ['approve', '--json'], 'wave approve: missing the plan argument. See wave approve --help.'],
  ] as const)('%s: the JSON error object on stdout', async ([, args, line], {expect}) => {
    await withSandbox(async (sandbox, server) => {
      const result = await runWave([...args], {cwd: sandbox.repo, home: sandbox.home, server})
      expect(result.code, result.stderr).toBe(2)
      expect(result.stdout.trimEnd().split('\n')).toHaveLength(1)
      expect(JSON.parse(result.stdout)).toEqual({error: {exitCode: 2, message: line}, ok: false, version: 1})
      expect(result.stderr).toBe(`Error: ${line}\n`)
    })
  })

  it('shows the stack of a parser error only with DEBUG', () =>
    withSandbox(async (sandbox, server) => {
      const plain = await runWave(['plan', '--tsk', 'x'], {cwd: sandbox.repo, home: sandbox.home, server})
      const debug = await runWave(['plan', '--tsk', 'x'], {cwd: sandbox.repo, env: {DEBUG: '1'}, home: sandbox.home, server})
      const line = 'Error: wave plan: unknown flag --tsk (did you mean --task?). See wave plan --help.'
      expect([plain.code, debug.code]).toEqual([2, 2])
      expect(plain.stderr).toBe(`${line}\n`)
      expect(debug.stderr.split('\n')).toContain(line)
      expect(debug.stderr).toMatch(/\n\s+at .+/)
    }))
})

describe('--json with --output-format json', () => {
  it('is accepted: one format asked for twice', () =>
    withSandbox(async (sandbox, server) => {
      server.push((request) => reply(toolUse('Write', {content: '# Plan\n\n1. Rename greet.\n', file_path: planPathIn(request)})), reply('The plan is ready.'))
      const result = await runWave(['plan', '--task', 'Rename greet', '--json', '--output-format', 'json'], {cwd: sandbox.repo, home: sandbox.home, server})
      expect(result.code, result.stderr).toBe(0)
      expect(JSON.parse(result.stdout)).toMatchObject({ok: true, stopReason: 'end_turn', version: 1})
      expect(server.messageRequests).toHaveLength(2)
    }))
})

/** wave's own commands (src/commands), as typed: `plans prune`. */
const COMMANDS = readdirSync(path.join(PROJECT_ROOT, 'src/commands'), {recursive: true})
  .map(String)
  .filter((file) => file.endsWith('.ts'))
  .map((file) => file.replace(/\.ts$/, '').split(path.sep))

/** The DESCRIPTION section of a command's help, its lines as printed (without the section's indent). */
function descriptionOf(help: string): string[] {
  const lines = help.split('\n')
  const start = lines.indexOf('DESCRIPTION')
  expect(start, help).toBeGreaterThan(-1)
  const end = lines.findIndex((line, at) => at > start && /^[A-Z][A-Z ]+$/.test(line))
  return lines.slice(start + 1, end === -1 ? undefined : end).map((line) => line.replace(/^ {2}/, ''))
}

describe('help, wrapped once, by the width', () => {
  it.concurrent.for(COMMANDS.map((words) => [words.join(' '), words] as const))(
    'wave %s --help: a paragraph breaks only where the next word would pass the width',
    async ([, words], {expect}) => {
      const sandbox = makeSandbox()
      try {
        for (const width of [200, 60]) {
          const result = await runWave([...words, '--help'], {cwd: sandbox.repo, env: {COLUMNS: String(width)}, home: sandbox.home})
          expect(result.code, result.stderr).toBe(0)
          const description = descriptionOf(result.stdout)
          expect(description.join(' ').trim().length).toBeGreaterThan(0)
          for (const [at, line] of description.entries()) {
            // Two columns of indent: what is left of the width for the text.
            expect(line.length, line).toBeLessThanOrEqual(
              Math.max(
                width - 2,
                line.split(' ').reduce((longest, word) => Math.max(longest, word.length), 0),
              ),
            )
            const next = description[at + 1]
            // A line of a paragraph ends early only when its next word would not have fitted: no source line breaks.
            if (line.trim() && next?.trim()) expect(`${line} ${next.split(' ')[0]}`.length, `${line}\n${next}`).toBeGreaterThan(width - 2)
          }
        }
      } finally {
        sandbox.cleanup()
      }
    },
  )

  it("help for a command followed by other words is the command's help", async () => {
    const sandbox = makeSandbox()
    try {
      const result = await runWave(['plan', 'fix', 'it', '--help'], {cwd: sandbox.repo, home: sandbox.home})
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toMatch(/^Explore the repository read-only and write an implementation plan\.\n\nUSAGE\n {2}\$ wave plan /)
      expect(result.stderr).toBe('')
    } finally {
      sandbox.cleanup()
    }
  })

  it('wave --help follows COLUMNS too; without it, it is the cached help, 80 columns wide as oclif prints it', async () => {
    const sandbox = makeSandbox()
    try {
      const wide = await runWave(['--help'], {cwd: sandbox.repo, env: {COLUMNS: '200'}, home: sandbox.home})
      expect(wide.stdout).toMatch(/^ {2}approve +Record a decision on a plan: approve it \(the default\), request changes, or reject it\.$/m)
      const cached = await runWave(['--help'], {cwd: sandbox.repo, home: sandbox.home})
      const oclif = await runWave(['--help'], {cwd: sandbox.repo, env: {WAVE_NO_FAST_START: '1'}, home: sandbox.home})
      expect(cached.stdout).toBe(oclif.stdout)
      expect(cached.stdout).toMatch(/^ {2}approve +Record a decision on a plan: approve it \(the default\), request$/m)
    } finally {
      sandbox.cleanup()
    }
  })
})
