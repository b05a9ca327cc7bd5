/**
 * A run held to its approved contract. The policy refuses file writes outside a strict scope (decide());
 * this watches what the policy cannot see in advance, and does what the model cannot be trusted to:
 * - what each command changed, from the work tree before and after it (worktree.ts), recorded when it
 *   lies outside the scope, and told to the model in the call's result;
 * - the approved checks, run by wave when the model ends its turn, the failing output sent back for
 *   another turn up to `retries` times. The model's work ends before they begin: its background
 *   commands are ended (their process groups gone), and the work tree is read as it is then and again
 *   after the checks. What changed outside the scope since the run began, or since the checks last
 *   ended (a background command's write no command's watch saw), or while the checks ran (code the
 *   model wrote that a check loaded) is a deviation like any other; but what the checks wrote to
 *   git-ignored paths outside the dependencies (caches, reports: check-outputs.ts) is theirs, listed
 *   as `checkOutputs`;
 * - the project's dependencies held as the run began (dependency-guard.ts): a change found there is
 *   named, no check runs on it, and the run fails whatever the scope's enforcement;
 * - the denials, for the report;
 * - the report itself (planned versus actual) and whether the run met its contract.
 */
import type {ApprovalRecord} from './approval.js'
import {divideChecksWrites, outputsByDirectory} from './check-outputs.js'
import {type CheckOptions, failedChecksMessage, notRun, runChecks} from './checks.js'
import {DependencyGuard, dependenciesChangedMessage} from './dependency-guard.js'
import {buildReport, type CheckResult, type CheckRound, checkPassed, checkRound, type Denial, type RunReport, reportProblem} from './report.js'
import type {CheckLogs} from './store.js'
import {describeScope, scopeMatcher} from '../policy/scope.js'
import {DEFAULT_PROTECTED_PATHS, protectedMatcher, protectedPlainPaths} from '../policy/protected.js'
import type {SandboxSettings} from '../base/process/sandbox.js'
import {isDependencyPath} from '../base/workspace/dependencies.js'
import {changedBetween, type WorkTreePlace, type WorkTreeState, WorkTreeWatch} from '../base/workspace/worktree.js'

export const DEFAULT_VERIFY_RETRIES = 2

interface EnforcementOptions {
  record: Pick<ApprovalRecord, 'scope' | 'verify'>
  /** The protected paths in force (policy/protected.ts): a command's change there fails the run. Absent: the defaults. */
  protectedPaths?: readonly string[]
  /** The work tree to watch; absent outside a git repository (only file tools' writes are known then). */
  place?: WorkTreePlace
  /** `--verify-retries`: how many more times the model gets the failing output and another turn. */
  retries?: number
  /** Where and how the checks run: their sandbox is the session's (base/process/sandbox.ts's sandboxSettings), never rebuilt here. */
  checks: Omit<CheckOptions, 'onCheck' | 'outputFile' | 'sandbox'> & {onCheck?: CheckOptions['onCheck']; sandbox: NonNullable<CheckOptions['sandbox']>}
  /** Where each round's whole output goes (store.ts, checkLogs); absent, only the kept output is. */
  logs?: CheckLogs
  /** What an earlier part of this run recorded (`--resume`): deviations and denials go on from it. */
  earlier?: RunReport
  /**
   * Ends the model's work before the checks: every background command, its process group gone. Says
   * which were still running, and which left a process that would not die (then no check runs).
   */
  endWork?(): Promise<{ended: string[]; survived: string[]}>
}

export class Enforcement {
  /** Paths changed outside the scope, workspace-relative, as they were seen. */
  readonly deviations = new Set<string>()
  /** Of those, the ones that changed while the approved checks ran. */
  readonly duringChecks = new Set<string>()
  /** The real paths the file tools wrote (their results say so): one inside the dependencies fails the run. */
  private readonly written = new Set<string>()
  /** Ignored paths the checks wrote (caches, reports): theirs, not the model's. */
  readonly checkOutputs = new Set<string>()
  /** Ignored paths the hooks wrote as they ran (a formatter's log): theirs, not the model's. */
  readonly hookOutputs = new Set<string>()
  /** Protected paths the scope does not name that a command or a check changed: each fails the run. */
  readonly protectedChanges = new Set<string>()
  /** Entries of the project's dependencies found changed since the run began. */
  readonly dependencyChanges = new Set<string>()
  readonly denials: Denial[] = []
  /** The newest results of the checks; empty until they ran. */
  checks: CheckResult[] = []
  /** Every round of the checks, the stopped run's (`--resume`) first: the report names each round's logs. */
  private readonly checkRounds: CheckRound[] = []
  /** Rounds run by this session: the retries count them. */
  private rounds = 0
  private readonly inScope?: (relative: string) => boolean
  /** The protected entry holding a path the scope does not name, or undefined. */
  private readonly guarded: (relative: string) => string | undefined
  /** The input of each call, by id, until its result says whether it was denied. */
  private readonly calls = new Map<string, {name: string; input: unknown}>()
  private readonly watch?: WorkTreeWatch
  /** The work tree as the run began, before any tool ran (awaited through ready()). */
  private readonly baseline?: Promise<WorkTreeState>
  /** The work tree as the checks last left it: the model's later changes are measured from it, not what the checks wrote. */
  private afterChecks?: WorkTreeState
  /** The project's dependencies held as the run began; absent without checks or a work tree. */
  private readonly dependencies?: DependencyGuard
  /**
   * What the readings around a command are limited to: without a scope to hold writes to, only the
   * protected paths can fail a run through a command, so only they are read (absent: the whole tree).
   */
  private readonly commandPaths?: string[]

  constructor(private readonly options: EnforcementOptions) {
    const scope = options.record.scope
    if (scope && scope.enforce !== 'off') this.inScope = scopeMatcher(scope.paths)
    const protectedPaths = options.protectedPaths ?? DEFAULT_PROTECTED_PATHS
    this.guarded = protectedMatcher(protectedPaths, scope?.paths)
    if (!this.inScope) this.commandPaths = protectedPlainPaths(protectedPaths)
    for (const file of options.earlier?.protectedChanged ?? []) this.protectedChanges.add(file)
    for (const file of options.earlier?.outOfScope ?? []) if (this.inScope && !this.inScope(file)) this.deviations.add(file)
    this.denials.push(...(options.earlier?.denials ?? []))
    for (const file of options.earlier?.outOfScopeDuringChecks ?? []) this.duringChecks.add(file)
    for (const output of options.earlier?.checkOutputs ?? []) this.checkOutputs.add(output)
    for (const file of options.earlier?.dependencyChanges ?? []) this.dependencyChanges.add(file)
    for (const output of options.earlier?.hookOutputs ?? []) this.hookOutputs.add(output)
    this.checkRounds.push(...(options.earlier?.checkRounds ?? []))
    // Protected paths hold in every mode and enforcement: with a work tree, commands are always watched.
    if (options.place) {
      this.watch = new WorkTreeWatch(options.place)
      this.baseline = this.watch.read()
      // The dependencies are found in that same first reading: no second walk of the tree.
      if ((options.record.verify?.length ?? 0) > 0)
        this.dependencies = new DependencyGuard(options.place.workspace, this.baseline, options.checks.sandbox.enabled)
    }
  }

  /** Resolves once the work tree and the dependencies as the run began are read: to be awaited before the first tool runs. */
  async ready(): Promise<void> {
    await Promise.all([this.baseline, this.dependencies?.ready()])
  }

  get strict(): boolean {
    return this.options.record.scope?.enforce === 'strict'
  }

  /** The sandbox the model's commands run in, the project's dependencies read-only in it once they are known (before the first tool). */
  commandSandbox<T extends SandboxSettings>(sandbox: T): T {
    const dependencies = this.dependencies
    return dependencies ? {...sandbox, frozen: () => dependencies.forCommands()} : sandbox
  }

  /** Whether commands are watched: whenever there is a work tree (protected paths hold without a scope too). */
  get watchesCommands(): boolean {
    return this.options.place !== undefined
  }

  /** Before a command runs: the work tree as it is. */
  async beforeCommand(): Promise<WorkTreeState | undefined> {
    return this.watch && this.readAroundCommand(this.watch)
  }

  /** A reading around a command, before and after it the same (one of the protected paths compares only with another). */
  private readAroundCommand(watch: WorkTreeWatch): Promise<WorkTreeState> {
    return this.commandPaths ? watch.readPaths(this.commandPaths) : watch.read()
  }

  /**
   * After a command ran: what it changed outside the scope, recorded, and a note for the model (what
   * the call's result gets appended), or undefined when it stayed inside.
   */
  async afterCommand(before: WorkTreeState | undefined): Promise<string | undefined> {
    if (!before) return undefined
    const after = await this.readAroundCommand(this.watch!)
    const {guarded, outside} = this.compare(before, after)
    if (guarded.length > 0) {
      return `wave: this command changed protected paths, which no run may change unless the approved Scope names them: ${guarded.join(', ')}. This fails the run. Stop here, and report the change you needed in your final answer.`
    }

    if (outside.length === 0) return undefined
    const scope = describeScope(this.options.record.scope!.paths)
    const files = outside.join(', ')
    return this.strict
      ? `wave: this command changed files outside the approved scope (${scope}): ${files}. The scope is strict, so this fails the run. Stop here, and report the deviation (which files, and why) in your final answer.`
      : `wave: this command changed files outside the approved scope (${scope}): ${files}. Recorded as a deviation from the plan; stay within the scope where you can.`
  }

  /** Every tool call and result the session reports: denials are kept for the report. */
  observe(event: {type: string; id?: string; name?: string; input?: unknown; denied?: boolean; content?: string; changed?: string}): void {
    if (event.type === 'tool_call' && event.id) this.calls.set(event.id, {input: event.input, name: event.name ?? ''})
    if (event.type === 'tool_result' && event.changed) this.written.add(event.changed)
    if (event.type !== 'tool_result' || !event.id) return
    const call = this.calls.get(event.id)
    this.calls.delete(event.id)
    if (!event.denied || !call) return
    this.denials.push({reason: (event.content ?? '').replace(/^Permission denied: /, ''), summary: summaryOf(call.input), tool: call.name})
  }

  /**
   * The model ended its turn: its work ends (background commands ended, the work tree compared with
   * the run's start), then the checks run, on a tree read again after them. `beforeChecks` runs between
   * the two, when there are checks. Returns what the model is told for another turn when some failed
   * and retries are left, else undefined (the run ends, and `problem()` says whether it met them).
   */
  async onEndTurn(beforeChecks?: () => Promise<void>): Promise<string | undefined> {
    const work = (await this.options.endWork?.()) ?? {ended: [], survived: []}
    const since = this.afterChecks ?? (await this.baseline)
    const atChecks = since && (await this.watch!.read())
    if (since && atChecks) this.compare(since, atChecks)

    const verify = this.options.record.verify ?? []
    if (verify.length === 0) return undefined
    await beforeChecks?.()
    // Numbered after every round already beside the plan or in the report: no two rounds share a number or a log.
    const round = Math.max(this.options.logs?.after ?? 0, ...this.checkRounds.map((earlier) => earlier.round)) + 1
    this.checks = await this.runChecks(verify, work.survived, round)
    this.checkRounds.push(checkRound(round, this.checks))
    if (atChecks) {
      const after = await this.watch!.read()
      this.recordProtected(changedBetween(atChecks, after))
      this.afterTheChecks(atChecks, after)
    }

    this.rounds++
    if (this.checks.every(checkPassed)) return undefined
    // Dependencies changed: no turn can make a check's verdict rest on them again.
    if (this.dependencyChanges.size > 0) return undefined
    // A strict scope already left: no turn can undo that, so none is spent on the checks.
    if ((this.strict && this.deviations.size > 0) || this.protectedChanges.size > 0) return undefined
    const retries = this.options.retries ?? DEFAULT_VERIFY_RETRIES
    if (this.rounds > retries) return undefined
    const ended = work.ended.length > 0 ? `wave ended your background commands (${work.ended.join(', ')}) before running the checks.\n\n` : ''
    return ended + failedChecksMessage(this.checks, {attempt: this.rounds, of: retries})
  }

  /** The checks, unless a background process survived or the dependencies changed; held to the dependencies as they were. */
  private async runChecks(verify: ReadonlyArray<{command: string}>, survived: string[], round: number): Promise<CheckResult[]> {
    if (survived.length > 0) return notRun(verify, `a process of background task ${survived.join(', ')} would not end`)
    const changed = this.dependencies?.writtenInto(this.written) ?? []
    for (const file of changed) this.dependencyChanges.add(file)
    if (changed.length > 0) return notRun(verify, dependenciesChangedMessage(changed))
    const {logs} = this.options
    const base: CheckOptions = {...this.options.checks, ...(logs ? {outputFile: (index: number) => logs.path(round, index)} : {})}
    const options = this.dependencies
      ? await this.dependencies.checkOptions(base, (found) => {
          for (const file of found) this.dependencyChanges.add(file)
        })
      : base
    return runChecks(verify, options)
  }

  /** What changed between two readings, compared once: outside the scope (deviations) and in protected paths the scope does not name, each recorded. */
  private compare(before: WorkTreeState, after: WorkTreeState): {guarded: string[]; outside: string[]} {
    const changed = changedBetween(before, after)
    return {guarded: this.recordProtected(changed), outside: this.record(changed)}
  }

  /** Whether hooks' writes need telling apart: there is a scope to hold the model to, and a work tree to watch. */
  get watchesHooks(): boolean {
    return this.inScope !== undefined && this.watch !== undefined
  }

  /**
   * Around a firing of hooks (session-hooks.ts): what they wrote where git ignores it, outside the
   * dependencies, is theirs (`hookOutputs`, never a deviation, later readings included); anything else
   * they changed counts as a command's change does, since a hook may run code the model wrote.
   */
  async aroundHooks<T>(run: () => Promise<T>): Promise<T> {
    const before = await this.watch!.read()
    try {
      return await run()
    } finally {
      const {changes, outputs} = divideChecksWrites(before, await this.watch!.read(), isDependencyPath)
      for (const output of outputs) this.hookOutputs.add(output)
      this.record(changes)
    }
  }

  /** Whether a path is (inside) one the hooks wrote where git ignores it. */
  private hookWrote(file: string): boolean {
    return [...this.hookOutputs].some((output) => output === file || output === `${file}/` || (output.endsWith('/') && file.startsWith(output)))
  }

  private record(changed: string[]): string[] {
    if (!this.inScope) return []
    const outside = changed.filter((file) => !this.inScope!(file) && !this.hookWrote(file))
    for (const file of outside) this.deviations.add(file)
    return outside
  }

  /** What the checks changed: their outputs kept apart, the rest the model's (deviations made while they ran). */
  private afterTheChecks(atChecks: WorkTreeState, after: WorkTreeState): void {
    const {changes, outputs} = divideChecksWrites(atChecks, after, isDependencyPath)
    for (const output of outputs) this.checkOutputs.add(output)
    for (const file of this.record(changes)) this.duringChecks.add(file)
    this.afterChecks = after
  }

  /** Of the paths changed, those in protected paths the scope does not name, recorded. */
  private recordProtected(changed: string[]): string[] {
    const guarded = changed.filter((file) => this.guarded(file) !== undefined)
    for (const file of guarded) this.protectedChanges.add(file)
    return guarded
  }

  /** What the model would be told of the failing checks now (the run ends with it: `--resume` goes on from it). */
  failingMessage(): string | undefined {
    return this.checks.some((check) => !checkPassed(check)) ? failedChecksMessage(this.checks) : undefined
  }

  report(changed: string[]): RunReport {
    return buildReport({
      changed,
      checkOutputs: outputsByDirectory(this.checkOutputs),
      dependencyChanges: [...this.dependencyChanges],
      hookOutputs: outputsByDirectory(this.hookOutputs),
      checks: this.checks,
      checkRounds: this.checkRounds,
      denials: this.denials,
      deviations: this.deviations,
      duringChecks: this.duringChecks,
      protectedChanges: this.protectedChanges,
      scope: this.options.record.scope,
    })
  }

  /** Why the run did not meet its approved checks, or undefined when it did. */
  problem(report: RunReport): string | undefined {
    return reportProblem(report)
  }
}

/** What a call was about, in a few words: its file, command, URL or pattern. */
function summaryOf(input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>
  for (const key of ['file_path', 'command', 'url', 'path', 'pattern']) {
    if (typeof fields[key] === 'string') return (fields[key] as string).slice(0, 200)
  }

  return JSON.stringify(input ?? {}).slice(0, 200)
}
