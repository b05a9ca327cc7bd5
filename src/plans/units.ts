/**
 * A plan's units (issue 36): an optional `## Units` section splits one approved plan into parts that run
 * as separate jobs, each held to its own scope and checks. This module owns their shape; the contract
 * reader fills it from the plan's Markdown, the approval record binds it, `wave run --unit` and
 * `wave plans merge` read it back.
 */

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
