/**
 * The approve driver: what `wave approve` does between reading its flags and printing, in one call, as
 * the plan, run and task drivers are for theirs. It reads the plan and its state, shows what the plan asks
 * for, lets a person decide at a terminal when asked to (shown the contract an approval binds), and
 * writes the decision through the one writer of decisions (plans/decision.ts `approvePlan`, which binds
 * the contract, the flags replacing its scope and checks, and which `run --approve` and the forge review
 * use too).
 */
import type {OutputSchema} from '../base/json-schema.js'
import {describeSandbox, type SandboxChoice} from '../base/process/sandbox.js'
import type {EffectiveSettings} from '../config/settings.js'
import {reviewPlan, type TerminalDecision} from '../output/interactive-review.js'
import {formatCost} from '../output/progress.js'
import {contractMarkdown} from '../output/report-view.js'
import {type ApprovalRecord, approvalPathFor, defaultApprover, lastDecidedSha256} from '../plans/approval.js'
import {bindContract, type ContractOverrides, parseContract} from '../plans/contract.js'
import {approvePlan, type DecisionOverrides} from '../plans/decision.js'
import {type Decision, readPlanState} from '../plans/lifecycle.js'
import {revisionDiff} from '../plans/revisions.js'
import {readPlanFile, resolvePlanReference} from '../plans/store.js'
import type {ExecutionMode} from '../policy/modes.js'
import {describeProtected} from '../policy/protected.js'

interface ApproveRequest {
  /** The plan as the user named it: its name or its path. */
  plan: string
  /** The decision the flags give; `interactive` asks the person at the terminal instead. */
  decision: Decision
  feedback?: string
  /** Decide at the terminal (`--interactive`): the decision, its feedback and the mode are the person's. */
  interactive?: {signal: AbortSignal}
  approver?: string
  allow: string[]
  mode: ExecutionMode
  model: DecisionOverrides['model']
  sandbox: SandboxChoice
  outputSchema?: OutputSchema
  out?: string
  maxBudgetUsd?: number
  /** The flags that replace or add to the plan's contract (--scope, --verify, --no-verify, --scope-enforce, --unit-budget-usd). */
  contract: ContractOverrides
}

interface ApproveOutcome {
  planPath: string
  /** Where the record was written. */
  path: string
  record: ApprovalRecord
  decision: Decision
  /** What the plan asked for (ExitPlanMode's allowedPrompts): shown, never granted. */
  asked: NonNullable<Awaited<ReturnType<typeof readPlanState>>>['allowedPrompts']
  /** What an approval tells the approver after the fact: the contract's warnings, the hooks in effect, the units bound. */
  warnings: string[]
  notes: string[]
}

/**
 * Decides on a plan. `note` is told, before any decision is asked for, what the plan asks to be
 * allowed (a person deciding at the terminal reads it first).
 */
export async function decidePlan(request: ApproveRequest, note: (line: string) => void): Promise<ApproveOutcome> {
  const planPath = await resolvePlanReference(request.plan)
  const {bytes, text} = await readPlanFile(planPath)
  const state = await readPlanState(planPath)
  const recordFile = request.out ?? approvalPathFor(planPath)
  // What the reviewer last decided on, compared before this revision is recorded as the newest.
  const decided = lastDecidedSha256(recordFile)
  const asked = state?.allowedPrompts ?? []
  if (asked.length > 0) {
    note(
      `The plan asks for: ${asked.map((p) => `${p.tool} (${p.prompt})`).join('; ')}. Grant what it needs with --allow rules, e.g. --allow "Bash(npm test:*)".`,
    )
  }

  let review: TerminalDecision | undefined
  if (request.interactive) {
    const changes = decided ? await revisionDiff({current: bytes, decidedSha256: decided, planPath}) : undefined
    // The contract an approval would bind, shown before the person decides (approvePlan binds it from the same bytes).
    const contract = bindContract(await parseContract(text, {workspace: state?.workspace}), request.contract)
    review = await reviewPlan({
      allow: request.allow,
      changes: changes?.patch ? changes : undefined,
      contract: contractMarkdown(contract),
      mode: request.mode,
      planLabel: planPath,
      planText: text,
      sandbox: describeSandbox(request.sandbox),
      signal: request.interactive.signal,
      task: state?.task,
    })
  }

  const decision = review?.decision ?? request.decision
  const decider = {approver: request.approver ?? (await defaultApprover()), decision, feedback: review ? review.feedback : request.feedback, planBytes: bytes}
  const {path, record, settings, warnings} = await approvePlan(planPath, decider, {
    allow: request.allow,
    contract: request.contract,
    maxBudgetUsd: request.maxBudgetUsd,
    mode: review?.mode ?? request.mode,
    model: request.model,
    out: request.out,
    outputSchema: request.outputSchema,
    sandbox: request.sandbox,
  })

  const approved = decision === 'approved'
  return {
    asked,
    decision,
    notes: approved
      ? [
          // The hooks approvePlan bound, as the record lists them.
          record.hooks?.list.length ? `Hooks in effect (their digest is recorded): ${record.hooks.list.join('; ')}.` : 'Hooks in effect: none.',
          // The settings files' rules a run adds to the record's (Claude Code's .claude permissions among them), read where it was planned.
          ...settingsRulesLine(settings!),
          ...checksLine(record),
          describeProtected(record.protectedPaths ?? [], record.scope?.paths),
          ...(record.units ?? []).map((unit) => unitLine(unit, record.mode)),
        ]
      : [],
    path,
    planPath,
    record,
    // What the settings files ask for that wave cannot honour as written: said here, never dropped in silence.
    warnings: [...warnings, ...(settings?.unhonoured ?? [])],
  }
}

/** The settings files' rules in force beside the record's: "Settings rules in effect: deny Bash(curl:*); ask Bash(git push:*)". */
function settingsRulesLine(settings: EffectiveSettings): string[] {
  const kinds = [
    ['allow', settings.allow],
    ['deny', settings.deny],
    ['ask', settings.ask ?? []],
  ] as const
  const shown = kinds.filter(([, rules]) => rules.length > 0).map(([kind, rules]) => `${kind} ${rules.join(', ')}`)
  return shown.length > 0 ? [`Settings rules in effect (the settings files', beside the approval's): ${shown.join('; ')}.`] : []
}

/**
 * What the approval lets the model run besides its rules: the approved checks, exactly as written, in
 * acceptEdits and default (policy.ts, approvedChecks); bypassPermissions runs any command anyway. A plan
 * with units runs each unit's checks in its own job (unitLine says so); the plan's run at the merge.
 */
function checksLine(record: ApprovalRecord): string[] {
  const checks = (record.verify ?? []).map(({command}) => command)
  if (checks.length === 0 || record.mode === 'bypassPermissions' || (record.units?.length ?? 0) > 0) return []
  return [`The model may run: ${checks.join('; ')} (the approved checks, exactly as written, in the run's sandbox).`]
}

/** A bound unit, as the approver is shown it: "Unit api: src/api/**; checks: npm test, which the model may run (at most $2.00)". */
function unitLine(unit: NonNullable<ApprovalRecord['units']>[number], mode: ApprovalRecord['mode']): string {
  const mayRun = mode === 'bypassPermissions' ? '' : ', which the model may run'
  const checks = unit.verify.length > 0 ? `checks: ${unit.verify.map((check) => check.command).join(', ')}${mayRun}` : 'no checks'
  const budget = unit.budgetUsd === undefined ? '' : ` (at most ${formatCost(unit.budgetUsd)})`
  return `Unit ${unit.name}: ${unit.paths.join(', ')}; ${checks}${budget}`
}
