/**
 * The job list for a CI system (`wave plans units`): an approved plan's bound units as a GitHub Actions
 * matrix, a GitLab `parallel:matrix` or child pipeline, JSON or one name a line. Only an approved plan
 * has a job list (exit 3 otherwise), and only for the bytes approved (exit 4): the list a CI system fans
 * out over is the one the approver bound.
 */
import {type ApprovalRecord, approvalPathFor, assertApproved, readApproval} from './approval.js'
import {planNameOf, readPlanFile} from './store.js'

export const MATRIX_FORMATS = ['json', 'github-matrix', 'gitlab', 'gitlab-pipeline', 'lines'] as const
export type MatrixFormat = (typeof MATRIX_FORMATS)[number]

export type BoundUnits = NonNullable<ApprovalRecord['units']>

export interface JobList {
  plan: {name: string; sha256: string}
  /** The record's units, in the plan's order; empty: the plan runs as one job. */
  units: BoundUnits
  recordPath: string
}

/** The units the plan's approval binds: refused (exit 3) unless approved, (exit 4) if the plan changed since. */
export async function jobListOf(planPath: string, recordPath = approvalPathFor(planPath)): Promise<JobList> {
  const {bytes} = await readPlanFile(planPath)
  const record = await readApproval(recordPath, planPath)
  assertApproved(record, recordPath, planPath, bytes)
  return {plan: {name: planNameOf(planPath), sha256: record.plan.sha256}, recordPath, units: record.units ?? []}
}

/** Options of the GitLab child pipeline: a template job each unit's job extends, and the file defining it. */
export interface PipelineOptions {
  extends?: string
  include?: string
}

/**
 * The job list in one format. Names are quoted as JSON strings wherever YAML reads them: a unit named
 * `1.0`, `true` or `null` stays a string. An empty list (a plan without units) is an empty matrix.
 */
export function formatJobList(list: JobList, format: Exclude<MatrixFormat, 'json'>, options: PipelineOptions = {}): string {
  const names = list.units.map((unit) => unit.name)
  switch (format) {
    case 'github-matrix': {
      // One line, ready for `fromJSON` in a job's `strategy.matrix`.
      return JSON.stringify({include: names.map((unit) => ({unit}))})
    }

    case 'gitlab': {
      return `parallel:\n  matrix:\n    - UNIT: [${names.map((name) => JSON.stringify(name)).join(', ')}]\n`
    }

    case 'gitlab-pipeline': {
      return gitlabPipeline(list, options)
    }

    case 'lines': {
      return names.map((name) => `${name}\n`).join('')
    }
  }
}

/** A child pipeline: one job per unit, each running `wave run <plan> --unit NAME`. */
function gitlabPipeline(list: JobList, options: PipelineOptions): string {
  const q = (value: string) => JSON.stringify(value)
  const lines = [`# wave plans units --format gitlab-pipeline: one job per unit of the approved plan ${list.plan.name} (sha256 ${list.plan.sha256}).`]
  if (options.include) lines.push('include:', `  - local: ${q(options.include)}`)
  if (list.units.length === 0) {
    // GitLab refuses a pipeline without jobs: a plan without units gets one that says so.
    lines.push('wave-no-units:', '  script:', `    - echo ${q(`The plan ${list.plan.name} has no units: it runs as one job.`)}`)
    return lines.join('\n') + '\n'
  }

  for (const unit of list.units) {
    lines.push(`${q(`wave-unit-${unit.name}`)}:`)
    if (options.extends) lines.push(`  extends: ${q(options.extends)}`)
    lines.push('  variables:', `    WAVE_PLAN: ${q(list.plan.name)}`, `    UNIT: ${q(unit.name)}`, '  script:', `    - wave run "$WAVE_PLAN" --unit "$UNIT"`)
  }

  return lines.join('\n') + '\n'
}
