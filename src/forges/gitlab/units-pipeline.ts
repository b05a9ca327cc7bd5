/**
 * The child pipeline `wave gitlab` leaves for a plan with units it just approved: one job per unit
 * (`wave plans units --format gitlab-pipeline`, each extending the template job `.wave-unit-from-note`
 * of examples/gitlab-ci/wave-unit.gitlab-ci.yml; WAVE_GITLAB_UNITS_EXTENDS and
 * WAVE_GITLAB_UNITS_TEMPLATE name others), written in the job's report folder, `wave-artifacts/units.gitlab-ci.yml` under
 * CI_PROJECT_DIR (or WAVE_GITLAB_UNITS_FILE), for a trigger job's `include: artifact:`. A job whose
 * pipeline always triggers that file (WAVE_GITLAB_UNITS_FILE set) gets one job that only says so for any
 * other outcome (a refusal the recipe ends green on included): GitLab refuses a child pipeline without
 * jobs, a missing artifact fails the trigger, and a child whose only job is manual counts as skipped,
 * which a `strategy: depend` trigger shows as failed. The one job runs and passes.
 */
import {mkdir, writeFile} from 'node:fs/promises'
import path from 'node:path'

import type {ReviewOutcome} from '../../review/steps.js'
import {formatJobList, idlePipeline, pipelineText} from '../../plans/job-matrix.js'

/** The template job each unit's job extends, and the file (in the project) that defines it. */
const UNIT_TEMPLATE = {extends: '.wave-unit-from-note', include: 'wave-unit.gitlab-ci.yml'}

export const UNITS_PIPELINE_FILE = path.join('wave-artifacts', 'units.gitlab-ci.yml')

export async function writeUnitsPipeline(outcome: ReviewOutcome, env: NodeJS.ProcessEnv, cwd: string): Promise<string | undefined> {
  const units = outcome.units ?? []
  const asked = env.WAVE_GITLAB_UNITS_FILE?.trim()
  if (units.length === 0 && !asked) return undefined
  const file = path.resolve(env.CI_PROJECT_DIR?.trim() || cwd, asked || UNITS_PIPELINE_FILE)
  const text =
    units.length > 0 && outcome.plan?.sha256
      ? formatJobList(
          {
            plan: {name: outcome.plan.name, sha256: outcome.plan.sha256},
            recordPath: '',
            units: units.map((name) => ({name, paths: [], verify: []})),
          },
          'gitlab-pipeline',
          {
            extends: env.WAVE_GITLAB_UNITS_EXTENDS?.trim() || UNIT_TEMPLATE.extends,
            include: env.WAVE_GITLAB_UNITS_TEMPLATE?.trim() || UNIT_TEMPLATE.include,
          },
        )
      : pipelineText(idlePipeline('wave:no-units', `wave gitlab: ${outcome.outcome}, no plan units to run.`))
  await mkdir(path.dirname(file), {recursive: true})
  await writeFile(file, text)
  return file
}
