/**
 * `wave github`: one GitHub Actions event, start to end. The event becomes an intent; an event that asks
 * nothing of wave ends here (exit 0). Otherwise the person asking must reach the minimum permission, or
 * gets a reply saying they may not and nothing else happens; then the review step runs (review.ts).
 */
import {usageError} from '../errors.js'
import {sessionWorkspace} from '../workspace/git.js'
import {GitHubClient} from './client.js'
import {COMMAND_HELP} from './commands.js'
import {githubAccess, githubEnvironment, type GitHubFlags, githubOptions} from './env.js'
import {intentOf, readEvent} from './event.js'
import {mayAct, roleOf} from './permissions.js'
import {Remote} from './remote.js'
import {approve, type GitHubOutcome, type GitHubRun, plan, reject, reply, requestChanges, type SessionRunner} from './review.js'

export type {GitHubOutcome, SessionRunner} from './review.js'

export interface GitHubEventOptions {
  flags: GitHubFlags
  /** `--cwd`: the checkout (default: the top of the git repository holding the current directory). */
  cwd?: string
  model?: string
  maxTurns?: number
  session: SessionRunner
  warn(message: string): void
  env?: NodeJS.ProcessEnv
}

export async function handleGitHubEvent(input: GitHubEventOptions): Promise<GitHubOutcome> {
  const env = input.env ?? process.env
  const environment = githubEnvironment(env)
  const options = githubOptions(input.flags, env)
  const intent = intentOf(environment.eventName, await readEvent(environment.eventPath), options)
  const event = environment.eventName
  if (intent.kind === 'ignore') return {event, message: `Nothing applies: ${intent.reason}.`, outcome: 'ignored'}

  const access = githubAccess(env)
  const client = new GitHubClient(access.repository, {baseUrl: access.apiUrl, token: access.token, warn: input.warn})
  const {trigger} = intent
  const role = roleOf(await client.permission(trigger.actor))
  if (!mayAct(role, options.minPermission)) {
    const why = `that takes ${options.minPermission} permission on the repository`
    const has = role ? `the role ${role}` : 'no role on it'
    await reply({client}, trigger, `you may not ask wave to act here: ${why}, and you have ${has}.`)
    return {event, message: `@${trigger.actor} may not ask wave to act here: ${why}, and they have ${has}.`, outcome: 'refused'}
  }

  if (intent.kind === 'help' || intent.kind === 'invalid') {
    const problem = intent.kind === 'invalid' ? `${intent.message}\n\n` : ''
    await reply({client}, trigger, `${problem}wave understands these comments:\n\n\`\`\`\n${COMMAND_HELP}\n\`\`\``)
    if (intent.kind === 'invalid') throw usageError(intent.message)
    return {event, message: 'Answered with the /wave commands.', outcome: 'answered'}
  }

  const place = await sessionWorkspace(input.cwd ?? process.cwd(), input.cwd !== undefined)
  if (!place.repository) {
    throw usageError(`${place.workspace} is not a git checkout: wave github works in a checkout of ${access.repository.owner}/${access.repository.repo}.`, 'Run actions/checkout first.')
  }

  const run: GitHubRun = {
    author: (await client.viewerLogin()) ?? options.botLogin,
    client,
    environment,
    maxTurns: input.maxTurns,
    model: input.model,
    options,
    remote: new Remote({name: options.remote, serverUrl: environment.serverUrl, token: access.token, workspace: place.workspace}),
    repository: `${access.repository.owner}/${access.repository.repo}`,
    session: input.session,
    workspace: place.workspace,
  }
  switch (intent.kind) {
    case 'plan': {
      return plan(run, intent)
    }

    case 'approve': {
      return approve(run, intent)
    }

    case 'request-changes': {
      return requestChanges(run, intent)
    }

    case 'reject': {
      return reject(run, intent)
    }
  }
}
