/**
 * What the review core asks of a forge (GitHub, GitLab): its comments, its pull or merge requests, its
 * issues, and the words its users know them by. The core (steps.ts) decides; a forge's client only
 * reads and writes through these calls, each answering plain objects.
 */

/** An issue or a pull (merge) request: where a plan's conversation happens. */
export interface Thread {
  /** The number people use: a GitHub issue or pull request number, a GitLab issue or merge request IID. */
  number: number
  /** A pull request (GitHub) or merge request (GitLab), not an issue. */
  pull: boolean
}

/**
 * A person as the forge knows them: the login people read, and the id the forge gives them once. Duties
 * compare ids (a login can be renamed, and a freed one taken by someone else); messages show logins.
 */
export interface Person {
  login: string
  id?: number
}

/** Whether two people are the same: by id where both are known, else by login (case-insensitively). */
export function samePerson(a: Person, b: Person): boolean {
  if (a.id !== undefined && b.id !== undefined) return a.id === b.id
  return a.login.toLowerCase() === b.login.toLowerCase()
}

/** A comment (GitHub) or note (GitLab), as the forge stores it. */
export interface ForgeComment {
  id: number
  body: string
  author: string
  createdAt: string
  /** Set by the forge on every edit, by no one else: what binds an approval to the text it answered. */
  updatedAt: string
  url: string
}

/** A pull request (GitHub) or merge request (GitLab). */
export interface ChangeRequest {
  number: number
  url: string
  title: string
  author?: string
  /** The forge's id of the author: a person renamed keeps it. */
  authorId?: number
  head: {sha: string; ref: string; sameRepository: boolean}
  base: {ref: string}
}

/** The names a forge's users know things by, in what wave writes there. */
export interface ForgeWords {
  /** GitHub, GitLab: in messages. */
  forge: string
  /** pull request, merge request. */
  changeRequest: string
  /** comment, note. */
  comment: string
  /** Workflow run, Pipeline: the row linking the job that last changed the plan's comment. */
  run: string
  /** How a thread is referred to in text: #12, !7. */
  ref(thread: Thread): string
  /** Comment bodies the forge accepts, in characters. */
  maxCommentLength: number
}

/** Whether a person may act, and the words for a refusal: "that takes <needs>, and you have <has>". */
export interface Access {
  allowed: boolean
  needs: string
  has: string
}

/**
 * A commit status wave sets on a pull (merge) request's head, for branch protection to require: `wave/plan`
 * (a plan was made and awaits approval) and `wave/apply` (an approved plan ran and was delivered).
 */
export interface CommitStatus {
  context: 'wave/plan' | 'wave/apply'
  /** `running`: wave is at work on it now (GitHub has no such state: pending there). */
  state: 'pending' | 'running' | 'success' | 'failure'
  /** One short line (GitHub keeps 140 characters). */
  description: string
  /** The plan's comment. */
  targetUrl?: string
}

export interface Forge {
  readonly words: ForgeWords
  /** The login the token acts as, where the forge says. */
  viewer(): Promise<string | undefined>
  /** Whether the person may act (their role against the configured minimum). */
  access(actor: {login: string; id?: number}): Promise<Access>
  defaultBranch(): Promise<string>
  thread(number: number, pull: boolean): Promise<Thread & {title: string; url: string}>
  changeRequest(number: number): Promise<ChangeRequest>
  /** Who approved the change request (GitHub: an approving review, the newest of each person; GitLab: its approvals), with their ids. */
  approvers(number: number): Promise<Person[]>
  /**
   * The open change requests whose head is this commit (GitHub: the commit's pull requests; GitLab: its
   * merge requests); absent on a forge that cannot say. A commit status attaches to the
   * commit, so `wave/apply` success there passes every one of them (commit-status.ts, openSiblings).
   */
  openChangeRequestsAt?(sha: string): Promise<Array<{number: number; head: {ref: string; sameRepository: boolean}}>>
  /** Whether the change request can be merged; undefined where the forge cannot say. */
  mergeable(number: number): Promise<boolean | undefined>
  /** Every comment of a thread, oldest first (all pages). */
  comments(thread: Thread): Promise<ForgeComment[]>
  /** Text posted goes through the secrets scrubber inside these: the forge is a sink too. */
  createComment(thread: Thread, body: string): Promise<ForgeComment>
  updateComment(thread: Thread, id: number, body: string): Promise<ForgeComment>
  createIssue(title: string, body: string): Promise<Thread & {url: string}>
  createChangeRequest(request: {title: string; body: string; head: string; base: string}): Promise<{number: number; url: string}>
  /**
   * Sets a commit status. Never throws: a status is for branch protection, not part of the review, so a
   * token that may not set one (GitHub: no `statuses: write`) is warned about and the review goes on.
   */
  setStatus(sha: string, status: CommitStatus): Promise<void>
  /** The web page of a commit. */
  commitUrl(sha: string): string
  /** The ref a change request's head can be fetched by when its branch lives in a fork. */
  headRef(number: number): string
}
