import {Args, Flags} from '@oclif/core'

import {decidePlan} from '../flows/approve.js'
import {usageError} from '../base/errors.js'
import {checkedRules, maxBudgetFlag, sandboxFlags, sandboxFrom, sessionFlags, WaveCommand} from '../cli/command.js'
import {interactiveProblem} from '../output/interactive-review.js'
import {approvalResult} from '../output/views/approval-result.js'
import {EXECUTION_MODES} from '../policy/policy.js'
import {SCOPE_ENFORCEMENTS} from '../policy/scope.js'

// The run's own model flags, the same definitions, recorded as approved (the record's model section).
const {effort, 'fallback-model': fallbackModel, 'max-output-tokens': maxOutputTokens, model, thinking} = sessionFlags(1)
const modelFlags = {effort, 'fallback-model': fallbackModel, 'max-output-tokens': maxOutputTokens, model, thinking}

/** The flags that say how an approved plan runs: a rejection or a request for changes approves no run for them to apply to. */
const RUN_SETTINGS = [
  'allow',
  'effort',
  'fallback-model',
  'json-schema',
  'max-budget-usd',
  'max-output-tokens',
  'mode',
  'model',
  'no-verify',
  'sandbox',
  'sandbox-network',
  'sandbox-network-allow',
  'scope',
  'scope-enforce',
  'thinking',
  'unit-budget-usd',
  'verify',
]

export default class Approve extends WaveCommand {
  static args = {
    plan: Args.string({description: 'The plan: its name (as wave plans lists it) or its path (as wave plan prints it)', required: true}),
  }

  static description = `Record a decision on a plan: approve it (the default), request changes, or reject it.

The record, <plan>.approval.json beside the plan (or --out), binds the plan's sha256: wave run refuses the plan if its content changes afterwards. stdout is the record's path.

It binds the plan's contract too: the paths of its ## Scope section (the run may change only those: --scope-enforce warn reports a change outside them, strict refuses it) and the commands of its ## Verification section, which wave runs itself, in the sandbox, when the model is done. --scope and --verify replace the plan's lists; --no-verify approves no checks.

--sandbox-network-allow HOST (repeatable) lets the run's sandboxed commands reach those hosts, and no other, through a filtering proxy wave starts outside the sandbox (recorded, and shown with the decision); --sandbox-network opens all of the network.

--model, --effort, --thinking, --max-output-tokens and --fallback-model record how the model works in the run (the record's model section): wave run uses them, and refuses a flag of its own that says otherwise.

--json-schema binds the JSON Schema the run's result must match (the record's outputSchema: the schema and its sha256): wave run uses it, and refuses a --json-schema of its own that differs.

A plan's ## Units are bound too (each unit's name, paths and checks; wave plans units lists them for a CI matrix): a plan whose units overlap, reach outside its scope or are misnamed is refused (exit 2). --unit-budget-usd caps each unit's run, --max-budget-usd the plan's run; wave run's own --max-budget-usd can only lower them.`

  static examples = [
    '<%= config.bin %> approve gentle-breeze',
    '<%= config.bin %> approve "$PLAN" --mode acceptEdits --allow "Bash(npm test:*)" --approver ci-bot',
    '<%= config.bin %> approve "$PLAN" --request-changes "Keep the public API unchanged"',
    '<%= config.bin %> approve "$PLAN" --reject --feedback "Out of scope"',
    '<%= config.bin %> approve "$PLAN" --interactive',
    '<%= config.bin %> approve "$PLAN" --scope "src/**" --scope test --scope-enforce strict --verify "npm test"',
    '<%= config.bin %> approve "$PLAN" --effort low --thinking off',
    '<%= config.bin %> approve "$PLAN" --verify "npm ci && npm test" --sandbox-network-allow registry.npmjs.org',
    '<%= config.bin %> approve "$PLAN" --unit-budget-usd 2 --max-budget-usd 10',
  ]

  static flags = {
    allow: Flags.string({description: 'Permission rule for the run, e.g. Bash(npm test:*); repeatable', multiple: true}),
    approver: Flags.string({description: 'Who decides (default: $GITHUB_ACTOR, git user.name, the OS user)'}),
    feedback: Flags.string({description: 'Feedback to record with the decision', exclusive: ['request-changes']}),
    'max-budget-usd': maxBudgetFlag({description: "Cap the approved run's spending in US dollars (recorded; the run stops with exit 5 past it)"}),
    interactive: Flags.boolean({
      char: 'i',
      description: 'Review the plan at a terminal, then approve, request changes or reject it (Shift+Tab cycles --mode)',
    }),
    mode: Flags.option({default: 'acceptEdits', description: 'Permission mode the run executes in', options: EXECUTION_MODES})(),
    'no-verify': Flags.boolean({description: "Approve no checks, whatever the plan's ## Verification lists", exclusive: ['verify']}),
    out: Flags.file({description: 'Write the record here instead of beside the plan'}),
    reject: Flags.boolean({description: 'Reject the plan', exclusive: ['request-changes', ...RUN_SETTINGS]}),
    'request-changes': Flags.string({description: 'Ask for changes, with this feedback', exclusive: ['reject', ...RUN_SETTINGS]}),
    scope: Flags.string({description: "A workspace path or glob the run may change, replacing the plan's ## Scope; repeatable", multiple: true}),
    'scope-enforce': Flags.option({
      description: 'How the run is held to the scope: warn reports changes outside it, strict refuses them (default warn)',
      options: SCOPE_ENFORCEMENTS,
    })(),
    'unit-budget-usd': maxBudgetFlag({description: "Cap each unit's run in US dollars (a plan with ## Units; recorded as each unit's budgetUsd)"}),
    verify: Flags.string({description: "A command that checks the work, replacing the plan's ## Verification; repeatable", multiple: true}),
    ...sandboxFlags,
    ...modelFlags,
    'json-schema': Flags.string({description: "The JSON Schema (JSON, or @FILE) the run's result must match, bound by the approval"}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Approve)
    const allow = checkedRules(flags.allow)
    const sandbox = sandboxFrom(flags)
    const {outputSchema} = await this.sessionInputs(flags)

    if (flags['request-changes'] !== undefined && !flags['request-changes'].trim()) {
      throw usageError('--request-changes needs feedback saying what to change.')
    }

    if (flags.interactive) {
      const decided = flags.reject
        ? 'reject'
        : flags['request-changes'] === undefined
          ? flags.feedback === undefined
            ? undefined
            : 'feedback'
          : 'request-changes'
      if (decided) throw usageError(`--interactive cannot be combined with --${decided}: the decision and its feedback are given at the terminal.`)
      const problem = interactiveProblem()
      if (problem) {
        throw usageError(
          `--interactive needs someone at a terminal, but ${problem}.`,
          'Decide with flags instead: --reject, --request-changes "<feedback>", or neither to approve.',
        )
      }
    }

    const outcome = await decidePlan(
      {
        allow,
        approver: flags.approver,
        contract: {
          enforce: flags['scope-enforce'],
          noVerify: flags['no-verify'],
          scope: flags.scope,
          unitBudgetUsd: flags['unit-budget-usd'],
          verify: flags.verify,
        },
        decision: flags.reject ? 'rejected' : flags['request-changes'] === undefined ? 'approved' : 'changes_requested',
        feedback: flags['request-changes'] ?? flags.feedback,
        interactive: flags.interactive ? {signal: this.interruption.signal} : undefined,
        maxBudgetUsd: flags['max-budget-usd'],
        mode: flags.mode,
        model: {
          effort: flags.effort,
          fallbackModel: flags['fallback-model'],
          maxOutputTokens: flags['max-output-tokens'],
          model: flags.model,
          thinking: flags.thinking,
        },
        out: flags.out,
        outputSchema,
        plan: args.plan,
        sandbox,
      },
      (line) => this.output.note(line),
    )
    for (const warning of outcome.warnings) this.output.warn(warning)
    for (const line of outcome.notes) this.output.note(line)
    await this.output.result(approvalResult(outcome))
  }
}
