import {describe, expect, it} from 'vitest'

import {type BudgetCap, capName, capRaise, lowestCap} from '../../../src/model/budget.js'
import {mergeSettings} from '../../../src/config/settings.js'

const flag: BudgetCap = {source: {kind: 'flag'}, usd: 0.5}
const approval: BudgetCap = {source: {kind: 'approval'}, usd: 0.5}
const unit: BudgetCap = {source: {kind: 'unit', unit: 'api'}, usd: 0.2}

describe('a budget cap and where it was set', () => {
  it('the lowest of those given applies, the first of equal ones; none given, none', () => {
    expect(lowestCap(undefined, approval, unit)).toBe(unit)
    expect(lowestCap(flag, approval)).toBe(flag)
    expect(lowestCap(approval, flag)).toBe(approval)
    expect(lowestCap(undefined, undefined)).toBeUndefined()
  })

  it('names each source, with how to raise it', () => {
    expect(capName(flag)).toBe('--max-budget-usd 0.5')
    expect(capName(approval)).toBe("the approval's --max-budget-usd 0.5")
    expect(capName(unit)).toBe("unit api's --unit-budget-usd 0.2")
    expect(capName({source: {file: '/home/u/.wave/settings.json', kind: 'settings'}, usd: 1})).toBe('maxBudgetUsd 1 in /home/u/.wave/settings.json')
    expect(capName({source: {kind: 'variable'}, usd: 2})).toBe('WAVE_MAX_BUDGET_USD 2')
    expect(capName({source: {kind: 'flag', leftOf: 1}, usd: 0.25})).toBe('the 0.25 USD planning left of --max-budget-usd 1')
    expect(capRaise(flag.source)).toBe('raise --max-budget-usd')
    expect(capRaise(approval.source)).toMatch(/approve the plan again with a higher --max-budget-usd/)
    expect(capRaise(unit.source)).toMatch(/--unit-budget-usd/)
  })

  it("the settings' cap is the lowest file's, naming that file", () => {
    const merged = mergeSettings([
      {file: '/home/u/.wave/settings.json', scope: 'user', settings: {maxBudgetUsd: 3}},
      {file: '/repo/.wave/settings.json', scope: 'project', settings: {maxBudgetUsd: 2}},
    ])
    expect(merged.budget).toEqual({source: {file: '/repo/.wave/settings.json', kind: 'settings'}, usd: 2})
    expect(mergeSettings([{file: '/home/u/.wave/settings.json', scope: 'user', settings: {}}]).budget).toBeUndefined()
  })
})
