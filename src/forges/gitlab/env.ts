/**
 * What `wave gitlab` is given: the GitLab CI job's predefined variables (the pipeline, the project, the
 * API), the note event (TRIGGER_PAYLOAD), a task (WAVE_TASK) or a merge request pipeline (replan-on-push), the token (GITLAB_TOKEN), and its options,
 * each a flag or else a WAVE_GITLAB_* variable (an empty value counts as unset).
 */
import {usageError} from '../../base/errors.js'
import {EXECUTION_MODES, type ExecutionMode} from '../../policy/modes.js'
import type {PrDelivery} from '../../review/delivery.js'
import {dependencyInstall} from '../../review/dependency-install.js'
import {given, optionReader} from '../../review/options.js'
import type {ReviewOptions} from '../../review/steps.js'
import {type AccessLevel, parseAccessLevel} from './access.js'

export interface GitLabEnvironment {
  /** TRIGGER_PAYLOAD: the path of the webhook's body, in a pipeline a note webhook triggered. */
  payloadPath?: string
  /** CI_PIPELINE_ID: the pipeline whose source and user wave reads from the API (the variables below only say what it claims). */
  pipelineId?: number
  /** CI_PIPELINE_SOURCE: trigger, web, schedule, api, push, ... (a claim: the API's is believed). */
  pipelineSource?: string
  /** A manual or scheduled pipeline's task, and where to plan it. */
  task?: string
  mergeRequest?: number
  issue?: number
  /** Who the variables say started the pipeline (GITLAB_USER_LOGIN, GITLAB_USER_ID): a claim, checked against the API's. */
  user?: {login: string; id?: number}
  /** CI_COMMIT_SHA and CI_COMMIT_REF_NAME: what a manual pipeline was started on. */
  sha?: string
  refName?: string
  /** CI_PIPELINE_URL: linked from the plan's note. */
  runUrl?: string
  /** CI_SERVER_URL: the git remote's server (the token's header goes there only). */
  serverUrl: string
}

interface GitLabAccess {
  apiUrl: string
  /** CI_PROJECT_ID. */
  project: string
  projectUrl: string
  token: string
}

function iid(value: string | undefined, variable: string): number | undefined {
  const text = given(value)
  if (text === undefined) return undefined
  if (!/^\d+$/.test(text) || Number(text) < 1) throw usageError(`${variable} must be an IID, a number (got "${text.slice(0, 40)}").`)
  return Number(text)
}

export function gitlabEnvironment(env: NodeJS.ProcessEnv = process.env): GitLabEnvironment {
  const serverUrl = given(env.CI_SERVER_URL)?.replace(/\/+$/, '')
  if (!serverUrl) {
    throw usageError(
      'wave gitlab handles one GitLab CI job, but CI_SERVER_URL is not set.',
      'Run it in a job of a .gitlab-ci.yml (see examples/gitlab-ci/wave.gitlab-ci.yml).',
    )
  }

  const mergeRequest = iid(env.WAVE_MERGE_REQUEST_IID, 'WAVE_MERGE_REQUEST_IID')
  const issue = iid(env.WAVE_ISSUE_IID, 'WAVE_ISSUE_IID')
  if (mergeRequest !== undefined && issue !== undefined) throw usageError('WAVE_MERGE_REQUEST_IID and WAVE_ISSUE_IID are both set: name one place to plan in.')
  const login = given(env.GITLAB_USER_LOGIN)
  const userId = iid(env.GITLAB_USER_ID, 'GITLAB_USER_ID')
  return {
    issue,
    mergeRequest,
    payloadPath: given(env.TRIGGER_PAYLOAD),
    pipelineId: iid(env.CI_PIPELINE_ID, 'CI_PIPELINE_ID'),
    pipelineSource: given(env.CI_PIPELINE_SOURCE),
    refName: given(env.CI_COMMIT_REF_NAME),
    runUrl: given(env.CI_PIPELINE_URL) ?? given(env.CI_JOB_URL),
    serverUrl,
    sha: given(env.CI_COMMIT_SHA),
    task: given(env.WAVE_TASK),
    user: login ? {id: userId, login} : undefined,
  }
}

/** The project and the API, needed once the job asks something of wave. */
export function gitlabAccess(env: NodeJS.ProcessEnv = process.env): GitLabAccess {
  const token = given(env.GITLAB_TOKEN)
  if (!token) {
    throw usageError(
      'wave gitlab needs a token: GITLAB_TOKEN is not set.',
      'Create a project access token (role Developer, scopes api and write_repository) and add it as the masked, protected CI/CD variable GITLAB_TOKEN.',
    )
  }

  const project = given(env.CI_PROJECT_ID)
  if (!project) throw usageError('CI_PROJECT_ID is not set: wave gitlab runs in a GitLab CI job of the project.')
  const serverUrl = given(env.CI_SERVER_URL)?.replace(/\/+$/, '')
  const apiUrl = given(env.CI_API_V4_URL) ?? (serverUrl ? `${serverUrl}/api/v4` : undefined)
  const projectUrl = given(env.CI_PROJECT_URL) ?? (serverUrl && given(env.CI_PROJECT_PATH) ? `${serverUrl}/${given(env.CI_PROJECT_PATH)}` : undefined)
  if (!apiUrl || !projectUrl) throw usageError(`${apiUrl ? 'CI_PROJECT_URL' : 'CI_API_V4_URL'} is not set: wave gitlab runs in a GitLab CI job of the project.`)
  return {apiUrl, project, projectUrl, token}
}

export interface GitLabFlags {
  allow?: string[]
  'max-budget-usd'?: number
  'min-access-level'?: string
  mode?: string
  'mr-delivery'?: string
  remote?: string
  'replan-on-push'?: boolean
  sandbox?: string
  'sandbox-network-allow'?: string[]
}

interface GitLabOptions extends ReviewOptions {
  /** The least access level that may plan, approve, request changes or reject. */
  minAccessLevel: AccessLevel
  /** The git remote for the project: a remote's name, or a URL (default: the project's URL, without the job token's credentials). */
  remote: string
}

export const MR_DELIVERIES = ['push', 'merge-request'] as const

export function gitlabOptions(flags: GitLabFlags, env: NodeJS.ProcessEnv = process.env): GitLabOptions {
  const {allow: rules, budget, budgetSetting, hosts, on, oneOf, pick} = optionReader(flags, env)
  const allow = rules(flags.allow, 'WAVE_GITLAB_ALLOW')
  const delivery = oneOf(pick('mr-delivery', 'WAVE_GITLAB_MR_DELIVERY') ?? 'push', MR_DELIVERIES, 'The merge request delivery')
  // The checkout's origin carries the job token (CI_REPOSITORY_URL), which may not push: the project's
  // own URL, with GITLAB_TOKEN in a header, is what wave fetches from and pushes to.
  const projectUrl = given(env.CI_PROJECT_URL)
  return {
    allow,
    budget: budget(flags['max-budget-usd']),
    budgetSetting: budgetSetting(flags['max-budget-usd']),
    // What the recipe's before_script installed (WAVE_INSTALL_RESULT).
    dependencies: dependencyInstall(env),
    minAccessLevel: parseAccessLevel(pick('min-access-level', 'WAVE_GITLAB_MIN_ACCESS_LEVEL') ?? 'developer'),
    mode: oneOf(pick('mode', 'WAVE_GITLAB_MODE') ?? 'acceptEdits', EXECUTION_MODES, 'The default mode') as ExecutionMode,
    prDelivery: (delivery === 'push' ? 'push' : 'pull-request') satisfies PrDelivery,
    remote: pick('remote', 'WAVE_GITLAB_REMOTE') ?? (projectUrl ? `${projectUrl.replace(/\/+$/, '')}.git` : 'origin'),
    replanOnPush: on('replan-on-push', 'WAVE_REPLAN_ON_PUSH'),
    networkAllow: hosts(flags['sandbox-network-allow'], 'WAVE_GITLAB_SANDBOX_NETWORK_ALLOW'),
    sandbox: oneOf(pick('sandbox', 'WAVE_GITLAB_SANDBOX') ?? 'on', ['on', 'off'] as const, 'The sandbox setting') === 'on',
  }
}
