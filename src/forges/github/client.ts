/**
 * The GitHub REST API as wave uses it, through Octokit: the few calls a `/wave` conversation needs, each
 * answering plain objects, and every API failure turned into one line naming the call and GitHub's
 * answer. The base URL is GITHUB_API_URL, so GitHub Enterprise Server and a test's stand-in work alike.
 */
import {Octokit} from '@octokit/rest'

import {ExitCode, WaveError} from '../../base/errors.js'
import {scrubSecrets} from '../../base/secrets.js'
import type {Access, ChangeRequest, CommitStatus, Forge, ForgeComment, ForgeWords, Person, Thread} from '../../review/forge.js'
import {mayAct, type Role, roleOf, type PermissionAnswer} from './permissions.js'

export interface RepositoryName {
  owner: string
  repo: string
}

/** Comment bodies GitHub accepts, in characters. */
const MAX_COMMENT_LENGTH = 65_536

export const GITHUB_WORDS: ForgeWords = {
  changeRequest: 'pull request',
  comment: 'comment',
  forge: 'GitHub',
  maxCommentLength: MAX_COMMENT_LENGTH,
  // Issues and pull requests share numbers.
  ref: (thread) => `#${thread.number}`,
  run: 'Workflow run',
}

export class GitHubClient implements Forge {
  readonly words = GITHUB_WORDS
  private readonly octokit: Octokit
  private readonly serverUrl: string
  private readonly minPermission: Role
  private readonly warn: (message: string) => void
  private statusRefused = false

  constructor(
    readonly repository: RepositoryName,
    options: {token: string; baseUrl: string; serverUrl?: string; minPermission?: Role; warn(message: string): void},
  ) {
    this.serverUrl = (options.serverUrl ?? 'https://github.com').replace(/\/+$/, '')
    this.minPermission = options.minPermission ?? 'write'
    this.warn = options.warn
    this.octokit = new Octokit({
      auth: options.token,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      // Failures reach the user as errors (or are expected: GET /user with a GITHUB_TOKEN); the request log would repeat them.
      log: {debug() {}, error() {}, info() {}, warn: options.warn},
      userAgent: 'wave-cli',
    })
  }

  /** The login the token acts as, where GitHub says (a GITHUB_TOKEN may not ask: undefined). */
  async viewer(): Promise<string | undefined> {
    try {
      return (await this.octokit.rest.users.getAuthenticated()).data.login
    } catch (error) {
      if (statusOf(error) === 401) throw apiError('GET /user', error)
      return undefined
    }
  }

  /** The person's role; undefined when they are no collaborator (GitHub answers 404). */
  async permission(username: string): Promise<PermissionAnswer | undefined> {
    try {
      const {data} = await this.octokit.rest.repos.getCollaboratorPermissionLevel({...this.repository, username})
      return {permission: data.permission, role_name: data.role_name}
    } catch (error) {
      if (statusOf(error) === 404) return undefined
      throw apiError(`GET the permission of ${username}`, error)
    }
  }

  async access(actor: {login: string}): Promise<Access> {
    const role = roleOf(await this.permission(actor.login))
    return {
      allowed: mayAct(role, this.minPermission),
      has: role ? `the role ${role}` : 'no role on it',
      needs: `${this.minPermission} permission on the repository`,
    }
  }

  async defaultBranch(): Promise<string> {
    const {data} = await this.call('GET the repository', () => this.octokit.rest.repos.get({...this.repository}))
    return data.default_branch
  }

  async thread(number: number): Promise<Thread & {title: string; url: string}> {
    const {data} = await this.call(`GET issue #${number}`, () => this.octokit.rest.issues.get({...this.repository, issue_number: number}))
    return {number, pull: Boolean(data.pull_request), title: data.title, url: data.html_url}
  }

  async changeRequest(number: number): Promise<ChangeRequest> {
    const {data} = await this.call(`GET pull request #${number}`, () => this.octokit.rest.pulls.get({...this.repository, pull_number: number}))
    return {
      author: data.user?.login,
      authorId: data.user?.id,
      base: {ref: data.base.ref},
      head: {ref: data.head.ref, sameRepository: data.head.repo?.full_name === `${this.repository.owner}/${this.repository.repo}`, sha: data.head.sha},
      number,
      title: data.title,
      url: data.html_url,
    }
  }

  /** Whoever's newest deciding review (approved, changes requested, dismissed) approves; people told apart by id. */
  async approvers(number: number): Promise<Person[]> {
    const reviews = await this.call(`GET the reviews of pull request #${number}`, () =>
      this.octokit.paginate(this.octokit.rest.pulls.listReviews, {...this.repository, per_page: 100, pull_number: number}),
    )
    const newest = new Map<string, {person: Person; state: string}>()
    for (const review of reviews) {
      if (!review.user || review.state === 'COMMENTED' || review.state === 'PENDING') continue
      newest.set(String(review.user.id ?? review.user.login), {person: {id: review.user.id, login: review.user.login}, state: review.state})
    }

    return [...newest.values()].filter(({state}) => state === 'APPROVED').map(({person}) => person)
  }

  /** GitHub lists every pull request a commit belongs to, closed and merged ones too: only open ones headed there count. */
  async openChangeRequestsAt(sha: string): Promise<Array<{number: number; head: {ref: string; sameRepository: boolean}}>> {
    const pulls = await this.call(`GET the pull requests of ${sha.slice(0, 12)}`, () =>
      this.octokit.paginate(this.octokit.rest.repos.listPullRequestsAssociatedWithCommit, {...this.repository, commit_sha: sha, per_page: 100}),
    )
    const fullName = `${this.repository.owner}/${this.repository.repo}`
    return pulls
      .filter((pull) => pull.state === 'open' && pull.head.sha === sha)
      .map((pull) => ({head: {ref: pull.head.ref, sameRepository: pull.head.repo?.full_name === fullName}, number: pull.number}))
  }

  /**
   * GitHub computes mergeability in the background: `null` until it has. Asked again for a few seconds
   * (as GitHub's own documentation advises), then unknown counts as not mergeable.
   */
  async mergeable(number: number): Promise<boolean | undefined> {
    const deadline = Date.now() + 10_000
    for (;;) {
      const {data} = await this.call(`GET pull request #${number}`, () => this.octokit.rest.pulls.get({...this.repository, pull_number: number}))
      if (data.mergeable !== null || Date.now() > deadline) return data.mergeable === true
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }

  /** Every comment of an issue or pull request, oldest first (all pages). */
  async comments(thread: Thread): Promise<ForgeComment[]> {
    const issue = thread.number
    const comments = await this.call(`GET the comments of #${issue}`, () =>
      this.octokit.paginate(this.octokit.rest.issues.listComments, {...this.repository, issue_number: issue, per_page: 100}),
    )
    return comments.map(commentOf)
  }

  async createComment(thread: Thread, body: string): Promise<ForgeComment> {
    const issue = thread.number
    const {data} = await this.call(`POST a comment on #${issue}`, () =>
      this.octokit.rest.issues.createComment({...this.repository, body: scrubSecrets(body), issue_number: issue}),
    )
    return commentOf(data)
  }

  async updateComment(_thread: Thread, id: number, body: string): Promise<ForgeComment> {
    const {data} = await this.call(`PATCH comment ${id}`, () =>
      this.octokit.rest.issues.updateComment({...this.repository, body: scrubSecrets(body), comment_id: id}),
    )
    return commentOf(data)
  }

  async createIssue(title: string, body: string): Promise<Thread & {url: string}> {
    const {data} = await this.call('POST an issue', () =>
      this.octokit.rest.issues.create({...this.repository, body: scrubSecrets(body), title: scrubSecrets(title)}),
    )
    return {number: data.number, pull: false, url: data.html_url}
  }

  async createChangeRequest(pull: {title: string; body: string; head: string; base: string}): Promise<{number: number; url: string}> {
    const {data} = await this.call(`POST a pull request from ${pull.head} into ${pull.base}`, () =>
      this.octokit.rest.pulls.create({...this.repository, ...pull, body: scrubSecrets(pull.body), title: scrubSecrets(pull.title)}),
    )
    return {number: data.number, url: data.html_url}
  }

  async setStatus(sha: string, status: CommitStatus): Promise<void> {
    // One warning per job: a token without statuses: write is refused every time.
    if (this.statusRefused) return
    try {
      await this.octokit.rest.repos.createCommitStatus({
        ...this.repository,
        context: status.context,
        description: scrubSecrets(status.description).slice(0, 140),
        sha,
        state: status.state === 'running' ? 'pending' : status.state,
        target_url: status.targetUrl,
      })
    } catch (error) {
      const failed = apiError(`POST the ${status.context} status of ${sha.slice(0, 12)}`, error)
      if (statusOf(error) === 401 || statusOf(error) === 403) this.statusRefused = true
      this.warn(`${failed.message}${this.statusRefused ? ' (give the workflow statuses: write for branch protection to see wave/plan and wave/apply)' : ''}`)
    }
  }

  commitUrl(sha: string): string {
    return `${this.serverUrl}/${this.repository.owner}/${this.repository.repo}/commit/${sha}`
  }

  headRef(number: number): string {
    return `refs/pull/${number}/head`
  }

  // Everything posted goes through the one scrubber every sink uses: GitHub is a sink too.
  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request()
    } catch (error) {
      throw apiError(what, error)
    }
  }
}

type RawComment = {id: number; body?: string | null; user: {login: string} | null; created_at: string; updated_at: string; html_url: string}

function commentOf(data: RawComment): ForgeComment {
  return {author: data.user?.login ?? '', body: data.body ?? '', createdAt: data.created_at, id: data.id, updatedAt: data.updated_at, url: data.html_url}
}

const statusOf = (error: unknown) => (error as {status?: unknown})?.status

/**
 * One line: the call, GitHub's status and message. 401 and 403 are setup problems (a token without the
 * workflow's permissions): exit 2 with the permissions named; anything else is a runtime failure.
 */
function apiError(what: string, error: unknown): WaveError {
  const status = statusOf(error)
  const answer = (error as {response?: {data?: {message?: unknown}}})?.response?.data?.message
  const message = typeof answer === 'string' ? answer : ((error as Error)?.message ?? String(error))
  const line = `GitHub API: ${what} failed${typeof status === 'number' ? ` (${status})` : ''}: ${message.split('\n')[0]}`
  if (status === 401 || status === 403) {
    return new WaveError(
      line,
      ExitCode.usage,
      'Give the workflow a token with contents: write, issues: write and pull-requests: write (permissions: in the workflow).',
    )
  }

  return new WaveError(line, ExitCode.runtime)
}
