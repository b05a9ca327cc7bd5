/**
 * A local stand-in for the GitHub REST API, enough of it for `wave github`: the authenticated user,
 * collaborator permissions, issues, issue comments (list with pages, create, get, update), pull requests
 * (get, create) and the repository. It records every request, answers as GitHub does (status codes,
 * shapes, `updated_at` on edits, a 65,536-character body limit, `Link` pagination), and keeps its own
 * clock, one second per change, so tests can say what was written before or after what.
 *
 *   const github = await startGitHubServer({owner: 'octo', repo: 'demo', token, permissions: {alice: 'write'}})
 *   // GITHUB_API_URL=github.url ...
 *   await github.close()
 */
import type {Answer, ForgeStandIn, RecordedForgeRequest, Route, StoredStatus} from './forge-server.js'
import {branchHead, ForgeClock, latestStatuses, startForgeHttp} from './forge-server.js'

export type Role = 'read' | 'triage' | 'write' | 'maintain' | 'admin'

export interface GitHubServerOptions {
  owner: string
  repo: string
  /** The token every request must carry (`Authorization: token …` or `Bearer …`). */
  token: string
  defaultBranch?: string
  /** Where html_url links point (default https://github.test). */
  htmlBase?: string
  /** Who comments made through the API are by (default github-actions[bot], as with a GITHUB_TOKEN). */
  botLogin?: string
  /** What GET /user answers: a login, or nothing (403, as for a GITHUB_TOKEN; the default). */
  viewer?: string
  /** Login → role; anyone else is no collaborator (404). */
  permissions?: Record<string, Role>
  /** A bare repository: POST /pulls checks that its head branch exists there, as GitHub does. */
  remote?: string
  /** Comments per page when the client does not ask (GitHub: 30). */
  pageSize?: number
}

export type RecordedGitHubRequest = RecordedForgeRequest

export interface StoredComment {
  id: number
  issue: number
  body: string
  user: {login: string; type: 'User' | 'Bot'}
  created_at: string
  updated_at: string
  html_url: string
}

export interface StoredIssue {
  number: number
  title: string
  body: string
  pull: boolean
}

export interface StoredPull {
  number: number
  title: string
  body: string
  /** Who opened it (default alice). */
  user?: string
  head: {ref: string; sha: string; repo: string | null}
  base: {ref: string}
  /** What GitHub says of merging it: null while it computes (default true). */
  mergeable?: boolean | null
  /** Closed pull requests still list under their commits (GET /commits/:sha/pulls), as GitHub's do (default open). */
  state?: 'open' | 'closed'
  /** Its reviews, oldest first, as GET .../reviews lists them. */
  reviews?: Array<{user: string; state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED'}>
}

export interface GitHubServer extends ForgeStandIn {
  readonly requests: RecordedGitHubRequest[]
  readonly comments: StoredComment[]
  readonly issues: Map<number, StoredIssue>
  readonly pulls: Map<number, StoredPull>
  /** Pull requests created through the API (POST /pulls bodies, with their number). */
  readonly createdPulls: Array<{number: number; title: string; body: string; head: string; base: string}>
  permissions: Record<string, Role>
  /** Every commit status set (POST /statuses/:sha), oldest first. */
  readonly statuses: StoredStatus[]
  /** The newest status of each context on a commit. */
  statusesOf(sha: string): Record<string, StoredStatus>
  /** Refuse status writes as GitHub does a token without statuses: write (403). */
  refuseStatuses: boolean
  addIssue(issue: Omit<StoredIssue, 'pull'>): StoredIssue
  addPull(pull: {
    number: number
    title: string
    body?: string
    user?: string
    head: {ref: string; sha: string; repo?: string | null}
    base: {ref: string}
  }): StoredPull
  /** A comment written by someone (not through the API under test), e.g. a person's or a forgery. */
  addComment(issue: number, body: string, user: {login: string; type?: 'User' | 'Bot'}): StoredComment
  /** An edit by someone else: the body replaced, `updated_at` moved on. */
  editComment(id: number, body: string): StoredComment
  /** The id GitHub gives a login (stable per login; a renamed person keeps theirs: renameUser). */
  userId(login: string): number
  /** A person renamed: the same id (and role) under a new login. */
  renameUser(from: string, to: string): void
  commentsOn(issue: number): StoredComment[]
  /** The clock's current time (ISO 8601, whole seconds). */
  now(): string
  /** Moves the clock one second on and returns the new time: a comment written "now", after everything so far. */
  tick(): string
  /** Requests other than reads. */
  writes(): RecordedGitHubRequest[]
}

export async function startGitHubServer(options: GitHubServerOptions): Promise<GitHubServer> {
  const htmlBase = options.htmlBase ?? 'https://github.test'
  const botLogin = options.botLogin ?? 'github-actions[bot]'
  const comments: StoredComment[] = []
  const issues = new Map<number, StoredIssue>()
  const pulls = new Map<number, StoredPull>()
  const createdPulls: GitHubServer['createdPulls'] = []
  const statuses: StoredStatus[] = []
  let refuseStatuses = false
  let nextCommentId = 1001
  let nextNumber = 100
  // GitHub's times are in whole seconds.
  const clock = new ForgeClock()
  const now = () => clock.now().replace('.000Z', 'Z')
  const tick = () => clock.tick().replace('.000Z', 'Z')

  const fullName = `${options.owner}/${options.repo}`
  const issueUrl = (issue: number) => `${htmlBase}/${fullName}/${issues.get(issue)?.pull ? 'pull' : 'issues'}/${issue}`

  const state = {
    permissions: {...options.permissions},
  }
  const ids = new Map<string, number>()
  const userId = (login: string) => {
    if (!ids.has(login)) ids.set(login, 5000 + ids.size)
    return ids.get(login)!
  }

  function renameUser(from: string, to: string): void {
    ids.set(to, userId(from))
    ids.delete(from)
    if (from in state.permissions) {
      state.permissions[to] = state.permissions[from]
      delete state.permissions[from]
    }

    for (const comment of comments) if (comment.user.login === from) comment.user = {...comment.user, login: to}
  }

  function addComment(issue: number, body: string, user: {login: string; type?: 'User' | 'Bot'}): StoredComment {
    const at = tick()
    const id = nextCommentId++
    const comment: StoredComment = {
      body,
      created_at: at,
      html_url: `${issueUrl(issue)}#issuecomment-${id}`,
      id,
      issue,
      updated_at: at,
      user: {login: user.login, type: user.type ?? 'User'},
    }
    comments.push(comment)
    return comment
  }

  function editComment(id: number, body: string): StoredComment {
    const comment = comments.find((c) => c.id === id)
    if (!comment) throw new Error(`no comment ${id}`)
    comment.body = body
    comment.updated_at = tick()
    return comment
  }

  const commentJson = (c: StoredComment) => ({
    author_association: c.user.type === 'Bot' ? 'NONE' : 'MEMBER',
    body: c.body,
    created_at: c.created_at,
    html_url: c.html_url,
    id: c.id,
    issue_url: `${serverUrl()}/repos/${fullName}/issues/${c.issue}`,
    node_id: `IC_${c.id}`,
    updated_at: c.updated_at,
    url: `${serverUrl()}/repos/${fullName}/issues/comments/${c.id}`,
    user: {id: userId(c.user.login), login: c.user.login, type: c.user.type},
  })

  const pullJson = (p: StoredPull) => ({
    base: {ref: p.base.ref, repo: {full_name: fullName}},
    body: p.body,
    head: {ref: p.head.ref, repo: p.head.repo === null ? null : {full_name: p.head.repo}, sha: p.head.sha},
    html_url: `${htmlBase}/${fullName}/pull/${p.number}`,
    mergeable: p.mergeable === undefined ? true : p.mergeable,
    number: p.number,
    user: {id: userId(p.user ?? 'alice'), login: p.user ?? 'alice', type: 'User'},
    state: p.state ?? 'open',
    title: p.title,
  })

  const issueJson = (i: StoredIssue) => ({
    body: i.body,
    html_url: issueUrl(i.number),
    number: i.number,
    state: 'open',
    title: i.title,
    ...(i.pull ? {pull_request: {html_url: `${htmlBase}/${fullName}/pull/${i.number}`, url: `${serverUrl()}/repos/${fullName}/pulls/${i.number}`}} : {}),
  })

  const repoPath = `/repos/${options.owner}/${options.repo}`
  const notFound: Answer = [404, {message: 'Not Found'}]
  const routes: Route[] = [
    ['GET', /^\/user$/, () => (options.viewer ? [200, {login: options.viewer, type: 'User'}] : [403, {message: 'Resource not accessible by integration'}])],
    [
      'GET',
      new RegExp(`^${repoPath}$`),
      () => [200, {default_branch: options.defaultBranch ?? 'main', full_name: fullName, name: options.repo, owner: {login: options.owner}}],
    ],
    [
      'GET',
      new RegExp(`^${repoPath}/collaborators/([^/]+)/permission$`),
      (m) => {
        const login = decodeURIComponent(m[1])
        const role = state.permissions[login]
        if (!role) return [404, {message: `${login} is not a user`}]
        const permission = role === 'maintain' ? 'write' : role === 'triage' ? 'read' : role
        return [200, {permission, role_name: role, user: {login}}]
      },
    ],
    [
      'GET',
      new RegExp(`^${repoPath}/issues/(\\d+)$`),
      (m) => {
        const issue = issues.get(Number(m[1]))
        return issue ? [200, issueJson(issue)] : notFound
      },
    ],
    [
      'POST',
      new RegExp(`^${repoPath}/issues$`),
      (_m, req) => {
        if (typeof req.body?.title !== 'string' || !req.body.title)
          return [422, {message: 'Validation Failed', errors: [{field: 'title', code: 'missing_field'}]}]
        const issue: StoredIssue = {body: req.body.body ?? '', number: nextNumber++, pull: false, title: req.body.title}
        issues.set(issue.number, issue)
        tick()
        return [201, issueJson(issue)]
      },
    ],
    [
      'GET',
      new RegExp(`^${repoPath}/issues/(\\d+)/comments$`),
      (m, req) => {
        const issue = Number(m[1])
        if (!issues.has(issue)) return notFound
        const all = comments.filter((c) => c.issue === issue)
        const perPage = Math.min(Number(req.query.per_page ?? options.pageSize ?? 30), 100)
        const page = Number(req.query.page ?? 1)
        const slice = all.slice((page - 1) * perPage, page * perPage)
        const headers: Record<string, string> = {}
        if (page * perPage < all.length) headers.link = `<${serverUrl()}${req.path}?per_page=${perPage}&page=${page + 1}>; rel="next"`
        return [200, slice.map(commentJson), headers]
      },
    ],
    [
      'POST',
      new RegExp(`^${repoPath}/issues/(\\d+)/comments$`),
      (m, req) => {
        const issue = Number(m[1])
        if (!issues.has(issue)) return notFound
        const problem = bodyProblem(req.body?.body)
        if (problem) return [422, {message: problem}]
        return [201, commentJson(addComment(issue, req.body.body, {login: botLogin, type: 'Bot'}))]
      },
    ],
    [
      'GET',
      new RegExp(`^${repoPath}/issues/comments/(\\d+)$`),
      (m) => {
        const comment = comments.find((c) => c.id === Number(m[1]))
        return comment ? [200, commentJson(comment)] : notFound
      },
    ],
    [
      'PATCH',
      new RegExp(`^${repoPath}/issues/comments/(\\d+)$`),
      (m, req) => {
        const comment = comments.find((c) => c.id === Number(m[1]))
        if (!comment) return notFound
        // A GITHUB_TOKEN edits its own comments only (a person with write access could edit any).
        if (comment.user.login !== botLogin) return [403, {message: 'Resource not accessible by integration'}]
        const problem = bodyProblem(req.body?.body)
        if (problem) return [422, {message: problem}]
        return [200, commentJson(editComment(comment.id, req.body.body))]
      },
    ],
    [
      'GET',
      new RegExp(`^${repoPath}/pulls/(\\d+)$`),
      (m) => {
        const pull = pulls.get(Number(m[1]))
        return pull ? [200, pullJson(pull)] : notFound
      },
    ],
    [
      'GET',
      new RegExp(`^${repoPath}/pulls/(\\d+)/reviews$`),
      (m) => {
        const pull = pulls.get(Number(m[1]))
        if (!pull) return notFound
        return [
          200,
          (pull.reviews ?? []).map((review, i) => ({
            commit_id: pull.head.sha,
            id: 9000 + i,
            state: review.state,
            user: {id: userId(review.user), login: review.user, type: 'User'},
          })),
        ]
      },
    ],
    [
      'POST',
      new RegExp(`^${repoPath}/statuses/([0-9a-f]{40})$`),
      (m, req) => {
        if (refuseStatuses) return [403, {message: 'Resource not accessible by integration'}]
        const {context = 'default', description, state, target_url} = req.body ?? {}
        if (!['error', 'failure', 'pending', 'success'].includes(state)) return [422, {message: 'Validation Failed: state is not included in the list'}]
        if (typeof description === 'string' && description.length > 140)
          return [422, {message: 'Validation Failed: description is too long (maximum is 140 characters)'}]
        const status: StoredStatus = {context, description, sha: m[1], state, target_url}
        statuses.push(status)
        tick()
        return [201, {...status, id: statuses.length}]
      },
    ],
    // A commit's pull requests: here those headed at it (GitHub adds any that contain it; wave keeps only heads).
    ['GET', new RegExp(`^${repoPath}/commits/([0-9a-f]{40})/pulls$`), (m) => [200, [...pulls.values()].filter((p) => p.head.sha === m[1]).map(pullJson)]],
    ['GET', new RegExp(`^${repoPath}/commits/([0-9a-f]{40})/statuses$`), (m) => [200, statuses.filter((s) => s.sha === m[1]).reverse()]],
    [
      'POST',
      new RegExp(`^${repoPath}/pulls$`),
      (_m, req) => {
        const {base, body, head, title} = req.body ?? {}
        if (typeof head !== 'string' || typeof base !== 'string' || typeof title !== 'string') return [422, {message: 'Validation Failed'}]
        const sha = options.remote ? branchHead(options.remote, head) : '0'.repeat(40)
        if (!sha) return [422, {errors: [{code: 'invalid', field: 'head', resource: 'PullRequest'}], message: 'Validation Failed'}]
        const number = nextNumber++
        const pull: StoredPull = {base: {ref: base}, body: body ?? '', head: {ref: head, repo: fullName, sha}, number, title}
        pulls.set(number, pull)
        issues.set(number, {body: pull.body, number, pull: true, title})
        createdPulls.push({base, body: pull.body, head, number, title})
        tick()
        return [201, pullJson(pull)]
      },
    ],
  ]

  const http = await startForgeHttp({
    authorized(headers) {
      const auth = headers.authorization ?? ''
      return /^(token|bearer) /i.test(auth) && auth.replace(/^(token|bearer) /i, '') === options.token
    },
    contentType: 'application/json; charset=utf-8',
    notFound: [404, {documentation_url: 'https://docs.github.com/rest', message: 'Not Found'}],
    routes: () => routes,
    unauthorized: [401, {message: 'Bad credentials'}],
  })
  const serverUrl = () => http.url

  return {
    addComment,
    addIssue(issue) {
      const stored = {...issue, pull: false}
      issues.set(issue.number, stored)
      return stored
    },
    addPull(pull) {
      const stored: StoredPull = {
        base: pull.base,
        body: pull.body ?? '',
        user: pull.user,
        head: {ref: pull.head.ref, repo: pull.head.repo === undefined ? fullName : pull.head.repo, sha: pull.head.sha},
        number: pull.number,
        title: pull.title,
      }
      pulls.set(pull.number, stored)
      issues.set(pull.number, {body: stored.body, number: pull.number, pull: true, title: pull.title})
      return stored
    },
    close: http.close,
    comments,
    commentsOn: (issue) => comments.filter((c) => c.issue === issue),
    createdPulls,
    editComment,
    issues,
    renameUser,
    userId,
    now,
    get permissions() {
      return state.permissions
    },
    set permissions(value) {
      state.permissions = value
    },
    pulls,
    get refuseStatuses() {
      return refuseStatuses
    },
    set refuseStatuses(value) {
      refuseStatuses = value
    },
    requests: http.requests,
    statuses,
    statusesOf: (sha) => latestStatuses(statuses, sha),
    tick,
    url: http.url,
    hold: http.hold,
    writes: http.writes,
  }
}

function bodyProblem(body: unknown): string | undefined {
  if (typeof body !== 'string' || body === '') return 'Validation Failed: body is missing'
  if (body.length > 65_536) return 'Validation Failed: body is too long (maximum is 65536 characters)'
  return undefined
}
