/**
 * A plan's sticky comment (GitHub) or note (GitLab) on the forge, its body written by comment-body.ts:
 * created once, then edited in place, and found again among wave's own comments of the thread by its
 * marker. Only comments by wave's own login count: anyone can write a comment that looks like one, and a
 * plan found in a stranger's comment would run the stranger's plan.
 */
import {errorLine, ExitCode, WaveError} from '../base/errors.js'
import {commitStatuses, openSiblings, sharedHeadStatus} from './commit-status.js'
import type {CommitStatus, Forge, ForgeComment, Thread} from './forge.js'
import {cappedNotes, parseSticky, renderSticky, stickyBody, type StickyExtras, type StickyState} from './comment-body.js'
import {type DependencyInstall, dependencyLine} from './dependency-install.js'
import {stickyStatusAfter} from './status.js'
import {decodeData, encodeData, type PlanOnForge} from './transport.js'

export class PlanComment {
  private constructor(
    private readonly client: Forge,
    private current: ForgeComment | undefined,
    public state: StickyState,
    public plan: Buffer | undefined,
    private readonly thread: Thread,
  ) {}

  /** Shown while this job keeps the comment, not carried in it: the contract and the changes since the last review. */
  public extras: StickyExtras = {}

  /** The commit statuses this job set, by commit and context: each is set again only when it changes. */
  private readonly statuses = new Map<string, string>()

  /** A new plan's comment; nothing is posted until the first save. `dependencies`: the job's install, said in every save. */
  static start(client: Forge, thread: Thread, state: StickyState, dependencies?: DependencyInstall): PlanComment {
    return new PlanComment(client, undefined, state, undefined, thread).saying(dependencies)
  }

  static of(client: Forge, found: PlanOnForge, dependencies?: DependencyInstall): PlanComment {
    return new PlanComment(client, found.comment, structuredClone(found.state), found.plan, found.state.thread).saying(dependencies)
  }

  /** The job's install in one line, below the table: shown by this job's saves, not carried to the next job's. */
  private saying(dependencies: DependencyInstall | undefined): this {
    this.extras = {dependencies: dependencyLine(dependencies)}
    return this
  }

  get url(): string | undefined {
    return this.current?.url
  }

  get author(): string | undefined {
    return this.current?.author
  }

  /**
   * Posts the comment, or edits it in place, within the forge's size limit: the model's notes are cut to
   * what the comment shows (cappedNotes), then, while the body is too large, the diff since the last
   * review goes, then (once the plan is past review) the plan's copy. A plan under review that cannot fit
   * with its plan is an error: the reviewer approves every byte. Then sets the commit statuses its state
   * calls for (commit-status.ts), unless `statuses` is false.
   */
  async save(options: {statuses?: boolean} = {}): Promise<void> {
    this.state = cappedNotes(this.state)
    const body = this.fit()
    this.current = this.current ? await this.client.updateComment(this.thread, this.current.id, body) : await this.client.createComment(this.thread, body)
    // A unit's row changes no status: only the plan's own status calls for one.
    if (options.statuses === false) return
    for (const planned of commitStatuses(this.state, this.url)) {
      const {sha} = planned
      const status = await this.unshared(sha, planned.status)
      const key = `${sha} ${status.context}`
      const value = `${status.state} ${status.description}`
      if (this.statuses.get(key) === value) continue
      this.statuses.set(key, value)
      await this.client.setStatus(sha, status)
    }
  }

  /** `wave/apply` success only where no other open change request shares the commit (commit-status.ts, openSiblings). */
  private async unshared(sha: string, status: CommitStatus): Promise<CommitStatus> {
    if (status.context !== 'wave/apply' || status.state !== 'success' || !this.client.openChangeRequestsAt) return status
    const siblings = openSiblings(this.state, sha, await this.client.openChangeRequestsAt(sha))
    if (siblings.length === 0) return status
    return sharedHeadStatus(
      status,
      sha,
      siblings.map((number) => this.client.words.ref({number, pull: true})),
    )
  }

  /**
   * Records a failure in the comment (status failed, the exit code and what it means, the message). A
   * comment too large with the plan and the run's report drops them rather than leaving the failure unsaid.
   */
  async fail(phase: 'plan' | 'run' | 'delivery', error: unknown): Promise<void> {
    const exitCode = error instanceof WaveError ? error.exitCode : ExitCode.runtime
    const message = errorLine(error)
    this.state = {
      ...this.state,
      failure: {exitCode, message, phase},
      history: [...this.state.history, {at: now(), event: 'failed', text: message}],
      status: stickyStatusAfter(phase === 'plan' ? {kind: 'planned', ok: false} : {kind: 'run', run: {exitCode}}),
    }
    try {
      await this.save()
    } catch (tooLarge) {
      if (!(tooLarge instanceof WaveError) || !tooLarge.message.includes('too large')) throw tooLarge
      // The failure said with the least beside it: no plan, no report, no notes.
      this.plan = undefined
      this.state = {...this.state, omitted: undefined, questions: undefined, report: undefined, todos: undefined}
      await this.save()
    }
  }

  /** The body as large as the forge takes: the whole of it, else without the diff, else (past review) without the plan. */
  private fit(): string {
    const {words} = this.client
    const limit = words.maxCommentLength
    let body = this.render(this.plan)
    if (body.length > limit && this.extras.changes) {
      this.extras = {...this.extras, changes: undefined}
      body = this.render(this.plan)
    }

    if (body.length > limit && this.plan && PAST_REVIEW.includes(this.state.status)) {
      this.plan = undefined
      body = this.render(undefined)
    }

    if (body.length > limit) {
      throw new WaveError(
        `The plan ${this.state.name} is too large for its ${words.comment}: ${body.length} characters with ${this.plan ? 'the plan shown and carried' : "the run's report"}, and ${words.forge} takes ${limit}.`,
        ExitCode.runtime,
        'Ask for a narrower task, or a shorter plan.',
      )
    }

    return body
  }

  private render(plan: Buffer | undefined): string {
    const shown = renderSticky(this.state, plan?.toString('utf8'), this.client.words, this.extras)
    return stickyBody(shown, encodeData(this.state, plan, shown))
  }
}

/** Statuses whose comment no longer needs the plan's copy to answer it: it ran, is running, or was planned again. */
const PAST_REVIEW: StickyState['status'][] = ['running', 'done', 'failed', 'superseded']

/** Every plan of the thread in a comment by `author` (wave's own login), oldest first; damaged ones as errors. */
export async function plansOf(client: Forge, thread: Thread, author: string): Promise<Array<PlanOnForge | {name: string; damaged: WaveError}>> {
  const plans: Array<PlanOnForge | {name: string; damaged: WaveError}> = []
  for (const comment of await client.comments(thread)) {
    if (comment.author !== author) continue
    const sticky = parseSticky(comment.body)
    if (!sticky) continue
    try {
      plans.push(decodeData(sticky, comment, client.words))
    } catch (error) {
      plans.push({damaged: error as WaveError, name: sticky.name})
    }
  }

  return plans
}

export const now = () => new Date().toISOString()
