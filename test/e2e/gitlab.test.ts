/**
 * `wave gitlab` end to end: bin/run.js handles one GitLab CI job at a time, as one pipeline would, against
 * a stand-in for the GitLab REST API (test/support/gitlab-server.ts), a bare git repository as the remote,
 * and the scripted Messages API. A note event reaches the job as GitLab gives it: TRIGGER_PAYLOAD names a
 * file holding the webhook's body. Every job gets a fresh clone and a fresh WAVE_HOME, as a fresh runner
 * would: whatever a later job knows of a plan came through GitLab (its note) and git.
 */
import {readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {runWave, type RunWaveResult, type Sandbox, sha256} from '../support/cli.js'
import {
  DENIED_RUN_TALLY,
  deniedRunTurns,
  expectPlanNotes,
  expectRunReport,
  expectTokenKept,
  FAREWELL,
  firstUserText,
  freshRunner,
  git,
  GITLAB_PROJECT,
  GITLAB_TOKEN,
  gitlabJobEnv,
  ISSUE,
  MR,
  nameIn,
  noteEvent,
  notedPlanTurns,
  PLAN,
  planTurns,
  REVISED,
  runTurns,
  statusOf,
  useGitLabForge,
  pushToFeature,
} from '../support/forge-fixture.js'
import type {GitLabServer, StoredNote} from '../support/gitlab-server.js'
import type {MessagesServer} from '../support/messages-server.js'

const TOKEN = GITLAB_TOKEN
const PROJECT = GITLAB_PROJECT

/** Each test runs two to four pipeline jobs, each a fresh clone and a fresh wave process: more than the default 30 s on a busy machine. */
const JOBS = {timeout: 120_000}

let sandbox: Sandbox
let server: MessagesServer
let gitlab: GitLabServer
let remote: string
let headSha: string
let jobs = 0
// The remote, holding main and a merge request's source branch "feature" (one commit ahead); !7 and issue 12.
// alice and dave are developers, mona a maintainer, rita a reporter.
useGitLabForge({issue: true, members: {alice: 30, dave: 30, mona: 40, rita: 20}}, (made) => {
  ;({forge: gitlab, headSha, remote, sandbox, server} = made)
})

/** One pipeline job: a fresh clone of the remote, a fresh WAVE_HOME, GitLab's predefined variables. */
async function job(env: Record<string, string>, payload?: unknown): Promise<RunWaveResult> {
  const {checkout, runner} = freshRunner(sandbox, remote, ++jobs)
  const variables: Record<string, string> = {
    ...gitlabJobEnv(gitlab, {checkout, job: jobs, remote, runner, source: payload === undefined ? 'web' : 'trigger'}),
    ...env,
  }
  if (env.WAVE_TASK !== undefined && env.CI_PIPELINE_ID === undefined) {
    // The pipeline as GitLab records it: started, as its variables say, by GITLAB_USER_LOGIN from the web.
    const started = gitlab.addPipeline({
      ref: variables.CI_COMMIT_REF_NAME,
      sha: variables.CI_COMMIT_SHA,
      source: variables.CI_PIPELINE_SOURCE,
      user: env.GITLAB_USER_LOGIN,
    })
    variables.CI_PIPELINE_ID = String(started.id)
  }

  if (payload !== undefined) {
    // A file variable: the value is the file's path.
    const payloadPath = path.join(runner, 'TRIGGER_PAYLOAD')
    writeFileSync(payloadPath, JSON.stringify(payload))
    variables.TRIGGER_PAYLOAD = payloadPath
  }

  const result = await runWave(['gitlab'], {cwd: checkout, env: variables, home: sandbox.home, server, timeoutMs: 60_000})
  expectTokenKept(
    TOKEN,
    result,
    checkout,
    gitlab.notes.map((n) => n.body),
  )
  return result
}

/** A person's note, written on the merge request (or issue) now, and the note event GitLab's webhook sends for it. */
const note = (on: StoredNote['noteable'], body: string, by = 'alice') => noteEvent(gitlab, on, body, by)

const stickies = (on: StoredNote['noteable']) => gitlab.notesOn(on).filter((n) => n.body.startsWith('<!-- wave:plan:'))
function stickyOn(on: StoredNote['noteable']): StoredNote {
  const found = stickies(on)
  expect(found).toHaveLength(1)
  return found[0]
}

const repliesTo = (on: StoredNote['noteable'], username: string) =>
  gitlab.notesOn(on).filter((n) => n.author.username.endsWith('_bot_5f2a9c') && n.body.includes(`@${username} `) && !n.body.startsWith('<!--'))

/** `/wave plan` on the merge request by alice, checked to have worked. */
async function planOnMergeRequest(): Promise<{name: string; sha: string; sticky: StoredNote}> {
  server.push(...planTurns())
  const result = await job({}, note(MR, '/wave plan Add a farewell function').payload)
  expect(result.code, result.stderr).toBe(0)
  const sticky = stickyOn(MR)
  return {name: nameIn(sticky.body), sha: sha256(PLAN), sticky}
}

describe('wave gitlab: /wave plan', JOBS, () => {
  it("a developer's note: one note with the plan and its sha256, against the merge request's head, created then edited in place", async () => {
    server.push(...planTurns())
    const result = await job({}, note(MR, '/wave plan Add a farewell function\r\n\r\nKeep it small.').payload)
    expect(result.code, result.stderr).toBe(0)

    const sticky = stickyOn(MR)
    const name = nameIn(sticky.body)
    expect(statusOf(sticky.body)).toBe('⏳ awaiting approval')
    expect(sticky.body).toContain('```markdown\n' + PLAN.trimEnd() + '\n```')
    expect(sticky.body).toContain(`| sha256 | \`${sha256(PLAN)}\` |`)
    expect(sticky.body).toContain(`| Commit | \`${headSha}\` (feature) |`)
    expect(sticky.body).toContain(`/wave approve ${name} --sha256 ${sha256(PLAN)}`)
    expect(sticky.body).toContain('**Answer with one of these notes.**')
    expect(sticky.body).toMatch(/\| Pipeline \| \[logs\]\(https:\/\/gitlab\.test\/group\/demo\/-\/pipelines\/\d+\) \|/)

    // Posted once while planning, then edited in place, through the project's notes API (the commit statuses have their own test).
    expect(
      gitlab
        .writes()
        .filter((r) => !r.path.includes('/statuses/'))
        .map((r) => `${r.method} ${r.path}`),
    ).toEqual([`POST /projects/${PROJECT}/merge_requests/7/notes`, `PUT /projects/${PROJECT}/merge_requests/7/notes/${sticky.id}`])
    expect(gitlab.requests.every((r) => r.headers['private-token'] === TOKEN)).toBe(true)
    // alice's access was read from the members API (inherited memberships included).
    expect(gitlab.requests.map((r) => r.path)).toContain(`/projects/${PROJECT}/members/all/${gitlab.userId('alice')}`)
    expect(firstUserText(server.messageRequests[0])).toContain('Add a farewell function\n\nKeep it small.')
    expect(result.stdout).toContain(`Planned ${name}`)
  })
})

describe('wave gitlab: /wave approve', JOBS, () => {
  it("a reporter's approval: refused in a reply saying why, nothing else done", async () => {
    const {name, sha, sticky} = await planOnMergeRequest()
    const before = {body: sticky.body, updated: sticky.updated_at}
    const planning = server.messageRequests.length
    const result = await job({}, note(MR, `/wave approve ${name} --sha256 ${sha}`, 'rita').payload)

    expect(result.code).toBe(0)
    expect(result.stdout).toContain('@rita may not')
    const [answer] = repliesTo(MR, 'rita')
    expect(answer.body).toContain(
      '@rita you may not ask wave to act here: that takes the Developer role (access level 30) or higher on the project, and you have the Reporter role (20).',
    )
    expect(server.messageRequests).toHaveLength(planning)
    expect(stickyOn(MR)).toMatchObject({body: before.body, updated_at: before.updated})
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })

  it("a developer's approval: runs the plan from the note, pushes a commit to the source branch, and says so in the same note", async () => {
    const {name, sha, sticky} = await planOnMergeRequest()
    const planning = server.messageRequests.length
    server.push(...runTurns())
    const approval = note(MR, `/wave approve ${name} --sha256 ${sha}\n\nLooks right.`, 'dave')
    const result = await job({}, approval.payload)
    expect(result.code, result.stderr).toBe(0)

    const run = server.messageRequests.slice(planning)
    expect(run).toHaveLength(2)
    expect(firstUserText(run[0])).toContain(PLAN.trimEnd())

    const [commit, parent, subject] = git(remote, ['log', '-1', '--format=%H%n%P%n%s', 'refs/heads/feature']).split('\n')
    expect(parent).toBe(headSha)
    expect(subject).toBe('wave: Add a farewell function')
    expect(git(remote, ['show', 'refs/heads/feature:src/farewell.ts']) + '\n').toBe(FAREWELL)
    expect(git(remote, ['log', '-1', '--format=%B', 'refs/heads/feature'])).toContain(
      `https://gitlab.test/group/demo/-/merge_requests/7#note_${approval.stored.id}`,
    )
    expect(gitlab.createdMergeRequests).toEqual([])

    const record = JSON.parse(readFileSync(path.join(sandbox.root, `runner-${jobs}`, 'wave', 'plans', `${name}.approval.json`), 'utf8'))
    expect(record).toMatchObject({approver: 'dave', decision: 'approved', mode: 'acceptEdits', plan: {name, sha256: sha}, repository: {head: headSha}})

    const after = stickyOn(MR)
    expect(after.id).toBe(sticky.id)
    expect(statusOf(after.body)).toBe('✅ done')
    expect(after.body).toContain('| Approved by | @dave |')
    expect(after.body).toContain(`https://gitlab.test/group/demo/-/commit/${commit}`)
    expect(result.stdout).toContain(`pushed ${commit.slice(0, 12)} to feature`)
  })

  it("refuses an approval written before the plan's note was edited (exit 4), and one naming an older sha256", async () => {
    const {name, sha} = await planOnMergeRequest()
    // dave approves the plan he read...
    const early = note(MR, `/wave approve ${name}`, 'dave')
    // ...while mona's request for changes is handled first: the plan is revised, its note edited.
    server.push(...planTurns(REVISED))
    expect((await job({}, note(MR, `/wave request-changes ${name} Call it goodbye`, 'mona').payload)).code).toBe(0)
    const revised = stickyOn(MR)
    const modelCalls = server.messageRequests.length

    const refused = await job({}, early.payload)
    expect(refused.code).toBe(4)
    expect(refused.stderr).toContain(`The note of plan ${name} changed after the approval was written (note updated `)
    // GitLab's word for it, in the reply too.
    const [answer] = repliesTo(MR, 'dave')
    expect(answer.body).toContain(`The note of plan ${name} changed after the approval was written`)
    expect(answer.body).toContain(`Read the plan again and answer its note anew: https://gitlab.test/group/demo/-/merge_requests/7#note_${revised.id}`)
    expect(answer.body).not.toMatch(/\bcomment\b/)

    const stale = await job({}, note(MR, `/wave approve ${name} --sha256 ${sha}`, 'dave').payload)
    expect(stale.code).toBe(4)
    expect(stale.stderr).toContain(`names sha256 ${sha.slice(0, 12)}`)

    expect(server.messageRequests).toHaveLength(modelCalls)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
    expect(stickyOn(MR)).toMatchObject({body: revised.body, updated_at: revised.updated_at})
  })

  it("believes GitLab's notes API, not the webhook's body: a forged author or a note GitLab lacks gets nothing", async () => {
    const {name} = await planOnMergeRequest()
    const planning = server.messageRequests.length
    // rita (a reporter) writes the approval; the body sent to the trigger claims mona wrote it.
    const forged = note(MR, `/wave approve ${name}`, 'rita')
    const payload = forged.payload as {user: {id: number; username: string}}
    payload.user = {id: gitlab.userId('mona'), username: 'mona'}
    const result = await job({}, payload)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain('@rita may not')

    // A body naming a note that does not exist.
    const missing = note(MR, `/wave approve ${name}`, 'mona').payload as {object_attributes: {id: number}}
    missing.object_attributes.id = 999_999
    const ignored = await job({}, missing)
    expect(ignored.code).toBe(0)
    expect(ignored.stdout).toMatch(/^Nothing applies: note 999999 is not on !7/)

    expect(server.messageRequests).toHaveLength(planning)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
  })
})

describe('wave gitlab: delivery as a new merge request', JOBS, () => {
  it('a plan on an issue: pushes wave/<plan> and opens a merge request against the default branch, linked from the note', async () => {
    server.push(...planTurns())
    expect((await job({}, note(ISSUE, '/wave plan Add a farewell function').payload)).code).toBe(0)
    const sticky = stickyOn(ISSUE)
    const name = nameIn(sticky.body)
    const main = git(remote, ['rev-parse', 'refs/heads/main'])
    expect(sticky.body).toContain(`| Commit | \`${main}\` (main) |`)

    server.push(...runTurns())
    const approval = note(ISSUE, '/wave approve', 'mona')
    const result = await job({}, approval.payload)
    expect(result.code, result.stderr).toBe(0)
    expect(git(remote, ['show', `refs/heads/wave/${name}:src/farewell.ts`]) + '\n').toBe(FAREWELL)
    expect(git(remote, ['rev-parse', `refs/heads/wave/${name}^`])).toBe(main)
    expect(gitlab.createdMergeRequests).toHaveLength(1)
    const created = gitlab.createdMergeRequests[0]
    expect(created).toMatchObject({source_branch: `wave/${name}`, target_branch: 'main', title: 'wave: Add a farewell function'})
    expect(created.description).toContain(`made against \`${main}\` for #12`)
    expect(created.description).toContain(`https://gitlab.test/group/demo/-/issues/12#note_${approval.stored.id}`)
    expect(stickyOn(ISSUE).body).toContain(
      `| Delivered | [merge request](https://gitlab.test/group/demo/-/merge_requests/${created.iid}) from \`wave/${name}\` |`,
    )
  })

  it('a merge request from a fork: planned on its head through refs/merge-requests, delivered as a merge request in the project, never pushed to the fork', async () => {
    // The fork's commit reaches the project only as GitLab keeps it: refs/merge-requests/8/head.
    git(sandbox.repo, ['checkout', '-q', '-b', 'fork-work', 'main'])
    writeFileSync(path.join(sandbox.repo, 'FORK.md'), 'from a fork\n')
    git(sandbox.repo, ['add', 'FORK.md'])
    git(sandbox.repo, ['commit', '-q', '-m', 'Fork work'])
    const forkSha = git(sandbox.repo, ['rev-parse', 'HEAD'])
    git(sandbox.repo, ['push', '-q', 'origin', 'HEAD:refs/merge-requests/8/head'])
    git(sandbox.repo, ['checkout', '-q', 'main'])
    gitlab.addMergeRequest({
      author: 'alice',
      iid: 8,
      sha: forkSha,
      source_branch: 'fork-work',
      source_project_id: 99,
      target_branch: 'main',
      title: 'From a fork',
    })
    const FORK_MR = {iid: 8, type: 'MergeRequest'} as const

    server.push(...planTurns())
    expect((await job({}, note(FORK_MR, '/wave plan Add a farewell function').payload)).code).toBe(0)
    const name = nameIn(stickyOn(FORK_MR).body)
    expect(stickyOn(FORK_MR).body).toContain(`| Commit | \`${forkSha}\` (fork-work) |`)

    server.push(...runTurns())
    const result = await job({}, note(FORK_MR, `/wave approve ${name}`, 'mona').payload)
    expect(result.code, result.stderr).toBe(0)
    expect(git(remote, ['rev-parse', `refs/heads/wave/${name}^`])).toBe(forkSha)
    expect(gitlab.createdMergeRequests).toHaveLength(1)
    expect(gitlab.createdMergeRequests[0]).toMatchObject({source_branch: `wave/${name}`, target_branch: 'main'})
    expect(gitlab.createdMergeRequests[0].description).toContain('merge request !8 (from a fork: this branch holds its commits too)')
    expect(git(remote, ['for-each-ref', '--format=%(refname)', 'refs/heads/fork-work'])).toBe('')
  })
})

describe('wave gitlab: /wave request-changes', JOBS, () => {
  it('revises the plan with the feedback in the same note; the revised plan is what then runs', async () => {
    const {name, sticky} = await planOnMergeRequest()
    const planning = server.messageRequests.length
    const written = gitlab.writes().length
    server.push(...planTurns(REVISED))
    const feedback = 'Name the function goodbye, not farewell.'
    const result = await job({}, note(MR, `/wave request-changes ${name} ${feedback}`).payload)
    expect(result.code, result.stderr).toBe(0)

    expect(firstUserText(server.messageRequests[planning])).toContain(feedback)
    const writes = gitlab
      .writes()
      .slice(written)
      .filter((r) => !r.path.includes('/statuses/'))
    expect(writes.map((r) => `${r.method} ${r.path}`)).toEqual(Array(3).fill(`PUT /projects/${PROJECT}/merge_requests/7/notes/${sticky.id}`))
    expect(writes.map((r) => statusOf(r.body.body))).toEqual(['✏️ changes requested', '🕐 revising', '⏳ awaiting approval'])
    const revised = stickyOn(MR)
    expect(revised.body).toContain('```markdown\n' + REVISED.trimEnd() + '\n```')
    expect(revised.body).toContain(`/wave approve ${name} --sha256 ${sha256(REVISED)}`)

    server.push(...runTurns())
    const approved = await job({}, note(MR, `/wave approve ${name} --sha256 ${sha256(REVISED)}`, 'mona').payload)
    expect(approved.code, approved.stderr).toBe(0)
    expect(firstUserText(server.messageRequests.at(-2)!)).toContain(REVISED.trimEnd())
  })
})

describe('wave gitlab: separation of duties', JOBS, () => {
  it('require-other-approver: the requester may not approve their own plan; someone else may', async () => {
    const {name} = await planOnMergeRequest()
    const planning = server.messageRequests.length
    const own = await job({WAVE_REQUIRE_OTHER_APPROVER: '1'}, note(MR, `/wave approve ${name}`, 'alice').payload)
    expect(own.code).toBe(3)
    expect(own.stderr).toContain(`Plan ${name} was asked for by @alice, who may not approve it too`)
    expect(repliesTo(MR, 'alice').at(-1)!.body).toContain('(require-other-approver)')
    expect(server.messageRequests).toHaveLength(planning)
    expect(statusOf(stickyOn(MR).body)).toBe('⏳ awaiting approval')

    server.push(...runTurns())
    const other = await job({WAVE_REQUIRE_OTHER_APPROVER: '1'}, note(MR, `/wave approve ${name}`, 'dave').payload)
    expect(other.code, other.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })

  it('require-review: refused until someone other than the requester and the author approved the merge request', async () => {
    const {name} = await planOnMergeRequest()
    const planning = server.messageRequests.length
    // alice (the requester and the author) approving her own merge request does not count.
    gitlab.mergeRequests.get(7)!.approvedBy = ['alice']
    const refused = await job({WAVE_REQUIRE_REVIEW: '1'}, note(MR, `/wave approve ${name}`, 'dave').payload)
    expect(refused.code).toBe(3)
    expect(refused.stderr).toContain(
      'Merge request !7 needs an approval by someone other than @alice before wave runs a plan, and its only approvals are by @alice (require-review)',
    )
    expect(repliesTo(MR, 'dave').at(-1)!.body).toContain('Approve the merge request on GitLab, then approve the plan again.')
    expect(gitlab.requests.map((r) => r.path)).toContain(`/projects/${PROJECT}/merge_requests/7/approvals`)
    expect(server.messageRequests).toHaveLength(planning)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    gitlab.mergeRequests.get(7)!.approvedBy = ['alice', 'mona']
    server.push(...runTurns())
    const approved = await job({WAVE_REQUIRE_REVIEW: '1'}, note(MR, `/wave approve ${name}`, 'dave').payload)
    expect(approved.code, approved.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })
})

describe('wave gitlab: a WAVE_TASK pipeline', JOBS, () => {
  it('opens an issue holding the task and plans there, against the commit the pipeline runs on', async () => {
    server.push(...planTurns())
    const main = git(remote, ['rev-parse', 'refs/heads/main'])
    const result = await job({GITLAB_USER_ID: String(gitlab.userId('alice')), GITLAB_USER_LOGIN: 'alice', WAVE_TASK: 'Add a farewell function'})
    expect(result.code, result.stderr).toBe(0)
    const opened = [...gitlab.issues.values()].filter((issue) => issue.iid !== 12)
    expect(opened).toHaveLength(1)
    expect(opened[0].title).toBe('wave: Add a farewell function')
    expect(opened[0].description).toContain('@alice asked wave to plan this on `main`')
    const sticky = stickyOn({iid: opened[0].iid, type: 'Issue'})
    expect(sticky.body).toContain(`| Commit | \`${main}\` (main) |`)
    expect(statusOf(sticky.body)).toBe('⏳ awaiting approval')
  })

  it('plans into the merge request WAVE_MERGE_REQUEST_IID names; a reporter starting it gets no plan', async () => {
    server.push(...planTurns())
    const result = await job({
      GITLAB_USER_ID: String(gitlab.userId('mona')),
      GITLAB_USER_LOGIN: 'mona',
      WAVE_MERGE_REQUEST_IID: '7',
      WAVE_TASK: 'Add a farewell function',
    })
    expect(result.code, result.stderr).toBe(0)
    expect(stickyOn(MR).body).toContain(`| Commit | \`${headSha}\` (feature) |`)

    const reporter = await job({
      GITLAB_USER_ID: String(gitlab.userId('rita')),
      GITLAB_USER_LOGIN: 'rita',
      WAVE_ISSUE_IID: '12',
      WAVE_TASK: 'Add a farewell function',
    })
    expect(reporter.code).toBe(0)
    expect(reporter.stdout).toContain('@rita may not')
    expect(stickies(ISSUE)).toEqual([])
    expect(server.messageRequests).toHaveLength(2)
  })
})

describe('wave gitlab: replan-on-push (a merge request event from the webhook)', JOBS, () => {
  /** The merge request event GitLab's webhook sends when `by` pushes new commits to !7's source branch. */
  const pushEvent = (by: string) => ({
    object_attributes: {action: 'update', iid: 7, oldrev: headSha},
    object_kind: 'merge_request',
    project: {id: PROJECT},
    user: {id: gitlab.userId(by), username: by},
  })

  it('plans a pending plan’s task again on the new head with WAVE_REPLAN_ON_PUSH, for whoever GitLab says pushed; off, the event asks nothing', async () => {
    const {name} = await planOnMergeRequest()
    // dave pushes to the merge request's source branch; GitLab records the push and moves the merge request's head.
    const head = pushToFeature(sandbox, remote)
    gitlab.mergeRequests.get(7)!.sha = head
    gitlab.addPush({author: 'dave', commitTo: head, ref: 'feature'})

    // Control: the variable left at the recipe's default: nothing asked of GitLab or the model.
    const asked = server.messageRequests.length
    const before = gitlab.requests.length
    const off = await job({}, pushEvent('dave'))
    expect(off.code, off.stderr).toBe(0)
    expect(off.stdout).toContain('replan-on-push is off')
    expect(server.messageRequests).toHaveLength(asked)
    expect(gitlab.requests).toHaveLength(before)

    // A body naming another pusher (anyone holding the trigger token can send one): the API's pusher is believed.
    server.push(...planTurns())
    const on = await job({WAVE_REPLAN_ON_PUSH: 'true'}, pushEvent('mona'))
    expect(on.code, on.stderr).toBe(0)
    expect(server.messageRequests).toHaveLength(asked + 2)
    expect(firstUserText(server.messageRequests[asked])).toContain('Add a farewell function')
    const notes = stickies(MR)
    expect(notes).toHaveLength(2)
    expect(notes[1].body).toContain(`| Commit | \`${head}\` (feature) |`)
    expect(notes[1].body).toContain(`the task of ${name}, planned again on ${head.slice(0, 12)}`)
    expect(notes[1].body).toContain('| Requested by | @dave |')
    // The old plan's note says it was planned again; approving it is refused, naming the new plan.
    const fresh = nameIn(notes[1].body)
    expect(statusOf(notes[0].body)).toBe('↪️ superseded')
    expect(notes[0].body).toContain(`**Planned again as \`${fresh}\`** on \`${head.slice(0, 12)}\` ([its note](`)
    const refused = await job({}, note(MR, `/wave approve ${name}`, 'mona').payload)
    expect(refused.code).toBe(3)
    expect(repliesTo(MR, 'mona').at(-1)!.body).toContain(`Plan ${name} was planned again as ${fresh} on ${head.slice(0, 12)}: approve ${fresh}.`)

    // The same event again: the task's newest plan is on the head, nothing is planned twice.
    const again = await job({WAVE_REPLAN_ON_PUSH: 'true'}, pushEvent('dave'))
    expect(again.code, again.stderr).toBe(0)
    expect(server.messageRequests).toHaveLength(asked + 2)
    expect(stickies(MR)).toHaveLength(2)
  })

  it('a head no push event of the project made (a forged body), and a push by a reporter, plan nothing', async () => {
    await planOnMergeRequest()
    const head = pushToFeature(sandbox, remote)
    gitlab.mergeRequests.get(7)!.sha = head
    const asked = server.messageRequests.length
    const unrecorded = await job({WAVE_REPLAN_ON_PUSH: 'true'}, pushEvent('dave'))
    expect(unrecorded.code, unrecorded.stderr).toBe(0)
    expect(unrecorded.stdout).toContain("is among the project's events")

    // rita (a reporter) pushed: passed over, no reply in the thread.
    gitlab.addPush({author: 'rita', commitTo: head, ref: 'feature'})
    const notes = gitlab.notesOn(MR).length
    const reporter = await job({WAVE_REPLAN_ON_PUSH: 'true'}, pushEvent('rita'))
    expect(reporter.code, reporter.stderr).toBe(0)
    expect(reporter.stdout).toContain('@rita pushed')
    expect(gitlab.notesOn(MR)).toHaveLength(notes)
    expect(server.messageRequests).toHaveLength(asked)
  })
})

describe("wave gitlab: what the plan's note shows", JOBS, () => {
  it("the model's to-do list, its open questions and the plan's contract, then the run's checks and its denied calls", async () => {
    server.push(...notedPlanTurns())
    expect((await job({}, note(MR, '/wave plan Add a farewell function').payload)).code).toBe(0)
    const planned = stickyOn(MR).body
    expectPlanNotes(planned, 'note')

    server.push(...deniedRunTurns())
    const ran = await job({WAVE_GITLAB_SANDBOX: 'off'}, note(MR, `/wave approve ${nameIn(planned)}`, 'dave').payload)
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toContain(DENIED_RUN_TALLY)
    const done = stickyOn(MR).body
    expect(statusOf(done)).toBe('✅ done')
    expectRunReport(done, 'note')
  })
})

describe('wave gitlab: jobs that ask nothing', JOBS, () => {
  it('exits 0 without a request for a note not starting with /wave, a bot, another event, and a job without a task', async () => {
    const plain = note(MR, 'Thanks! /wave plan later').payload
    const bot = note(MR, '/wave approve', 'project_42_bot_0a1b2c').payload
    const push = {object_kind: 'push', ref: 'refs/heads/main'}
    for (const payload of [plain, bot, push]) {
      const result = await job({}, payload)
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toMatch(/^Nothing applies: /)
    }

    const idle = await job({})
    expect(idle.stdout).toContain('Nothing applies: the job has neither a note event (TRIGGER_PAYLOAD) nor a task (WAVE_TASK)')
    expect(gitlab.requests).toEqual([])
    expect(server.requests).toEqual([])
  })
})

describe('wave gitlab: commit statuses', JOBS, () => {
  const statusLog = (sha: string) => gitlab.statuses.filter((s) => s.sha === sha).map((s) => `${s.context} ${s.state}`)

  it('sets wave/plan and wave/apply through the commit status API at each stage, linking the note, and on the pushed commit', async () => {
    const {name, sha, sticky} = await planOnMergeRequest()
    expect(statusLog(headSha)).toEqual(['wave/plan running', 'wave/plan success', 'wave/apply pending'])
    const noteUrl = `https://gitlab.test/group/demo/-/merge_requests/7#note_${sticky.id}`
    expect(gitlab.statuses.every((s) => s.target_url === noteUrl)).toBe(true)

    server.push(...runTurns())
    const ran = await job({}, note(MR, `/wave approve ${name} --sha256 ${sha}`, 'mona').payload)
    expect(ran.code, ran.stderr).toBe(0)
    // wave/plan is success already: GitLab refuses setting it again ("Cannot transition"), which is no failure.
    expect(ran.stderr).not.toContain('status')
    expect(statusLog(headSha).slice(3)).toEqual(['wave/apply running', 'wave/apply success'])
    const pushed = git(remote, ['rev-parse', 'refs/heads/feature'])
    expect(gitlab.statusesOf(pushed)).toMatchObject({'wave/apply': {state: 'success'}, 'wave/plan': {state: 'success'}})
  })

  /** Merge request 12 opened on the same head as 7, opened or closed; then a plan on 7 approved and run. */
  async function runWithSibling(state: 'opened' | 'closed'): Promise<{name: string; pushed: string}> {
    gitlab.addMergeRequest({iid: 12, sha: headSha, source_branch: 'feature-copy', target_branch: 'main', title: 'The same commits'}).state = state
    const {name, sha} = await planOnMergeRequest()
    server.push(...runTurns())
    const ran = await job({}, note(MR, `/wave approve ${name} --sha256 ${sha}`, 'mona').payload)
    expect(ran.code, ran.stderr).toBe(0)
    return {name, pushed: git(remote, ['rev-parse', 'refs/heads/feature'])}
  }

  it('wave/apply is not success on a head another open merge request shares: failed, naming it', async () => {
    const {pushed} = await runWithSibling('opened')
    expect(gitlab.statusesOf(headSha)['wave/apply']).toMatchObject({
      description: `${headSha.slice(0, 12)} is also the head of !12: plan and apply it there`,
      state: 'failed',
    })
    expect(gitlab.statuses.some((s) => s.sha === headSha && s.context === 'wave/apply' && s.state === 'success')).toBe(false)
    expect(gitlab.statusesOf(pushed)['wave/apply']).toMatchObject({state: 'success'})
  })

  it('control: the same merge request closed shares nothing, and wave/apply is success on the head', async () => {
    await runWithSibling('closed')
    expect(gitlab.statusesOf(headSha)['wave/apply']).toMatchObject({state: 'success'})
  })

  it('a plan stopped by WAVE_MAX_BUDGET_USD: exit 5, wave/plan failed, the spend in the note', async () => {
    server.push(...planTurns())
    const stopped = await job({WAVE_MAX_BUDGET_USD: '0.000001'}, note(MR, '/wave plan Add a farewell function').payload)
    expect(stopped.code, stopped.stderr).toBe(5)
    expect(gitlab.statusesOf(headSha)['wave/plan']).toMatchObject({state: 'failed'})
    const sticky = stickyOn(MR)
    expect(sticky.body).toMatch(/> Stopped at the budget: \$\d+\.\d{4} spent, more than WAVE_MAX_BUDGET_USD 0\.000001/)
    expect(sticky.body).toMatch(/^\| Cost \| planning \$\d+\.\d{4} \|$/m)
  })
})

describe('wave gitlab: duties go by identity, not by names or notes that look unedited', JOBS, () => {
  it('require-other-approver: a requester who renamed herself (same user id) may not approve her own plan; someone else may', async () => {
    const {name} = await planOnMergeRequest()
    const planning = server.messageRequests.length
    const alice = gitlab.userId('alice')
    gitlab.renameUser('alice', 'alicia')
    expect(gitlab.userId('alicia')).toBe(alice)

    const own = await job({WAVE_REQUIRE_OTHER_APPROVER: '1'}, note(MR, `/wave approve ${name}`, 'alicia').payload)
    expect(own.code).toBe(3)
    expect(own.stderr).toContain(`Plan ${name} was asked for by @alice, who may not approve it too`)
    expect(server.messageRequests).toHaveLength(planning)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)

    // Control: another person's approval runs it.
    server.push(...runTurns())
    const other = await job({WAVE_REQUIRE_OTHER_APPROVER: '1'}, note(MR, `/wave approve ${name}`, 'dave').payload)
    expect(other.code, other.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })

  it("refuses a note edited into an approval (updated_at after created_at), and a webhook body whose text is not the note's", async () => {
    const {name} = await planOnMergeRequest()
    const planning = server.messageRequests.length
    // dave writes a remark; mona (a maintainer, whom GitLab lets edit it) turns it into dave's approval and sends its event.
    const remark = note(MR, 'Looks interesting, will read later.', 'dave')
    gitlab.editNote(remark.stored.id, `/wave approve ${name}`)
    const payload = remark.payload as {object_attributes: {note: string}}
    payload.object_attributes.note = `/wave approve ${name}`
    const edited = await job({}, payload)
    expect(edited.code, edited.stderr).toBe(0)
    expect(edited.stdout).toMatch(new RegExp(`^Nothing applies: note ${remark.stored.id} was edited after it was written`))

    // A body claiming an approval for a note GitLab has as something else.
    const asked = note(MR, '/wave help', 'dave')
    const claimed = asked.payload as {object_attributes: {note: string}}
    claimed.object_attributes.note = `/wave approve ${name}`
    const differing = await job({}, claimed)
    expect(differing.code, differing.stderr).toBe(0)
    expect(differing.stdout).toContain('was edited after it was written')

    expect(server.messageRequests).toHaveLength(planning)
    expect(git(remote, ['rev-parse', 'refs/heads/feature'])).toBe(headSha)
    expect(statusOf(stickyOn(MR).body)).toBe('⏳ awaiting approval')

    // Control: dave's own new note approves it.
    server.push(...runTurns())
    const approved = await job({}, note(MR, `/wave approve ${name}`, 'dave').payload)
    expect(approved.code, approved.stderr).toBe(0)
    expect(git(remote, ['rev-parse', 'refs/heads/feature^'])).toBe(headSha)
  })

  it('a pipeline whose variables name another user and source than GitLab does plans nothing (exit 3); one they match plans', async () => {
    const main = git(remote, ['rev-parse', 'refs/heads/main'])
    // rita (a reporter) holds a trigger token: her pipeline's variables say mona started it from the web.
    const forged = gitlab.addPipeline({ref: 'main', sha: main, source: 'trigger', user: 'rita'})
    const refused = await job({
      CI_PIPELINE_ID: String(forged.id),
      CI_PIPELINE_SOURCE: 'web',
      GITLAB_USER_ID: String(gitlab.userId('mona')),
      GITLAB_USER_LOGIN: 'mona',
      WAVE_ISSUE_IID: '12',
      WAVE_TASK: 'Add a farewell function',
    })
    expect(refused.code).toBe(3)
    expect(refused.stderr).toContain(
      `do not say what GitLab says of pipeline ${forged.id} (CI_PIPELINE_SOURCE says web, GitLab says trigger; GITLAB_USER_LOGIN says mona, GitLab says rita)`,
    )
    expect(gitlab.requests.map((r) => r.path)).toContain(`/projects/${PROJECT}/pipelines/${forged.id}`)
    // The same, but naming mona's own running pipeline by its id: it runs on another commit.
    const monas = gitlab.addPipeline({ref: 'feature', sha: headSha, source: 'web', user: 'mona'})
    const borrowed = await job({
      CI_PIPELINE_ID: String(monas.id),
      CI_PIPELINE_SOURCE: 'web',
      GITLAB_USER_LOGIN: 'mona',
      WAVE_ISSUE_IID: '12',
      WAVE_TASK: 'Add a farewell function',
    })
    expect(borrowed.code).toBe(3)
    expect(borrowed.stderr).toContain(`CI_PIPELINE_ID ${monas.id} is not this job's pipeline`)
    expect(stickies(ISSUE)).toEqual([])
    expect(server.messageRequests).toHaveLength(0)

    // Control: mona's own pipeline, its variables as GitLab has it.
    server.push(...planTurns())
    const planned = await job({
      GITLAB_USER_ID: String(gitlab.userId('mona')),
      GITLAB_USER_LOGIN: 'mona',
      WAVE_ISSUE_IID: '12',
      WAVE_TASK: 'Add a farewell function',
    })
    expect(planned.code, planned.stderr).toBe(0)
    expect(stickyOn(ISSUE).body).toContain('| Requested by | @mona |')
  })
})
