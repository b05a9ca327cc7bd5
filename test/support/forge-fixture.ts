/**
 * What the `wave github` and `wave gitlab` end-to-end suites share: a bare repository as the forge's git
 * remote, holding main and a change request's branch "feature" one commit ahead; a fresh clone for each
 * CI job, as a fresh runner has; the plan and the run the scripted model gives; and the checks every job
 * makes (the token never shows) and reads of the plan's sticky comment.
 */
import {execFileSync} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {expect} from 'vitest'

import type {RunWaveResult, Sandbox} from './cli.js'
import {planPathIn, type RecordedRequest, reply, toolUse} from './messages-server.js'

export const PLAN = '# Plan: add a farewell\n\n1. Create src/farewell.ts exporting farewell(name).\n'
export const REVISED = '# Plan: add a goodbye\n\n1. Create src/farewell.ts exporting goodbye(name).\n'
export const FAREWELL = 'export function farewell(name: string): string {\n  return `bye ${name}`\n}\n'

/** git with no user or system config, its output trimmed. */
export function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, LC_ALL: 'C', PATH: process.env.PATH ?? '/usr/bin:/bin'},
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()
}

/** The remote (`root/remote.git`, the sandbox's repository's origin), holding main and "feature" one commit ahead; `headSha` is feature's. */
export function forgeRemote(sandbox: Sandbox): {remote: string; headSha: string} {
  const remote = path.join(sandbox.root, 'remote.git')
  git(sandbox.root, ['-c', 'init.defaultBranch=main', 'init', '-q', '--bare', remote])
  git(sandbox.repo, ['remote', 'add', 'origin', remote])
  git(sandbox.repo, ['push', '-q', 'origin', 'main'])
  git(sandbox.repo, ['checkout', '-q', '-b', 'feature'])
  writeFileSync(path.join(sandbox.repo, 'README.md'), '# demo\n\nNow with greetings.\n')
  git(sandbox.repo, ['commit', '-q', '-am', 'Greet people'])
  git(sandbox.repo, ['push', '-q', 'origin', 'feature'])
  git(sandbox.repo, ['checkout', '-q', 'main'])
  return {headSha: git(remote, ['rev-parse', 'refs/heads/feature']), remote}
}

/** CI job number `job`: its own directory `root/runner-<job>` holding a fresh clone of the remote (`checkout`). */
export function freshRunner(sandbox: Sandbox, remote: string, job: number): {runner: string; checkout: string} {
  const runner = path.join(sandbox.root, `runner-${job}`)
  mkdirSync(runner)
  const checkout = path.join(runner, 'checkout')
  git(runner, ['clone', '-q', remote, checkout])
  return {checkout, runner}
}

/** The token never shows, wherever wave writes: its output, the checkout's git config, what it posted. */
export function expectTokenKept(token: string, result: RunWaveResult, checkout: string, posted: string[]): void {
  expect(result.stdout + result.stderr).not.toContain(token)
  expect(readFileSync(path.join(checkout, '.git', 'config'), 'utf8')).not.toContain(token)
  for (const body of posted) expect(body).not.toContain(token)
}

/** The model's planning: it writes `plan` to the plan file, then ends its turn. */
export const planTurns = (plan = PLAN) => [
  (request: RecordedRequest) => reply(toolUse('Write', {content: plan, file_path: planPathIn(request)})),
  reply('Planned.'),
]
/** The model's run: it writes src/farewell.ts, then ends its turn. */
export const runTurns = () => [reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})), reply('Added src/farewell.ts.')]

/** A sticky comment's plan name (its marker) and status (its table's row). */
export const nameIn = (body: string) => /^<!-- wave:plan:(\S+) -->/.exec(body)![1]
export const statusOf = (body: string) => /^\| Status \| (.+) \|$/m.exec(body)?.[1]

/** The text of a request's first user message: the task or the plan the model was given. */
export const firstUserText = (request: RecordedRequest): string => {
  const content = request.body.messages[0].content
  return typeof content === 'string' ? content : content.map((block: {text?: string}) => block.text ?? '').join('\n')
}
