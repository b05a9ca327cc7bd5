/**
 * A plan's units (issue 36): an optional `## Units` section splits one approved plan into parts that run
 * as separate jobs, each held to its own scope and checks. This module owns their shape; the contract
 * reader fills it from the plan's Markdown, the approval record binds it, `wave run --unit` and
 * `wave plans merge` read it back.
 */
import {coveredBy, mayOverlap} from '../policy/scope-overlap.js'
import {describeScope} from '../policy/scope.js'

/** One unit as the plan states it: a `### <name>` under `## Units`, with `#### Scope` and `#### Verification`. */
export interface PlanUnit {
  /** Unique in the plan, usable as a CI job name (letters, digits, `-`, `_`, `.`). */
  name: string
  /** Workspace-relative paths or globs, inside the plan's scope and disjoint from every other unit's. */
  scope: string[]
  /** The unit's own checks, one per bullet's first code span. */
  verify: string[]
  /** The unit's instructions: its section's text (what the unit's job is told to do). */
  instructions: string
}

/** A unit name: it becomes a CI job's name and matrix value, and a file name beside the plan. */
const UNIT_NAME = /^[A-Za-z0-9][\w.-]{0,63}$/

/** A unit as the contract reads it: where its heading is, for messages naming it. */
export interface ReadUnit extends PlanUnit {
  line: number
}

/**
 * What is wrong with a plan's units, one line each naming the units and paths at fault: a name that
 * cannot name a job, a name twice (letter case aside: results and patches are files), a unit without a
 * path, a unit path the plan's scope does not cover (`planScope` absent: the plan has no scope, any path
 * is in it), two units that can change the same file (policy/scope-overlap.ts says how that is shown).
 * `wave approve` refuses a plan with any of them.
 */
export function unitProblems(units: readonly ReadUnit[], planScope: readonly string[] | undefined): string[] {
  const problems: string[] = []
  const first = new Map<string, ReadUnit>()
  for (const unit of units) {
    if (!UNIT_NAME.test(unit.name)) {
      problems.push(
        `Unit "${unit.name}" (line ${unit.line}): a unit name is up to 64 letters, digits, -, _ and . starting with a letter or digit (it names a CI job).`,
      )
    }

    const twin = first.get(unit.name.toLowerCase())
    if (twin) problems.push(`Two units are named ${unit.name} (lines ${twin.line} and ${unit.line}): each unit's name is its own.`)
    else first.set(unit.name.toLowerCase(), unit)
    if (unit.scope.length === 0) problems.push(`Unit ${unit.name} (line ${unit.line}) lists no path in its #### Scope: every unit names at least one.`)
  }

  if (planScope) problems.push(...unitsOutside(units, planScope, "the plan's ## Scope"))

  for (const [index, unit] of units.entries()) {
    for (const other of units.slice(index + 1)) {
      const pair = unit.scope.flatMap((entry) => other.scope.filter((theirs) => mayOverlap(entry, theirs)).map((theirs) => [entry, theirs]))
      if (pair.length === 0) continue
      const [mine, theirs] = pair[0]
      problems.push(
        `Units ${unit.name} and ${other.name} can change the same files: ${unit.name}'s ${mine} and ${other.name}'s ${theirs} overlap. Give each unit paths no other unit's cover.`,
      )
    }
  }

  return problems
}

/** Each unit path the scope (`which`: the plan's, or the approver's --scope) does not cover, one line each. */
export function unitsOutside(units: readonly PlanUnit[], scope: readonly string[], which: string): string[] {
  return units.flatMap((unit) =>
    unit.scope
      .filter((entry) => !coveredBy(scope, entry))
      .map((entry) => `Unit ${unit.name}'s scope ${entry} is not inside ${which} (${describeScope(scope)}).`),
  )
}
