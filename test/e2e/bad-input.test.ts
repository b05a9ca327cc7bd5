/**
 * Issue #5, bad input everywhere: for each command, bad flags, missing, empty, non-UTF-8 or unreadable
 * files, directories where files are expected, plans outside the plans directory, malformed records,
 * states and settings. Each gives the design's exit code and one clear line (no stack trace unless
 * DEBUG), makes no request, and changes no file in HOME or the repository.
 */
import {chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {makeSandbox, runWave, type Sandbox, snapshotTree} from '../support/cli.js'
import {type MessagesServer, startMessagesServer} from '../support/messages-server.js'

/**
 * Each test gets its own sandbox and server, so that the rows, which only spawn wave and wait, can run
 * concurrently (the table is long; one row at a time would leave a core idle).
 */
async function withSandbox<T>(body: (sandbox: Sandbox, server: MessagesServer) => Promise<T>): Promise<T> {
  const sandbox = makeSandbox()
  const server = await startMessagesServer()
  try {
    return await body(sandbox, server)
  } finally {
    await server.close()
    sandbox.cleanup()
  }
}

const PLAN = '# Plan\n\n1. Do the thing.\n'
const AS_ROOT = process.getuid?.() === 0

/** The files a row can point at, made fresh in each sandbox. */
interface Fixtures {
  plansDir: string
  repo: string
  /** A plan in the plans directory, with a state file. */
  plan: string
  /** A plan with no state and no record. */
  bare: string
  empty: string
  binary: string
  /** A directory named like a plan, in the plans directory. */
  dir: string
  /** A plan outside the plans directory. */
  outside: string
  /** A link in the plans directory leading to `outside`. */
  link: string
  missing: string
  /** A regular file, where a directory is expected. */
  file: string
  unreadable: string
  record: string
  state: string
  userSettings: string
  projectSettings: string
}

function fixtures(sandbox: Sandbox): Fixtures {
  const plans = sandbox.plansDir
  mkdirSync(plans, {recursive: true})
  const at = (name: string) => path.join(plans, name)
  const write = (file: string, content: string | Uint8Array) => {
    mkdirSync(path.dirname(file), {recursive: true})
    writeFileSync(file, content)
    return file
  }

  const plan = write(at('brave-otter.md'), PLAN)
  const now = new Date().toISOString()
  const state = write(
    at('brave-otter.state.json'),
    JSON.stringify({
      createdAt: now,
      model: 'm',
      name: 'brave-otter',
      repository: null,
      runs: [],
      status: 'draft',
      task: 'Do the thing',
      updatedAt: now,
      version: 1,
      workspace: sandbox.repo,
    }),
  )
  mkdirSync(at('folder.md'))
  const outside = write(path.join(sandbox.root, 'elsewhere', 'stray.md'), PLAN)
  symlinkSync(outside, at('linked.md'))
  return {
    bare: write(at('bare-plan.md'), PLAN),
    binary: write(at('binary.md'), Buffer.from([0x23, 0x20, 0xff, 0xfe, 0xc3, 0x28, 0x0a])),
    dir: at('folder.md'),
    empty: write(at('empty.md'), ' \n\n'),
    file: write(path.join(sandbox.root, 'a-file'), 'not a directory\n'),
    link: at('linked.md'),
    missing: at('no-such-plan.md'),
    outside,
    plan,
    plansDir: plans,
    projectSettings: path.join(sandbox.repo, '.wave', 'settings.json'),
    record: at('brave-otter.approval.json'),
    repo: sandbox.repo,
    state,
    unreadable: write(at('locked.md'), PLAN),
    userSettings: path.join(sandbox.home, '.wave', 'settings.json'),
  }
}

interface Row {
  name: string
  args: (f: Fixtures) => string[]
  code: number
  says: RegExp
  setup?: (f: Fixtures) => void
  env?: (f: Fixtures) => Record<string, string | undefined>
  /** chmod 000 does not stop root from reading. */
  needsNonRoot?: boolean
}

const record = (f: Fixtures, fields: Record<string, unknown>) =>
  writeFileSync(f.record, JSON.stringify({decision: 'approved', plan: {sha256: '0'.repeat(64)}, version: 1, ...fields}))

const PLAN_ROWS: Row[] = [
  {args: () => ['plan'], code: 2, name: 'no --task', says: /Missing --task/},
  {args: () => ['plan', '--task', '   '], code: 2, name: 'a blank --task', says: /Missing --task/},
  {args: () => ['plan', '--task', 'x', '--bogus'], code: 2, name: 'an unknown flag', says: /^Error: wave plan: unknown flag --bogus\. See wave plan --help\.$/},
  {args: () => ['plan', '--task', 'x', '--max-turns', '0'], code: 2, name: '--max-turns 0', says: /max-turns/},
  {args: () => ['plan', '--task', 'x', '--max-turns', 'many'], code: 2, name: '--max-turns not a number', says: /max-turns|integer/i},
  {args: () => ['plan', '--task', 'x', '--output-format', 'xml'], code: 2, name: 'a bad --output-format', says: /output-format/},
  {args: () => ['plan', '--task', 'x', '--allow', 'Bash('], code: 2, name: 'a malformed --allow rule', says: /Invalid permission rule/},
  {
    args: (f) => ['plan', '--task', 'x', '--cwd', path.join(f.file, 'nope')],
    code: 2,
    name: 'a missing --cwd',
    says: /Workspace directory not found|does not exist|not found/i,
  },
  {args: (f) => ['plan', '--task', 'x', '--cwd', f.file], code: 2, name: 'a file as --cwd', says: /Not a directory|not a directory/i},
  {args: (f) => ['plan', '--revise', f.missing], code: 2, name: '--revise a missing plan', says: /Plan not found/},
  {
    args: (f) => ['plan', '--revise', f.outside],
    code: 2,
    name: '--revise a plan outside the plans directory',
    says: /is not a plan in .*only wave's own plans can be revised/,
  },
  {args: (f) => ['plan', '--revise', path.join(f.plansDir, '..', 'escape.md')], code: 2, name: '--revise through ..', says: /is not a plan in/},
  {args: (f) => ['plan', '--revise', f.link], code: 2, name: '--revise a link leading out of the plans directory', says: /not a regular file/},
  {args: (f) => ['plan', '--revise', f.dir], code: 2, name: '--revise a directory', says: /not a regular file/},
  {args: (f) => ['plan', '--revise', f.bare], code: 2, name: '--revise a plan wave knows nothing of', says: /Nothing is known of the task/},
  {
    args: (f) => ['plan', '--revise', f.plan],
    code: 2,
    name: '--revise with a malformed state',
    says: /state file .* is malformed/,
    setup: (f) => writeFileSync(f.state, '{"version": 1, "task": '),
  },
  {args: (f) => ['plan', '--revise', f.plan, '--task', 'x'], code: 2, name: '--revise with --task', says: /--task|--revise/},
  {args: () => ['plan', '--feedback', 'more'], code: 2, name: '--feedback without --revise', says: /--revise/},
  {
    args: () => ['plan', '--task', 'x'],
    code: 2,
    name: 'malformed user settings',
    says: /Invalid settings file .*settings\.json: not valid JSON/,
    setup: (f) => writeFileSync(f.userSettings, '{"model": '),
  },
  {
    args: () => ['plan', '--task', 'x'],
    code: 2,
    name: 'an unknown setting',
    says: /Invalid settings file .*: colour: unknown setting/,
    setup: (f) => writeFileSync(f.userSettings, '{"colour": "blue"}'),
  },
  {
    args: () => ['plan', '--task', 'x'],
    code: 2,
    name: 'project settings that are a directory',
    says: /Invalid settings file .*: it is a directory/,
    setup: (f) => mkdirSync(f.projectSettings, {recursive: true}),
  },
  {
    args: () => ['plan', '--task', 'x'],
    code: 2,
    env: (f) => ({WAVE_HOME: f.file}),
    name: 'WAVE_HOME that is a file',
    says: /Cannot use the plans directory .*a file is in the way/,
  },
  {args: () => ['plan', '--task', 'x'], code: 2, env: () => ({ANTHROPIC_API_KEY: undefined}), name: 'no API key', says: /ANTHROPIC_API_KEY is not set/},
  {
    args: () => ['plan', '--task', 'x'],
    code: 2,
    env: () => ({WAVE_API_RETRIES: '-1'}),
    name: 'a bad WAVE_API_RETRIES',
    says: /WAVE_API_RETRIES must be a whole number from 0 to 10/,
  },
]

const APPROVE_ROWS: Row[] = [
  {args: () => ['approve'], code: 2, name: 'no plan', says: /wave approve: missing the plan argument/},
  {args: (f) => ['approve', f.missing], code: 2, name: 'a missing plan', says: /Plan file not found/},
  {args: (f) => ['approve', f.dir], code: 2, name: 'a directory', says: /is a directory/},
  {args: (f) => ['approve', f.empty], code: 2, name: 'an empty plan', says: /is empty/},
  {args: (f) => ['approve', f.binary], code: 2, name: 'a plan that is not UTF-8', says: /is not UTF-8 text/},
  {
    args: (f) => ['approve', f.unreadable],
    code: 2,
    name: 'an unreadable plan',
    needsNonRoot: true,
    says: /Cannot read the plan file/,
    setup: (f) => chmodSync(f.unreadable, 0o000),
  },
  {args: (f) => ['approve', f.plan, '--mode', 'yolo'], code: 2, name: 'an unknown --mode', says: /--mode/},
  {args: (f) => ['approve', f.plan, '--mode', 'plan'], code: 2, name: 'plan mode for a run', says: /--mode/},
  {args: (f) => ['approve', f.plan, '--allow', 'Bash()'], code: 2, name: 'a malformed --allow rule', says: /Invalid permission rule/},
  {
    args: (f) => ['approve', f.plan, '--reject', '--request-changes', 'x'],
    code: 2,
    name: '--reject with --request-changes',
    says: /--reject|--request-changes/,
  },
  {args: (f) => ['approve', f.plan, '--request-changes', '  '], code: 2, name: 'blank --request-changes', says: /needs feedback/},
  {args: (f) => ['approve', f.plan, '--out', f.repo], code: 2, name: '--out a directory', says: /Cannot write the approval record .*: it is a directory/},
  {
    args: (f) => ['approve', f.plan, '--out', path.join(f.file, 'record.json')],
    code: 2,
    name: '--out in a missing directory',
    says: /Cannot write the approval record .*: its directory does not exist/,
  },
  {args: (f) => ['approve', f.plan, '--interactive'], code: 2, name: '--interactive without a terminal', says: /--interactive needs someone at a terminal/},
  {
    args: (f) => ['approve', f.plan, 'extra'],
    code: 2,
    name: 'an extra argument',
    says: /wave approve: unexpected argument extra \(it takes one argument, plan\)/,
  },
]

const RUN_ROWS: Row[] = [
  {args: () => ['run'], code: 2, name: 'no plan', says: /Missing the plan to run/},
  {args: (f) => ['run', f.plan, '--task', 'x'], code: 2, name: 'a plan and --task', says: /either a plan to run or --task/},
  {args: () => ['run', '--task', '  '], code: 2, name: 'a blank --task', says: /Missing the plan to run/},
  {args: (f) => ['run', f.missing], code: 2, name: 'a missing plan', says: /Plan file not found/},
  {args: (f) => ['run', f.dir], code: 2, name: 'a directory', says: /is a directory/},
  {args: (f) => ['run', f.empty], code: 2, name: 'an empty plan', says: /is empty/},
  {args: (f) => ['run', f.binary], code: 2, name: 'a plan that is not UTF-8', says: /is not UTF-8 text/},
  {
    args: (f) => ['run', f.unreadable],
    code: 2,
    name: 'an unreadable plan',
    needsNonRoot: true,
    says: /Cannot read the plan file/,
    setup: (f) => chmodSync(f.unreadable, 0o000),
  },
  {args: (f) => ['run', f.plan], code: 3, name: 'no approval record', says: /No approval record/},
  {
    args: (f) => ['run', f.plan],
    code: 3,
    name: 'a record that is not JSON',
    says: /Malformed approval record .*not valid JSON/,
    setup: (f) => writeFileSync(f.record, '{"decision": "approved",'),
  },
  {
    args: (f) => ['run', f.plan],
    code: 3,
    name: 'a record that is not UTF-8',
    says: /Malformed approval record/,
    setup: (f) => writeFileSync(f.record, Buffer.from([0xff, 0xfe, 0x7b, 0x00])),
  },
  {
    args: (f) => ['run', f.plan],
    code: 3,
    name: 'a record with a bad decision',
    says: /Malformed approval record .*: decision: /,
    setup: (f) => record(f, {decision: 'maybe'}),
  },
  {
    args: (f) => ['run', f.plan],
    code: 3,
    name: 'a record with a bad sha256',
    says: /Malformed approval record .*: plan\.sha256: /,
    setup: (f) => record(f, {plan: {sha256: 'abc'}}),
  },
  {
    args: (f) => ['run', f.plan],
    code: 3,
    name: 'a record with a bad mode',
    says: /Malformed approval record .*: mode: /,
    setup: (f) => record(f, {mode: 'plan'}),
  },
  {
    args: (f) => ['run', f.plan],
    code: 3,
    name: 'a record with a bad rule',
    says: /Malformed approval record .*: allow\[0\]: Invalid permission rule/,
    setup: (f) => record(f, {allow: ['Bash(']}),
  },
  {
    args: (f) => ['run', f.plan],
    code: 3,
    name: 'a record of another version',
    says: /Malformed approval record .*: version: /,
    setup: (f) => record(f, {version: 2}),
  },
  {args: (f) => ['run', f.plan], code: 3, name: 'a record that is a directory', says: /Cannot read the approval record/, setup: (f) => mkdirSync(f.record)},
  {args: (f) => ['run', f.plan], code: 3, name: 'a rejected plan', says: /was rejected/, setup: (f) => record(f, {decision: 'rejected'})},
  {args: (f) => ['run', f.plan, '--approval', f.missing], code: 3, name: 'a missing --approval', says: /No approval record/},
  {args: (f) => ['run', f.plan], code: 4, name: 'a record of other content', says: /changed since it was approved/, setup: (f) => record(f, {})},
  {args: (f) => ['run', f.plan], code: 2, name: 'a malformed state', says: /state file .* is malformed/, setup: (f) => writeFileSync(f.state, '[]')},
  {args: (f) => ['run', f.plan, '--mode', 'bypassPermissions'], code: 2, name: '--mode without --approve', says: /use them with --approve/},
  {args: (f) => ['run', f.plan, '--approve', '--mode', 'yolo'], code: 2, name: 'an unknown --mode', says: /--mode/},
  {args: (f) => ['run', f.plan, '--approve', '--allow', 'Bash('], code: 2, name: 'a malformed --allow', says: /Invalid permission rule/},
  {args: (f) => ['run', f.plan, '--approve', '--approval', f.record], code: 2, name: '--approve with --approval', says: /--approval|--approve/},
  {args: (f) => ['run', f.plan, '--max-turns', '-1'], code: 2, name: 'a negative --max-turns', says: /max-turns/},
  {
    args: (f) => ['run', f.plan, '--approve', '--cwd', path.join(f.file, 'x')],
    code: 2,
    name: 'a missing --cwd',
    says: /Workspace directory not found|not found/,
  },
  {
    args: (f) => ['run', f.plan, '--approve'],
    code: 2,
    env: () => ({ANTHROPIC_API_KEY: undefined}),
    name: '--approve without an API key',
    says: /ANTHROPIC_API_KEY is not set/,
  },
  {
    args: (f) => ['run', f.plan, '--approve'],
    code: 2,
    name: 'malformed project settings',
    says: /Invalid settings file/,
    setup: (f) => {
      mkdirSync(path.dirname(f.projectSettings), {recursive: true})
      writeFileSync(f.projectSettings, '{"permissions": {"allow": ["Bash("]}}')
    },
  },
]

const OTHER_ROWS: Row[] = [
  {args: () => ['plans', '--bogus'], code: 2, name: 'plans: an unknown flag', says: /wave plans: unknown flag --bogus/},
  {args: () => ['plans', 'extra'], code: 2, name: 'plans: a plan that does not exist', says: /Plan not found: no file extra here, and no plan named extra/},
  {
    args: () => ['plans'],
    code: 2,
    name: 'plans: malformed user settings',
    says: /Invalid settings file/,
    setup: (f) => writeFileSync(f.userSettings, '{"plansDirectory": 7}'),
  },
  {args: () => ['tools', '--mode', 'yolo'], code: 2, name: 'tools: an unknown --mode', says: /--mode/},
  {args: () => ['tools', 'extra'], code: 2, name: 'tools: an extra argument', says: /wave tools: unexpected argument extra/},
  {
    args: () => ['tools'],
    code: 2,
    name: 'tools: malformed project settings',
    says: /Invalid settings file/,
    setup: (f) => {
      mkdirSync(path.dirname(f.projectSettings), {recursive: true})
      writeFileSync(f.projectSettings, 'not json')
    },
  },
  {args: () => ['nonsense'], code: 2, name: 'an unknown command', says: /^Error: wave: unknown command nonsense\. See wave --help\.$/},
]

function table(rows: Row[]) {
  it.concurrent.for(rows.map((row) => [row.name, row] as const))('%s', async ([, row], {expect, skip}) => {
    // Root reads a chmod 000 file anyway (CI containers often run as root): nothing to test there.
    if (row.needsNonRoot && AS_ROOT) skip('chmod 000 does not stop root from reading')
    await withSandbox(async (sandbox, server) => {
      const f = fixtures(sandbox)
      row.setup?.(f)
      const before = {home: snapshotTree(sandbox.home), repo: snapshotTree(sandbox.repo)}

      const result = await runWave(row.args(f), {cwd: sandbox.repo, env: row.env?.(f), home: sandbox.home, server})

      const errors = result.stderr.split('\n').filter((line) => /^Error:/.test(line))
      expect(errors, result.stderr).toHaveLength(1)
      expect(errors[0]).toMatch(row.says)
      expect(result.code, result.stderr).toBe(row.code)
      // One clear line, perhaps a hint: no stack trace, no usage dump.
      expect(result.stderr).not.toMatch(/\n\s+at .+:\d+/)
      expect(result.stderr.trim().split('\n').length, result.stderr).toBeLessThanOrEqual(2)
      expect(result.stdout).toBe('')
      expect(server.requests).toHaveLength(0)
      expect(snapshotTree(sandbox.home)).toEqual(before.home)
      expect(snapshotTree(sandbox.repo)).toEqual(before.repo)
    })
  })
}

describe('wave plan: bad input', () => table(PLAN_ROWS))
describe('wave approve: bad input', () => table(APPROVE_ROWS))
describe('wave run: bad input', () => table(RUN_ROWS))
describe('wave plans, wave tools: bad input', () => table(OTHER_ROWS))

describe('bad input, whatever the output format', () => {
  it.each([
    ['plan', (f: Fixtures) => ['plan', '--revise', f.outside], 2],
    ['approve', (f: Fixtures) => ['approve', f.binary], 2],
    ['run', (f: Fixtures) => ['run', f.plan], 3],
    ['tools', () => ['tools', '--mode', 'yolo'], 2],
  ] as const)('%s --json: one JSON object with the exit code', (_name, args, code) =>
    withSandbox(async (sandbox, server) => {
      const f = fixtures(sandbox)
      const result = await runWave([...args(f), '--json'], {cwd: sandbox.repo, home: sandbox.home, server})
      expect(result.code).toBe(code)
      const lines = result.stdout.trim().split('\n')
      expect(lines).toHaveLength(1)
      expect(JSON.parse(lines[0])).toMatchObject({error: {exitCode: code}, ok: false, version: 1})
    }),
  )

  it('shows the stack trace only with DEBUG', () =>
    withSandbox(async (sandbox, server) => {
      const f = fixtures(sandbox)
      const plain = await runWave(['run', f.plan], {cwd: sandbox.repo, home: sandbox.home, server})
      const debug = await runWave(['run', f.plan], {cwd: sandbox.repo, env: {DEBUG: '1'}, home: sandbox.home, server})
      expect(plain.code).toBe(3)
      expect(debug.code).toBe(3)
      expect(plain.stderr).not.toMatch(/\n\s+at /)
      expect(debug.stderr).toMatch(/\n\s+at /)
    }))
})

describe('wave plans: damaged files in the plans directory', () => {
  it('lists what it can and exits 0, whatever else lies there', () =>
    withSandbox(async (sandbox, server) => {
      const f = fixtures(sandbox)
      writeFileSync(path.join(sandbox.plansDir, 'bare-plan.state.json'), '{not json')
      writeFileSync(path.join(sandbox.plansDir, 'empty.approval.json'), '[1, 2')
      writeFileSync(path.join(sandbox.plansDir, 'binary.approval.json'), JSON.stringify({decision: 'approved'}))
      symlinkSync(path.join(sandbox.root, 'gone.md'), path.join(sandbox.plansDir, 'dangling.md'))
      const before = snapshotTree(sandbox.home)

      const result = await runWave(['plans', '--json'], {cwd: sandbox.repo, home: sandbox.home, server})
      expect(result.code, result.stderr).toBe(0)
      const listed = JSON.parse(result.stdout).plans as Array<{name: string; status: string}>
      const byName = Object.fromEntries(listed.map((p) => [p.name, p.status]))
      expect(byName).toMatchObject({'bare-plan': 'draft', binary: 'approved', 'brave-otter': 'draft', empty: 'draft'})
      expect(byName).not.toHaveProperty('dangling')
      expect(byName).not.toHaveProperty('folder')
      expect(snapshotTree(sandbox.home)).toEqual(before)
      expect(readFileSync(f.plan, 'utf8')).toBe(PLAN)
    }))
})
