/**
 * What the `wave github` and `wave gitlab` end-to-end suites share: a bare repository as the forge's git
 * remote, holding main and a change request's branch "feature" one commit ahead; a fresh clone for each
 * CI job, as a fresh runner has; the plan and the run the scripted model gives; and the checks every job
 * makes (the token never shows) and reads of the plan's sticky comment; each test's stand-in
 * (useGitHubForge, useGitLabForge), the events a person's comment or note sends (githubComment,
 * noteEvent), and the variables a CI job gives wave (githubJobEnv, gitlabJobEnv).
 */
import {execFileSync} from 'node:child_process'
import {copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {fileURLToPath} from 'node:url'

import {afterEach, beforeEach, expect} from 'vitest'

import {runWave, type RunWaveResult, type Sandbox} from './cli.js'
import type {ForgeStandIn} from './forge-server.js'
import {type GitHubServer, type Role, startGitHubServer, type StoredComment} from './github-server.js'
import {type GitLabServer, startGitLabServer, type StoredNote} from './gitlab-server.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolUse} from './messages-server.js'
import {type ScriptedSession, useScriptedSession} from './session.js'

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

/** A commit pushed to the remote's "feature" branch from the sandbox's repository, as its author pushes: answers the branch's new head, for the stand-in's change request to move to. */
export function pushToFeature(sandbox: Sandbox, remote: string): string {
  git(sandbox.repo, ['fetch', '-q', 'origin'])
  git(sandbox.repo, ['checkout', '-q', '-B', 'feature', 'origin/feature'])
  git(sandbox.repo, ['commit', '-q', '--allow-empty', '-m', 'Another push'])
  git(sandbox.repo, ['push', '-q', 'origin', 'feature'])
  return git(remote, ['rev-parse', 'refs/heads/feature'])
}

/** The remote (`root/remote.git`, the sandbox's repository's origin), holding main and "feature" one commit ahead; `headSha` is feature's. */
export function forgeRemote(sandbox: Sandbox): {remote: string; headSha: string} {
  const remote = path.join(sandbox.root, 'remote.git')
  // No template, here and in each clone: git's sample hooks are files every test would write and remove (cli.ts).
  git(sandbox.root, ['-c', 'init.defaultBranch=main', 'init', '-q', '--bare', '--template=', remote])
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
  git(runner, ['clone', '-q', '--template=', remote, checkout])
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

// ------------------------------------------------------------------------------------- the stand-ins

/** The token every forge suite's jobs hold: it must never show (expectTokenKept). */
export const GITHUB_TOKEN = 'ghs_test-token-never-logged-0123456789'
export const GITLAB_TOKEN = 'glpat-test-token-never-logged-0123456789'
/** The GitLab project every suite's jobs are in. */
export const GITLAB_PROJECT = 42
/** The change request every suite works on (GitHub's pull request 7, GitLab's merge request !7), and the issue (12). */
export const CHANGE_REQUEST_TITLE = 'Greet people by name'
export const MR = {iid: 7, type: 'MergeRequest'} as const
export const ISSUE = {iid: 12, type: 'Issue'} as const

/** A test's forge: the scripted session's sandbox and server, the remote with main and "feature", the stand-in. */
export interface ForgeOf<Server> extends ScriptedSession {
  forge: Server
  remote: string
  /** The head of "feature", the change request's branch. */
  headSha: string
}

/**
 * Registers each test's forge: the scripted session (useScriptedSession), the remote (forgeRemote), and
 * the stand-in `start` makes for it, closed after the test; `onReady` receives them.
 */
function useForge<Server extends ForgeStandIn>(start: (remote: string, headSha: string) => Promise<Server>, onReady: (made: ForgeOf<Server>) => void): void {
  let session: ScriptedSession
  let forge: Server | undefined
  useScriptedSession((made) => (session = made))
  beforeEach(async () => {
    const {headSha, remote} = forgeRemote(session.sandbox)
    forge = await start(remote, headSha)
    onReady({...session, forge, headSha, remote})
  })
  afterEach(async () => {
    await forge?.close()
  })
}

/** Each test's GitHub: octo/demo's stand-in with pull request 7 from "feature" (and issue 12, with `issue`). */
export function useGitHubForge(options: {permissions: Record<string, Role>; issue?: boolean}, onReady: (made: ForgeOf<GitHubServer>) => void): void {
  useForge(async (remote, headSha) => {
    const github = await startGitHubServer({owner: 'octo', permissions: options.permissions, remote, repo: 'demo', token: GITHUB_TOKEN})
    github.addPull({base: {ref: 'main'}, body: 'Adds a greeting.', head: {ref: 'feature', sha: headSha}, number: 7, title: CHANGE_REQUEST_TITLE})
    if (options.issue) github.addIssue({body: 'The app should also say goodbye.', number: 12, title: 'Say goodbye too'})
    return github
  }, onReady)
}

/** Each test's GitLab: group/demo's stand-in with `members` (name → access level), merge request !7 (and issue 12, with `issue`). */
export function useGitLabForge(options: {members: Record<string, number>; issue?: boolean}, onReady: (made: ForgeOf<GitLabServer>) => void): void {
  useForge(async (remote, headSha) => {
    const gitlab = await startGitLabServer({members: options.members, path: 'group/demo', projectId: GITLAB_PROJECT, remote, token: GITLAB_TOKEN})
    const mergeRequest = {author: 'alice', description: 'Adds a greeting.', iid: 7, sha: headSha, source_branch: 'feature', target_branch: 'main'}
    gitlab.addMergeRequest({...mergeRequest, title: CHANGE_REQUEST_TITLE})
    if (options.issue) gitlab.addIssue({description: 'The app should also say goodbye.', iid: 12, title: 'Say goodbye too'})
    return gitlab
  }, onReady)
}

const GITHUB_FIXTURES = fileURLToPath(new URL('../fixtures/github/', import.meta.url))

/** A GitHub event as test/fixtures/github/ keeps it (a webhook's body as GitHub sends it). */
export const githubFixture = (name: string): GitHubCommentEvent => JSON.parse(readFileSync(path.join(GITHUB_FIXTURES, name), 'utf8'))

/** A person's comment, written in the thread now (or at `at`), and the issue_comment event GitHub sends for it (7: the pull request, else an issue). */
export function githubComment(
  github: GitHubServer,
  issue: number,
  body: string,
  by = 'alice',
  at?: string,
): {event: GitHubCommentEvent; stored: StoredComment} {
  const stored = github.addComment(issue, body, {login: by})
  if (at) stored.created_at = stored.updated_at = at
  const event = githubFixture(issue === 7 ? 'issue_comment.pull_request.json' : 'issue_comment.issue.json')
  event.comment = {
    ...event.comment,
    body,
    created_at: stored.created_at,
    html_url: stored.html_url,
    id: stored.id,
    updated_at: stored.updated_at,
    user: {...event.comment.user, id: github.userId(by), login: by},
  }
  event.sender = {...event.sender, id: github.userId(by), login: by}
  return {event, stored}
}

// biome-ignore lint/suspicious/noExplicitAny: GitHub's event, as tests change it freely
export type GitHubCommentEvent = any

/** The variables a GitHub Actions job gives `wave github`: the event in `eventPath`, WAVE_HOME in the runner. */
/** What one `wave github` job for a comment left: its result, its WAVE_HOME (what the recipe's cache keeps of a stopped session), its job summary. */
export interface CommentJob {
  result: RunWaveResult
  home: string
  summary: string
}

/**
 * One workflow run of `wave github` for a comment on pull request 7, as the Action's step runs it: a fresh
 * clone, a fresh WAVE_HOME (or one restored from `restore`, as the recipe's cache does), a job summary
 * file, the event in a file; `args` and `env` are the job's own. The token is checked never to leak.
 */
export async function commentJob(
  made: {github: GitHubServer; remote: string; sandbox: Sandbox; server: MessagesServer},
  job: {body: string; by: string; run: number; restore?: string; args?: string[]; env?: Record<string, string>},
): Promise<CommentJob> {
  const {github, remote, sandbox, server} = made
  const {checkout, runner} = freshRunner(sandbox, remote, job.run)
  const home = path.join(runner, 'wave')
  if (job.restore) cpSync(job.restore, home, {recursive: true})
  const summaryFile = path.join(runner, 'summary.md')
  const eventPath = path.join(runner, 'event.json')
  writeFileSync(eventPath, JSON.stringify(githubComment(github, 7, job.body, job.by).event))
  const result = await runWave(['github', ...(job.args ?? [])], {
    cwd: checkout,
    env: {
      ...githubJobEnv(github, {eventName: 'issue_comment', eventPath, run: job.run, runner}),
      GITHUB_STEP_SUMMARY: summaryFile,
      WAVE_HOME: home,
      ...job.env,
    },
    home: sandbox.home,
    server,
    timeoutMs: 90_000,
  })
  expectTokenKept(
    GITHUB_TOKEN,
    result,
    checkout,
    github.comments.map((c) => c.body),
  )
  return {home, result, summary: existsSync(summaryFile) ? readFileSync(summaryFile, 'utf8') : ''}
}

export function githubJobEnv(github: GitHubServer, job: {eventName: string; eventPath: string; runner: string; run: number}): Record<string, string> {
  return {
    GITHUB_API_URL: github.url,
    GITHUB_EVENT_NAME: job.eventName,
    GITHUB_EVENT_PATH: job.eventPath,
    GITHUB_REPOSITORY: 'octo/demo',
    GITHUB_RUN_ID: String(9000 + job.run),
    GITHUB_SERVER_URL: 'https://github.test',
    GITHUB_TOKEN,
    WAVE_HOME: path.join(job.runner, 'wave'),
  }
}

/** The note event GitLab's webhook sends (TRIGGER_PAYLOAD). */
export interface NoteEvent {
  event_type: 'note'
  object_kind: 'note'
  object_attributes: {author_id: number; created_at: string; id: number; note: string; noteable_type: string; system: boolean; url: string}
  project: {id: number; path_with_namespace: string; web_url: string}
  project_id: number
  user: {id: number; name: string; username: string}
  merge_request?: {iid: number; source_branch: string; target_branch: string; title: string}
  issue?: {iid: number; title: string}
}

/** A person's note, written on the merge request (or issue) now, and the note event GitLab's webhook sends for it. */
export function noteEvent(gitlab: GitLabServer, on: StoredNote['noteable'], body: string, by = 'alice'): {payload: NoteEvent; stored: StoredNote} {
  const stored = gitlab.addNote(on, body, by)
  const pull = on.type === 'MergeRequest'
  const payload: NoteEvent = {
    event_type: 'note',
    object_attributes: {
      author_id: stored.author.id,
      // As the webhook writes times: 2030-01-01 00:00:01 UTC.
      created_at: stored.created_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'),
      id: stored.id,
      note: body,
      noteable_type: on.type,
      system: false,
      url: `https://gitlab.test/group/demo/-/${pull ? 'merge_requests' : 'issues'}/${on.iid}#note_${stored.id}`,
    },
    object_kind: 'note',
    project: {id: GITLAB_PROJECT, path_with_namespace: 'group/demo', web_url: 'https://gitlab.test/group/demo'},
    project_id: GITLAB_PROJECT,
    user: {id: stored.author.id, name: by, username: by},
    ...(pull
      ? {merge_request: {iid: on.iid, source_branch: 'feature', target_branch: 'main', title: CHANGE_REQUEST_TITLE}}
      : {issue: {iid: on.iid, title: 'Say goodbye too'}}),
  }
  return {payload, stored}
}

/** GitLab's predefined variables for pipeline job `job` (of `source`), in `checkout`, with the project's token; WAVE_HOME in the runner. */
export function gitlabJobEnv(
  gitlab: GitLabServer,
  job: {remote: string; runner: string; checkout: string; job: number; source: string},
): Record<string, string> {
  return {
    CI: 'true',
    CI_API_V4_URL: gitlab.apiUrl,
    CI_COMMIT_REF_NAME: 'main',
    CI_COMMIT_SHA: git(job.remote, ['rev-parse', 'refs/heads/main']),
    CI_PIPELINE_SOURCE: job.source,
    CI_PIPELINE_URL: `https://gitlab.test/group/demo/-/pipelines/${9000 + job.job}`,
    CI_PROJECT_DIR: job.checkout,
    CI_PROJECT_ID: String(GITLAB_PROJECT),
    CI_PROJECT_PATH: 'group/demo',
    CI_PROJECT_URL: 'https://gitlab.test/group/demo',
    CI_SERVER_URL: 'https://gitlab.test',
    GITLAB_TOKEN,
    WAVE_GITLAB_REMOTE: 'origin',
    WAVE_HOME: path.join(job.runner, 'wave'),
  }
}

// ------------------------------------------------------------------------------- a plan's units' jobs

/**
 * A CI job's machine given the approved plan (the approving job's artifact: the plan and its record from
 * its WAVE_HOME, `<runner>/wave`), with the planned commit checked out; the plan's path there.
 */
export function jobWithPlan(job: {checkout: string; runner: string}, approved: {runner: string; name: string}, commit: string): string {
  const plans = path.join(job.runner, 'wave', 'plans')
  mkdirSync(plans, {recursive: true})
  for (const file of [`${approved.name}.md`, `${approved.name}.approval.json`])
    copyFileSync(path.join(approved.runner, 'wave', 'plans', file), path.join(plans, file))
  git(job.checkout, ['checkout', '-q', commit])
  return path.join(plans, `${approved.name}.md`)
}

/** The merge job's `wave plans merge <plan> --json`, over `results` (each with its patch beside it) gathered in one folder as the recipes' artifacts are. */
export function mergeResults(job: {checkout: string; runner: string}, plan: string, results: string[], home: string): Promise<RunWaveResult> {
  const folder = path.join(job.runner, 'wave-units')
  mkdirSync(folder)
  for (const result of results) for (const file of [result, result.replace(/\.json$/, '.patch')]) copyFileSync(file, path.join(folder, path.basename(file)))
  return runWave(['plans', 'merge', plan, folder, '--json'], {cwd: job.checkout, env: {WAVE_HOME: path.join(job.runner, 'wave')}, home, timeoutMs: 90_000})
}
