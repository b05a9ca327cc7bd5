/** The first message of a plan unit's run (`wave run --unit`): the task, the whole plan for context, and which unit is this job's. */
import {describeScope} from '../../policy/scope.js'
import {runOpening} from './run.js'

interface UnitShown {
  name: string
  paths: readonly string[]
  verify: ReadonlyArray<{command: string}>
}

export function unitOpening(task: string | undefined, name: string, sha256: string, plan: string, unit: UnitShown, others: readonly string[]): string {
  const checks = unit.verify.length > 0 ? unit.verify.map((check) => check.command).join('; ') : 'none of its own'
  const rest = others.length > 0 ? `The other units (${others.join(', ')}) are other jobs' work, each in its own checkout: leave their files alone.` : ''
  const whole = runOpening(task, name, sha256, plan).replace(/\n\nCarry out this plan now\.$/, '')
  return `This job is unit "${unit.name}" of the plan below: carry out that unit only, as its ### ${unit.name} section under ## Units says. You may change only its paths (${describeScope(unit.paths)}); a change anywhere else is refused and fails the job. wave runs the unit's checks when you are done (${checks}). ${rest}

${whole}

Carry out unit "${unit.name}" now.`
}
