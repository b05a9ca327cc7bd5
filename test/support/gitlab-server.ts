/**
 * A local stand-in for the GitLab REST API (v4), enough of it for `wave gitlab`: the token's user, users
 * by name, the project, project members (members/all/:user_id, inherited included), merge requests (get,
 * create, approvals), issues (get, create) and their notes (list with pages, get, create, edit), and
 * pipelines (get: their source and the user who started them, whatever the job's variables say), and the
 * project's push events (who pushed which head to which branch). It
 * records every request, answers as GitLab does (status codes, shapes, `updated_at` on edits, the
 * PRIVATE-TOKEN header, `X-Next-Page` pagination, only a note's author may edit it), and keeps its own
 * clock, one second per change, so tests can say what was written before or after what.
 *
 *   const gitlab = await startGitLabServer({projectId: 42, path: 'group/demo', token, members: {alice: 30}})
 *   // CI_API_V4_URL=gitlab.apiUrl ...
 *   await gitlab.close()
 */
import type {Answer, ForgeStandIn, RecordedForgeRequest, Route, StoredStatus} from './forge-server.js'
import {branchHead, ForgeClock, latestStatuses, startForgeHttp} from './forge-server.js'

export interface GitLabServerOptions {
  projectId: number
  /** The project's path with namespace (group/demo). */
  path: string
  /** The token every request must carry in PRIVATE-TOKEN (or Authorization: Bearer). */
  token: string
  defaultBranch?: string
  /** Where web_url links point (default https://gitlab.test). */
  webBase?: string
  /** The token's user (a project access token's bot user by default). */
  botUser?: string
  /** Username → access level (10 Guest ... 50 Owner); anyone else is no member (404). */
  members?: Record<string, number>
  /** A bare repository: POST /merge_requests checks that its source branch exists there, as GitLab does. */
  remote?: string
  /** Notes per page when the client does not ask (GitLab: 20). */
  pageSize?: number
}

/** Its path is without the /api/v4 prefix. */
export type RecordedGitLabRequest = RecordedForgeRequest

export interface StoredNote {
  id: number
  /** `MergeRequest` or `Issue`, and its IID. */
  noteable: {type: 'MergeRequest' | 'Issue'; iid: number}
  body: string
  author: {id: number; username: string}
  system: boolean
  created_at: string
  updated_at: string
}

export interface StoredMergeRequest {
  iid: number
  title: string
  description: string
  author: string
  source_branch: string
  target_branch: string
  sha: string
  /** The fork's project id for a merge request from a fork. */
  source_project_id: number
  approvedBy: string[]
  has_conflicts: boolean
  /** Closed merge requests still list under their commits, as GitLab's do (default opened). */
  state?: 'opened' | 'closed'
}

export interface StoredPipeline {
  id: number
  /** web, schedule, api, trigger, ... */
  source: string
  /** Who GitLab says started it. */
  user: string
  sha: string
  ref: string
  status: string
}

/** A push GitLab recorded in the project's events (GET /projects/:id/events?action=pushed). */
export interface StoredPush {
  author: string
  ref: string
  commitTo: string
}

export interface StoredIssue {
  iid: number
  title: string
  description: string
}

export interface GitLabServer extends ForgeStandIn {
  /** CI_API_V4_URL. */
  readonly apiUrl: string
  readonly requests: RecordedGitLabRequest[]
  readonly notes: StoredNote[]
  readonly mergeRequests: Map<number, StoredMergeRequest>
  readonly issues: Map<number, StoredIssue>
  readonly createdMergeRequests: Array<{iid: number; title: string; description: string; source_branch: string; target_branch: string}>
  members: Record<string, number>
  /** Every commit status set (POST /projects/:id/statuses/:sha), oldest first; `context` is GitLab's `name`. */
  readonly statuses: StoredStatus[]
  /** The newest status of each name on a commit. */
  statusesOf(sha: string): Record<string, StoredStatus>
  /** The id GitLab would give the user (stable per name). */
  userId(username: string): number
  addMergeRequest(mr: {
    iid: number
    title: string
    description?: string
    author?: string
    source_branch: string
    target_branch: string
    sha: string
    source_project_id?: number
  }): StoredMergeRequest
  addIssue(issue: StoredIssue): StoredIssue
  /** A note written by someone (not through the API under test). */
  addNote(noteable: StoredNote['noteable'], body: string, username: string): StoredNote
  /** An edit (by its author, or a maintainer: GitLab lets them): the body replaced, `updated_at` moved on. */
  editNote(id: number, body: string): StoredNote
  /** A person renamed: the same id (and membership) under a new username. */
  renameUser(from: string, to: string): void
  /** A pipeline as GitLab records it; answered at GET /projects/:id/pipelines/:id. */
  addPipeline(pipeline: Omit<StoredPipeline, 'id' | 'status'> & {status?: string}): StoredPipeline
  readonly pipelines: Map<number, StoredPipeline>
  /** A push to a branch, as the project's events record it (who pushed, which head it made). */
  addPush(push: StoredPush): StoredPush
  notesOn(noteable: StoredNote['noteable']): StoredNote[]
  now(): string
  tick(): string
  /** Requests other than reads. */
  writes(): RecordedGitLabRequest[]
}

export async function startGitLabServer(options: GitLabServerOptions): Promise<GitLabServer> {
  const webBase = options.webBase ?? 'https://gitlab.test'
  const projectUrl = `${webBase}/${options.path}`
  const botUser = options.botUser ?? `project_${options.projectId}_bot_5f2a9c`
  const notes: StoredNote[] = []
  const mergeRequests = new Map<number, StoredMergeRequest>()
  const issues = new Map<number, StoredIssue>()
  const createdMergeRequests: GitLabServer['createdMergeRequests'] = []
  const statuses: StoredStatus[] = []
  const pipelines = new Map<number, StoredPipeline>()
  let nextPipelineId = 9501
  const pushes: StoredPush[] = []
  const state = {members: {...options.members}}
  const ids = new Map<string, number>()
  const userId = (username: string) => {
    if (!ids.has(username)) ids.set(username, 500 + ids.size)
    return ids.get(username)!
  }

  const clock = new ForgeClock()
  const tick = () => clock.tick()
  let nextNoteId = 7001
  let nextIid = 100

  function addNote(noteable: StoredNote['noteable'], body: string, username: string): StoredNote {
    const at = tick()
    const note: StoredNote = {author: {id: userId(username), username}, body, created_at: at, id: nextNoteId++, noteable, system: false, updated_at: at}
    notes.push(note)
    return note
  }

  function editNote(id: number, body: string): StoredNote {
    const note = notes.find((n) => n.id === id)
    if (!note) throw new Error(`no note ${id}`)
    note.body = body
    note.updated_at = tick()
    return note
  }

  function renameUser(from: string, to: string): void {
    ids.set(to, userId(from))
    ids.delete(from)
    if (from in state.members) {
      state.members[to] = state.members[from]
      delete state.members[from]
    }

    for (const note of notes) if (note.author.username === from) note.author = {id: note.author.id, username: to}
  }

  const userJson = (username: string) => ({
    avatar_url: null,
    id: userId(username),
    name: username === botUser ? 'wave bot' : username,
    state: 'active',
    username,
    web_url: `${webBase}/${username}`,
  })
  const noteJson = (n: StoredNote) => ({
    attachment: null,
    author: userJson(n.author.username),
    body: n.body,
    created_at: n.created_at,
    id: n.id,
    noteable_iid: n.noteable.iid,
    noteable_type: n.noteable.type,
    resolvable: false,
    system: n.system,
    type: null,
    updated_at: n.updated_at,
  })
  const mrJson = (mr: StoredMergeRequest) => ({
    author: userJson(mr.author),
    description: mr.description,
    detailed_merge_status: mr.has_conflicts ? 'conflict' : 'mergeable',
    has_conflicts: mr.has_conflicts,
    iid: mr.iid,
    merge_status: mr.has_conflicts ? 'cannot_be_merged' : 'can_be_merged',
    project_id: options.projectId,
    sha: mr.sha,
    source_branch: mr.source_branch,
    source_project_id: mr.source_project_id,
    state: mr.state ?? 'opened',
    target_branch: mr.target_branch,
    target_project_id: options.projectId,
    title: mr.title,
    web_url: `${projectUrl}/-/merge_requests/${mr.iid}`,
  })
  const issueJson = (issue: StoredIssue) => ({
    description: issue.description,
    iid: issue.iid,
    project_id: options.projectId,
    state: 'opened',
    title: issue.title,
    web_url: `${projectUrl}/-/issues/${issue.iid}`,
  })

  const project = `/projects/(?:${options.projectId}|${encodeURIComponent(options.path)})`
  const noteable = (kind: string, iid: string): StoredNote['noteable'] | undefined => {
    const number = Number(iid)
    if (kind === 'merge_requests') return mergeRequests.has(number) ? {iid: number, type: 'MergeRequest'} : undefined
    return issues.has(number) ? {iid: number, type: 'Issue'} : undefined
  }

  const same = (a: StoredNote['noteable'], b: StoredNote['noteable']) => a.type === b.type && a.iid === b.iid
  const notFound: Answer = [404, {message: '404 Not found'}]
  const routes: Route[] = [
    ['GET', /^\/user$/, () => [200, {...userJson(botUser), bot: true}]],
    ['GET', /^\/users$/, (_m, req) => [200, req.query.username ? [userJson(req.query.username)] : []]],
    [
      'GET',
      new RegExp(`^${project}$`),
      () => [200, {default_branch: options.defaultBranch ?? 'main', id: options.projectId, path_with_namespace: options.path, web_url: projectUrl}],
    ],
    [
      'GET',
      new RegExp(`^${project}/members/all/(\\d+)$`),
      (m) => {
        const username = [...ids].find(([, id]) => id === Number(m[1]))?.[0]
        const level = username === undefined ? undefined : state.members[username]
        return level === undefined ? notFound : [200, {...userJson(username!), access_level: level}]
      },
    ],
    [
      'GET',
      new RegExp(`^${project}/(merge_requests|issues)/(\\d+)$`),
      (m) => {
        const iid = Number(m[2])
        if (m[1] === 'merge_requests') return mergeRequests.has(iid) ? [200, mrJson(mergeRequests.get(iid)!)] : notFound
        return issues.has(iid) ? [200, issueJson(issues.get(iid)!)] : notFound
      },
    ],
    // A commit's merge requests: here those headed at it (GitLab adds any that contain it; wave keeps only heads).
    [
      'GET',
      new RegExp(`^${project}/repository/commits/([0-9a-f]{40})/merge_requests$`),
      (m) => [200, [...mergeRequests.values()].filter((mr) => mr.sha === m[1]).map(mrJson)],
    ],
    // The project's events: only pushes here, newest first, as GitLab lists them.
    [
      'GET',
      new RegExp(`^${project}/events$`),
      (_m, req) => [
        200,
        req.query.action === 'pushed'
          ? [...pushes].reverse().map((push, index) => ({
              action_name: 'pushed to',
              author: userJson(push.author),
              author_username: push.author,
              id: 7000 + pushes.length - index,
              push_data: {action: 'pushed', commit_count: 1, commit_to: push.commitTo, ref: push.ref, ref_type: 'branch'},
            }))
          : [],
      ],
    ],
    [
      'GET',
      new RegExp(`^${project}/pipelines/(\\d+)$`),
      (m) => {
        const pipeline = pipelines.get(Number(m[1]))
        if (!pipeline) return notFound
        const {id, ref, sha, source, status, user} = pipeline
        return [200, {id, project_id: options.projectId, ref, sha, source, status, user: userJson(user), web_url: `${projectUrl}/-/pipelines/${id}`}]
      },
    ],
    [
      'GET',
      new RegExp(`^${project}/merge_requests/(\\d+)/approvals$`),
      (m) => {
        const mr = mergeRequests.get(Number(m[1]))
        if (!mr) return notFound
        return [
          200,
          {
            approvals_left: mr.approvedBy.length > 0 ? 0 : 1,
            approvals_required: 1,
            approved: mr.approvedBy.length > 0,
            approved_by: mr.approvedBy.map((username) => ({user: userJson(username)})),
            iid: mr.iid,
          },
        ]
      },
    ],
    [
      'GET',
      new RegExp(`^${project}/(merge_requests|issues)/(\\d+)/notes$`),
      (m, req) => {
        const on = noteable(m[1], m[2])
        if (!on) return notFound
        const all = notes.filter((n) => same(n.noteable, on))
        if (req.query.sort !== 'asc') all.reverse()
        const perPage = Math.min(Number(req.query.per_page ?? options.pageSize ?? 20), 100)
        const page = Number(req.query.page ?? 1)
        const more = page * perPage < all.length
        return [
          200,
          all.slice((page - 1) * perPage, page * perPage).map(noteJson),
          {'x-next-page': more ? String(page + 1) : '', 'x-page': String(page), 'x-per-page': String(perPage)},
        ]
      },
    ],
    [
      'GET',
      new RegExp(`^${project}/(merge_requests|issues)/(\\d+)/notes/(\\d+)$`),
      (m) => {
        const on = noteable(m[1], m[2])
        const note = on && notes.find((n) => n.id === Number(m[3]) && same(n.noteable, on))
        return note ? [200, noteJson(note)] : notFound
      },
    ],
    [
      'POST',
      new RegExp(`^${project}/(merge_requests|issues)/(\\d+)/notes$`),
      (m, req) => {
        const on = noteable(m[1], m[2])
        if (!on) return notFound
        const problem = bodyProblem(req.body?.body)
        if (problem) return [400, {message: problem}]
        return [201, noteJson(addNote(on, req.body.body, botUser))]
      },
    ],
    [
      'PUT',
      new RegExp(`^${project}/(merge_requests|issues)/(\\d+)/notes/(\\d+)$`),
      (m, req) => {
        const on = noteable(m[1], m[2])
        const note = on && notes.find((n) => n.id === Number(m[3]) && same(n.noteable, on))
        if (!note) return notFound
        if (note.author.username !== botUser) return [403, {message: '403 Forbidden'}]
        const problem = bodyProblem(req.body?.body)
        if (problem) return [400, {message: problem}]
        return [200, noteJson(editNote(note.id, req.body.body))]
      },
    ],
    [
      'POST',
      new RegExp(`^${project}/issues$`),
      (_m, req) => {
        if (typeof req.body?.title !== 'string' || !req.body.title) return [400, {error: 'title is missing'}]
        const issue: StoredIssue = {description: req.body.description ?? '', iid: nextIid++, title: req.body.title}
        issues.set(issue.iid, issue)
        tick()
        return [201, issueJson(issue)]
      },
    ],
    [
      'POST',
      new RegExp(`^${project}/statuses/([0-9a-f]{40})$`),
      (m, req) => {
        const {description, name = 'default', state, target_url} = req.body ?? {}
        if (!['pending', 'running', 'success', 'failed', 'canceled', 'skipped'].includes(state)) return [400, {message: 'state does not have a valid value'}]
        // As GitLab does: a status set again in the state it already has is refused.
        const current = latestStatuses(statuses, m[1])[name]
        if (current?.state === state)
          return [
            400,
            {
              message: `Cannot transition status via :${state === 'pending' ? 'enqueue' : state} from :${state} (Reason(s): Status cannot transition via "${state}")`,
            },
          ]
        const status: StoredStatus = {context: name, description, sha: m[1], state, target_url}
        statuses.push(status)
        tick()
        return [201, {...status, id: statuses.length, name}]
      },
    ],
    [
      'POST',
      new RegExp(`^${project}/merge_requests$`),
      (_m, req) => {
        const {description, source_branch, target_branch, title} = req.body ?? {}
        if (typeof source_branch !== 'string' || typeof target_branch !== 'string' || typeof title !== 'string')
          return [400, {error: 'source_branch, target_branch, title are missing'}]
        const sha = options.remote ? branchHead(options.remote, source_branch) : '0'.repeat(40)
        if (!sha) return [400, {message: ['Source branch does not exist']}]
        const iid = nextIid++
        const mr: StoredMergeRequest = {
          approvedBy: [],
          author: botUser,
          description: description ?? '',
          has_conflicts: false,
          iid,
          sha,
          source_branch,
          source_project_id: options.projectId,
          target_branch,
          title,
        }
        mergeRequests.set(iid, mr)
        createdMergeRequests.push({description: mr.description, iid, source_branch, target_branch, title})
        tick()
        return [201, mrJson(mr)]
      },
    ],
  ]

  const http = await startForgeHttp({
    authorized: (headers) => (headers['private-token'] ?? (headers.authorization ?? '').replace(/^bearer /i, '')) === options.token,
    contentType: 'application/json',
    notFound: [404, {error: '404 Not Found'}],
    prefix: '/api/v4',
    routes: () => routes,
    unauthorized: [401, {message: '401 Unauthorized'}],
  })

  return {
    addIssue(issue) {
      issues.set(issue.iid, {...issue})
      return issues.get(issue.iid)!
    },
    addMergeRequest(mr) {
      const stored: StoredMergeRequest = {
        approvedBy: [],
        author: mr.author ?? 'alice',
        description: mr.description ?? '',
        has_conflicts: false,
        iid: mr.iid,
        sha: mr.sha,
        source_branch: mr.source_branch,
        source_project_id: mr.source_project_id ?? options.projectId,
        target_branch: mr.target_branch,
        title: mr.title,
      }
      mergeRequests.set(mr.iid, stored)
      return stored
    },
    addNote,
    addPush(push) {
      pushes.push(push)
      return push
    },
    addPipeline(pipeline) {
      const stored: StoredPipeline = {status: 'running', ...pipeline, id: nextPipelineId++}
      pipelines.set(stored.id, stored)
      return stored
    },
    apiUrl: `${http.url}/api/v4`,
    close: http.close,
    createdMergeRequests,
    editNote,
    issues,
    get members() {
      return state.members
    },
    set members(value) {
      state.members = value
    },
    mergeRequests,
    notes,
    pipelines,
    renameUser,
    notesOn: (on) => notes.filter((n) => same(n.noteable, on)),
    now: () => clock.now(),
    requests: http.requests,
    statuses,
    statusesOf: (sha) => latestStatuses(statuses, sha),
    tick,
    url: http.url,
    userId,
    hold: http.hold,
    writes: http.writes,
  }
}

function bodyProblem(body: unknown): string | undefined {
  if (typeof body !== 'string' || body === '') return "Note can't be blank"
  if (body.length > 1_000_000) return 'Note is too long (maximum is 1000000 characters)'
  return undefined
}
