/**
 * What `wave github` is given: the GitHub Actions environment (the event, the repository, the API, the
 * token) and its options, each a flag or else a WAVE_GITHUB_* variable (the Action sets those from its
 * inputs; an empty value counts as unset, as an input left empty does).
 */
import {usageError} from '../../base/errors.js'
import {EXECUTION_MODES, type ExecutionMode} from '../../policy/modes.js'
import type {RepositoryName} from './client.js'
import {PR_DELIVERIES, type PrDelivery} from '../../review/delivery.js'
import {given, optionReader} from '../../review/options.js'
import {type DependencyInstall, dependencyInstall} from '../../review/dependency-install.js'
import type {BudgetCap} from '../../model/budget.js'
import {type Role, ROLES} from './permissions.js'

interface GitHubEnvironment {
  eventName: string
  eventPath: string
  /** GITHUB_SHA: the commit a dispatched run was started on. */
  sha?: string
  /** GITHUB_REF_NAME: the branch a dispatched run was started on. */
  refName?: string
  /** The link to this workflow run, for the sticky comment. */
  runUrl?: string
  serverUrl: string
}

interface GitHubAccess {
  repository: RepositoryName
  apiUrl: string
  token: string
}

/** The event to handle: what is needed to tell whether anything applies. */
export function githubEnvironment(env: NodeJS.ProcessEnv = process.env): GitHubEnvironment {
  const eventName = given(env.GITHUB_EVENT_NAME)
  const eventPath = given(env.GITHUB_EVENT_PATH)
  if (!eventName || !eventPath) {
    throw usageError(
      `wave github handles one GitHub Actions event, but ${eventName ? 'GITHUB_EVENT_PATH' : 'GITHUB_EVENT_NAME'} is not set.`,
      'Run it as a step of a workflow (uses: <owner>/wave@<ref>), or set GITHUB_EVENT_NAME and GITHUB_EVENT_PATH.',
    )
  }

  const serverUrl = (given(env.GITHUB_SERVER_URL) ?? 'https://github.com').replace(/\/+$/, '')
  const repository = given(env.GITHUB_REPOSITORY)
  const runUrl = repository && given(env.GITHUB_RUN_ID) ? `${serverUrl}/${repository}/actions/runs/${env.GITHUB_RUN_ID}` : undefined
  return {eventName, eventPath, refName: given(env.GITHUB_REF_NAME), runUrl, serverUrl, sha: given(env.GITHUB_SHA)}
}

/** The repository and the API, needed once an event applies. */
export function githubAccess(env: NodeJS.ProcessEnv = process.env): GitHubAccess {
  const token = given(env.GITHUB_TOKEN) ?? given(env.GH_TOKEN)
  if (!token)
    throw usageError(
      'wave github needs a token: GITHUB_TOKEN (or GH_TOKEN) is not set.',
      'Pass github-token to the Action, or set GITHUB_TOKEN: ${{ github.token }} on the step.',
    )
  const full = given(env.GITHUB_REPOSITORY)
  const [owner, repo, extra] = (full ?? '').split('/')
  if (!owner || !repo || extra !== undefined) throw usageError(`GITHUB_REPOSITORY must be owner/name${full ? ` (got "${full}")` : ', and it is not set'}.`)
  return {apiUrl: given(env.GITHUB_API_URL) ?? 'https://api.github.com', repository: {owner, repo}, token}
}

export interface GitHubFlags {
  allow?: string[]
  'bot-login'?: string
  label?: string
  'max-budget-usd'?: number
  'min-permission'?: string
  mode?: string
  'pr-delivery'?: string
  remote?: string
  'replan-on-push'?: boolean
  sandbox?: string
  'sandbox-network-allow'?: string[]
}

interface GitHubOptions {
  /** The label whose adding to a pull request makes a plan. */
  label: string
  /** The least role that may plan, approve, request changes or reject. */
  minPermission: Role
  /** The proposed mode and rules of every plan; an approval can choose others. */
  mode: ExecutionMode
  allow: string[]
  /** A pull request from this repository gets a commit on its branch (push) or a pull request against it. */
  prDelivery: PrDelivery
  /** The workspace's git remote for the repository. */
  remote: string
  /** Whether the run's commands get the OS sandbox (recorded in the approval). */
  sandbox: boolean
  /** Hosts the sandbox may reach through wave's filtering proxy, proposed with every plan. */
  networkAllow: string[]
  /** Who wave's own comments are by when the token cannot say (a GITHUB_TOKEN cannot): only its comments are plans. */
  botLogin: string
  /** The dollar cap of each plan and run (--max-budget-usd, WAVE_MAX_BUDGET_USD, the user settings' maxBudgetUsd), naming which. */
  budget?: BudgetCap
  /** What the cap is set through (the max-budget-usd input, WAVE_MAX_BUDGET_USD), named by a run's stop at it. */
  budgetSetting: string
  /** What the Action's install step did (WAVE_INSTALL_RESULT). */
  dependencies?: DependencyInstall
  /** New commits on a pull request plan its pending plans' tasks again on the new head (pull_request synchronize). */
  replanOnPush: boolean
}

export function githubOptions(flags: GitHubFlags, env: NodeJS.ProcessEnv = process.env): GitHubOptions {
  const read = optionReader(flags, env)
  const pick = (flag: keyof GitHubFlags, variable: string, fallback: string) => read.pick(flag, variable) ?? fallback
  const {oneOf} = read
  const allow = read.allow(flags.allow, 'WAVE_GITHUB_ALLOW')
  return {
    allow,
    botLogin: pick('bot-login', 'WAVE_GITHUB_BOT_LOGIN', 'github-actions[bot]'),
    label: pick('label', 'WAVE_GITHUB_LABEL', 'wave'),
    budget: read.budget(flags['max-budget-usd']),
    budgetSetting: read.budgetSetting(flags['max-budget-usd']),
    dependencies: dependencyInstall(env),
    minPermission: oneOf(pick('min-permission', 'WAVE_GITHUB_MIN_PERMISSION', 'write'), ROLES, 'The minimum permission'),
    mode: oneOf(pick('mode', 'WAVE_GITHUB_MODE', 'acceptEdits'), EXECUTION_MODES, 'The default mode'),
    prDelivery: oneOf(pick('pr-delivery', 'WAVE_GITHUB_PR_DELIVERY', 'push'), PR_DELIVERIES, 'The pull request delivery'),
    remote: pick('remote', 'WAVE_GITHUB_REMOTE', 'origin'),
    replanOnPush: read.on('replan-on-push', 'WAVE_REPLAN_ON_PUSH'),
    networkAllow: read.hosts(flags['sandbox-network-allow'], 'WAVE_GITHUB_SANDBOX_NETWORK_ALLOW'),
    sandbox: oneOf(pick('sandbox', 'WAVE_GITHUB_SANDBOX', 'on'), ['on', 'off'] as const, 'The sandbox setting') === 'on',
  }
}
