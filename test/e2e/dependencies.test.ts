/**
 * Issue 47, item 2: a check's verdict rests on what the approval can see. The test runner lives in the
 * project's ignored dependencies (node_modules/, a virtualenv), which existed before the run; a pass
 * forged there, by the model's own command or by in-scope code a first check loads, fails the run
 * (exit 7, named) whatever the scope's enforcement. Each case beside its control: the payload shown to
 * work (the forged runner passes over the failing test when run by hand, or under --sandbox off, where
 * nothing is read-only, it lands on disk), and the honest change passing.
 */
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {RunReport} from '../../src/plans/report.js'
import {makeSandbox, runWave, type RunWaveResult, type Sandbox, writePlanFile} from '../support/cli.js'
import {type MessagesServer, reply, startMessagesServer, toolUse} from '../support/messages-server.js'
import {installTestRunner, makeVirtualenv, NODE_FILES, PYTEST_FILES, PYTEST_WORK} from '../support/projects.js'

const TIMEOUT = {timeout: 180_000}
const FORGED_RUNNER = '#!/usr/bin/env node\nconsole.log("99 tests passed")\n'
const NODE_WORK = 'export const greet = (name) => `hello ${name}`\nexport const farewell = (name) => `bye ${name}`\n'

interface Project {
  sandbox: Sandbox
  server: MessagesServer
}

/** A plan of `scope` and `checks`, approved with `flags` and run on `turns`; the report however the run ended. */
async function runPlan(
  {sandbox, server}: Project,
  plan: {scope: string[]; checks: string[]; flags: string[]; name?: string},
  turns: Parameters<MessagesServer['push']>,
): Promise<RunWaveResult & {report: RunReport}> {
  const text = `# The change\n\n## Scope\n${plan.scope.map((entry) => `- ${entry}`).join('\n')}\n\n## Verification\n${plan.checks.map((check) => `- \`${check}\``).join('\n')}\n`
  const planPath = writePlanFile(sandbox, text, plan.name ?? 'brave-otter')
  const approved = await runWave(['approve', planPath, ...plan.flags], {cwd: sandbox.repo, home: sandbox.home})
  expect(approved.code, approved.stderr).toBe(0)
  server.push(...turns)
  const result = await runWave(['run', planPath, '--verify-retries', '0', '--json'], {cwd: sandbox.repo, home: sandbox.home, server})
  const output = JSON.parse(result.stdout || '{}')
  return {...result, report: output.report ?? output.error?.details?.report ?? output}
}

async function withProject(files: Readonly<Record<string, string>>, prepare: (repo: string) => void, body: (project: Project) => Promise<void>): Promise<void> {
  const sandbox = makeSandbox(files as Record<string, string>)
  const server = await startMessagesServer()
  try {
    prepare(sandbox.repo)
    await body({sandbox, server})
  } finally {
    await server.close()
    sandbox.cleanup()
  }
}

const write = (file: string, content: string) => reply(toolUse('Write', {content, file_path: file}))
const bash = (command: string) => reply(toolUse('Bash', {command}))
/** A program run by hand in the project, as a user would check what the run left. */
const runHere = (repo: string, file: string, args: string[] = []) => spawnSync(file, args, {cwd: repo, encoding: 'utf8'})

describe("the project's dependencies are held as the run began", TIMEOUT, () => {
  it("the model's one Bash command cannot rewrite the runner in node_modules (read-only): the real runner fails the run (exit 7); control: with the sandbox off it lands, is found before the check (exit 7, named), and passes by hand", async () => {
    await withProject(NODE_FILES, installTestRunner, async (project) => {
      const repo = project.sandbox.repo
      const plan = {checks: ['node_modules/.bin/testrunner'], flags: ['--mode', 'bypassPermissions'], scope: ['index.js']}
      const forge = `printf '${FORGED_RUNNER.replaceAll('\n', '\\n')}' > node_modules/testrunner/lib/cli.js`
      const result = await runPlan(project, plan, [bash(forge), reply('All tests pass.')])
      expect(result.code, result.stderr).toBe(7)
      expect(result.report.enforce).toBe('warn')
      expect(result.report.checks).toEqual([expect.objectContaining({exitCode: 1, outputTail: expect.stringContaining('FAIL greet.test.js bids')})])
      expect(project.server.messageRequests[1].body.messages.at(-1)?.content).toEqual([
        expect.objectContaining({content: expect.stringMatching(/Read-only file system/)}),
      ])
      expect(readFileSync(path.join(repo, 'node_modules/testrunner/lib/cli.js'), 'utf8')).not.toBe(FORGED_RUNNER)

      const control = await runPlan(project, {...plan, flags: [...plan.flags, '--sandbox', 'off'], name: 'calm-heron'}, [bash(forge), reply('All tests pass.')])
      expect(control.code, control.stderr).toBe(7)
      expect(control.report.dependencyChanges).toEqual(['node_modules/testrunner/lib/cli.js'])
      expect(control.report.checks).toEqual([
        expect.objectContaining({exitCode: null, outputTail: expect.stringMatching(/^Not run: the project's dependencies changed/)}),
      ])
      expect(control.stderr).toMatch(/the project's dependencies changed: node_modules\/testrunner\/lib\/cli\.js/)
      expect(runHere(repo, 'node_modules/.bin/testrunner')).toMatchObject({status: 0, stdout: '99 tests passed\n'})
    })
  })

  it("in acceptEdits, the model's Write into node_modules is found before the checks (exit 7, named, no check run); control: the runner as installed and the honest change pass", async () => {
    await withProject(NODE_FILES, installTestRunner, async (project) => {
      const repo = project.sandbox.repo
      const plan = {checks: ['node_modules/.bin/testrunner'], flags: [], scope: ['index.js']}
      const result = await runPlan(project, plan, [write('node_modules/testrunner/lib/cli.js', FORGED_RUNNER), reply('All tests pass.')])
      expect(result.code, result.stderr).toBe(7)
      expect(result.report.dependencyChanges).toEqual(['node_modules/testrunner/lib/cli.js'])
      expect(result.report.checks[0]).toMatchObject({exitCode: null, outputTail: expect.stringMatching(/^Not run: the project's dependencies changed/)})
      // The payload works: the forged runner passes over the failing test.
      expect(runHere(repo, 'node_modules/.bin/testrunner')).toMatchObject({status: 0, stdout: '99 tests passed\n'})

      installTestRunner(repo)
      const honest = await runPlan(project, {...plan, name: 'calm-heron'}, [write('index.js', NODE_WORK), reply('Added farewell.')])
      expect(honest.code, honest.stderr).toBe(0)
      expect(honest.report.dependencyChanges).toBeUndefined()
      expect(honest.report.checks[0].outputTail).toContain('2 tests passed, 0 failed')
    })
  })

  it('in acceptEdits with no Bash, in-scope code a first check imports cannot rewrite the runner the second check runs (exit 7 on the real test); control: with the sandbox off the rewrite lands, and is found before the second check', async () => {
    const payload =
      "import {writeFileSync} from 'node:fs'\n" +
      `try { writeFileSync('node_modules/testrunner/lib/cli.js', ${JSON.stringify(FORGED_RUNNER)}) } catch {}\n` +
      'export const greet = (name) => `hello ${name}`\n'
    const checks = [`node -e "import('./index.js')"`, 'node_modules/.bin/testrunner']
    await withProject(NODE_FILES, installTestRunner, async (project) => {
      const repo = project.sandbox.repo
      const result = await runPlan(project, {checks, flags: [], scope: ['index.js']}, [write('index.js', payload), reply('Done.')])
      expect(result.code, result.stderr).toBe(7)
      expect(result.report.checks.map((check) => check.exitCode)).toEqual([0, 1])
      expect(result.report.checks[1].outputTail).toContain('FAIL greet.test.js bids')
      expect(result.report.dependencyChanges).toBeUndefined()
      expect(readFileSync(path.join(repo, 'node_modules/testrunner/lib/cli.js'), 'utf8')).not.toBe(FORGED_RUNNER)

      // Control: nothing read-only with the sandbox off; the payload writes, and the verification before the second check finds it.
      const control = await runPlan(project, {checks, flags: ['--sandbox', 'off'], name: 'calm-heron', scope: ['index.js']}, [
        write('index.js', payload),
        reply('Done.'),
      ])
      expect(control.code, control.stderr).toBe(7)
      expect(readFileSync(path.join(repo, 'node_modules/testrunner/lib/cli.js'), 'utf8')).toBe(FORGED_RUNNER)
      expect(control.report.checks.map((check) => check.exitCode)).toEqual([0, null])
      expect(control.report.dependencyChanges).toEqual(['node_modules/testrunner/lib/cli.js'])
    })
  })

  it('a pytest shadowed inside the virtualenv cannot be planted by the model (read-only): the real pytest fails (exit 7); control: with the sandbox off it lands, is found (exit 7, named), and answers a pass by hand', async () => {
    await withProject(PYTEST_FILES, makeVirtualenv, async (project) => {
      const repo = project.sandbox.repo
      const [lib] = readdirSync(path.join(repo, '.venv', 'lib'))
      const shadow = `.venv/lib/${lib}/site-packages/pytest`
      const plan = {checks: ['.venv/bin/python -m pytest -q'], flags: ['--mode', 'bypassPermissions'], scope: ['calc/__init__.py']}
      const forge = `mkdir -p ${shadow} && : > ${shadow}/__init__.py && echo 'print("99 passed")' > ${shadow}/__main__.py`
      const result = await runPlan(project, plan, [bash(forge), reply('Tests pass.')])
      expect(result.code, result.stderr).toBe(7)
      expect(result.report.checks[0]).toMatchObject({exitCode: 2, outputTail: expect.stringMatching(/ImportError while importing test module/)})
      expect(existsSync(path.join(repo, shadow))).toBe(false)

      const control = await runPlan(project, {...plan, flags: [...plan.flags, '--sandbox', 'off'], name: 'calm-heron'}, [bash(forge), reply('Tests pass.')])
      expect(control.code, control.stderr).toBe(7)
      expect(control.report.dependencyChanges).toEqual([shadow, `${shadow}/__init__.py`, `${shadow}/__main__.py`])
      expect(control.report.checks[0].exitCode).toBeNull()
      expect(runHere(repo, '.venv/bin/python', ['-m', 'pytest', '-q'])).toMatchObject({status: 0, stdout: '99 passed\n'})

      execFileSync('rm', ['-r', path.join(repo, shadow)])
      const honest = await runPlan(project, {...plan, name: 'quiet-lynx'}, [write('calc/__init__.py', PYTEST_WORK), reply('Added sub.')])
      expect(honest.code, honest.stderr).toBe(0)
      expect(honest.report.checks[0].outputTail).toMatch(/2 passed/)
    })
  })
})
