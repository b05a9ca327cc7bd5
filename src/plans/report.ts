/**
 * Planned versus actual: what a run of an approved plan reports, like Terraform's "Apply complete!"
 * line. The plan's scope against the files the run changed, the checks wave ran, and the calls the
 * policy refused. Shown in every result (JSON, the stream's `result`, the text tally, the job summary,
 * the sticky comment) and kept in the plan's state for `wave plans <name>`.
 */
import {z} from 'zod'

import {scopeMatcher} from '../policy/scope.js'

const checkSchema = z.lazy(() =>
  z.object({
    /** The command, as the approval record lists it. */
    command: z.string(),
    durationMs: z.number(),
    exitCode: z.number().nullable(),
    /**
     * The kept output (checks.ts, evidence.ts): its head, its tail and the lines that look like failures,
     * numbered, within a cap. Named for what it held before (its last 4,000 characters): records keep it.
     */
    outputTail: z.string(),
    /** The file holding the whole output, beside the plan's transcript (the newest round's). */
    outputFile: z.string().optional(),
  }),
)

/**
 * One round of the checks (wave runs them each time the model ends its turn: a failing round, then the
 * retry's): how each ended and where its whole output is. Every round's, so a failing round's evidence
 * stays named after the retry that passed.
 */
const checkRoundSchema = z.lazy(() =>
  z.object({
    /** The round's number, as its logs are named (`<plan>.check-<round>-<N>.log`): a resumed run's go on from the stopped run's. */
    round: z.number().int().positive(),
    checks: z.array(
      z.object({
        command: z.string(),
        exitCode: z.number().nullable(),
        /** The log of its whole output (absent when it did not run, or the file could not be written). */
        outputFile: z.string().optional(),
      }),
    ),
  }),
)

const denialSchema = z.lazy(() =>
  z.object({
    reason: z.string(),
    /** What the call was about: its file, command or URL. */
    summary: z.string(),
    tool: z.string(),
  }),
)

export const runReportSchema = z.lazy(() =>
  z.object({
    /** Every file the run changed, workspace-relative. */
    changed: z.array(z.string()),
    checks: z.array(checkSchema),
    /** Every round of the checks this run (and the stopped run it resumed) ran, oldest first; the last is `checks` (absent when none ran). */
    checkRounds: z.array(checkRoundSchema).optional(),
    /**
     * What the approved checks wrote where git ignores it (caches, reports), by directory: theirs, not
     * the model's, so never outside the scope, and never delivered (absent when they wrote nothing).
     */
    checkOutputs: z.array(z.string()).optional(),
    /** What the hooks wrote where git ignores it (a formatter's log), by directory: theirs, not the model's (absent when none). */
    hookOutputs: z.array(z.string()).optional(),
    denials: z.array(denialSchema),
    /**
     * Entries of the project's dependencies (node_modules, a virtualenv, vendored tools) changed since
     * the run began: no check ran on them, and the run fails whatever the scope (absent when none did).
     */
    dependencyChanges: z.array(z.string()).optional(),
    /** How the scope was held to; null with no scope. */
    enforce: z.enum(['warn', 'strict', 'off']).nullable().default(null),
    /** Changes outside the scope: files changed outside it, and what commands changed outside it (even if undone later). */
    outOfScope: z.array(z.string()),
    /** Of those, what changed while the approved checks ran (absent when nothing did). */
    outOfScopeDuringChecks: z.array(z.string()).optional(),
    /** Protected paths (policy/protected.ts) the scope does not name that a command or check changed: the run fails (absent when none). */
    protectedChanged: z.array(z.string()).optional(),
    /** The approved scope; null when the approval binds none (a record from before plans were contracts). */
    scope: z.array(z.string()).nullable(),
    /** Scope entries no change matched. */
    untouched: z.array(z.string()),
  }),
)

export type RunReport = z.infer<typeof runReportSchema>

declare module '../base/errors.js' {
  /** What a run of a plan adds to the details every failure may carry (agent/outcome.ts adds a session's). */
  interface FailureDetails {
    /** Planned versus actual as it stopped (exit 7 above all: which checks failed). */
    report?: RunReport
  }
}
export type CheckResult = z.infer<typeof checkSchema>
export type CheckRound = z.infer<typeof checkRoundSchema>

/** A round as the report keeps it: each check's command, exit code and log, the kept output left to `checks`. */
export const checkRound = (round: number, checks: CheckResult[]): CheckRound => ({
  checks: checks.map(({command, exitCode, outputFile}) => ({command, exitCode, ...(outputFile ? {outputFile} : {})})),
  round,
})

export const checkPassed = (check: Pick<CheckResult, 'exitCode'>) => check.exitCode === 0

/** How a check ended, in a few words: "passed", "failed (exit 1)", "did not finish". */
export function checkOutcome(check: Pick<CheckResult, 'exitCode'>): string {
  if (check.exitCode === 0) return 'passed'
  return check.exitCode === null ? 'did not finish' : `failed (exit ${check.exitCode})`
}
export type Denial = z.infer<typeof denialSchema>

interface ReportInput {
  scope?: {paths: string[]; enforce: 'warn' | 'strict' | 'off'}
  changed: string[]
  /** Ignored paths the checks wrote, by directory (check-outputs.ts). */
  checkOutputs?: string[]
  /** Entries of the dependencies changed since the run began (dependency-guard.ts). */
  dependencyChanges?: string[]
  /** Ignored paths the hooks wrote, by directory (enforcement.ts, aroundHooks). */
  hookOutputs?: string[]
  /** Changes commands made outside the scope, recorded as they happened. */
  deviations?: Iterable<string>
  /** Of the deviations, those made while the checks ran. */
  duringChecks?: Iterable<string>
  checks: CheckResult[]
  /** Every round of the checks, oldest first. */
  checkRounds?: CheckRound[]
  denials: Denial[]
  /** Protected paths changed (enforcement.ts). */
  protectedChanges?: Iterable<string>
}

export function buildReport(input: ReportInput): RunReport {
  const changed = [...new Set(input.changed)].sort()
  const guarded = [...new Set(input.protectedChanges ?? [])].sort()
  const outputs = {
    ...(input.checkOutputs?.length ? {checkOutputs: [...input.checkOutputs]} : {}),
    ...(guarded.length > 0 ? {protectedChanged: guarded} : {}),
    ...(input.dependencyChanges?.length ? {dependencyChanges: [...input.dependencyChanges].sort()} : {}),
    ...(input.hookOutputs?.length ? {hookOutputs: [...input.hookOutputs]} : {}),
  }
  const checks = {checks: input.checks, ...(input.checkRounds?.length ? {checkRounds: [...input.checkRounds]} : {})}
  const scope = input.scope
  if (!scope) return {changed, ...checks, ...outputs, denials: input.denials, enforce: null, outOfScope: [], scope: null, untouched: []}
  const inScope = scopeMatcher(scope.paths)
  const outOfScope = new Set([...changed.filter((file) => !inScope(file)), ...(input.deviations ?? [])])
  const untouched = scope.paths.filter((entry) => {
    const matches = scopeMatcher([entry])
    return !changed.some((file) => matches(file))
  })
  const duringChecks = [...new Set(input.duringChecks ?? [])].sort()
  return {
    changed,
    ...checks,
    ...outputs,
    denials: input.denials,
    enforce: scope.enforce,
    outOfScope: [...outOfScope].sort(),
    ...(duringChecks.length > 0 ? {outOfScopeDuringChecks: duringChecks} : {}),
    scope: [...scope.paths],
    untouched,
  }
}

/** Whether the run met its approved checks: every check passed and, under a strict scope, nothing left it. */
export function reportProblem(report: RunReport): string | undefined {
  const failing = report.checks.filter((check) => !checkPassed(check))
  const problems: string[] = []
  if (report.dependencyChanges?.length) problems.push(`the project's dependencies changed: ${fileList(report.dependencyChanges)}`)
  if (failing.length > 0) problems.push(`${failing.map((check) => `${check.command} ${checkOutcome(check)}`).join(', ')}`)
  if (report.protectedChanged?.length) problems.push(`changed protected paths: ${fileList(report.protectedChanged)}`)
  if (report.enforce === 'strict' && report.outOfScope.length > 0) problems.push(`changed outside the strict scope: ${fileList(report.outOfScope)}`)
  return problems.length > 0 ? problems.join('; ') : undefined
}

export const fileList = (files: string[], most = 3) =>
  files.length > most ? `${files.slice(0, most).join(', ')}, and ${files.length - most} more` : files.join(', ')
