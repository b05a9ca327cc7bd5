/**
 * A dollar cap on a session's spending and where it was set. Several may bound one session (the flag,
 * the settings files, the approval record, a unit's budget); the lowest applies, and the session that
 * reaches it names that one, with how to raise it: raising `--max-budget-usd` does nothing for a run
 * bound by its approval.
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

/** How to let a session stopped at this cap go on. */
export function capRaise(source: BudgetSource): string {
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
      return 'the approval binds it: approve the plan again with a higher --max-budget-usd'
    }

    case 'unit': {
      return 'the approval binds it: approve the plan again with a higher --unit-budget-usd'
    }
  }
}
