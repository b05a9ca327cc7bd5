import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'

import {githubAccess, githubOptions} from '../../../../src/forges/github/env.js'
import {intentOf} from '../../../../src/forges/github/event.js'
import {mayAct, roleOf} from '../../../../src/forges/github/permissions.js'

const fixture = (name: string) => JSON.parse(readFileSync(fileURLToPath(new URL(`../../../fixtures/github/${name}`, import.meta.url)), 'utf8'))
const options = {label: 'wave'}

type Payload = ReturnType<typeof fixture>

function commentEvent(body: string, patch: (event: Payload) => void = () => {}) {
  const event = fixture('issue_comment.pull_request.json')
  event.comment.body = body
  patch(event)
  return event
}

/** alice's GitHub user id in the fixtures: who she is, whatever her login (duties compare it). */
const ALICE_ID = 5002

describe('intentOf', () => {
  it('reads a /wave comment on a pull request, with who wrote it, where and when', () => {
    expect(intentOf('issue_comment', commentEvent('/wave approve --mode default'), options)).toEqual({
      allow: undefined,
      kind: 'approve',
      mode: 'default',
      plan: undefined,
      sha256: undefined,
      trigger: {
        actor: 'alice',
        actorId: ALICE_ID,
        comment: {
          body: '/wave approve --mode default',
          createdAt: '2029-12-31T10:05:00Z',
          id: 3001,
          url: 'https://github.com/octo/demo/pull/7#issuecomment-3001',
        },
        thread: {number: 7, pull: true},
      },
    })
    expect(intentOf('issue_comment', fixture('issue_comment.issue.json'), options)).toMatchObject({
      kind: 'plan',
      task: 'Add a farewell function',
      trigger: {thread: {number: 12, pull: false}},
    })
  })

  it('ignores edits, apps, and comments not starting with /wave', () => {
    expect(
      intentOf(
        'issue_comment',
        commentEvent('/wave plan x', (e) => (e.action = 'edited')),
        options,
      ),
    ).toMatchObject({kind: 'ignore'})
    expect(
      intentOf(
        'issue_comment',
        commentEvent('/wave plan x', (e) => (e.comment.user = {login: 'renovate[bot]', type: 'Bot'})),
        options,
      ),
    ).toMatchObject({kind: 'ignore', reason: expect.stringContaining('renovate[bot]')})
    expect(intentOf('issue_comment', commentEvent('LGTM /wave approve'), options)).toMatchObject({kind: 'ignore'})
  })

  it('turns a /wave comment that does not parse into a reply, not an error', () => {
    expect(intentOf('issue_comment', commentEvent('/wave approve --allow "Bash(x'), options)).toMatchObject({
      kind: 'invalid',
      message: expect.stringContaining('not closed'),
    })
  })

  it('plans on the configured label (title and body as the task) and on a dispatch with a task', () => {
    expect(intentOf('pull_request', fixture('pull_request.labeled.json'), options)).toEqual({
      kind: 'plan',
      task: 'Greet people by name\n\nAdds a greeting.',
      trigger: {actor: 'alice', actorId: ALICE_ID, thread: {number: 7, pull: true}},
    })
    expect(intentOf('pull_request', fixture('pull_request.labeled.json'), {label: 'wave-plan'})).toMatchObject({kind: 'ignore'})
    expect(intentOf('pull_request', {...fixture('pull_request.labeled.json'), action: 'synchronize'}, options)).toMatchObject({kind: 'ignore'})
    expect(intentOf('workflow_dispatch', fixture('workflow_dispatch.json'), options)).toEqual({
      dispatch: {issue: undefined},
      kind: 'plan',
      task: 'Add a farewell function',
      trigger: {actor: 'alice', actorId: ALICE_ID},
    })
    const onIssue = fixture('workflow_dispatch.json')
    onIssue.inputs.issue = '12'
    expect(intentOf('workflow_dispatch', onIssue, options)).toMatchObject({dispatch: {issue: 12}})
    onIssue.inputs.issue = '12; rm -rf /'
    expect(() => intentOf('workflow_dispatch', onIssue, options)).toThrow(expect.objectContaining({exitCode: 2}))
  })

  it('a push to a pull request (synchronize) plans its pending plans again only with replan-on-push, and never for an app', () => {
    const pushed = {...fixture('pull_request.labeled.json'), action: 'synchronize', label: undefined}
    expect(intentOf('pull_request', pushed, {...options, replanOnPush: true})).toEqual({
      kind: 'pushed',
      trigger: {actor: 'alice', actorId: ALICE_ID, thread: {number: 7, pull: true}},
    })
    expect(intentOf('pull_request', pushed, options)).toMatchObject({kind: 'ignore', reason: expect.stringContaining('replan-on-push is off')})
    const byApp = {...pushed, sender: {login: 'wave-app[bot]', type: 'Bot'}}
    expect(intentOf('pull_request', byApp, {...options, replanOnPush: true})).toMatchObject({kind: 'ignore', reason: expect.stringContaining('wave-app[bot]')})
  })

  it('does nothing on other events, and refuses a payload GitHub would not send (exit 2)', () => {
    expect(intentOf('push', fixture('push.json'), options)).toMatchObject({kind: 'ignore', reason: 'wave does nothing on push events'})
    expect(() => intentOf('issue_comment', {action: 'created'}, options)).toThrow(
      expect.objectContaining({exitCode: 2, message: expect.stringContaining('comment')}),
    )
  })
})

describe('permissions', () => {
  it('orders read < triage < write < maintain < admin, custom roles by their base permission, no role below all', () => {
    expect(mayAct(roleOf({permission: 'write', role_name: 'maintain'}), 'write')).toBe(true)
    expect(mayAct(roleOf({permission: 'read', role_name: 'triage'}), 'write')).toBe(false)
    expect(mayAct(roleOf({permission: 'read', role_name: 'triage'}), 'triage')).toBe(true)
    expect(mayAct(roleOf({permission: 'write', role_name: 'write'}), 'maintain')).toBe(false)
    expect(roleOf({permission: 'write', role_name: 'release-manager'})).toBe('write')
    expect(roleOf({permission: 'none', role_name: 'none'})).toBeUndefined()
    expect(mayAct(roleOf(undefined), 'read')).toBe(false)
  })
})

describe('githubOptions and githubAccess', () => {
  it('takes a flag, else the WAVE_GITHUB_* variable (empty counts as unset), else the default', () => {
    expect(githubOptions({}, {})).toEqual({
      allow: [],
      botLogin: 'github-actions[bot]',
      budgetSetting: 'WAVE_MAX_BUDGET_USD',
      label: 'wave',
      minPermission: 'write',
      mode: 'acceptEdits',
      networkAllow: [],
      prDelivery: 'push',
      remote: 'origin',
      replanOnPush: false,
      sandbox: true,
    })
    // What a run stopped at its plan's budget says to raise: the Action's input where it says so, the flag where one was given.
    expect(githubOptions({}, {WAVE_MAX_BUDGET_USD_SETTING: 'the max-budget-usd input'}).budgetSetting).toBe('the max-budget-usd input')
    expect(githubOptions({'max-budget-usd': 2}, {WAVE_MAX_BUDGET_USD_SETTING: 'the max-budget-usd input'}).budgetSetting).toBe("the job's --max-budget-usd")
    // replan-on-push: the flag, else WAVE_REPLAN_ON_PUSH (the Action's input), else off; a value that is no switch is exit 2.
    expect(githubOptions({}, {WAVE_REPLAN_ON_PUSH: 'true'}).replanOnPush).toBe(true)
    expect(githubOptions({'replan-on-push': false}, {WAVE_REPLAN_ON_PUSH: 'true'}).replanOnPush).toBe(false)
    expect(githubOptions({}, {WAVE_REPLAN_ON_PUSH: 'false'}).replanOnPush).toBe(false)
    expect(() => githubOptions({}, {WAVE_REPLAN_ON_PUSH: 'sometimes'})).toThrow(expect.objectContaining({exitCode: 2}))
    expect(githubOptions({}, {WAVE_GITHUB_SANDBOX_NETWORK_ALLOW: 'registry.npmjs.org, *.pythonhosted.org\n127.0.0.1:4873'}).networkAllow).toEqual([
      'registry.npmjs.org',
      '*.pythonhosted.org',
      '127.0.0.1:4873',
    ])
    expect(() => githubOptions({}, {WAVE_GITHUB_SANDBOX_NETWORK_ALLOW: 'https://registry.npmjs.org/'})).toThrow(/is not a host name/)
    const env = {
      WAVE_GITHUB_ALLOW: 'Bash(npm test:*)\n\n Read(src/**) \n',
      WAVE_GITHUB_LABEL: '',
      WAVE_GITHUB_MIN_PERMISSION: 'maintain',
      WAVE_GITHUB_SANDBOX: 'off',
    }
    expect(githubOptions({}, env)).toMatchObject({allow: ['Bash(npm test:*)', 'Read(src/**)'], label: 'wave', minPermission: 'maintain', sandbox: false})
    expect(githubOptions({allow: ['Bash(make:*)'], 'min-permission': 'admin'}, env)).toMatchObject({allow: ['Bash(make:*)'], minPermission: 'admin'})
  })

  it('refuses bad values with exit 2', () => {
    expect(() => githubOptions({}, {WAVE_GITHUB_MIN_PERMISSION: 'owner'})).toThrow(
      expect.objectContaining({exitCode: 2, message: expect.stringContaining('read, triage, write, maintain, admin')}),
    )
    expect(() => githubOptions({}, {WAVE_GITHUB_ALLOW: 'Bash(npm test'})).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => githubAccess({GITHUB_REPOSITORY: 'octo/demo'})).toThrow(/GITHUB_TOKEN \(or GH_TOKEN\) is not set/)
    expect(() => githubAccess({GH_TOKEN: 't', GITHUB_REPOSITORY: 'octo'})).toThrow(/owner\/name/)
    expect(githubAccess({GH_TOKEN: 't', GITHUB_REPOSITORY: 'octo/demo'})).toEqual({
      apiUrl: 'https://api.github.com',
      repository: {owner: 'octo', repo: 'demo'},
      token: 't',
    })
  })
})
