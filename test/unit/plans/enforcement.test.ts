/**
 * The contract checks in process (plans/enforcement.ts over checks.ts): the approved checks run by wave
 * in the workspace, their exit codes deciding (not the model), the failing output sent back for another
 * turn up to the retries, a command's changes outside the scope seen from git, and the report and its
 * verdict. Commands run unsandboxed here (the record says `sandbox: off`) but for one, run in the
 * sandbox where bubblewrap starts: the e2e contract suite runs them all through bin/run.js.
 */
import {chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {type SandboxChoice, sandboxSettings, sandboxStatus} from '../../../src/base/process/sandbox.js'
import {divideChecksWrites, outputsByDirectory} from '../../../src/plans/check-outputs.js'
import {runChecks} from '../../../src/plans/checks.js'
import {Enforcement} from '../../../src/plans/enforcement.js'
import {gitCommitAll, makeSandbox, type Sandbox} from '../../support/cli.js'

let sandbox: Sandbox

beforeEach(() => {
  sandbox = makeSandbox()
})

afterEach(() => sandbox.cleanup())

const OFF = {enabled: false, network: false}
const signal = new AbortController().signal

/** A run's enforcement, its checks in the record's sandbox as a session gives it (sandboxSettings, no settings). */
function enforcement(record: ConstructorParameters<typeof Enforcement>[0]['record'] & {sandbox: SandboxChoice}, retries?: number): Enforcement {
  return new Enforcement({
    checks: {root: sandbox.repo, sandbox: sandboxSettings(record.sandbox, {sandboxEnv: []}), signal},
    place: {top: sandbox.repo, workspace: sandbox.repo},
    record,
    retries,
  })
}

describe('runChecks', () => {
  it('runs each check in the workspace, in order, whatever the one before did, keeping exit codes and output', async () => {
    const results = await runChecks([{command: 'test -f src/util.ts && echo found'}, {command: 'echo broken >&2; exit 3'}, {command: 'pwd'}], {
      root: sandbox.repo,
      sandbox: OFF,
      signal,
    })
    expect(results.map((result) => [result.command, result.exitCode, result.outputTail])).toEqual([
      ['test -f src/util.ts && echo found', 0, 'found'],
      ['echo broken >&2; exit 3', 3, 'broken'],
      ['pwd', 0, sandbox.repo],
    ])
  })

  it('kills a check that outlives its timeout, and fails it', async () => {
    const [result] = await runChecks([{command: 'sleep 30'}], {root: sandbox.repo, sandbox: OFF, signal, timeoutMs: 200})
    expect(result.exitCode).toBeNull()
    expect(result.outputTail).toContain('(killed after 200 ms: the check timed out)')
  })

  it.skipIf(!sandboxStatus().available)('runs a check in the sandbox: what it writes lands in the workspace, nowhere else', async () => {
    const outside = path.join(sandbox.root, 'outside.txt')
    const [inside, escaped] = await runChecks([{command: 'echo ok > inside.txt && cat inside.txt'}, {command: `echo no > ${outside}`}], {
      root: sandbox.repo,
      sandbox: {enabled: true, network: false},
      signal,
    })
    expect([inside.exitCode, inside.outputTail]).toEqual([0, 'ok'])
    expect(readFileSync(path.join(sandbox.repo, 'inside.txt'), 'utf8')).toBe('ok\n')
    // Outside the workspace the check sees a private /tmp (or a read-only file system): the host's is untouched.
    expect(escaped.command).toContain(outside)
    expect(existsSync(outside)).toBe(false)
  })
})

describe('Enforcement', () => {
  it('sends the failing output back for another turn up to the retries, then ends the run with the checks unmet', async () => {
    const contract = enforcement({sandbox: OFF, verify: [{command: 'test -f src/farewell.ts'}]}, 1)
    const retry = await contract.onEndTurn()
    expect(retry).toMatch(/^wave ran the approved checks when you ended your turn, and 1 of 1 failed:\n\n\$ test -f src\/farewell\.ts\n\(failed \(exit 1\), /)
    expect(retry).toContain('(retry 1 of 1)')
    expect(await contract.onEndTurn()).toBeUndefined()
    const report = contract.report([])
    expect(report.checks.map((check) => check.exitCode)).toEqual([1])
    expect(contract.problem(report)).toBe('test -f src/farewell.ts failed (exit 1)')
    expect(contract.failingMessage()).toContain('The run stopped with these checks failing.')
  })

  it('meets its checks once the work makes them pass (control: the same check, the file there)', async () => {
    const contract = enforcement({sandbox: OFF, verify: [{command: 'test -f src/farewell.ts'}]})
    expect(await contract.onEndTurn()).toBeDefined()
    writeFileSync(path.join(sandbox.repo, 'src/farewell.ts'), 'export {}\n')
    expect(await contract.onEndTurn()).toBeUndefined()
    expect(contract.problem(contract.report(['src/farewell.ts']))).toBeUndefined()
  })

  it('sees a command change a file outside the scope: recorded, told to the model, and under strict the run fails', async () => {
    const strict = enforcement({sandbox: OFF, scope: {enforce: 'strict', paths: ['src/**']}})
    expect(strict.watchesCommands).toBe(true)
    const before = await strict.beforeCommand()
    writeFileSync(path.join(sandbox.repo, 'src/inside.ts'), 'export {}\n')
    writeFileSync(path.join(sandbox.repo, 'README.md'), 'changed\n')
    const note = await strict.afterCommand(before)
    expect(note).toMatch(/^wave: this command changed files outside the approved scope \(.*\): README\.md\. The scope is strict, so this fails the run\./)
    expect([...strict.deviations]).toEqual(['README.md'])
    const report = strict.report(['README.md', 'src/inside.ts'])
    expect(report.outOfScope).toEqual(['README.md'])
    expect(strict.problem(report)).toBe('changed outside the strict scope: README.md')

    // Control: the same change under warn is recorded, and the run still meets its contract.
    const warn = enforcement({sandbox: OFF, scope: {enforce: 'warn', paths: ['src/**']}})
    const again = await warn.beforeCommand()
    writeFileSync(path.join(sandbox.repo, 'README.md'), 'changed again\n')
    expect(await warn.afterCommand(again)).toContain('Recorded as a deviation from the plan')
    expect(warn.problem(warn.report(['README.md']))).toBeUndefined()
  })

  it('without a scope, a command that changes a protected path fails the run, named, however it changes it (control: a change elsewhere is nothing)', async () => {
    mkdirSync(path.join(sandbox.repo, '.github', 'workflows'), {recursive: true})
    writeFileSync(path.join(sandbox.repo, '.github', 'workflows', 'ci.yml'), 'on: push\n')
    writeFileSync(path.join(sandbox.repo, '.github', 'workflows', 'lint.yml'), 'on: push\n')
    writeFileSync(path.join(sandbox.repo, 'CODEOWNERS'), '* @owners\n')
    gitCommitAll(sandbox.repo, 'workflows')
    const contract = enforcement({sandbox: OFF})
    expect(contract.watchesCommands).toBe(true)
    const changes: Array<[string, () => void]> = [
      ['.github/workflows/ci.yml', () => writeFileSync(path.join(sandbox.repo, '.github', 'workflows', 'ci.yml'), 'on: pull_request\n')],
      ['.github/workflows/lint.yml', () => chmodSync(path.join(sandbox.repo, '.github', 'workflows', 'lint.yml'), 0o755)],
      ['CODEOWNERS', () => rmSync(path.join(sandbox.repo, 'CODEOWNERS'))],
      [
        '.claude/settings.json',
        () => {
          mkdirSync(path.join(sandbox.repo, '.claude'))
          writeFileSync(path.join(sandbox.repo, '.claude', 'settings.json'), '{}\n')
        },
      ],
    ]
    for (const [file, change] of changes) {
      const before = await contract.beforeCommand()
      change()
      expect(await contract.afterCommand(before)).toMatch(
        new RegExp(`^wave: this command changed protected paths, .*: ${file.replaceAll('.', '\\.')}\\. This fails the run\\.`),
      )
    }

    expect([...contract.protectedChanges].sort()).toEqual(['.claude/settings.json', '.github/workflows/ci.yml', '.github/workflows/lint.yml', 'CODEOWNERS'])
    // Control: what a run without a scope may change, a tracked file and an ignored one, is nothing to it.
    const before = await contract.beforeCommand()
    writeFileSync(path.join(sandbox.repo, 'README.md'), 'changed\n')
    writeFileSync(path.join(sandbox.repo, 'ignored', 'cache.txt'), 'cache\n')
    expect(await contract.afterCommand(before)).toBeUndefined()
    expect(contract.problem(contract.report(['README.md']))).toMatch(/protected/)
  })

  it('keeps the denied calls for the report, and not the allowed ones', () => {
    const contract = enforcement({sandbox: OFF})
    contract.observe({id: 'a', input: {file_path: '../escaped.txt'}, name: 'Write', type: 'tool_call'})
    contract.observe({content: 'Permission denied: outside the workspace', denied: true, id: 'a', type: 'tool_result'})
    contract.observe({id: 'b', input: {file_path: 'src/ok.ts'}, name: 'Write', type: 'tool_call'})
    contract.observe({content: 'Wrote src/ok.ts', denied: false, id: 'b', type: 'tool_result'})
    expect(contract.report([]).denials).toEqual([{reason: 'outside the workspace', summary: '../escaped.txt', tool: 'Write'}])
  })
})

describe("the checks' outputs (issue 47)", () => {
  /** A project whose git ignores a cache, a log and node_modules/, with a runner installed there. */
  function project() {
    writeFileSync(path.join(sandbox.repo, '.gitignore'), 'ignored/\n.cache/\n*.log\nnode_modules/\n')
    mkdirSync(path.join(sandbox.repo, 'node_modules', '.bin'), {recursive: true})
    writeFileSync(path.join(sandbox.repo, 'node_modules', '.bin', 'runner'), '#!/bin/sh\n')
  }

  const strict = (verify: string[]) =>
    enforcement({sandbox: OFF, scope: {enforce: 'strict', paths: ['src/**']}, verify: verify.map((command) => ({command}))}, 1)

  it('what the checks write where git ignores it is theirs, by directory, not outside the scope (control: a tracked file they write is)', async () => {
    project()
    const contract = strict(['mkdir -p .cache/v && echo 1 > .cache/v/a && echo 2 > .cache/v/b && echo ran > src/run.log'])
    await contract.ready()
    expect(await contract.onEndTurn()).toBeUndefined()
    const report = contract.report([])
    expect(report.checkOutputs).toEqual(['.cache/', 'src/run.log'])
    expect(report.outOfScope).toEqual([])
    expect(contract.problem(report)).toBeUndefined()
    expect(existsSync(path.join(sandbox.repo, '.cache/v/b'))).toBe(true)

    const control = strict(['echo 1 > .cache-not-ignored && echo changed >> README.md'])
    await control.ready()
    await control.onEndTurn()
    const unmet = control.report([])
    expect(unmet.outOfScope).toEqual(['.cache-not-ignored', 'README.md'])
    expect(unmet.outOfScopeDuringChecks).toEqual(['.cache-not-ignored', 'README.md'])
    expect(control.problem(unmet)).toBe('changed outside the strict scope: .cache-not-ignored, README.md')
  })

  it('an executable a check plants in node_modules/.bin is never an output: a deviation (control: a cache beside it is an output)', async () => {
    project()
    const contract = strict(['echo "#!/bin/sh" > node_modules/.bin/planted && chmod +x node_modules/.bin/planted'])
    await contract.ready()
    await contract.onEndTurn()
    expect(contract.report([]).outOfScope).toEqual(['node_modules/.bin/planted'])
    expect(contract.report([]).checkOutputs).toBeUndefined()

    const control = strict(['echo cached > debug.log'])
    await control.ready()
    await control.onEndTurn()
    expect(control.report([]).outOfScope).toEqual([])
    expect(control.report([]).checkOutputs).toEqual(['debug.log'])
  })

  it("a second round measures the model from where the checks left the tree: the first round's outputs are not the model's", async () => {
    project()
    const contract = strict(['mkdir -p .cache && date +%N > .cache/stamp.log && test -f src/done.ts'])
    await contract.ready()
    expect(await contract.onEndTurn()).toContain('retry 1 of 1')
    writeFileSync(path.join(sandbox.repo, 'src/done.ts'), 'export {}\n')
    expect(await contract.onEndTurn()).toBeUndefined()
    const report = contract.report(['src/done.ts'])
    expect(report.outOfScope).toEqual([])
    expect(report.checkOutputs).toEqual(['.cache/'])
  })
})

describe('outputsByDirectory and divideChecksWrites', () => {
  it('shows ignored files by their directory where it holds several, a directory once, a lone file by name', () => {
    expect(outputsByDirectory(['calc/__pycache__/a.pyc', 'calc/__pycache__/b.pyc', '.pytest_cache/', '.pytest_cache/v/x', 'x.log', 'src/one.log'])).toEqual([
      '.pytest_cache/',
      'calc/__pycache__/',
      'src/one.log',
      'x.log',
    ])
  })

  it("a path that was tracked or untracked before is the model's even when it is ignored after, and so is a dependency", () => {
    const before = new Map([
      ['hidden.sh', '??:sha1:1'],
      ['cache/', '!!:dir'],
    ])
    const after = new Map([
      ['hidden.sh', '!!:sha1:1'],
      ['cache/', '!!:dir'],
      ['new.log', '!!:sha1:2'],
      ['node_modules/', '!!:dir'],
    ])
    expect(divideChecksWrites(before, after, (file) => file.startsWith('node_modules'))).toEqual({
      changes: ['hidden.sh', 'node_modules'],
      outputs: ['new.log'],
    })
  })
})
