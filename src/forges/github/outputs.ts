/**
 * The step's outputs (`$GITHUB_OUTPUT`) `wave github` writes itself: for a plan with units just
 * approved, `has-units=true` and `units`, the GitHub Actions matrix (`{"include":[{"unit":"api"},...]}`,
 * one line for `fromJSON`) that the workflow's next jobs fan out over, and `plan-path`, the approved plan's
 * path; any other outcome `has-units=false`, so a job with `if: ... has-units == 'true'` is skipped (an
 * empty matrix is an error in GitHub Actions). Written only where the variable names a file.
 */
import {appendFile} from 'node:fs/promises'

import type {ReviewOutcome} from '../../review/steps.js'

export async function writeStepOutputs(file: string | undefined, outcome: ReviewOutcome): Promise<void> {
  if (!file) return
  const units = outcome.units ?? []
  const lines = [`has-units=${units.length > 0}`]
  if (units.length > 0) {
    lines.push(`units=${JSON.stringify({include: units.map((unit) => ({unit}))})}`)
    if (outcome.planPath) lines.push(`plan-path=${outcome.planPath}`)
  }

  // One `name=value` line each: unit names are letters, digits, -, _ and ., and a path has no newline.
  await appendFile(file, lines.map((line) => `${line.replaceAll(/[\r\n]/g, ' ')}\n`).join(''))
}
