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

/** The check the contract plan names: wave runs it after the run, in the checkout. */
export const CHECK = 'test -f src/farewell.ts'
/** The plan with a contract: it may change src/farewell.ts only, and CHECK must pass. */
export const CONTRACT_PLAN = `${PLAN}\n## Scope\n- src/farewell.ts\n\n## Verification\n- \`${CHECK}\`\n`

/**
 * Planning that leaves the reviewer something besides the plan: a to-do list (at step 2 of 3), a question
 * no one can answer during the session, and CONTRACT_PLAN.
 */
export const notedPlanTurns = () => [
  reply(
    toolUse('TodoWrite', {
      todos: [
        {activeForm: 'Reading the greeting', content: 'Read the greeting', status: 'completed'},
        {activeForm: 'Writing the plan', content: 'Write the plan', status: 'in_progress'},
        {activeForm: 'Listing the checks', content: 'List the checks', status: 'pending'},
      ],
    }),
  ),
  reply(
    toolUse('AskUserQuestion', {
      questions: [
        {
          header: 'Wording',
          multiSelect: false,
          options: [
            {description: 'Short', label: 'bye'},
            {description: 'Formal', label: 'farewell'},
          ],
          question: 'Should it say bye or farewell?',
        },
      ],
    }),
  ),
  (request: RecordedRequest) => reply(toolUse('Write', {content: CONTRACT_PLAN, file_path: planPathIn(request)})),
  reply('Planned.'),
]

/** What a reviewer must read of notedPlanTurns' session (`where`: a comment, a note, a job summary): the to-do list, the question, the contract. */
export function expectPlanNotes(body: string, where: string): void {
  expect(body, where).toContain(
    '**To-do list** (step 2 of 3: Writing the plan)\n\n- [x] Read the greeting\n- [ ] (in progress) Write the plan\n- [ ] List the checks',
  )
  expect(body, where).toMatch(/\*\*Open questions\*\* \(.*\n\n- Should it say bye or farewell\?/)
  expect(body, where).toContain('| Scope | `src/farewell.ts` (warn) |')
  expect(body, where).toContain(`| Checks | \`${CHECK}\` |`)
}

/** A run of CONTRACT_PLAN with one call denied: a write outside the workspace (at the model's second request's result), then the file. */
export const deniedRunTurns = () => [
  reply(toolUse('Write', {content: 'escaped\n', file_path: '../escaped.txt'})),
  reply(toolUse('Write', {content: FAREWELL, file_path: 'src/farewell.ts'})),
  reply('Added src/farewell.ts.'),
]

/** deniedRunTurns' run as its text tally says it. */
export const DENIED_RUN_TALLY = `Run complete: 1 changed in scope, 0 outside, 0 untouched; checks: ${CHECK} passed; 1 call denied`

/** What a reviewer must read of deniedRunTurns' run: planned versus actual, the check passed, the call denied. */
export function expectRunReport(body: string, where: string): void {
  expect(body, where).toContain('**Planned versus actual**')
  expect(body, where).toContain('| Scope | `src/farewell.ts` (warn) |')
  expect(body, where).toContain('| Denied calls | 1 |')
  expect(body, where).toContain(`| \`${CHECK}\` | ✅ passed |`)
}

/** A plan with two units, each with its own paths (farewell: its own check too). */
export const UNITS_PLAN = `${PLAN}
## Scope
- src/**

## Verification
- \`test -f src/farewell.ts\`

## Units

### farewell
Write src/farewell.ts.
#### Scope
- src/farewell.ts
#### Verification
- \`test -f src/farewell.ts\`

### other
#### Scope
- src/other/**
`
