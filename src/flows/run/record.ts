import {ExitCode, type WaveError} from '../../base/errors.js'
import {headOf} from '../../base/workspace/git.js'
import type {Stopped} from '../../agent/outcome.js'
import {markSpent} from '../../plans/approval.js'
import {type PlanRun, type PlanState, runRecorded} from '../../plans/lifecycle.js'
import {unitsLeft} from '../../plans/unit-result.js'
import type {SessionContext} from '../../session/context.js'
import {writeUnitOutputs} from '../unit-output.js'
import type {Prepared} from './gates.js'
import type {RunOptions} from './options.js'
import type {RunOutcome} from './outcome.js'

/** How the run ended, as the session left it: what the record writes and a unit's files are added to. */
export interface RunEnd {
  exitCode: number
  finished?: RunOutcome | Stopped
  thrown?: WaveError
}

/** The run's record in the plan's state; a plan copied here with only its approval record gets a state started from the record. */
export async function saveRun(planPath: string, session: SessionContext, prepared: Prepared, run: PlanRun): Promise<PlanState> {
  const origin = {model: 'unknown', repository: prepared.current, task: prepared.record.task ?? '', workspace: session.workspace}
  const decided = prepared.units?.decided
  return runRecorded(planPath, run, origin, decided ? (state) => unitsLeft(decided, state).length : undefined)
}

/** A resumed run goes on in its own record: same start, its totals kept, its end to be written again. */
export function newRun(prepared: Prepared): PlanRun {
  const {record, resumed} = prepared
  return resumed
    ? {...withoutEnd(resumed), changedFiles: [...resumed.changedFiles]}
    : {approvalSha256: record.plan.sha256, changedFiles: [], startedAt: new Date().toISOString(), ...(prepared.units ? {unit: prepared.units.unit.name} : {})}
}

function withoutEnd(run: PlanRun): PlanRun {
  const {endedAt: _ended, exitCode: _exit, ...going} = run
  return going
}

/**
 * The run's end, whatever it was: written to the plan's state, a unit's result and patch written beside it
 * (and named in what the run returns), and the approval spent by a success.
 */
export async function recordEnd(session: SessionContext, options: RunOptions, prepared: Prepared, run: PlanRun, end: RunEnd): Promise<void> {
  const {planPath} = options
  const {record, units} = prepared
  run.endedAt = new Date().toISOString()
  run.exitCode = end.exitCode
  if (prepared.current) run.head = await headOf(session.workspace)
  const saved = await saveRun(planPath, session, prepared, run)
  if (units) {
    // Written whatever the outcome: the merge says which units failed. A unit that cannot hand on its work failed.
    const unitFiles = await writeUnitOutputs({
      base: units.base,
      patchOut: options.patchOut,
      planPath,
      record: units.decided,
      resultOut: options.resultOut,
      run,
      top: prepared.current!.root,
      unit: units.unit.name,
    })
    if (end.finished?.kind === 'stopped') end.finished.details.unit = unitFiles
    else if (end.finished) end.finished.unit = unitFiles
    if (end.thrown?.details) end.thrown.details.unit = unitFiles
  }

  // A unit's success spends the approval only once every unit has succeeded (the state beside the plan says which have).
  if (end.exitCode === ExitCode.ok && (!units || unitsLeft(units.decided, saved).length === 0)) {
    await markSpent(prepared.recordPath, record, run.endedAt).catch((error: unknown) => {
      options.host.warn(`Could not mark the approval ${prepared.recordPath} as spent (${(error as Error).message}); the plan's state records the run.`)
    })
  }
}
