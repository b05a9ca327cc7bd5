import {Flags} from '@oclif/core'

import {maxBudgetFlag, WaveCommand} from '../cli/command.js'
import {GITHUB_WORDS} from '../forges/github/client.js'
import {handleGitHubEvent} from '../forges/github/handler.js'
import {PR_DELIVERIES} from '../review/delivery.js'
import {ROLES} from '../forges/github/permissions.js'
import {EXECUTION_MODES} from '../policy/policy.js'
import {dutyFlags} from '../review/duties.js'
import {reviewResult} from '../review/result.js'
import {unitsReportOf} from '../review/units.js'

export default class GitHub extends WaveCommand {
  static description = `Handle one GitHub Actions event: /wave comments, a label, a dispatch.

Reads GITHUB_EVENT_NAME, GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_API_URL and GITHUB_TOKEN (or GH_TOKEN). On a pull request or an issue, a comment starting with /wave plans, approves (then runs and delivers the changes; a plan with units is only approved, its units left for the next jobs: docs/ci/units.md), requests changes (then revises) or rejects; adding the label to a pull request, or a workflow_dispatch with a task input, plans; with --replan-on-push, new commits on a pull request plan its pending plans' tasks again on the new head. Each plan keeps one comment, updated in place. Only people with at least --min-permission on the repository may act; --require-other-approver, --require-review and --require-mergeable add separation of duties. Any other event exits 0. Each option can also be set through its WAVE_GITHUB_* variable (the Action's inputs set them).`

  static examples = ['<%= config.bin %> github', '<%= config.bin %> github --min-permission maintain --allow "Bash(npm test:*)" --pr-delivery pull-request']

  static flags = {
    allow: Flags.string({
      description: 'Proposed permission rule of every plan, e.g. Bash(npm test:*); repeatable ($WAVE_GITHUB_ALLOW, one a line)',
      multiple: true,
    }),
    'bot-login': Flags.string({description: "Login of wave's own comments when the token cannot tell ($WAVE_GITHUB_BOT_LOGIN; default github-actions[bot])"}),
    cwd: Flags.directory({description: 'The checkout (default: the top of the git repository holding the current directory)'}),
    label: Flags.string({description: 'Label that makes a plan when added to a pull request ($WAVE_GITHUB_LABEL; default wave)'}),
    'max-budget-usd': maxBudgetFlag({
      description:
        "Stop each plan and run with exit 5 once it has spent more than this many US dollars ($WAVE_MAX_BUDGET_USD; the lowest of these and the settings' maxBudgetUsd applies)",
    }),
    'max-turns': Flags.integer({description: 'Stop with exit 5 after this many model turns (default: 40 to plan, 60 to run)', min: 1}),
    'min-permission': Flags.option({description: 'Least role that may act ($WAVE_GITHUB_MIN_PERMISSION; default write)', options: ROLES})(),
    mode: Flags.option({description: 'Proposed permission mode of every plan ($WAVE_GITHUB_MODE; default acceptEdits)', options: EXECUTION_MODES})(),
    model: Flags.string({description: 'Model ID (default: $WAVE_MODEL, the settings files, else the default)'}),
    'pr-delivery': Flags.option({
      description:
        'A pull request from this repository gets a commit pushed to its branch, or a pull request against it ($WAVE_GITHUB_PR_DELIVERY; default push)',
      options: PR_DELIVERIES,
    })(),
    quiet: Flags.boolean({char: 'q', description: 'No progress on stderr'}),
    'units-merged': Flags.file({
      description:
        "The merge job of a plan's units: show this output of wave plans merge --json in the plan's comment (a row per unit, the plan's checks on the merged tree), then deliver the merged tree as a run's changes are (exit 7 when the merge was incomplete)",
      exists: true,
    }),
    'unit-result': Flags.file({
      description:
        "A unit's job of a plan's units: show this unit result (wave run --unit's --result-out) as the unit's row of the plan's comment, after checking it is of the plan's bytes, approval and units; run it after the unit, whatever its outcome",
      exclusive: ['units-merged'],
      exists: true,
    }),
    remote: Flags.string({description: "The checkout's git remote for the repository ($WAVE_GITHUB_REMOTE; default origin)"}),
    'replan-on-push': Flags.boolean({
      allowNo: true,
      description:
        'On new commits to a pull request (pull_request synchronize), plan each of its plans awaiting approval on an older head again, with its task ($WAVE_REPLAN_ON_PUSH=true)',
    }),
    ...dutyFlags(GITHUB_WORDS),
    sandbox: Flags.option({description: "Run the plan's commands in the OS sandbox ($WAVE_GITHUB_SANDBOX; default on)", options: ['on', 'off'] as const})(),
    'sandbox-network-allow': Flags.string({
      description: `A host the plan's sandboxed commands may reach through wave's filtering proxy, proposed with every plan; /wave approve --sandbox-network-allow names others; repeatable ($WAVE_GITHUB_SANDBOX_NETWORK_ALLOW, separated by spaces or commas; default none)`,
      multiple: true,
    }),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(GitHub)
    const outcome = await handleGitHubEvent({
      cwd: flags.cwd,
      unitsReport: unitsReportOf(flags),
      flags,
      sessionOptions: {maxTurns: flags['max-turns'], model: flags.model},
      session: (title, work) => this.output.session(title, (reporter) => work(this.sessionHost((event) => reporter.event(event)))),
      warn: (message) => this.output.warn(message),
    })
    await this.output.result(reviewResult('github', outcome))
  }
}
