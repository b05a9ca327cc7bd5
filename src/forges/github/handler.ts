/**
 * `wave github`: one GitHub Actions event, start to end. The event becomes an intent (event.ts); the
 * review core decides the rest (review/handler.ts), through GitHub's client and git remote.
 */
import {dutiesOf, type DutyFlags} from '../../review/duties.js'
import {handleReview} from '../../review/handler.js'
import {Remote} from '../../review/remote.js'
import type {ReviewOutcome, ReviewSessionOptions, SessionRunner} from '../../review/steps.js'
import {usageError} from '../../base/errors.js'
import {sessionWorkspace} from '../../base/workspace/git.js'
import {reportUnits, type UnitsReport, unitsReportFlag} from '../../review/units.js'
import {GitHubClient} from './client.js'
import {writeStepOutputs} from './outputs.js'
import {githubAccess, githubEnvironment, type GitHubFlags, githubOptions} from './env.js'
import {intentOf, readEvent} from './event.js'

export type {ReviewOutcome as GitHubOutcome, SessionRunner} from '../../review/steps.js'

interface GitHubEventOptions {
  flags: GitHubFlags & DutyFlags
  /** `--cwd`: the checkout (default: the top of the git repository holding the current directory). */
  cwd?: string
  /** --model, --max-turns: given to every session of the review. */
  sessionOptions: ReviewSessionOptions
  session: SessionRunner
  warn(message: string): void
  env?: NodeJS.ProcessEnv
  /** `--units-merged FILE` (the merge's output, then deliver) or `--unit-result FILE` (one unit's result): shown on the plan's comment. */
  unitsReport?: UnitsReport
}

export async function handleGitHubEvent(input: GitHubEventOptions): Promise<ReviewOutcome> {
  const env = input.env ?? process.env
  const environment = githubEnvironment(env)
  const options = githubOptions(input.flags, env)
  const duties = dutiesOf(input.flags, env)
  const intent = intentOf(environment.eventName, await readEvent(environment.eventPath), options)
  const prepare = async () => {
    const access = githubAccess(env)
    const client = new GitHubClient(access.repository, {
      baseUrl: access.apiUrl,
      minPermission: options.minPermission,
      serverUrl: environment.serverUrl,
      token: access.token,
      warn: input.warn,
    })
    return {
      client,
      options,
      async complete() {
        const place = await sessionWorkspace(input.cwd ?? process.cwd(), input.cwd !== undefined)
        if (!place.repository) {
          throw usageError(
            `${place.workspace} is not a git checkout: wave github works in a checkout of ${access.repository.owner}/${access.repository.repo}.`,
            'Run actions/checkout first.',
          )
        }

        return {
          author: (await client.viewer()) ?? options.botLogin,
          authorSetting: 'bot-login (WAVE_GITHUB_BOT_LOGIN)',
          client,
          dispatched: {refName: environment.refName, sha: environment.sha},
          duties,
          event: environment.eventName,
          sessionOptions: input.sessionOptions,
          options,
          remote: new Remote({name: options.remote, serverUrl: environment.serverUrl, token: access.token, workspace: place.workspace}),
          runUrl: environment.runUrl,
          session: input.session,
          workspace: place.workspace,
        }
      },
    }
  }

  let outcome: ReviewOutcome
  if (input.unitsReport) {
    // A job of a plan's units (a unit's, the merge's): the same workflow run, so the same event names the thread.
    const thread = intent.kind === 'ignore' ? undefined : intent.trigger.thread
    if (!thread)
      throw usageError(`${unitsReportFlag(input.unitsReport)} reports on a plan's comment: the ${environment.eventName} event names no issue or pull request.`)
    outcome = await reportUnits(input.unitsReport, thread, async () => (await prepare()).complete())
  } else outcome = await handleReview({event: environment.eventName, intent, prepare})
  await writeStepOutputs(env.GITHUB_OUTPUT, outcome)
  return outcome
}
