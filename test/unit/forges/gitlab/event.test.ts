import {writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {parseAccessLevel} from '../../../../src/forges/gitlab/access.js'
import {gitlabAccess, gitlabEnvironment, gitlabOptions} from '../../../../src/forges/gitlab/env.js'
import {isBotUser, webhookIntent, readPayload, taskIntent} from '../../../../src/forges/gitlab/event.js'

/** A note event as GitLab's webhook sends it (the fields wave reads, and some it does not). */
function noteEvent(body: string, patch: (event: ReturnType<typeof base>) => void = () => {}) {
  const event = base(body)
  patch(event)
  return event
}

function base(body: string) {
  return {
    event_type: 'note',
    merge_request: {iid: 7, source_branch: 'feature', target_branch: 'main'} as {iid: number} | undefined,
    issue: undefined as {iid: number} | undefined,
    object_attributes: {
      action: undefined as string | undefined,
      created_at: '2030-01-01 10:00:00 UTC',
      id: 301,
      note: body,
      noteable_type: 'MergeRequest',
      system: false,
    },
    object_kind: 'note',
    project: {id: 42, path_with_namespace: 'group/demo'},
    user: {id: 501, name: 'Alice', username: 'alice'} as {id: number; name: string; username: string; bot?: boolean},
  }
}

describe('webhookIntent', () => {
  it('reads a /wave note on a merge request or an issue, pointing at the note for the API to confirm', () => {
    expect(webhookIntent(noteEvent('/wave approve brave-otter --mode default'), '42')).toEqual({
      allow: undefined,
      kind: 'approve',
      mode: 'default',
      plan: 'brave-otter',
      sha256: undefined,
      trigger: {
        actor: 'alice',
        actorId: 501,
        comment: {body: '/wave approve brave-otter --mode default', createdAt: '', id: 301, url: ''},
        thread: {number: 7, pull: true},
      },
    })
    const onIssue = noteEvent('/wave plan Say goodbye', (e) => {
      e.object_attributes.noteable_type = 'Issue'
      e.merge_request = undefined
      e.issue = {iid: 12}
    })
    expect(webhookIntent(onIssue, '42')).toMatchObject({kind: 'plan', task: 'Say goodbye', trigger: {thread: {number: 12, pull: false}}})
  })

  it('ignores other events, edits, system notes, bots, notes not starting with /wave, and notes on commits', () => {
    expect(webhookIntent({object_kind: 'push'}, '42')).toMatchObject({kind: 'ignore', reason: 'wave does nothing on push events'})
    expect(
      webhookIntent(
        noteEvent('/wave plan x', (e) => (e.object_attributes.action = 'update')),
        '42',
      ),
    ).toMatchObject({kind: 'ignore'})
    expect(
      webhookIntent(
        noteEvent('/wave plan x', (e) => (e.object_attributes.system = true)),
        '42',
      ),
    ).toMatchObject({kind: 'ignore', reason: 'a system note'})
    expect(
      webhookIntent(
        noteEvent('/wave plan x', (e) => (e.user = {id: 9, name: 'wave', username: 'project_42_bot_ab12cd'})),
        '42',
      ),
    ).toMatchObject({kind: 'ignore', reason: expect.stringContaining('bot')})
    expect(
      webhookIntent(
        noteEvent('/wave plan x', (e) => (e.user.bot = true)),
        '42',
      ),
    ).toMatchObject({kind: 'ignore'})
    expect(webhookIntent(noteEvent('LGTM /wave approve'), '42')).toMatchObject({kind: 'ignore'})
    expect(
      webhookIntent(
        noteEvent('/wave plan x', (e) => (e.object_attributes.noteable_type = 'Commit')),
        '42',
      ),
    ).toMatchObject({kind: 'ignore', reason: expect.stringContaining('Commit')})
  })

  it("answers a /wave note that does not parse, and refuses a body GitLab would not send or another project's (exit 2)", () => {
    expect(webhookIntent(noteEvent('/wave approve --allow "Bash(x'), '42')).toMatchObject({kind: 'invalid', message: expect.stringContaining('not closed')})
    expect(() => webhookIntent({object_kind: 'note'}, '42')).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => webhookIntent(noteEvent('/wave plan x'), '43')).toThrow(
      expect.objectContaining({exitCode: 2, message: expect.stringContaining('from project 42')}),
    )
  })

  it('reads TRIGGER_PAYLOAD as the path of a file, and says so when it is not one', async () => {
    const file = path.join(tmpdir(), `wave-payload-${process.pid}.json`)
    writeFileSync(file, JSON.stringify(noteEvent('/wave help')))
    expect(webhookIntent(await readPayload(file), '42')).toMatchObject({kind: 'help'})
    await expect(readPayload('{"object_kind":"note"}')).rejects.toMatchObject({exitCode: 2, hint: expect.stringContaining('file variable')})
  })
})

describe('taskIntent', () => {
  const env = {
    CI_COMMIT_REF_NAME: 'main',
    CI_COMMIT_SHA: 'a'.repeat(40),
    CI_PIPELINE_SOURCE: 'web',
    CI_SERVER_URL: 'https://gitlab.example.com/',
    GITLAB_USER_ID: '501',
    GITLAB_USER_LOGIN: 'alice',
    WAVE_TASK: ' Add a farewell \n',
  }

  // What the API says of the pipeline: the variables above are only a claim.
  const pipeline = {id: 9001, sha: 'a'.repeat(40), source: 'web', status: 'running', user: {id: 501, login: 'alice'}}

  it('plans a WAVE_TASK into the merge request or issue named, else a new issue, for whoever GitLab says started the pipeline', () => {
    expect(taskIntent(gitlabEnvironment(env), pipeline)).toEqual({
      dispatch: {issue: undefined, pull: undefined},
      kind: 'plan',
      task: 'Add a farewell',
      trigger: {actor: 'alice', actorId: 501},
    })
    expect(taskIntent(gitlabEnvironment({...env, WAVE_MERGE_REQUEST_IID: '7'}), pipeline)).toMatchObject({dispatch: {pull: 7}})
    expect(taskIntent(gitlabEnvironment({...env, WAVE_ISSUE_IID: '12'}), pipeline)).toMatchObject({dispatch: {issue: 12}})
    expect(gitlabEnvironment(env).serverUrl).toBe('https://gitlab.example.com')
    // Without GITLAB_USER_* at all, the API's user is who asked.
    const {GITLAB_USER_ID: _id, GITLAB_USER_LOGIN: _login, ...unnamed} = env
    expect(taskIntent(gitlabEnvironment(unnamed), pipeline)).toMatchObject({trigger: {actor: 'alice', actorId: 501}})
  })

  it('refuses variables that contradict the API (exit 3): another user, another id, another source', () => {
    for (const forged of [{GITLAB_USER_LOGIN: 'mona'}, {GITLAB_USER_ID: '777'}, {CI_PIPELINE_SOURCE: 'schedule'}]) {
      expect(() => taskIntent(gitlabEnvironment({...env, ...forged}), pipeline)).toThrow(expect.objectContaining({exitCode: 3}))
    }

    // A trigger claiming to be a web pipeline started by alice: GitLab says trigger, started by the token's owner.
    expect(() => taskIntent(gitlabEnvironment(env), {...pipeline, source: 'trigger', user: {id: 900, login: 'ci-owner'}})).toThrow(
      /CI_PIPELINE_SOURCE says web, GitLab says trigger; GITLAB_USER_LOGIN says alice, GitLab says ci-owner/,
    )
  })

  it('ignores a job without a task, and a task a trigger token brought; refuses two places and a bad IID (exit 2)', () => {
    expect(taskIntent(gitlabEnvironment({...env, WAVE_TASK: ''}), pipeline)).toMatchObject({kind: 'ignore'})
    expect(taskIntent(gitlabEnvironment({...env, CI_PIPELINE_SOURCE: 'trigger'}), {...pipeline, source: 'trigger'})).toMatchObject({
      kind: 'ignore',
      reason: expect.stringContaining('trigger'),
    })
    expect(() => gitlabEnvironment({...env, WAVE_ISSUE_IID: '12', WAVE_MERGE_REQUEST_IID: '7'})).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => gitlabEnvironment({...env, WAVE_ISSUE_IID: '12; rm -rf /'})).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => gitlabEnvironment({})).toThrow(/CI_SERVER_URL is not set/)
  })
})

describe('webhookIntent: a merge request event (replan-on-push)', () => {
  const pushed = (patch: Record<string, unknown> = {}, user: Record<string, unknown> = {username: 'alice', id: 501}) => ({
    object_attributes: {action: 'update', iid: 7, oldrev: 'a'.repeat(40), ...patch},
    object_kind: 'merge_request',
    project: {id: 42},
    user,
  })

  it('a push (an update with oldrev) is the merge request’s, its pusher a placeholder for the API to confirm; only with replan-on-push', () => {
    expect(webhookIntent(pushed(), '42', {replanOnPush: true})).toEqual({
      kind: 'pushed',
      trigger: {actor: 'alice', actorId: 501, thread: {number: 7, pull: true}},
    })
    expect(webhookIntent(pushed(), '42')).toMatchObject({kind: 'ignore', reason: expect.stringContaining('replan-on-push is off')})
    // An update without new commits (a title edited), another action, a bot's push: nothing to plan again.
    expect(webhookIntent(pushed({oldrev: undefined}), '42', {replanOnPush: true})).toMatchObject({kind: 'ignore'})
    expect(webhookIntent(pushed({action: 'open'}), '42', {replanOnPush: true})).toMatchObject({kind: 'ignore'})
    expect(webhookIntent(pushed({}, {username: 'project_42_bot_0a1b2c'}), '42', {replanOnPush: true})).toMatchObject({kind: 'ignore'})
    // Another project's event is refused, as a note's is.
    expect(() => webhookIntent(pushed(), '43', {replanOnPush: true})).toThrow(expect.objectContaining({exitCode: 2}))
  })
})

describe('gitlabOptions, gitlabAccess, access levels', () => {
  it('takes a flag, else the WAVE_GITLAB_* variable, else the default; the remote is the project URL, not the job token origin', () => {
    expect(gitlabOptions({}, {})).toEqual({
      allow: [],
      budgetSetting: 'WAVE_MAX_BUDGET_USD',
      minAccessLevel: 30,
      mode: 'acceptEdits',
      networkAllow: [],
      prDelivery: 'push',
      remote: 'origin',
      replanOnPush: false,
      sandbox: true,
    })
    expect(gitlabOptions({}, {WAVE_REPLAN_ON_PUSH: 'true'}).replanOnPush).toBe(true)
    const env = {
      CI_PROJECT_URL: 'https://gitlab.example.com/group/demo',
      WAVE_GITLAB_ALLOW: 'Bash(npm test:*)\n',
      WAVE_GITLAB_MIN_ACCESS_LEVEL: 'Maintainer',
      WAVE_GITLAB_MR_DELIVERY: 'merge-request',
    }
    expect(gitlabOptions({}, env)).toMatchObject({
      allow: ['Bash(npm test:*)'],
      minAccessLevel: 40,
      prDelivery: 'pull-request',
      remote: 'https://gitlab.example.com/group/demo.git',
    })
    expect(gitlabOptions({'min-access-level': '20', remote: 'origin'}, env)).toMatchObject({minAccessLevel: 20, remote: 'origin'})
  })

  it('refuses bad values with exit 2', () => {
    expect(() => parseAccessLevel('admin')).toThrow(expect.objectContaining({exitCode: 2, message: expect.stringContaining('developer (30)')}))
    expect(() => parseAccessLevel('35')).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => gitlabOptions({}, {WAVE_GITLAB_MR_DELIVERY: 'pull-request'})).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => gitlabAccess({CI_PROJECT_ID: '42'})).toThrow(/GITLAB_TOKEN is not set/)
    expect(gitlabAccess({CI_PROJECT_ID: '42', CI_PROJECT_PATH: 'group/demo', CI_SERVER_URL: 'https://gitlab.example.com', GITLAB_TOKEN: 't'})).toEqual({
      apiUrl: 'https://gitlab.example.com/api/v4',
      project: '42',
      projectUrl: 'https://gitlab.example.com/group/demo',
      token: 't',
    })
  })

  it('knows bots by GitLab access token users and the bot flag', () => {
    expect(isBotUser({username: 'project_42_bot_5f2a9c'})).toBe(true)
    expect(isBotUser({username: 'group_7_bot'})).toBe(true)
    expect(isBotUser({bot: true, username: 'renovate'})).toBe(true)
    expect(isBotUser({username: 'project_manager'})).toBe(false)
  })
})
