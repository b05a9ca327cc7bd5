/**
 * `wave run plan.md`, in the design's three steps: the gates (`run/gates.ts`: every check that can refuse,
 * before the first model request), the session under the approved contract (`run/execute.ts`), and the
 * run's record (`run/record.ts`: the plan's state, a unit's result and patch, the approval spent).
 */
import type {Stopped} from '../agent/outcome.js'
import {openSandboxNetwork} from '../base/process/runner.js'
import {lockPlan} from '../plans/gates.js'
import {readPlanStateChecked} from '../plans/lifecycle.js'
import {readPlanFile, resolvePlanReference} from '../plans/store.js'
import {openSession, type SessionContext} from '../session/context.js'
import {execute} from './run/execute.js'
import {assertStillNewest, passGates, type PlanRead, runPlaceHint} from './run/gates.js'
import type {RunOptions} from './run/options.js'
import type {RunOutcome} from './run/outcome.js'

export type {InlineApproval, RunOptions} from './run/options.js'
export type {RunOutcome} from './run/outcome.js'

/**
 * A new conversation whose only user message holds the task and the approved plan. `inherited`: the
 * session of `run --task --approve` that made the plan, whose place, settings and tools the run keeps, so
 * nothing the task wrote (a `.wave/settings.json`) can widen what the run may do.
 */
export async function executePlan(options: RunOptions, inherited?: SessionContext): Promise<RunOutcome | Stopped> {
  const planPath = await resolvePlanReference(options.planPath)
  const {bytes, text} = await readPlanFile(planPath)
  const state = await readPlanStateChecked(planPath)
  const session = await openSession(options, {changes: true, credentials: false, inherited, outside: {hint: runPlaceHint(state)}})
  try {
    return await executeIn(session, {...options, planPath}, {bytes, state, text})
  } finally {
    await session.close()
  }
}

/** Past the gates, the run holds the plan's lock and the proxy to its approved hosts for as long as it works. */
async function executeIn(session: SessionContext, options: RunOptions, plan: PlanRead): Promise<RunOutcome | Stopped> {
  const {planPath} = options
  const prepared = await passGates(session, options, plan)
  session.assertCredentials()
  // The proxy to the approved hosts, before anything runs: one that cannot start refuses the run.
  const network = await openSandboxNetwork(prepared.record.sandbox, (host) =>
    options.host.warn(`A sandboxed command asked for ${host}: refused, not an approved host.`),
  )
  const release = await lockPlan(planPath).catch(async (error: unknown) => {
    await network?.close()
    throw error
  })
  try {
    if (prepared.resumed) await assertStillNewest(planPath, prepared.resumed, prepared.units?.unit.name)
    return await execute(session, options, {...prepared, proxy: network?.directory})
  } finally {
    await release()
    await network?.close()
  }
}
