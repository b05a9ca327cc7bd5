/**
 * The job list for a CI system (`wave plans units`): an approved plan's bound units as a GitHub Actions
 * matrix, a GitLab `parallel:matrix` or child pipeline, JSON or one name a line. Only an approved plan
 * has a job list (exit 3 otherwise), and only for the bytes approved (exit 4): the list a CI system fans
 * out over is the one the approver bound.
 */
import {type ApprovalRecord, approvalPathFor, assertApproved, readApproval} from './approval.js'
import {planNameOf, readPlanFile} from './store.js'

export const MATRIX_FORMATS = ['json', 'github-matrix', 'gitlab', 'gitlab-pipeline', 'lines'] as const
type MatrixFormat = (typeof MATRIX_FORMATS)[number]

type BoundUnits = NonNullable<ApprovalRecord['units']>

interface JobList {
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
interface PipelineOptions {
  extends?: string
  include?: string
}

/**
 * The job list in one format. What YAML reads is built as data and written as JSON, which is YAML too
 * (GitLab reads it as such): a unit named `1.0`, `true` or `null` stays a string, whatever its name holds,
 * with no quoting of our own. An empty list (a plan without units) is an empty matrix.
 */
export function formatJobList(list: JobList, format: Exclude<MatrixFormat, 'json'>, options: PipelineOptions = {}): string {
  const names = list.units.map((unit) => unit.name)
  switch (format) {
    case 'github-matrix': {
      // One line, ready for `fromJSON` in a job's `strategy.matrix`.
      return JSON.stringify({include: names.map((unit) => ({unit}))})
    }

    case 'gitlab': {
      // A snippet pasted into a job, so block style a reader knows; the one value, the list, is a JSON array (a YAML flow sequence).
      return `parallel:\n  matrix:\n    - UNIT: ${JSON.stringify(names)}\n`
    }

    case 'gitlab-pipeline': {
      return pipelineText(gitlabPipeline(list, options))
    }

    case 'lines': {
      return names.map((name) => `${name}\n`).join('')
    }
  }
}

/** A GitLab CI file's content: its top-level keys (`include`, the jobs) and what each holds. */
export type PipelineDocument = Record<string, unknown>

/** A child pipeline written for GitLab: JSON, which GitLab reads as the YAML it is. */
export const pipelineText = (pipeline: PipelineDocument): string => `${JSON.stringify(pipeline, null, 2)}\n`

/**
 * A child pipeline that runs nothing, saying why in its one job: GitLab refuses a pipeline without jobs.
 * The words are a variable the job echoes, so that nothing in them is ever read by the shell.
 */
export function idlePipeline(job: string, why: string, extra: Record<string, unknown> = {}): PipelineDocument {
  return {[job]: {...extra, script: ['echo "$WAVE_NOTE"'], variables: {WAVE_NOTE: why}}}
}

/** A child pipeline: one job per unit, each running `wave run <plan> --unit NAME`. */
function gitlabPipeline(list: JobList, options: PipelineOptions): PipelineDocument {
  const pipeline: PipelineDocument = options.include ? {include: [{local: options.include}]} : {}
  if (list.units.length === 0) return {...pipeline, ...idlePipeline('wave-no-units', `The plan ${list.plan.name} has no units: it runs as one job.`)}
  for (const unit of list.units) {
    pipeline[`wave-unit-${unit.name}`] = {
      ...(options.extends ? {extends: options.extends} : {}),
      variables: {UNIT: unit.name, WAVE_PLAN: list.plan.name},
      script: ['wave run "$WAVE_PLAN" --unit "$UNIT"'],
    }
  }

  return pipeline
}
