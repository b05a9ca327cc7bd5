/**
 * Issue 47, item 1: what the approved checks write is not the model's change. Real projects' test
 * runners write caches and reports where git ignores them (pytest's `.pytest_cache/` and `__pycache__/`,
 * a runner's `coverage/`): a correct change under a strict scope naming only the changed file exits 0,
 * with those listed as `checkOutputs`, on disk, and not delivered. What made every change count still
 * fails: an executable planted in node_modules/.bin through a check (dependencies.test.ts has the rest of
 * the dependencies' cases), a background command's ignored write, each beside its control. (A check writing a tracked file outside the scope, and the model replacing a runner in
 * node_modules/.bin, are contract-hostile.test.ts's.)
 */
import {existsSync, lstatSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {RunReport} from '../../src/plans/report.js'
import {makeSandbox, runWave, type RunWaveResult, type Sandbox, writePlanFile} from '../support/cli.js'
import {type MessagesServer, reply, startMessagesServer, toolUse} from '../support/messages-server.js'
import {installTestRunner, makeVirtualenv, NODE_FILES, PYTEST_FILES, PYTEST_WORK} from '../support/projects.js'

const TIMEOUT = {timeout: 180_000}

/** A plan of `scope` and `checks`, approved (bypassPermissions, `enforce`) and run on `turns`; the report however the run ended. */
async function runPlan(
  project: {sandbox: Sandbox; server: MessagesServer},
  plan: {scope: string[]; checks: string[]; enforce?: string; flags?: string[]; name?: string},
  turns: Parameters<MessagesServer['push']>,
): Promise<RunWaveResult & {report: RunReport}> {
  const {sandbox, server} = project
  const text = `# The change\n\n## Scope\n${plan.scope.map((entry) => `- ${entry}`).join('\n')}\n\n## Verification\n${plan.checks.map((check) => `- \`${check}\``).join('\n')}\n`
  const planPath = writePlanFile(sandbox, text, plan.name ?? 'brave-otter')
  const approved = await runWave(['approve', planPath, '--mode', 'bypassPermissions', '--scope-enforce', plan.enforce ?? 'strict', ...(plan.flags ?? [])], {
    cwd: sandbox.repo,
    home: sandbox.home,
  })
  expect(approved.code, approved.stderr).toBe(0)
  server.push(...turns)
  const result = await runWave(['run', planPath, '--verify-retries', '0', '--json'], {cwd: sandbox.repo, home: sandbox.home, server})
  const output = JSON.parse(result.stdout || '{}')
  return {...result, report: output.report ?? output.error?.details?.report ?? output}
}

async function withProject<T>(
  files: Readonly<Record<string, string>>,
  prepare: (repo: string) => void,
  body: (project: {sandbox: Sandbox; server: MessagesServer}) => Promise<T>,
): Promise<T> {
  const sandbox = makeSandbox(files as Record<string, string>)
  const server = await startMessagesServer()
  try {
    prepare(sandbox.repo)
    return await body({sandbox, server})
  } finally {
    await server.close()
    sandbox.cleanup()
  }
}

const write = (file: string, content: string) => reply(toolUse('Write', {content, file_path: file}))
const bash = (command: string, extra: Record<string, unknown> = {}) => reply(toolUse('Bash', {command, ...extra}))

describe("the checks' outputs are theirs", TIMEOUT, () => {
  it("a pytest project: the change under a strict scope of one file exits 0, its caches listed as the checks' outputs and left on disk", async () => {
    await withProject(PYTEST_FILES, makeVirtualenv, async (project) => {
      const result = await runPlan(project, {checks: ['.venv/bin/python -m pytest -q'], scope: ['calc/__init__.py']}, [
        write('calc/__init__.py', PYTEST_WORK),
        reply('Added sub.'),
      ])
      expect(result.code, result.stderr).toBe(0)
      expect(result.report.checks).toEqual([expect.objectContaining({exitCode: 0})])
      expect(result.report.checks[0].outputTail).toMatch(/2 passed/)
      expect(result.report.changed).toEqual(['calc/__init__.py'])
      expect(result.report.outOfScope).toEqual([])
      expect(result.report.checkOutputs).toEqual(['.pytest_cache/', 'calc/__pycache__/', 'tests/__pycache__/'])
      for (const cache of ['.pytest_cache', 'calc/__pycache__', 'tests/__pycache__'])
        expect(existsSync(path.join(project.sandbox.repo, cache)), cache).toBe(true)
      // The tally names them on their own (wave plans shows the last run's).
      const shown = await runWave(['plans', 'brave-otter'], {cwd: project.sandbox.repo, home: project.sandbox.home})
      expect(shown.stdout).toContain(
        'Run complete: 1 changed in scope, 0 outside, 0 untouched; checks: .venv/bin/python -m pytest -q passed (their outputs, not delivered: .pytest_cache/, calc/__pycache__/, tests/__pycache__/)',
      )
    })
  })

  it('a node project: a runner writing node_modules/.vite and coverage/ exits 0 under a strict scope of one file', async () => {
    await withProject(NODE_FILES, installTestRunner, async (project) => {
      const work = 'export const greet = (name) => `hello ${name}`\nexport const farewell = (name) => `bye ${name}`\n'
      const result = await runPlan(project, {checks: ['node_modules/.bin/testrunner'], scope: ['index.js']}, [
        write('index.js', work),
        reply('Added farewell.'),
      ])
      expect(result.code, result.stderr).toBe(0)
      expect(result.report.checks[0].outputTail).toContain('2 tests passed, 0 failed')
      expect(result.report.outOfScope).toEqual([])
      expect(result.report.checkOutputs).toEqual(['coverage/'])
      expect(readFileSync(path.join(project.sandbox.repo, 'node_modules/.vite/testrunner/results.json'), 'utf8')).toContain('"greet.test.js bids":true')
    })
  })

  it('plan units sharing a cache directory each run clean under a strict scope, and their patches hold no cache', async () => {
    const files = {
      ...PYTEST_FILES,
      'tests/test_text.py': 'from text import shout\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n',
      'text/__init__.py': '',
    }
    await withProject(files, makeVirtualenv, async ({sandbox, server}) => {
      const plan = `# Plan: sub and shout

## Scope
- calc/**
- text/**

## Verification
- \`.venv/bin/python -m pytest -q\`

## Units

### calc
Add sub to calc/__init__.py.

#### Scope
- calc/**

#### Verification
- \`.venv/bin/python -m pytest -q tests/test_calc.py\`

### text
Add shout to text/__init__.py.

#### Scope
- text/**

#### Verification
- \`.venv/bin/python -m pytest -q tests/test_text.py\`
`
      const planPath = writePlanFile(sandbox, plan, 'two-units')
      const approved = await runWave(['approve', planPath, '--mode', 'bypassPermissions', '--scope-enforce', 'strict'], {cwd: sandbox.repo, home: sandbox.home})
      expect(approved.code, approved.stderr).toBe(0)
      const work = {calc: ['calc/__init__.py', PYTEST_WORK], text: ['text/__init__.py', 'def shout(text):\n    return text.upper() + "!"\n']}
      for (const [unit, [file, content]] of Object.entries(work)) {
        server.push(write(file, content), reply('Done.'))
        const patchOut = path.join(sandbox.root, `${unit}.patch`)
        const result = await runWave(['run', planPath, '--unit', unit, '--patch-out', patchOut, '--json'], {cwd: sandbox.repo, home: sandbox.home, server})
        expect(result.code, `${unit}: ${result.stderr}`).toBe(0)
        const report = JSON.parse(result.stdout).report as RunReport
        expect(report.outOfScope).toEqual([])
        // The first unit's checks made the shared caches; the second's wrote into them, and made its own.
        expect(report.checkOutputs).toEqual(unit === 'calc' ? ['.pytest_cache/', 'calc/__pycache__/', 'tests/__pycache__/'] : ['text/__pycache__/'])
        const patch = readFileSync(patchOut, 'utf8')
        expect(patch).toContain(`+++ b/${file}`)
        expect(patch).not.toMatch(/pytest_cache|__pycache__/)
      }
    })
  })
})

describe('what made every change count still fails', TIMEOUT, () => {
  it('code a first check runs cannot plant an executable in node_modules/.bin that the second runs: the real runner fails (exit 7); control: with the sandbox off it lands, and is found before the second check (exit 7, named)', async () => {
    const plant =
      "import {chmodSync, rmSync, writeFileSync} from 'node:fs'\n" +
      "rmSync('node_modules/.bin/testrunner')\n" +
      "writeFileSync('node_modules/.bin/testrunner', '#!/bin/sh\\necho 99 tests passed\\n')\n" +
      "chmodSync('node_modules/.bin/testrunner', 0o755)\n"
    const turns = () => [write('plant.js', plant), reply('Done.')]
    const plan = {checks: ['node plant.js', 'node_modules/.bin/testrunner'], enforce: 'warn', scope: ['plant.js']}
    await withProject(NODE_FILES, installTestRunner, async (project) => {
      const bin = path.join(project.sandbox.repo, 'node_modules/.bin/testrunner')
      const result = await runPlan(project, plan, turns())
      expect(result.code, result.stderr).toBe(7)
      expect(result.report.checks.map((check) => check.exitCode)).toEqual([1, 1])
      expect(result.report.checks[0].outputTail).toMatch(/EROFS/)
      expect(result.report.checks[1].outputTail).toContain('FAIL greet.test.js bids')
      expect(lstatSync(bin).isSymbolicLink()).toBe(true)

      const control = await runPlan(project, {...plan, flags: ['--sandbox', 'off'], name: 'calm-heron'}, turns())
      expect(control.code, control.stderr).toBe(7)
      expect(readFileSync(bin, 'utf8'), JSON.stringify(control.report)).toBe('#!/bin/sh\necho 99 tests passed\n')
      expect(control.report.checks.map((check) => check.exitCode)).toEqual([0, null])
      expect(control.report.dependencyChanges).toEqual(['node_modules/.bin/testrunner'])
      expect(control.report.outOfScope).toEqual(['node_modules/.bin/testrunner'])
    })
  })

  it("a background command's write to an ignored path before the checks is the model's (exit 7); control: the same write by the check is its output (exit 0)", async () => {
    await withProject(NODE_FILES, installTestRunner, async (project) => {
      const writer = 'while [ ! -e go.txt ]; do sleep 0.02; done; mkdir -p coverage && echo forged > coverage/summary.txt'
      const result = await runPlan(project, {checks: ['true'], scope: ['go.txt']}, [
        bash(writer, {run_in_background: true}),
        write('go.txt', 'go\n'),
        reply(toolUse('TaskOutput', {block: true, task_id: 'bash_1', timeout: 10_000})),
        reply('Done.'),
      ])
      expect(result.code, result.stderr).toBe(7)
      expect(result.report.outOfScope).toEqual(['coverage'])
      expect(result.report.checkOutputs).toBeUndefined()
      expect(readFileSync(path.join(project.sandbox.repo, 'coverage/summary.txt'), 'utf8')).toBe('forged\n')
    })

    await withProject(NODE_FILES, installTestRunner, async (project) => {
      const control = await runPlan(project, {checks: ['mkdir -p coverage && echo made > coverage/summary.txt'], scope: ['go.txt']}, [
        write('go.txt', 'go\n'),
        reply('Done.'),
      ])
      expect(control.code, control.stderr).toBe(0)
      expect(control.report.outOfScope).toEqual([])
      expect(control.report.checkOutputs).toEqual(['coverage/'])
    })
  })
})
