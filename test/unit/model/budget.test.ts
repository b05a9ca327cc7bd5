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
  })

  it('says how to go on: the command with the flag raised, what to raise first, or that nothing resumes the session', () => {
    const plan = {command: 'wave plan --resume brave-otter', kept: 'the exploration', takesFlags: true}
    expect(capRaise(flag, plan)).toBe(
      'To go on with the exploration kept: wave plan --resume brave-otter --max-budget-usd <more than 0.5> (the cap counts what was spent before).',
    )
    const settings: BudgetCap = {source: {file: '/home/u/.wave/settings.json', kind: 'settings'}, usd: 1}
    expect(capRaise(settings, plan)).toBe(
      'To go on with the exploration kept: raise maxBudgetUsd in /home/u/.wave/settings.json, then wave plan --resume brave-otter (the cap counts what was spent before).',
    )
    const comment = {command: '/wave resume brave-otter', kept: 'the exploration', takesFlags: false}
    expect(capRaise({source: {kind: 'variable', setting: 'the max-budget-usd input'}, usd: 2}, comment)).toBe(
      'To go on with the exploration kept: raise the max-budget-usd input, then /wave resume brave-otter (the cap counts what was spent before).',
    )
    expect(capRaise(approval, {...plan, command: 'wave run brave-otter --resume'})).toMatch(
      /approve the plan again with a higher --max-budget-usd \(the approval binds it\), then wave run brave-otter --resume/,
    )
    expect(capRaise(unit, plan)).toMatch(/--unit-budget-usd/)
    expect(capRaise(flag, undefined)).toBe('This session is not resumed: raise --max-budget-usd and start it again.')
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
