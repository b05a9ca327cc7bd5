/**
 * PlanMode.policy (session/plan-mode.ts): a session's policy as plan mode's state makes it, plan mode's
 * own from planModePolicy while active; plan mode's Bash asked only then (its answer may start bwrap).
 */
import {describe, expect, it} from 'vitest'

import {PlanMode} from '../../../src/session/plan-mode.js'
import {planModePolicy} from '../../../src/policy/plan-policy.js'
import {parseRules, type PlanBash, type PolicyContext} from '../../../src/policy/policy.js'

const ROOT = '/work/repo'
const PLAN = {name: 'gentle-breeze', path: '/home/u/.wave/plans/gentle-breeze.md'}
const BASE: PolicyContext = {headless: true, mode: 'acceptEdits', rules: parseRules([]), workspaceRoot: ROOT}

/** Plan mode's Bash, counting how often it is asked. */
function planBash(): {asked: () => number; answer: () => PlanBash} {
  let asked = 0
  return {
    answer: () => {
      asked++
      return {kind: 'read-only', offered: true}
    },
    asked: () => asked,
  }
}

describe('PlanMode.policy', () => {
  it("is planModePolicy's record on the session's plan file while plan mode is active (wave plan, --revise)", () => {
    const bash = planBash()
    expect(new PlanMode({plan: PLAN, workspace: ROOT}).policy(BASE, bash.answer)).toEqual(
      planModePolicy(BASE, {planBash: {kind: 'read-only', offered: true}, planFile: PLAN.path}),
    )
    expect(bash.asked()).toBe(1)
  })

  it('offers EnterPlanMode where it may be entered (run --task), then is plan mode on the file entered with; Bash asked only then', async () => {
    const bash = planBash()
    const mode = new PlanMode({enter: async () => PLAN, workspace: ROOT})
    expect(mode.policy(BASE, bash.answer)).toEqual({...BASE, canEnterPlanMode: true})
    await mode.enterPlanMode()
    expect(bash.asked()).toBe(0)
    expect(mode.policy(BASE, bash.answer)).toMatchObject({canEnterPlanMode: false, mode: 'plan', planFile: PLAN.path})
    expect(bash.asked()).toBe(1)
  })

  it('leaves the policy as it is where plan mode can never be (wave run plan.md)', () => {
    const bash = planBash()
    expect(new PlanMode({workspace: ROOT}).policy(BASE, bash.answer)).toEqual(BASE)
    expect(bash.asked()).toBe(0)
  })
})
