import {mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {writeDecision} from '../../../src/plans/approval.js'
import {
  addCost,
  createPlan,
  listPlans,
  type PlanEvent,
  type PlanStatus,
  planCost,
  planningEnded,
  planningStarted,
  planStatus,
  readPlanState,
  runRecorded,
  statusAfter,
} from '../../../src/plans/lifecycle.js'
import {planSidecars} from '../../../src/plans/store.js'

let root: string
const previous = process.env.WAVE_HOME

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-lifecycle-')))
  process.env.WAVE_HOME = root
})

afterEach(() => {
  if (previous === undefined) delete process.env.WAVE_HOME
  else process.env.WAVE_HOME = previous
  rmSync(root, {force: true, recursive: true})
})

const origin = {model: 'claude-test', repository: null, task: 'Add a feature', workspace: '/work'}

describe('statusAfter: the one place a status is derived', () => {
  const table: Array<[PlanEvent, PlanStatus]> = [
    [{kind: 'created'}, 'draft'],
    [{kind: 'planned', ok: true}, 'draft'],
    [{kind: 'planned', ok: false}, 'failed'],
    [{decision: 'approved', kind: 'decided'}, 'approved'],
    [{decision: 'rejected', kind: 'decided'}, 'rejected'],
    [{decision: 'changes_requested', kind: 'decided'}, 'changes_requested'],
    [{kind: 'run', run: {changedFiles: [], startedAt: 't'}}, 'running'],
    [{kind: 'run', run: {changedFiles: [], exitCode: 0, startedAt: 't'}}, 'ran'],
    [{kind: 'run', run: {changedFiles: [], exitCode: 5, startedAt: 't'}}, 'failed'],
    // A plan with units: one unit's success leaves it approved until every unit has succeeded.
    [{kind: 'run', run: {changedFiles: [], exitCode: 0, startedAt: 't', unit: 'api'}, unitsLeft: 2}, 'approved'],
    [{kind: 'run', run: {changedFiles: [], exitCode: 0, startedAt: 't', unit: 'api'}, unitsLeft: 0}, 'ran'],
    [{kind: 'run', run: {changedFiles: [], exitCode: 7, startedAt: 't', unit: 'api'}, unitsLeft: 2}, 'failed'],
  ]
  it.each(table)('%j → %s', (event, status) => {
    expect(statusAfter(event)).toBe(status)
  })
})

describe('addCost and planCost', () => {
  it('adds, keeps unknown unknown, and adds nothing for nothing spent', () => {
    expect(addCost(0.1, 0.2)).toBe(0.3)
    expect(addCost(undefined, 0.2)).toBe(0.2)
    expect(addCost(0.1, undefined)).toBe(0.1)
    expect(addCost(undefined, undefined)).toBeUndefined()
    expect(addCost(null, 0.2)).toBeNull()
    expect(addCost(0.1, null)).toBeNull()
  })

  it('sums planning and runs; a plan that spent nothing yet costs 0', async () => {
    const plan = await createPlan(origin)
    expect(planCost(plan.state)).toBe(0)
    expect(
      planCost({
        ...plan.state,
        costUsd: 0.5,
        runs: [
          {changedFiles: [], costUsd: 0.25, startedAt: 'a'},
          {changedFiles: [], startedAt: 'b'},
        ],
      }),
    ).toBe(0.75)
    expect(planCost({...plan.state, costUsd: 0.5, runs: [{changedFiles: [], costUsd: null, startedAt: 'a'}]})).toBeNull()
  })
})

describe('a plan through its life', () => {
  it('moves draft → approved → running → ran, each written by the lifecycle, the cost adding up', async () => {
    const plan = await createPlan(origin)
    writeFileSync(plan.path, '# Plan\n')
    await planningEnded(plan.path, {costUsd: 0.01, ok: true})
    expect((await readPlanState(plan.path))?.status).toBe('draft')

    await writeDecision({allow: [], approver: 'me', decision: 'approved', mode: 'acceptEdits', planBytes: readFileSync(plan.path), planPath: plan.path})
    expect((await readPlanState(plan.path))?.status).toBe('approved')
    expect((await listPlans()).map((p) => p.status)).toEqual(['approved'])

    const run = {changedFiles: [], costUsd: 0.02, startedAt: new Date().toISOString()}
    await runRecorded(plan.path, run, origin)
    expect((await listPlans())[0].status).toBe('running')
    await runRecorded(plan.path, {...run, endedAt: new Date().toISOString(), exitCode: 0}, origin)
    const [listing] = await listPlans()
    expect(listing.status).toBe('ran')
    expect(listing.costUsd).toBe(0.03)
    expect((await readPlanState(plan.path))?.runs).toHaveLength(1)
  })

  it('shows a decision another tool wrote since as the status, without comparing clocks', async () => {
    const plan = await createPlan(origin)
    writeFileSync(plan.path, '# Plan\n')
    await planningEnded(plan.path, {ok: true})
    // A record written by another tool, dated before the state (another machine's clock): still news.
    const record = {decidedAt: '2000-01-01T00:00:00.000Z', decision: 'rejected', plan: {sha256: 'a'.repeat(64)}, version: 1}
    writeFileSync(planSidecars(plan.path).approval, JSON.stringify(record))
    expect((await listPlans())[0].status).toBe('rejected')

    // Control: once wave has written the state with that record beside it, the state's status stands.
    await planningEnded(plan.path, {ok: true})
    expect((await listPlans())[0].status).toBe('draft')
  })

  it('reads a state written before decisionSeen by the old rule: a decision dated after the state is news', () => {
    const state = {
      createdAt: 'c',
      model: 'm',
      name: 'n',
      repository: null,
      runs: [],
      status: 'ran' as const,
      task: 't',
      updatedAt: '2026-01-02T00:00:00.000Z',
      version: 1 as const,
      workspace: '/w',
    }
    expect(planStatus(state, {at: '2026-01-01T00:00:00.000Z', decision: 'approved'})).toBe('ran')
    expect(planStatus(state, {at: '2026-01-03T00:00:00.000Z', decision: 'rejected'})).toBe('rejected')
    expect(planStatus(undefined, {at: 'x', decision: 'approved'})).toBe('approved')
    expect(planStatus(undefined, undefined)).toBe('draft')
  })

  it('records the planning session that starts on a new plan in its first state, as planningStarted would (control: a plan made for no session has none)', async () => {
    const plan = await createPlan({...origin, planning: {startedAt: '2026-12-07T08:00:00.000Z'}})
    expect((await readPlanState(plan.path))?.planning).toEqual({pid: process.pid, startedAt: '2026-12-07T08:00:00.000Z'})
    const other = await createPlan(origin)
    expect((await readPlanState(other.path))?.planning).toBeUndefined()
    await planningStarted(other.path, '2026-12-07T08:00:00.000Z')
    expect((await readPlanState(other.path))?.planning).toEqual((await readPlanState(plan.path))?.planning)
  })

  it('starts a state for a plan that came with only its approval record, when it runs', async () => {
    const planPath = path.join(root, 'copied.md')
    writeFileSync(planPath, '# Plan\n')
    await runRecorded(planPath, {changedFiles: [], startedAt: 's'}, origin)
    const state = await readPlanState(planPath)
    expect(state).toMatchObject({name: 'copied', status: 'running', task: 'Add a feature'})
  })
})
