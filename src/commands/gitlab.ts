import {Flags} from '@oclif/core'

import {maxBudgetFlag, WaveCommand} from '../cli/command.js'
import {GITLAB_WORDS} from '../forges/gitlab/client.js'
import {ACCESS_LEVELS} from '../forges/gitlab/access.js'
import {MR_DELIVERIES} from '../forges/gitlab/env.js'
import {handleGitLabJob} from '../forges/gitlab/handler.js'
import {EXECUTION_MODES} from '../policy/policy.js'
import {dutyFlags} from '../review/duties.js'
import {reviewResult} from '../review/result.js'
import {unitsReportOf} from '../review/units.js'

export default class GitLab extends WaveCommand {
  static description = `Handle one GitLab CI job: a /wave note (from a note webhook's TRIGGER_PAYLOAD) or a WAVE_TASK pipeline.

Reads TRIGGER_PAYLOAD (the note event a project webhook sent to the pipeline trigger URL), GitLab's predefined variables (CI_API_V4_URL, CI_PROJECT_ID, CI_PROJECT_URL, CI_SERVER_URL, ...) and GITLAB_TOKEN (a project access token with api and write_repository). On a merge request or an issue, a note starting with /wave plans, approves (then runs and delivers the changes; a plan with units is only approved, its units left for the next jobs: docs/ci/units.md), requests changes (then revises) or rejects; a manual or scheduled pipeline with WAVE_TASK plans into WAVE_MERGE_REQUEST_IID, WAVE_ISSUE_IID, or a new issue; with --replan-on-push, a merge request pipeline plans the merge request's pending plans' tasks again on its new head. Each plan keeps one note, updated in place. Only members with at least --min-access-level may act; --require-other-approver, --require-review and --require-mergeable add separation of duties. A job that asks nothing of wave exits 0. Each option can also be set through its WAVE_GITLAB_* variable.`

  static examples = ['<%= config.bin %> gitlab', '<%= config.bin %> gitlab --min-access-level maintainer --allow "Bash(npm test:*)" --require-other-approver']

  static flags = {
    allow: Flags.string({
      description: 'Proposed permission rule of every plan, e.g. Bash(npm test:*); repeatable ($WAVE_GITLAB_ALLOW, one a line)',
      multiple: true,
    }),
    cwd: Flags.directory({description: "The job's checkout (default: the top of the git repository holding the current directory)"}),
    'max-budget-usd': maxBudgetFlag({
      description:
        "Stop each plan and run with exit 5 once it has spent more than this many US dollars ($WAVE_MAX_BUDGET_USD; the lowest of these and the settings' maxBudgetUsd applies)",
    }),
    'max-turns': Flags.integer({description: 'Stop with exit 5 after this many model turns (default: 40 to plan, 60 to run)', min: 1}),
    'min-access-level': Flags.string({
      description: `Least access level that may act, ${Object.keys(ACCESS_LEVELS).join(', ')} or its number ($WAVE_GITLAB_MIN_ACCESS_LEVEL; default developer)`,
    }),
    mode: Flags.option({description: 'Proposed permission mode of every plan ($WAVE_GITLAB_MODE; default acceptEdits)', options: EXECUTION_MODES})(),
    model: Flags.string({description: 'Model ID (default: $WAVE_MODEL, the settings files, else the default)'}),
    'mr-delivery': Flags.option({
      description:
        'A merge request from this project gets a commit pushed to its source branch, or a merge request against it ($WAVE_GITLAB_MR_DELIVERY; default push)',
      options: MR_DELIVERIES,
    })(),
    quiet: Flags.boolean({char: 'q', description: 'No progress on stderr'}),
    'units-merged': Flags.file({
      description:
        "The merge job of a plan's units: show this output of wave plans merge --json in the plan's note (a row per unit, the plan's checks on the merged tree), then deliver the merged tree as a run's changes are (exit 7 when the merge was incomplete)",
      exists: true,
    }),
    'unit-result': Flags.file({
      description:
        "A unit's job of a plan's units: show this unit result (wave run --unit's --result-out) as the unit's row of the plan's note, after checking it is of the plan's bytes, approval and units; run it after the unit, whatever its outcome",
      exclusive: ['units-merged'],
      exists: true,
    }),
    triage: Flags.boolean({
      description:
        'Only say whether the job asks anything of wave (outcome ignored, or triaged with its thread, e.g. mr-7), from the event alone: no API call, no token needed',
    }),
    remote: Flags.string({description: "The project's git remote, a name or URL ($WAVE_GITLAB_REMOTE; default $CI_PROJECT_URL.git)"}),
    'replan-on-push': Flags.boolean({
      allowNo: true,
      description:
        "In a merge request pipeline (new commits on its source branch), plan each of the merge request's plans awaiting approval on an older head again, with its task ($WAVE_REPLAN_ON_PUSH=true)",
    }),
    ...dutyFlags(GITLAB_WORDS),
    sandbox: Flags.option({description: "Run the plan's commands in the OS sandbox ($WAVE_GITLAB_SANDBOX; default on)", options: ['on', 'off'] as const})(),
    'sandbox-network-allow': Flags.string({
      description: `A host the plan's sandboxed commands may reach through wave's filtering proxy, proposed with every plan; /wave approve --sandbox-network-allow names others; repeatable ($WAVE_GITLAB_SANDBOX_NETWORK_ALLOW, separated by spaces or commas; default none)`,
      multiple: true,
    }),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(GitLab)
    const outcome = await handleGitLabJob({
      cwd: flags.cwd,
      flags,
      sessionOptions: {maxTurns: flags['max-turns'], model: flags.model},
      triage: flags.triage,
      unitsReport: unitsReportOf(flags),
      session: (title, work) => this.output.session(title, (reporter) => work(this.sessionHost((event) => reporter.event(event)))),
      warn: (message) => this.output.warn(message),
    })
    await this.output.result(reviewResult('gitlab', outcome))
  }
}
