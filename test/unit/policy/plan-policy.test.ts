/**
 * planModePolicy (policy/plan-policy.ts): the one composition of plan mode's policy, which the planning
 * session, an Explore agent, `wave prompt` and `wave tools` take. Judged by what decide() then does with
 * calls, each beside the same call under the policy it was made from (the control).
 */
import {describe, expect, it} from 'vitest'

import {planModePolicy} from '../../../src/policy/plan-policy.js'
import {decide, PLAN_MODE_REFUSALS, parseRules, type PolicyContext, type ToolIdentity} from '../../../src/policy/policy.js'
import {analyseShell} from '../../../src/policy/shell.js'
import type {ResolvedPath} from '../../../src/base/workspace/paths.js'

const ROOT = '/work/repo'
const PLAN = '/home/u/.wave/plans/gentle-breeze.md'
const Read: ToolIdentity = {access: 'read', name: 'Read'}
const Write: ToolIdentity = {access: 'write', name: 'Write'}
const Bash: ToolIdentity = {access: 'execute', name: 'Bash'}
const Enter: ToolIdentity = {access: 'control', name: 'EnterPlanMode'}
const Exit: ToolIdentity = {access: 'control', name: 'ExitPlanMode'}
const PLAN_BASH = {kind: 'read-only', offered: true} as const

const target = (real: string): ResolvedPath => ({absolute: real, input: real, kind: 'file', real, symlink: false})

/** A `run --task` session in acceptEdits that may enter plan mode, with Bash allowed and a strict scope: far more than plan mode may do. */
const TASK: PolicyContext = {
  canEnterPlanMode: true,
  headless: true,
  mode: 'acceptEdits',
  rules: parseRules(['Bash']),
  scope: {enforce: 'strict', paths: ['src/**']},
  workspaceRoot: ROOT,
}

const write = (ctx: PolicyContext, file: string) => decide(ctx, {input: {}, target: target(file), tool: Write}).decision
const bash = async (ctx: PolicyContext, command: string) => decide(ctx, {input: {command}, shell: await analyseShell(command), tool: Bash})

describe('planModePolicy', () => {
  it('makes a session plan mode: its plan file its one write, reads allowed, no EnterPlanMode; the session it came from (control) wrote anywhere in scope', () => {
    const plan = planModePolicy(TASK, {planBash: PLAN_BASH, planFile: PLAN})
    expect(plan).toMatchObject({canEnterPlanMode: false, mode: 'plan', planBash: PLAN_BASH, planFile: PLAN, scope: undefined})
    expect(write(plan, PLAN)).toBe('allow')
    expect(write(plan, `${ROOT}/src/a.ts`)).toBe('deny')
    expect(decide(plan, {input: {}, target: target(`${ROOT}/src/a.ts`), tool: Read}).decision).toBe('allow')
    expect(decide(plan, {input: {}, tool: Enter})).toEqual({decision: 'deny', reason: PLAN_MODE_REFUSALS.alreadyActive})
    expect(decide(plan, {input: {}, tool: Exit}).decision).toBe('allow')

    expect(write(TASK, `${ROOT}/src/a.ts`)).toBe('allow')
    expect(decide(TASK, {input: {}, tool: Enter}).decision).toBe('allow')
    // The rest of the session's policy stays: its rules, its workspace, its headlessness.
    expect(plan).toMatchObject({headless: true, rules: TASK.rules, workspaceRoot: ROOT})
  })

  it('runs Bash in the throwaway sandbox it is given, refuses it with the reason when off or not given; the session (control) ran it as its rule said', async () => {
    expect((await bash(planModePolicy(TASK, {planBash: PLAN_BASH, planFile: PLAN}), 'npm test')).reason).toContain('throwaway sandbox')
    const off = await bash(planModePolicy(TASK, {planBash: {offered: false, why: 'planMode.bash is false in the settings'}, planFile: PLAN}), 'npm test')
    expect(off.decision).toBe('deny')
    expect(off.reason).toContain('planMode.bash is false in the settings')
    expect((await bash(planModePolicy(TASK, {planFile: PLAN}), 'npm test')).decision).toBe('deny')
    expect(await bash(TASK, 'npm test')).toMatchObject({decision: 'allow'})
  })

  it("gives an Explore agent no plan file: nothing is written, not even the planning session's plan (control: the session writes it)", () => {
    const planning = planModePolicy(TASK, {planBash: PLAN_BASH, planFile: PLAN})
    const explore = planModePolicy(planning, {planBash: PLAN_BASH})
    expect(explore.planFile).toBeUndefined()
    expect(write(explore, PLAN)).toBe('deny')
    expect(write(planning, PLAN)).toBe('allow')
  })
})
