/**
 * A dollar cap on a session's spending and where it was set. Several may bound one session (the flag,
 * the settings files, the approval record, a unit's budget); the lowest applies, and the session that
 * reaches it names that one, with how to raise it and go on: raising `--max-budget-usd` does nothing
 * for a run bound by its approval.
 */

/** Where a cap was set. JSON as it is: a stopped session's `--json` failure carries it (`budget.source`). */
export type BudgetSource =
  /** `--max-budget-usd`; `leftOf`: `run --task --approve`'s run, bound by what planning left of the flag's cap. */
  | {kind: 'flag'; leftOf?: number}
  /** WAVE_MAX_BUDGET_USD (`wave github`, `wave gitlab`); `setting`: what the user set it through (the Action's input), named instead. */
  | {kind: 'variable'; setting?: string}
  /** `maxBudgetUsd` in a settings file. */
  | {kind: 'settings'; file: string}
  /** The approval record's `maxBudgetUsd` (`wave approve --max-budget-usd`, `run --approve`, the forge's approval). */
  | {kind: 'approval'}
  /** A unit's `budgetUsd` in the approval record (`wave approve --unit-budget-usd`), for `wave run --unit`. */
  | {kind: 'unit'; unit: string}

export interface BudgetCap {
  usd: number
  source: BudgetSource
}

/** The lowest of the caps given (the first of equal ones), or undefined when none is. */
export function lowestCap(...caps: Array<BudgetCap | undefined>): BudgetCap | undefined {
  let lowest: BudgetCap | undefined
  for (const cap of caps) if (cap && (lowest === undefined || cap.usd < lowest.usd)) lowest = cap
  return lowest
}

/** A cap from a number that may be absent. */
export const capOf = (usd: number | undefined, source: BudgetSource): BudgetCap | undefined => (usd === undefined ? undefined : {source, usd})

/** The cap as a message names it: "--max-budget-usd 0.5", "the approval's --max-budget-usd 0.5", "unit api's --unit-budget-usd 0.2". */
export function capName({source, usd}: BudgetCap): string {
  switch (source.kind) {
    case 'flag': {
      return source.leftOf === undefined ? `--max-budget-usd ${usd}` : `the ${usd} USD planning left of --max-budget-usd ${source.leftOf}`
    }

    case 'variable': {
      return `${source.setting ?? 'WAVE_MAX_BUDGET_USD'} ${usd}`
    }

    case 'settings': {
      return `maxBudgetUsd ${usd} in ${source.file}`
    }

    case 'approval': {
      return `the approval's --max-budget-usd ${usd}`
    }

    case 'unit': {
      return `unit ${source.unit}'s --unit-budget-usd ${usd}`
    }
  }
}

/**
 * How a stopped session goes on where it stopped, where it can: the command that resumes it (`wave plan
 * --resume NAME`, `wave run NAME --resume`, `/wave resume NAME` in a comment), what it keeps, and whether
 * the command takes flags (a comment's does not: the job's settings set its caps).
 */
export interface Continuation {
  command: string
  /** What the resumed session keeps: "the exploration", "its changes and conversation". */
  kept: string
  takesFlags: boolean
}

/**
 * What to do about a session stopped at this cap: with a continuation, the command that goes on (the flag
 * added, where the flag is the cap that stopped it; else what to raise first); without one (a session
 * nothing resumes, `run --task`), what to raise before starting it again. A resumed session's cap counts
 * what it spent before it stopped, as its turn limit counts its turns.
 */
export function capRaise({source, usd}: BudgetCap, goOn: Continuation | undefined): string {
  if (!goOn) return `This session is not resumed: ${raiseOf(source)} and start it again.`
  if (goOn.takesFlags && source.kind === 'flag') {
    return `To go on with ${goOn.kept} kept: ${goOn.command} --max-budget-usd <more than ${usd}> (the cap counts what was spent before).`
  }

  return `To go on with ${goOn.kept} kept: ${raiseOf(source)}, then ${goOn.command} (the cap counts what was spent before).`
}

/** What raises a cap, by where it was set. */
function raiseOf(source: BudgetSource): string {
  switch (source.kind) {
    case 'flag': {
      return 'raise --max-budget-usd'
    }

    case 'variable': {
      return source.setting ? `raise ${source.setting}` : 'raise WAVE_MAX_BUDGET_USD (or pass a higher --max-budget-usd)'
    }

    case 'settings': {
      return `raise maxBudgetUsd in ${source.file}`
    }

    case 'approval': {
      return 'approve the plan again with a higher --max-budget-usd (the approval binds it)'
    }

    case 'unit': {
      return 'approve the plan again with a higher --unit-budget-usd (the approval binds it)'
    }
  }
}
