/**
 * The GitLab REST API (v4) as wave uses it, through fetch: notes on merge requests and issues, merge
 * requests, their approvals, issues, the project and its members. The base URL is CI_API_V4_URL, so a
 * self-managed GitLab and a test's stand-in work alike; the token (a project access token) goes in the
 * PRIVATE-TOKEN header. Every API failure becomes one line naming the call and GitLab's answer.
 */
import {ExitCode, WaveError} from '../../base/errors.js'
import type {Access, ChangeRequest, CommitStatus, Forge, ForgeComment, ForgeWords, Person, Thread} from '../../review/forge.js'
import {scrubSecrets} from '../../base/secrets.js'
import {accessLevelName, type AccessLevel} from './access.js'

/** Note bodies GitLab accepts, in characters. */
const MAX_NOTE_LENGTH = 1_000_000

export const GITLAB_WORDS: ForgeWords = {
  changeRequest: 'merge request',
  comment: 'note',
  forge: 'GitLab',
  maxCommentLength: MAX_NOTE_LENGTH,
  // Merge requests and issues are numbered apart: !7 and #7 are two things.
  ref: (thread) => `${thread.pull ? '!' : '#'}${thread.number}`,
  run: 'Pipeline',
}

interface GitLabClientOptions {
  /** CI_API_V4_URL, e.g. https://gitlab.example.com/api/v4. */
  apiUrl: string
  /** CI_PROJECT_ID (or the project's path). */
  project: string
  /** CI_PROJECT_URL: the project's web page, for links. */
  projectUrl: string
  token: string
  minAccessLevel: AccessLevel
  /** Where a commit status that could not be set is reported (setStatus never throws). */
  warn?(message: string): void
}

/** GitLab's names for a commit status's states. */
const GITLAB_STATES: Record<CommitStatus['state'], string> = {failure: 'failed', pending: 'pending', running: 'running', success: 'success'}

type RawNote = {id: number; body: string; author: {id: number; username: string}; created_at: string; updated_at: string; system?: boolean}
type RawMergeRequest = {
  iid: number
  state?: string
  title: string
  web_url: string
  author?: {id?: number; username: string}
  sha: string
  source_branch: string
  target_branch: string
  source_project_id: number
  target_project_id: number
  has_conflicts?: boolean
  merge_status?: string
  detailed_merge_status?: string
}

type RawPipeline = {id: number; ref?: string; sha?: string; source?: string; status?: string; user?: {id: number; username: string} | null}

/** A pipeline as the API has it: its source and the person who started it. */
export interface Pipeline {
  id: number
  ref?: string
  sha?: string
  /** web, schedule, api, trigger, push, merge_request_event, ... */
  source?: string
  status?: string
  user?: {id: number; login: string}
}

/** A verified note: what the API says of it, whatever the webhook said. */
export interface Note extends ForgeComment {
  authorId: number
  system: boolean
}

export class GitLabClient implements Forge {
  readonly words = GITLAB_WORDS
  private readonly base: string

  constructor(private readonly options: GitLabClientOptions) {
    this.base = `${options.apiUrl.replace(/\/+$/, '')}/projects/${encodeURIComponent(options.project)}`
  }

  /** The token's user (a project access token's bot user), with what makes a commit identity. */
  async user(): Promise<{username: string; name: string; id: number}> {
    return this.request('GET /user', `${this.root()}/user`)
  }

  async viewer(): Promise<string | undefined> {
    return (await this.user()).username
  }

  /**
   * The person's access level on the project, inherited memberships included (`members/all/:user_id`),
   * against the minimum. Not a member (404), or a blocked one, is no access.
   */
  async access(actor: {login: string; id?: number}): Promise<Access> {
    const minimum = this.options.minAccessLevel
    const needs = `the ${accessLevelName(minimum)} role (access level ${minimum}) or higher on the project`
    const id = actor.id ?? (await this.userId(actor.login))
    const member =
      id === undefined
        ? undefined
        : await this.optional<{access_level: number; state?: string}>(`GET the membership of ${actor.login}`, `${this.base}/members/all/${id}`)
    const level = member && (member.state === undefined || member.state === 'active') ? member.access_level : undefined
    if (level === undefined) return {allowed: false, has: 'no role on it', needs}
    return {allowed: level >= minimum, has: `the ${accessLevelName(level)} role (${level})`, needs}
  }

  async defaultBranch(): Promise<string> {
    const project = await this.request<{default_branch: string | null}>('GET the project', this.base)
    if (!project.default_branch) throw new WaveError('GitLab API: the project has no default branch (is the repository empty?).', ExitCode.usage)
    return project.default_branch
  }

  async thread(number: number, pull: boolean): Promise<Thread & {title: string; url: string}> {
    const data = await this.request<{title: string; web_url: string}>(`GET ${this.words.ref({number, pull})}`, this.threadUrl({number, pull}))
    return {number, pull, title: data.title, url: data.web_url}
  }

  async changeRequest(number: number): Promise<ChangeRequest> {
    const data = await this.mergeRequest(number)
    return {
      author: data.author?.username,
      authorId: data.author?.id,
      base: {ref: data.target_branch},
      head: {ref: data.source_branch, sameRepository: data.source_project_id === data.target_project_id, sha: data.sha},
      number,
      title: data.title,
      url: data.web_url,
    }
  }

  /** GitLab lists the merge requests a commit belongs to, closed and merged ones too: only open ones headed there count. */
  async openChangeRequestsAt(sha: string): Promise<Array<{number: number; head: {ref: string; sameRepository: boolean}}>> {
    const list = await this.request<RawMergeRequest[]>(
      `GET the merge requests of ${sha.slice(0, 12)}`,
      `${this.base}/repository/commits/${sha}/merge_requests?per_page=100`,
    )
    return list
      .filter((mr) => mr.state === 'opened' && mr.sha === sha)
      .map((mr) => ({head: {ref: mr.source_branch, sameRepository: mr.source_project_id === mr.target_project_id}, number: mr.iid}))
  }

  /**
   * Who pushed `sha` to `branch`, from the project's push events (newest first): the person GitLab
   * recorded, not whom a webhook's body names. Undefined when no recent push event made that head.
   */
  async pusherOf(branch: string, sha: string): Promise<{login: string; id: number} | undefined> {
    const events = await this.request<
      Array<{author?: {id: number; username: string}; push_data?: {ref?: string; ref_type?: string; commit_to?: string | null}}>
    >(`GET the push events`, `${this.base}/events?action=pushed&per_page=100`)
    const push = events.find((event) => event.push_data?.ref_type === 'branch' && event.push_data.ref === branch && event.push_data.commit_to === sha)
    return push?.author ? {id: push.author.id, login: push.author.username} : undefined
  }

  async approvers(number: number): Promise<Person[]> {
    const data = await this.request<{approved_by?: Array<{user: {id?: number; username: string}}>}>(
      `GET the approvals of !${number}`,
      `${this.base}/merge_requests/${number}/approvals`,
    )
    return (data.approved_by ?? []).map((approval) => ({id: approval.user.id, login: approval.user.username}))
  }

  /**
   * A pipeline of the project as GitLab has it: what started it (`source`) and who (`user`). Not the
   * job's variables: a pipeline trigger's caller sets those, GITLAB_USER_LOGIN and CI_PIPELINE_SOURCE
   * included. Undefined when the project has no such pipeline.
   */
  async pipeline(id: number): Promise<Pipeline | undefined> {
    const data = await this.optional<RawPipeline>(`GET pipeline ${id}`, `${this.base}/pipelines/${id}`)
    if (!data) return undefined
    return {
      id: data.id,
      ref: data.ref,
      sha: data.sha,
      source: data.source,
      status: data.status,
      user: data.user ? {id: data.user.id, login: data.user.username} : undefined,
    }
  }

  /** GitLab checks mergeability in the background (`checking`, `unchecked`): asked again for a few seconds, then unknown is no. */
  async mergeable(number: number): Promise<boolean | undefined> {
    const deadline = Date.now() + 10_000
    for (;;) {
      const data = await this.mergeRequest(number)
      const pending =
        ['unchecked', 'checking', 'cannot_be_merged_recheck'].includes(data.merge_status ?? '') ||
        ['unchecked', 'checking', 'preparing'].includes(data.detailed_merge_status ?? '')
      if (!pending || Date.now() > deadline) return !pending && data.has_conflicts !== true && data.merge_status === 'can_be_merged'
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }

  /** Every note of a merge request or issue, oldest first (all pages); system notes ("changed the description") left out. */
  async comments(thread: Thread): Promise<Note[]> {
    const notes: Note[] = []
    for (let page = '1'; page; ) {
      const response = await this.send(
        `GET the notes of ${this.words.ref(thread)}`,
        `${this.threadUrl(thread)}/notes?sort=asc&order_by=created_at&per_page=100&page=${page}`,
      )
      notes.push(...((await response.json()) as RawNote[]).map((note) => this.noteOf(thread, note)))
      page = response.headers.get('x-next-page') ?? ''
    }

    return notes.filter((note) => !note.system)
  }

  /** One note, as GitLab stores it; undefined when there is none with that id on the thread. */
  async note(thread: Thread, id: number): Promise<Note | undefined> {
    const note = await this.optional<RawNote>(`GET note ${id} of ${this.words.ref(thread)}`, `${this.threadUrl(thread)}/notes/${id}`)
    return note && this.noteOf(thread, note)
  }

  async createComment(thread: Thread, body: string): Promise<Note> {
    const note = await this.request<RawNote>(`POST a note on ${this.words.ref(thread)}`, `${this.threadUrl(thread)}/notes`, {
      body: {body: scrubSecrets(body)},
      method: 'POST',
    })
    return this.noteOf(thread, note)
  }

  async updateComment(thread: Thread, id: number, body: string): Promise<Note> {
    const note = await this.request<RawNote>(`PUT note ${id} of ${this.words.ref(thread)}`, `${this.threadUrl(thread)}/notes/${id}`, {
      body: {body: scrubSecrets(body)},
      method: 'PUT',
    })
    return this.noteOf(thread, note)
  }

  async createIssue(title: string, body: string): Promise<Thread & {url: string}> {
    const issue = await this.request<{iid: number; web_url: string}>('POST an issue', `${this.base}/issues`, {
      body: {description: scrubSecrets(body), title: scrubSecrets(title)},
      method: 'POST',
    })
    return {number: issue.iid, pull: false, url: issue.web_url}
  }

  async createChangeRequest(request: {title: string; body: string; head: string; base: string}): Promise<{number: number; url: string}> {
    const created = await this.request<{iid: number; web_url: string}>(
      `POST a merge request from ${request.head} into ${request.base}`,
      `${this.base}/merge_requests`,
      {
        body: {description: scrubSecrets(request.body), source_branch: request.head, target_branch: request.base, title: scrubSecrets(request.title)},
        method: 'POST',
      },
    )
    return {number: created.iid, url: created.web_url}
  }

  async setStatus(sha: string, status: CommitStatus): Promise<void> {
    if (this.statusRefused) return
    const what = `POST the ${status.context} status of ${sha.slice(0, 12)}`
    // GitLab refuses a status set again in the state it has ("Cannot transition status"): already there.
    const response = await this.send(
      what,
      `${this.base}/statuses/${sha}`,
      {
        body: {
          description: scrubSecrets(status.description).slice(0, 255),
          name: status.context,
          state: GITLAB_STATES[status.state],
          target_url: status.targetUrl,
        },
        method: 'POST',
      },
      [400],
    ).catch((error: unknown) => error as WaveError)
    if (response instanceof Response) {
      if (response.status !== 400) return
      const text = await response.text().catch(() => '')
      if (/cannot transition status/i.test(text)) return
      this.options.warn?.(apiError(what, 400, text).message)
      return
    }

    if (response.exitCode === ExitCode.usage) this.statusRefused = true
    this.options.warn?.(response.message)
  }

  private statusRefused = false

  commitUrl(sha: string): string {
    return `${this.projectUrl()}/-/commit/${sha}`
  }

  headRef(number: number): string {
    return `refs/merge-requests/${number}/head`
  }

  private projectUrl(): string {
    return this.options.projectUrl.replace(/\/+$/, '')
  }

  private root(): string {
    return this.options.apiUrl.replace(/\/+$/, '')
  }

  private threadUrl(thread: Thread): string {
    return `${this.base}/${thread.pull ? 'merge_requests' : 'issues'}/${thread.number}`
  }

  private noteOf(thread: Thread, note: RawNote): Note {
    const page = `${this.projectUrl()}/-/${thread.pull ? 'merge_requests' : 'issues'}/${thread.number}`
    return {
      author: note.author.username,
      authorId: note.author.id,
      body: note.body ?? '',
      createdAt: note.created_at,
      id: note.id,
      system: note.system === true,
      updatedAt: note.updated_at,
      url: `${page}#note_${note.id}`,
    }
  }

  private mergeRequest(number: number): Promise<RawMergeRequest> {
    return this.request<RawMergeRequest>(`GET merge request !${number}`, `${this.base}/merge_requests/${number}`)
  }

  private async userId(username: string): Promise<number | undefined> {
    const users = await this.request<Array<{id: number; username: string}>>(
      `GET the user ${username}`,
      `${this.root()}/users?username=${encodeURIComponent(username)}`,
    )
    return users.find((user) => user.username.toLowerCase() === username.toLowerCase())?.id
  }

  private async request<T>(what: string, url: string, init?: {method: string; body: unknown}): Promise<T> {
    return (await (await this.send(what, url, init)).json()) as T
  }

  /** Like request, but a 404 is an answer: undefined. */
  private async optional<T>(what: string, url: string): Promise<T | undefined> {
    const response = await this.send(what, url, undefined, [404])
    return response.status === 404 ? undefined : ((await response.json()) as T)
  }

  private async send(what: string, url: string, init?: {method: string; body: unknown}, expected: number[] = []): Promise<Response> {
    let response: Response
    try {
      response = await fetch(url, {
        body: init ? JSON.stringify(init.body) : undefined,
        headers: {'content-type': 'application/json', 'private-token': this.options.token, 'user-agent': 'wave-cli'},
        method: init?.method ?? 'GET',
      })
    } catch (error) {
      const cause = (error as {cause?: {message?: string}}).cause?.message ?? (error as Error).message
      throw new WaveError(`GitLab API: ${what} failed: ${cause}`, ExitCode.runtime, 'Check CI_API_V4_URL and that the runner reaches the GitLab server.')
    }

    if (response.ok || expected.includes(response.status)) return response
    throw apiError(what, response.status, await response.text().catch(() => ''))
  }
}

/**
 * One line: the call, GitLab's status and message. 401 and 403 are setup problems (a token without the
 * scopes or role wave needs): exit 2 naming them; anything else is a runtime failure.
 */
function apiError(what: string, status: number, text: string): WaveError {
  let message = text.split('\n')[0].slice(0, 300)
  try {
    const data = JSON.parse(text) as {message?: unknown; error?: unknown}
    const said = data.message ?? data.error
    if (said !== undefined) message = typeof said === 'string' ? said : JSON.stringify(said).slice(0, 300)
  } catch {}

  const line = `GitLab API: ${what} failed (${status}): ${message}`
  if (status === 401 || status === 403) {
    return new WaveError(
      line,
      ExitCode.usage,
      'Set GITLAB_TOKEN to a project access token with the api and write_repository scopes and the Developer role or higher.',
    )
  }

  return new WaveError(line, ExitCode.runtime)
}
