/**
 * wave on a real repository (issue 14): the repository's instructions reach the model, the workspace is
 * the repository's top from anywhere inside it, plans are named by name, and a plan runs once per
 * approval.
 */
import {existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {gitCommitAll, readJson, runWave, type Sandbox, writePlanFile} from '../support/cli.js'
import {type MessagesServer, planPathIn, reply, systemText, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

const PLAN = '# Plan\n\n1. Create src/farewell.ts.\n'
const FAREWELL = 'export const farewell = (name: string) => `bye ${name}`\n'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const recordOf = (planPath: string) => planPath.replace(/\.md$/, '.approval.json')
const inRepo = (...parts: string[]) => path.join(sandbox.repo, ...parts)

function write(file: string, content: string): void {
  mkdirSync(path.dirname(file), {recursive: true})
  writeFileSync(file, content)
}

/** `wave plan` from `cwd` (default: the repository), the model writing PLAN at once; returns the plan's path. */
async function plan(cwd?: string, ...flags: string[]): Promise<string> {
  server.push((request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})), reply('Planned.'))
  const result = await wave(['plan', '--task', 'Add a farewell', ...flags], undefined, cwd)
  expect(result.code, result.stderr).toBe(0)
  return result.stdout.trim()
}

async function approve(reference: string, ...flags: string[]): Promise<void> {
  const result = await wave(['approve', reference, ...flags])
  expect(result.code, result.stderr).toBe(0)
}

describe("the repository's instructions", () => {
  it('reach plan and run: AGENTS.md from the root down to the working directory, nested ones after their parent', async () => {
    write(inRepo('AGENTS.md'), 'ROOT-MARKER: use tabs.\n')
    write(inRepo('service', 'AGENTS.md'), 'SERVICE-MARKER: run the service tests.\n')
    write(inRepo('service', 'CLAUDE.md'), 'SHADOWED-MARKER: never read, AGENTS.md stands for its directory.\n')
    write(inRepo('other', 'AGENTS.md'), 'OTHER-MARKER: not on the way down.\n')
    gitCommitAll(sandbox.repo)

    const planPath = await plan(inRepo('service'))
    const planning = systemText(server.messageRequests[0])
    expect(planning).toContain('# Repository instructions')
    expect(planning).toContain('<instructions file="AGENTS.md">\nROOT-MARKER: use tabs.\n</instructions>')
    expect(planning).toContain('<instructions file="service/AGENTS.md">\nSERVICE-MARKER')
    expect(planning.indexOf('ROOT-MARKER')).toBeLessThan(planning.indexOf('SERVICE-MARKER'))
    expect(planning).not.toContain('SHADOWED-MARKER')
    expect(planning).not.toContain('OTHER-MARKER')
    // Plan mode's reminder still ends the prompt.
    expect(planning).toMatch(/only allowed to take READ-ONLY actions\.$/)
    expect(planning.indexOf('ROOT-MARKER')).toBeLessThan(planning.indexOf('## Plan File Info:'))

    // An approved run uses the instructions as they are when it runs.
    await approve(planPath)
    write(inRepo('AGENTS.md'), 'ROOT-MARKER-2: use spaces now.\n')
    server.push(reply('Done.'))
    const result = await wave(['run', planPath], undefined, inRepo('service'))
    expect(result.code, result.stderr).toBe(0)
    const running = systemText(server.messageRequests.at(-1)!)
    expect(running).toContain('ROOT-MARKER-2: use spaces now.')
    expect(running).not.toContain('ROOT-MARKER: use tabs.')
    expect(running).toContain('SERVICE-MARKER')
  })

  it('reads CLAUDE.md in a repository without AGENTS.md, in plan and run --task', async () => {
    write(inRepo('CLAUDE.md'), 'CLAUDE-ONLY-MARKER\n')
    gitCommitAll(sandbox.repo)
    await plan()
    expect(systemText(server.messageRequests[0])).toContain('<instructions file="CLAUDE.md">\nCLAUDE-ONLY-MARKER\n</instructions>')

    server.push(reply('Nothing to do.'))
    const result = await wave(['run', '--task', 'Look around'])
    expect(result.code, result.stderr).toBe(0)
    expect(systemText(server.messageRequests.at(-1)!)).toContain('CLAUDE-ONLY-MARKER')
  })

  it("adds --append-system-prompt (text or @file) and the settings' instructions, marked and in that order", async () => {
    write(inRepo('AGENTS.md'), 'REPO-MARKER\n')
    write(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify({instructions: 'USER-SETTINGS-MARKER'}))
    write(inRepo('.wave', 'settings.json'), JSON.stringify({instructions: 'PROJECT-SETTINGS-MARKER'}))
    gitCommitAll(sandbox.repo)
    write(path.join(sandbox.root, 'extra.md'), 'FILE-APPENDED-MARKER\n')

    const planPath = await plan(undefined, '--append-system-prompt', 'FLAG-APPENDED-MARKER')
    const system = systemText(server.messageRequests[0])
    const order = [
      '# Repository instructions',
      'REPO-MARKER',
      '# Instructions from the settings',
      'USER-SETTINGS-MARKER',
      'PROJECT-SETTINGS-MARKER',
      '# Additional instructions',
      'FLAG-APPENDED-MARKER',
      '## Plan File Info:',
    ]
    const at = order.map((marker) => system.indexOf(marker))
    expect(
      at.every((index) => index >= 0),
      system,
    ).toBe(true)
    expect(at).toEqual([...at].sort((a, b) => a - b))

    await approve(planPath)
    server.push(reply('Done.'))
    const result = await wave(['run', planPath, '--append-system-prompt', `@${path.join(sandbox.root, 'extra.md')}`])
    expect(result.code, result.stderr).toBe(0)
    const running = systemText(server.messageRequests.at(-1)!)
    expect(running).toContain('# Additional instructions\n\nFILE-APPENDED-MARKER')
    expect(running).toContain('USER-SETTINGS-MARKER')

    const missing = await wave(['plan', '--task', 'x', '--append-system-prompt', '@/no/such/file'])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('/no/such/file')
  })

  it('caps them with a note in the prompt and a warning, and never follows a link out of the repository', async () => {
    write(inRepo('AGENTS.md'), `HEAD-MARKER\n${'x'.repeat(100)}\n`.repeat(400))
    write(path.join(sandbox.root, 'outside.md'), 'OUTSIDE-MARKER\n')
    mkdirSync(inRepo('linked'))
    symlinkSync(path.join(sandbox.root, 'outside.md'), inRepo('linked', 'AGENTS.md'))
    server.push((request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})), reply('Planned.'))
    const result = await wave(['plan', '--task', 'Add a farewell'], undefined, inRepo('linked'))
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/The repository's instructions \(AGENTS\.md\) exceed the 32 KiB cap/)
    const system = systemText(server.messageRequests[0])
    expect(system).toContain('HEAD-MARKER')
    expect(system).toMatch(/\[wave: the repository's instructions exceed the 32 KiB cap and were cut; \d+ bytes of AGENTS\.md are not shown\.\]/)
    expect(system.length).toBeLessThan(40 * 1024)
    expect(system).not.toContain('OUTSIDE-MARKER')
  })
})

describe('the workspace is the repository', () => {
  it('runs a plan named by name from a subdirectory at the top of the repository', async () => {
    mkdirSync(inRepo('test'))
    const planPath = await plan(inRepo('test'))
    const name = path.basename(planPath, '.md')
    expect(readJson(planPath.replace(/\.md$/, '.state.json')).workspace).toBe(sandbox.repo)
    await approve(name)

    server.push(reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Done.'))
    const result = await wave(['run', name], undefined, inRepo('test'))
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(inRepo('src/farewell.ts'), 'utf8')).toBe(FAREWELL)
    expect(existsSync(inRepo('test', 'src'))).toBe(false)
  })

  it('refuses to run outside any repository, naming --cwd and where the plan was made, before any request', async () => {
    const planPath = await plan()
    await approve(planPath)
    const outside = path.join(sandbox.root, 'elsewhere')
    mkdirSync(outside)
    const requests = server.requests.length

    const result = await wave(['run', planPath], undefined, outside)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('not inside a git repository')
    expect(result.stderr).toMatch(new RegExp(`--cwd.*${sandbox.repo}`))
    expect(server.requests).toHaveLength(requests)

    const task = await wave(['run', '--task', 'Anything'], undefined, outside)
    expect(task.code).toBe(2)
    expect(task.stderr).toContain('--cwd')
    expect(server.requests).toHaveLength(requests)

    server.push(reply('Ran there.'))
    const given = await wave(['run', planPath, '--cwd', sandbox.repo], undefined, outside)
    expect(given.code, given.stderr).toBe(0)
  })

  it('plans outside any repository in the current directory', async () => {
    const outside = path.join(sandbox.root, 'scratch')
    mkdirSync(outside)
    const planPath = await plan(outside)
    expect(readJson(planPath.replace(/\.md$/, '.state.json')).workspace).toBe(outside)
  })

  it('started in the home directory, which is no repository, plan and run say so before any request (issue 47)', async () => {
    const planPath = await plan()
    await approve(planPath)
    const requests = server.requests.length
    for (const args of [
      ['plan', '--task', 'Add a farewell'],
      ['run', planPath],
    ]) {
      const result = await wave(args, undefined, sandbox.home)
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toContain(`${sandbox.home} is not inside a git repository`)
      expect(result.stderr).not.toContain('lies inside the workspace')
    }

    expect(server.requests).toHaveLength(requests)
    // Control: the home directory named as the workspace is the HOME check's to refuse, with its own advice.
    const named = await wave(['plan', '--task', 'Add a farewell', '--cwd', sandbox.home], undefined, sandbox.home)
    expect(named.code).toBe(2)
    expect(named.stderr).toContain('lies inside the workspace')
    expect(server.requests).toHaveLength(requests)
  })

  it('names --cwd before --allow-stale when the plan is stale', async () => {
    const planPath = await plan()
    await approve(planPath)
    writeFileSync(inRepo('later.txt'), 'later\n')
    gitCommitAll(sandbox.repo)
    const result = await wave(['run', planPath])
    expect(result.code).toBe(4)
    const hint = result.stderr.slice(result.stderr.indexOf('Hint:'))
    expect(hint).toContain('--cwd')
    expect(hint.indexOf('--cwd')).toBeLessThan(hint.indexOf('--allow-stale'))
  })
})

describe('plans by name', () => {
  it('approves, revises and runs a plan by its name; only Markdown plans', async () => {
    const planPath = await plan()
    const name = path.basename(planPath, '.md')
    const rejected = await wave(['approve', name, '--request-changes', 'Also say hello'])
    expect(rejected.code, rejected.stderr).toBe(0)
    expect(rejected.stdout.trim()).toBe(recordOf(planPath))

    server.push(
      (request) =>
        reply(
          toolUse('Edit', {file_path: planPathIn(request), new_string: '1. Create src/farewell.ts, and say hello.', old_string: '1. Create src/farewell.ts.'}),
        ),
      reply('Revised.'),
    )
    const revised = await wave(['plan', '--revise', name])
    expect(revised.code, revised.stderr).toBe(0)
    expect(revised.stdout.trim()).toBe(planPath)
    expect(readFileSync(planPath, 'utf8')).toContain('say hello')

    await approve(`${name}.md`)
    server.push(reply('Done.'))
    const ran = await wave(['run', name])
    expect(ran.code, ran.stderr).toBe(0)

    const requests = server.requests.length
    writeFileSync(inRepo('index.js'), 'console.log(1)\n')
    for (const args of [
      ['approve', 'index.js'],
      ['run', 'index.js', '--approve'],
      ['approve', 'no-such-plan'],
    ]) {
      const result = await wave(args)
      expect(result.code, args.join(' ')).toBe(2)
    }

    expect((await wave(['approve', 'index.js'])).stderr).toContain('not a Markdown file (.md)')
    expect(existsSync(inRepo('index.approval.json'))).toBe(false)
    expect(server.requests).toHaveLength(requests)
  })
})

describe('a plan runs once per approval', () => {
  it('refuses a spent plan (exit 3) with no model request until it is approved again, and a copy of it too', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    await approve(planPath)
    server.push(reply('First run.'))
    expect((await wave(['run', planPath])).code).toBe(0)
    expect(readJson(recordOf(planPath)).spentAt).toEqual(expect.any(String))

    const requests = server.requests.length
    const again = await wave(['run', planPath])
    expect(again.code).toBe(3)
    expect(again.stderr).toContain('already ran')
    expect(again.stderr).toContain('wave approve')

    // The spending travels with the record: a copy made after the run does not run either.
    const copy = path.join(sandbox.root, 'copy')
    mkdirSync(copy)
    writeFileSync(path.join(copy, 'brave-otter.md'), PLAN)
    writeFileSync(path.join(copy, 'brave-otter.approval.json'), readFileSync(recordOf(planPath)))
    expect((await wave(['run', path.join(copy, 'brave-otter.md')])).code).toBe(3)
    expect(server.requests).toHaveLength(requests)

    await approve(planPath)
    expect(readJson(recordOf(planPath)).spentAt).toBeUndefined()
    server.push(reply('Second run.'))
    const second = await wave(['run', planPath])
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toBe('Second run.\n')
  })

  it('refuses a spent plan from its state when the record could not be marked', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    await approve(planPath)
    const record = readFileSync(recordOf(planPath))
    server.push(reply('Ran.'))
    expect((await wave(['run', planPath])).code).toBe(0)
    writeFileSync(recordOf(planPath), record) // as if the run could not write the record
    const requests = server.requests.length
    expect((await wave(['run', planPath])).code).toBe(3)
    expect(server.requests).toHaveLength(requests)
  })

  it('run --approve refuses a rejection or a request for changes (exit 3) unless --force', async () => {
    const planPath = writePlanFile(sandbox, PLAN)
    await approve(planPath, '--reject', '--feedback', 'Out of scope', '--approver', 'alice')
    const rejectedRecord = readFileSync(recordOf(planPath), 'utf8')
    const requests = server.requests.length
    const refused = await wave(['run', planPath, '--approve'])
    expect(refused.code).toBe(3)
    expect(refused.stderr).toContain('rejected by alice: Out of scope')
    expect(refused.stderr).toContain('--force')
    expect(readFileSync(recordOf(planPath), 'utf8')).toBe(rejectedRecord)

    await approve(planPath, '--request-changes', 'Smaller, please')
    expect((await wave(['run', planPath, '--approve'])).code).toBe(3)
    expect(server.requests).toHaveLength(requests)
    expect((await wave(['run', planPath, '--force'])).code).toBe(2) // --force only with --approve

    server.push(reply('Forced.'))
    const forced = await wave(['run', planPath, '--approve', '--force'])
    expect(forced.code, forced.stderr).toBe(0)
    expect(readJson(recordOf(planPath)).history.map((entry: {decision: string}) => entry.decision)).toEqual(['rejected', 'changes_requested', 'approved'])
  })
})

describe('wave plans rm and prune', () => {
  it('removes a plan by name with its record, state and transcript; prunes old plans', async () => {
    const first = await plan()
    await approve(first)
    const second = await plan()
    const sidecars = (planPath: string) =>
      ['.md', '.approval.json', '.revisions.jsonl', '.state.json', '.transcript.jsonl'].map((suffix) => planPath.replace(/\.md$/, suffix))
    expect(sidecars(first).every((file) => existsSync(file))).toBe(true)

    const removed = await wave(['plans', 'rm', path.basename(first, '.md')])
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout.trim()).toBe(first)
    expect(sidecars(first).some((file) => existsSync(file))).toBe(false)
    expect(existsSync(second)).toBe(true)
    expect((await wave(['plans', 'rm', path.basename(first, '.md')])).code).toBe(2)

    // Another file is never removed as a plan.
    writeFileSync(inRepo('notes.md'), 'mine\n')
    expect((await wave(['plans', 'rm', inRepo('notes.md')])).code).toBe(2)
    expect(existsSync(inRepo('notes.md'))).toBe(true)

    const fresh = await wave(['plans', 'prune', '--older-than', '1h', '--json'])
    expect(fresh.code, fresh.stderr).toBe(0)
    expect(JSON.parse(fresh.stdout).removed).toEqual([])
    expect(existsSync(second)).toBe(true)

    await new Promise((resolve) => setTimeout(resolve, 1100))
    const dry = await wave(['plans', 'prune', '--older-than', '1s', '--dry-run'])
    expect(dry.stdout.trim()).toBe(second)
    expect(existsSync(second)).toBe(true)
    const pruned = await wave(['plans', 'prune', '--older-than', '1s'])
    expect(pruned.code, pruned.stderr).toBe(0)
    expect(pruned.stdout.trim()).toBe(second)
    expect(sidecars(second).some((file) => existsSync(file))).toBe(false)
    expect((await wave(['plans', 'prune', '--older-than', 'soon'])).code).toBe(2)
  })
})

describe('small things', () => {
  it('answers -h and -v as --help and --version', async () => {
    const [short, long, version, longVersion, command, oclifVersion] = await Promise.all([
      wave(['-h']),
      wave(['--help']),
      wave(['-v']),
      wave(['--version']),
      wave(['plans', 'rm', '-h']),
      wave(['-v'], {WAVE_NO_FAST_START: '1'}),
    ])
    expect(short.code).toBe(0)
    expect(short.stdout).toBe(long.stdout)
    expect(short.stdout).toContain('plans')
    expect(version.stdout).toBe(longVersion.stdout)
    expect(version.stdout).toMatch(/^wave-cli\/\d+\.\d+\.\d+ /)
    expect(oclifVersion.stdout).toBe(version.stdout)
    expect(command.code).toBe(0)
    expect(command.stdout).toContain('wave plans rm')
  })

  it('reads the task from stdin with --task - and from --task-file', async () => {
    server.push((request) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)})), reply('Planned.'))
    const piped = await waveWithInput(['plan', '--task', '-'], 'A task from stdin\n')
    expect(piped.code, piped.stderr).toBe(0)
    expect(JSON.stringify(server.messageRequests[0].body.messages[0])).toContain('A task from stdin')

    write(path.join(sandbox.root, 'task.txt'), 'A task from a file\n')
    server.push(reply('Nothing to change.'))
    const fromFile = await wave(['run', '--task-file', path.join(sandbox.root, 'task.txt')])
    expect(fromFile.code, fromFile.stderr).toBe(0)
    expect(JSON.stringify(server.messageRequests.at(-1)!.body.messages[0])).toContain('A task from a file')

    const empty = await waveWithInput(['plan', '--task', '-'], '  \n')
    expect(empty.code).toBe(2)
  })

  it('refuses plan --allow rules other than WebFetch, saying why', async () => {
    const requests = server.requests.length
    const result = await wave(['plan', '--task', 'x', '--allow', 'Bash(npm test:*)'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('plan mode takes no rules but WebFetch')
    expect(server.requests).toHaveLength(requests)
  })
})

const waveWithInput = (args: string[], input: string) => runWave(args, {cwd: sandbox.repo, home: sandbox.home, input, server})
