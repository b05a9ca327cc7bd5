/**
 * A plan with units on GitLab, end to end (issue 36): `/wave approve` in a note binds the units and runs
 * nothing, leaving the child pipeline (one job per unit, extending the template of
 * examples/gitlab-ci/wave-unit.gitlab-ci.yml) in the job's report folder for wave.gitlab-ci.yml's
 * wave:units trigger; the note shows a pending row per unit; the merge job's `wave gitlab --units-merged`
 * (WAVE_THREAD naming the merge request, as the recipe passes it down) shows each unit's outcome and
 * delivers. Against the GitLab stand-in, a bare git remote and the scripted Messages API.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {runWave, type RunWaveResult, type Sandbox, sha256} from '../support/cli.js'
import {expectTokenKept, FAREWELL, forgeRemote, freshRunner, git, nameIn, planTurns, statusOf, UNITS_PLAN} from '../support/forge-fixture.js'
import {type GitLabServer, startGitLabServer, type StoredNote} from '../support/gitlab-server.js'
import type {MessagesServer} from '../support/messages-server.js'
import {useScriptedSession} from '../support/session.js'

const TOKEN = 'glpat-test-token-never-logged-0123456789'
const PROJECT = 42
const MR = {iid: 7, type: 'MergeRequest'} as const
const TEMPLATE = parse(readFileSync(fileURLToPath(new URL('../../examples/gitlab-ci/wave-unit.gitlab-ci.yml', import.meta.url)), 'utf8')) as Record<
  string,
  unknown
>

let sandbox: Sandbox
let server: MessagesServer
let gitlab: GitLabServer
let remote: string
let headSha: string
let jobs = 0
useScriptedSession((session) => ({sandbox, server} = session))

beforeEach(async () => {
  const made = forgeRemote(sandbox)
  remote = made.remote
  headSha = made.headSha
  gitlab = await startGitLabServer({members: {alice: 30, mona: 40}, path: 'group/demo', projectId: PROJECT, remote, token: TOKEN})
  gitlab.addMergeRequest({
    author: 'alice',
    description: 'Adds a greeting.',
    iid: 7,
    sha: headSha,
    source_branch: 'feature',
    target_branch: 'main',
    title: 'Greet',
  })
})

afterEach(async () => {
  await gitlab.close()
})

/** One pipeline job: a fresh clone (prepared by `before`, which answers wave gitlab's arguments), CI_PROJECT_DIR the checkout. */
async function job(payload: unknown, env: Record<string, string> = {}, before?: (job: {checkout: string; runner: string}) => string[]) {
  const {checkout, runner} = freshRunner(sandbox, remote, ++jobs)
  const args = before?.({checkout, runner}) ?? []
  const variables: Record<string, string> = {
    CI: 'true',
    CI_API_V4_URL: gitlab.apiUrl,
    CI_COMMIT_REF_NAME: 'main',
    CI_COMMIT_SHA: git(remote, ['rev-parse', 'refs/heads/main']),
    CI_PIPELINE_SOURCE: 'parent_pipeline',
    CI_PIPELINE_URL: `https://gitlab.test/group/demo/-/pipelines/${9000 + jobs}`,
    CI_PROJECT_DIR: checkout,
    CI_PROJECT_ID: String(PROJECT),
    CI_PROJECT_PATH: 'group/demo',
    CI_PROJECT_URL: 'https://gitlab.test/group/demo',
    CI_SERVER_URL: 'https://gitlab.test',
    GITLAB_TOKEN: TOKEN,
    WAVE_GITLAB_REMOTE: 'origin',
    WAVE_HOME: path.join(runner, 'wave'),
    ...env,
  }
  if (payload !== undefined) {
    const payloadPath = path.join(runner, 'TRIGGER_PAYLOAD')
    writeFileSync(payloadPath, JSON.stringify(payload))
    variables.TRIGGER_PAYLOAD = payloadPath
  }

  const result: RunWaveResult = await runWave(['gitlab', '--json', ...args], {cwd: checkout, env: variables, home: sandbox.home, server, timeoutMs: 90_000})
  expectTokenKept(
    TOKEN,
    result,
    checkout,
    gitlab.notes.map((n) => n.body),
  )
  return {checkout, result, runner}
}

function note(body: string, by = 'alice'): unknown {
  const stored = gitlab.addNote(MR, body, by)
  return {
    event_type: 'note',
    merge_request: {iid: 7, source_branch: 'feature', target_branch: 'main', title: 'Greet'},
    object_attributes: {
      author_id: stored.author.id,
      created_at: stored.created_at.replace('T', ' ').replace(/\.\d+Z$/, ' UTC'),
      id: stored.id,
      note: body,
      noteable_type: 'MergeRequest',
      system: false,
      url: `https://gitlab.test/group/demo/-/merge_requests/7#note_${stored.id}`,
    },
    object_kind: 'note',
    project: {id: PROJECT, path_with_namespace: 'group/demo', web_url: 'https://gitlab.test/group/demo'},
    project_id: PROJECT,
    user: {id: stored.author.id, name: by, username: by},
  }
}

/** What `wave plans merge --json` prints for UNITS_PLAN's units, both merged. */
function mergeOf(name: string) {
  const check = {command: 'test -f src/farewell.ts', exitCode: 0}
  return {
    checks: [check],
    costUsd: 0.2,
    name,
    problem: null,
    sha256: sha256(UNITS_PLAN),
    units: [
      {changed: ['src/farewell.ts'], checks: [check], costUsd: 0.2, exitCode: 0, status: 'merged', unit: 'farewell'},
      {changed: [], checks: [], costUsd: 0, exitCode: 0, status: 'merged', unit: 'other'},
    ],
    version: 1,
  }
}

function stickyOn(): StoredNote {
  const found = gitlab.notesOn(MR).filter((n) => n.body.startsWith('<!-- wave:plan:'))
  expect(found).toHaveLength(1)
  return found[0]
}

describe('wave gitlab: a plan with units', {timeout: 240_000}, () => {
  it('/wave approve leaves the child pipeline (a job per unit, with the template) and a pending row per unit; the merge job reports each unit and delivers', async () => {
    server.push(...planTurns(UNITS_PLAN))
    expect((await job(note('/wave plan Add a farewell function'))).result.code).toBe(0)
    const name = nameIn(stickyOn().body)

    const approve = await job(note(`/wave approve ${name} --sha256 ${sha256(UNITS_PLAN)}`, 'mona'), {
      WAVE_GITLAB_UNITS_FILE: 'wave-artifacts/units.gitlab-ci.yml',
    })
    expect(approve.result.code, approve.result.stderr).toBe(0)
    expect(JSON.parse(approve.result.stdout)).toMatchObject({outcome: 'approved', units: ['farewell', 'other']})
    // Only planning asked the model: the approval's job ran nothing.
    expect(server.messageRequests).toHaveLength(2)
    const child = parse(readFileSync(path.join(approve.checkout, 'wave-artifacts', 'units.gitlab-ci.yml'), 'utf8')) as Record<string, unknown>
    expect(child.include).toEqual([{local: 'wave-unit.gitlab-ci.yml'}])
    const jobsOf = {...TEMPLATE, ...child}
    const real = Object.keys(jobsOf).filter((key) => !key.startsWith('.') && !['stages', 'include', 'variables'].includes(key))
    expect(real.sort()).toEqual(['wave-unit-farewell', 'wave-unit-other', 'wave:merge'])
    expect(child['wave-unit-farewell']).toEqual({
      extends: '.wave-unit-from-note',
      script: ['wave run "$WAVE_PLAN" --unit "$UNIT"'],
      variables: {UNIT: 'farewell', WAVE_PLAN: name},
    })
    // The approved plan is where wave:run's after_script keeps it for the unit jobs.
    expect(JSON.parse(readFileSync(path.join(approve.runner, 'wave', 'plans', `${name}.approval.json`), 'utf8')).units).toHaveLength(2)
    const pending = stickyOn().body
    expect(statusOf(pending)).toBe('🏃 running')
    expect(pending).toContain('| `farewell` | ⏳ pending |  |  |')
    expect(pending).toContain('| `other` | ⏳ pending |  |  |')
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    // The merge job: its own pipeline (no note event), the thread from WAVE_THREAD, the merged tree checked out.
    const merge = mergeOf(name)
    const merged = await job(undefined, {WAVE_THREAD: 'mr-7'}, ({checkout, runner}) => {
      git(checkout, ['checkout', '-q', headSha])
      writeFileSync(path.join(checkout, 'src', 'farewell.ts'), FAREWELL)
      writeFileSync(path.join(runner, 'merge.json'), JSON.stringify(merge))
      return ['--units-merged', path.join(runner, 'merge.json')]
    })
    expect(merged.result.code, merged.result.stderr).toBe(0)
    const done = stickyOn().body
    expect(statusOf(done)).toBe('✅ done')
    expect(done).toContain('| `farewell` | ✅ merged | test -f src/farewell.ts passed | $0.2000 |')
    expect(done).toContain('| `other` | ✅ merged | none | $0.0000 |')
    expect(git(remote, ['show', 'refs/heads/feature:src/farewell.ts'])).toBe(FAREWELL.trimEnd())
  })

  it('control: --units-merged without a thread (no WAVE_THREAD, no note event) is a usage error, and no note changes', async () => {
    server.push(...planTurns(UNITS_PLAN))
    expect((await job(note('/wave plan Add a farewell function'))).result.code).toBe(0)
    const before = stickyOn()
    const merged = await job(undefined, {}, ({runner}) => {
      writeFileSync(path.join(runner, 'merge.json'), JSON.stringify(mergeOf(nameIn(before.body))))
      return ['--units-merged', path.join(runner, 'merge.json')]
    })
    expect(merged.result.code).toBe(2)
    expect(merged.result.stderr).toContain("--units-merged reports on a plan's note: set WAVE_THREAD")
    expect(stickyOn().body).toBe(before.body)
  })
})
