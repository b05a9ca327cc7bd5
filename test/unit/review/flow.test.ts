/**
 * The review core in process: `/wave plan` → `/wave approve` → run and delivery, through a forge-neutral
 * Forge kept in memory (wave's own interface, review/forge.ts), a real git remote, and the scripted
 * Messages server. Each job gets its own checkout and plans directory, as CI jobs do: the plan travels
 * in its comment. The forge suites (test/e2e/github.test.ts, gitlab.test.ts) run the same through
 * bin/run.js and each forge's API stand-in.
 */
import {mkdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import type {SessionHost} from '../../../src/session/context.js'
import type {ChangeRequest, CommitStatus, Forge, ForgeComment, ForgeWords, Thread} from '../../../src/review/forge.js'
import {handleReview} from '../../../src/review/handler.js'
import {commentIntent} from '../../../src/review/intent.js'
import {Remote} from '../../../src/review/remote.js'
import type {ReviewOutcome, ReviewRun} from '../../../src/review/steps.js'
import {parseSticky} from '../../../src/review/comment-body.js'
import {decodeData} from '../../../src/review/transport.js'
import {ExitCode, WaveError} from '../../../src/base/errors.js'
import {approvalPathFor, approvalRecordSchema} from '../../../src/plans/approval.js'
import {readPlanState} from '../../../src/plans/lifecycle.js'
import {readRevisions} from '../../../src/plans/revisions.js'
import {plansDir} from '../../../src/plans/store.js'
import {type Sandbox, sha256} from '../../support/cli.js'
import {FAREWELL, forgeRemote, freshRunner, git, PLAN, planTurns, runTurns} from '../../support/forge-fixture.js'
import {type MessagesServer, reply, toolUse} from '../../support/messages-server.js'
import {useInProcessSession} from '../../support/session.js'

const BOT = 'wave-bot'
const PULL: Thread = {number: 7, pull: true}

/** A forge in memory: one pull request from this repository, its comments, everyone allowed. */
class MemoryForge implements Forge {
  readonly words: ForgeWords = {
    changeRequest: 'change request',
    comment: 'comment',
    forge: 'Forge',
    maxCommentLength: 65_536,
    ref: (thread) => `#${thread.number}`,
    run: 'Job',
  }

  readonly stored: Array<ForgeComment & {thread: number}> = []
  /** The commit statuses set, in order (what branch protection would read). */
  readonly statuses: Array<{sha: string; status: CommitStatus}> = []
  private clock = Date.parse('2030-01-01T00:00:00Z')

  constructor(private readonly head: {sha: string; ref: string}) {}

  async setStatus(sha: string, status: CommitStatus): Promise<void> {
    this.statuses.push({sha, status})
  }

  /** A time later than every one before: what the forge stamps a comment with. */
  tick(): string {
    this.clock += 1000
    return new Date(this.clock).toISOString()
  }

  /** A person's comment in the thread, as the event that triggers a job carries it. */
  say(author: string, body: string): ForgeComment {
    const at = this.tick()
    const id = this.stored.length + 1
    const comment = {author, body, createdAt: at, id, thread: PULL.number, updatedAt: at, url: `https://forge.invalid/c/${id}`}
    this.stored.push(comment)
    return comment
  }

  async viewer() {
    return BOT
  }

  async access() {
    return {allowed: true, has: 'write', needs: 'write'}
  }

  async defaultBranch() {
    return 'main'
  }

  async thread(number: number, pull: boolean) {
    return {number, pull, title: 'Greetings', url: `https://forge.invalid/t/${number}`}
  }

  async changeRequest(number: number): Promise<ChangeRequest> {
    return {
      author: 'alice',
      base: {ref: 'main'},
      head: {...this.head, sameRepository: true},
      number,
      title: 'Greetings',
      url: `https://forge.invalid/t/${number}`,
    }
  }

  async approvers() {
    return []
  }

  async mergeable() {
    return true
  }

  async comments(thread: Thread) {
    return this.stored.filter((comment) => comment.thread === thread.number)
  }

  async createComment(_thread: Thread, body: string) {
    return this.say(BOT, body)
  }

  async updateComment(_thread: Thread, id: number, body: string) {
    const comment = this.stored.find((stored) => stored.id === id)!
    Object.assign(comment, {body, updatedAt: this.tick()})
    return comment
  }

  async createIssue(): Promise<Thread & {url: string}> {
    throw new Error('no issue is created in these tests')
  }

  async createChangeRequest(): Promise<{number: number; url: string}> {
    throw new Error('a change request from this repository gets a push')
  }

  commitUrl(sha: string) {
    return `https://forge.invalid/commit/${sha}`
  }

  headRef(number: number) {
    return `refs/pull/${number}/head`
  }

  /** The plan's comment: its state and the plan it carries. */
  sticky() {
    const comment = this.stored.find((stored) => stored.author === BOT && parseSticky(stored.body))!
    return {body: comment.body, ...decodeData(parseSticky(comment.body)!, comment, this.words)}
  }
}

let server: MessagesServer
let sandbox: Sandbox
let remote: string
let forge: MemoryForge
let jobs = 0

useInProcessSession((session) => {
  ;({sandbox, server} = session)
  const made = forgeRemote(sandbox)
  remote = made.remote
  forge = new MemoryForge({ref: 'feature', sha: made.headSha})
})

const host = (): SessionHost => ({signal: new AbortController().signal, warn() {}})

/** A CI job: a fresh clone and wave home of its own; the comment `body` by `actor` is its event. */
async function job(actor: string, body: string, sessionOptions: ReviewRun['sessionOptions'] = {}): Promise<ReviewOutcome> {
  const {checkout, runner} = freshRunner(sandbox, remote, ++jobs)
  process.env.WAVE_HOME = path.join(runner, 'wave')
  mkdirSync(process.env.WAVE_HOME)
  const comment = forge.say(actor, body)
  const run: ReviewRun = {
    author: BOT,
    client: forge,
    duties: {requireMergeable: false, requireOtherApprover: false, requireReview: false},
    event: 'comment',
    options: {allow: [], mode: 'acceptEdits', networkAllow: [], prDelivery: 'push', sandbox: true},
    remote: new Remote({name: 'origin', serverUrl: 'https://forge.invalid', token: 'forge-token', workspace: checkout}),
    session: (_title, work) => work(host()),
    sessionOptions,
    workspace: checkout,
  }
  const trigger = {actor, comment: {body, createdAt: comment.createdAt, id: comment.id, url: comment.url}, thread: PULL}
  return handleReview({event: 'comment', intent: commentIntent(body, trigger), prepare: async () => ({client: forge, complete: async () => run})})
}

describe('the review core', () => {
  it('plans, then approves, runs and pushes the change: the sticky status follows the plan', async () => {
    server.push(...planTurns())
    const planned = await job('alice', '/wave plan Add a farewell')
    expect(planned).toMatchObject({outcome: 'planned', plan: {sha256: sha256(PLAN), status: 'awaiting_approval'}})
    const name = planned.plan!.name
    expect(forge.sticky().state).toMatchObject({name, requestedBy: 'alice', sha256: sha256(PLAN), status: 'awaiting_approval'})
    expect(forge.sticky().plan?.toString('utf8')).toBe(PLAN)

    server.push(...runTurns())
    const ran = await job('bob', `/wave approve ${name} --sha256 ${sha256(PLAN)}`)
    expect(ran).toMatchObject({delivery: {branch: 'feature', kind: 'push'}, outcome: 'ran', plan: {status: 'done'}})
    const {state} = forge.sticky()
    expect(state.status).toBe('done')
    expect(state.history.map((entry) => [entry.event, entry.by])).toEqual([
      ['planned', 'alice'],
      ['approved', 'bob'],
      ['ran', undefined],
    ])
    // The change is on the pull request's branch, as the run wrote it.
    expect(git(remote, ['show', 'refs/heads/feature:src/farewell.ts']) + '\n').toBe(FAREWELL)

    // The approval went through approvePlan in the approving job: its record, its revision, the plan's state.
    const planPath = path.join(plansDir(), `${name}.md`)
    const record = approvalRecordSchema.parse(JSON.parse(readFileSync(approvalPathFor(planPath), 'utf8')))
    expect(record).toMatchObject({approver: 'bob', decision: 'approved', plan: {sha256: sha256(PLAN)}})
    expect(readRevisions(planPath).map((revision) => revision.sha256)).toEqual([sha256(PLAN)])
    expect((await readPlanState(planPath))?.status).toBe('ran')
  })

  it('fails the step and shows it in the comment when the run stops at its turn limit (exit 5)', async () => {
    server.push(...planTurns())
    const name = (await job('alice', '/wave plan Add a farewell')).plan!.name
    server.push(...runTurns())
    const error = await job('bob', `/wave approve ${name} --sha256 ${sha256(PLAN)}`, {maxTurns: 1}).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(WaveError)
    expect((error as WaveError).exitCode).toBe(ExitCode.limit)
    expect((error as WaveError).message).toBe('Stopped at the turn limit (1 turns) before the agent finished.')
    const {body, state} = forge.sticky()
    expect(state).toMatchObject({failure: {exitCode: ExitCode.limit, phase: 'run'}, status: 'failed'})
    expect(body).toContain('**The run failed** (exit 5: the agent stopped at a limit (max turns, budget) before finishing)')
    // Nothing was delivered.
    expect(git(remote, ['ls-tree', '--name-only', 'refs/heads/feature', 'src/'])).not.toContain('farewell.ts')
  })

  it('rejects: the status is the decision, and nothing runs', async () => {
    server.push(...planTurns())
    const name = (await job('alice', '/wave plan Add a farewell')).plan!.name
    const requests = server.messageRequests.length
    const rejected = await job('bob', `/wave reject ${name} Out of scope`)
    expect(rejected).toMatchObject({outcome: 'rejected', plan: {status: 'rejected'}})
    expect(forge.sticky().state.history.at(-1)).toMatchObject({by: 'bob', event: 'rejected', text: 'Out of scope'})
    expect(server.messageRequests).toHaveLength(requests)
    // Control: a plan that is rejected is not approvable any more.
    const refused = await job('bob', `/wave approve ${name} --sha256 ${sha256(PLAN)}`).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect((refused as WaveError).exitCode).toBe(ExitCode.notApproved)
    expect(server.messageRequests).toHaveLength(requests)
  })

  it('gives each session the turn limit the command passed (the review keeps no default of its own)', async () => {
    server.push(reply(toolUse('Read', {file_path: 'README.md'})), reply(toolUse('Read', {file_path: 'README.md'})))
    const error = await job('alice', '/wave plan Add a farewell', {maxTurns: 1}).then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect((error as WaveError).exitCode).toBe(ExitCode.limit)
    expect(server.messageRequests).toHaveLength(1)
    expect(forge.sticky().state).toMatchObject({failure: {phase: 'plan'}, status: 'failed'})
  })
})
