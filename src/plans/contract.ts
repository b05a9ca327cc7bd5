/**
 * A plan is a contract: its `## Scope` section lists the workspace paths or globs the run may change,
 * its `## Verification` section the commands that check the work. This module reads them out of the
 * plan's Markdown with marked's lexer (a real Markdown reader: a heading inside a code block, a nested
 * list or a command with backticks in it read as a person reading the plan would read them).
 */
import {existsSync} from 'node:fs'
import {readFile} from 'node:fs/promises'
import path from 'node:path'

import type {Token, Tokens} from 'marked'

import {usageError, type WaveError} from '../base/errors.js'
import {type ScopeEnforcement, scopeMatcher} from '../policy/scope.js'
import {recordRevision} from './revisions.js'
import {type PlanUnit, type ReadUnit, unitProblems, unitsOutside} from './units.js'

export interface PlanContract {
  /** Workspace-relative paths or globs, as the plan lists them (a leading `./` dropped). */
  scope: string[]
  /** Commands, one per bullet, each the bullet's first `code span`. */
  verify: string[]
  /** Which of the sections the plan has at all (a section may be there and list nothing). */
  sections: {scope: boolean; verify: boolean; units?: boolean}
  /** The plan's `## Units` (plans/units.ts), in the plan's order; empty: the plan runs as one job. */
  units: PlanUnit[]
  /**
   * What is wrong with the units (unitProblems): `wave plan` shows them, `wave approve` (and every other
   * approval) refuses the plan while there are any.
   */
  unitErrors: string[]
  /** Bullets that were left out, and why (an absolute path, a path climbing out with `..`). */
  problems: string[]
  /**
   * What a reviewer should know before approving: workspace files the plan's Changes, New files or steps
   * name that its `## Scope` does not cover (a run held to the scope would be refused them).
   */
  warnings: string[]
}

/** The sections whose code spans name the files a change touches. */
const CHANGES = /^(?:changes|new files|steps|implementation)\b/i
/** A code span that reads as a workspace file: a relative path with a file name ending in an extension. */
const FILE_PATH = /^(?:\.\/)?(?:[\w.@-]+\/)*[\w@-][\w.@-]*\.[A-Za-z0-9]{1,8}$/

const SCOPE = /^scope\b/i
/** The units section's title, exactly: `### Units of work` under Changes is not it. */
const UNITS = /^units:?$/i
const VERIFY = /^verification\b/i
/** A bullet saying the section is empty on purpose. */
const NOTHING = /^(?:_?none_?|nothing|n\/a|-)\.?$/i

/** Where a plan's contract is read: the workspace whose files a bare name (no separator) must be to count as a path. */
interface ContractPlace {
  workspace?: string
}

/**
 * The contract a plan's text states. Loads marked on first use: only the commands that read a contract pay for it.
 * A code span in the Changes counts as a file only when it looks like one of the repository's paths: it
 * has a separator (`src/a.ts`), or it is a file that exists in `place.workspace` (`README.md`); an
 * identifier in prose such as `t.throws` or `path.join` is neither, and raises no scope warning.
 */
export async function parseContract(text: string, place: ContractPlace = {}): Promise<PlanContract> {
  // marked's lexer through its Marked class: the one export of the vendored module (scripts/bundle.js).
  const {Marked} = await import('marked')
  const tokens = new Marked().lexer(text)
  const contract: PlanContract = {
    problems: [],
    scope: [],
    sections: {scope: false, verify: false},
    unitErrors: [],
    units: [],
    verify: [],
    warnings: [],
  }
  let section: 'scope' | 'verify' | 'changes' | undefined
  let depth = 0
  // Where each section's heading is (its line): a second one is refused, naming both.
  const seen: Partial<Record<'scope' | 'verify' | 'units', number>> = {}
  let line = 1
  const named: string[] = []
  const units = new UnitsReader()
  for (const token of tokens) {
    const at = line
    line += (token.raw.match(/\n/g) ?? []).length
    // Inside ## Units, its headings and text are the units' own: a unit's #### Scope is not the plan's.
    if (units.take(token, at)) continue
    if (token.type === 'heading' && (token as Tokens.Heading).depth >= 2 && UNITS.test((token as Tokens.Heading).text.trim())) {
      if (seen.units !== undefined) throw twoSections('units', seen.units, at)
      seen.units = at
      contract.sections.units = true
      units.open((token as Tokens.Heading).depth)
      section = undefined
      continue
    }

    if (token.type === 'heading') {
      const heading = token as Tokens.Heading
      const title = heading.text.trim()
      if (heading.depth >= 2 && (SCOPE.test(title) || VERIFY.test(title) || CHANGES.test(title))) {
        section = SCOPE.test(title) ? 'scope' : VERIFY.test(title) ? 'verify' : 'changes'
        if (section !== 'changes') {
          const first = seen[section]
          if (first !== undefined) throw twoSections(section, first, at)
          seen[section] = at
        }
        depth = heading.depth
        if (section !== 'changes') contract.sections[section] = true
      } else if (section && heading.depth <= depth) {
        section = undefined
      }

      continue
    }

    if (section === 'changes') {
      for (const span of codeSpans([token])) {
        const file = span.trim().replace(/^(?:\.\/)+/, '')
        if (FILE_PATH.test(span.trim()) && !file.includes('..') && !named.includes(file)) named.push(file)
      }

      continue
    }

    if (!section || token.type !== 'list') continue
    for (const item of (token as Tokens.List).items) {
      if (section === 'verify') {
        const command = firstCodeSpan(item.tokens)?.trim()
        if (command && !contract.verify.includes(command)) contract.verify.push(command)
        continue
      }

      const entry = scopeEntry(item)
      if (entry === undefined) continue
      const problem = scopeProblem(entry)
      if (problem) contract.problems.push(problem)
      else if (!contract.scope.includes(entry)) contract.scope.push(entry)
    }
  }

  if (contract.sections.scope) {
    const covered = scopeMatcher(contract.scope)
    const outside = named.filter((file) => looksLikeRepositoryPath(file, place.workspace) && !covered(file))
    if (outside.length > 0) contract.warnings.push(uncoveredWarning(outside))
  }

  const read = units.close()
  contract.units = read.map(({line: _line, ...unit}) => unit)
  contract.unitErrors = [...units.problems, ...unitProblems(read, contract.sections.scope ? contract.scope : undefined)]
  if (contract.sections.units && read.length === 0)
    contract.unitErrors.push('The plan has a ## Units section with no unit in it: give each unit a ### <name> heading.')
  return contract
}

/**
 * Reads a `## Units` section, token by token: each heading one level below it starts a unit (its name),
 * whose `#### Scope` and `#### Verification` subsections are read as the plan's own are, and whose other
 * text is its instructions. A heading at the section's level or above ends it.
 */
class UnitsReader {
  readonly problems: string[] = []
  private depth: number | undefined
  private units: Array<ReadUnit & {text: string[]}> = []
  private sub: {kind: 'scope' | 'verify'; depth: number} | undefined

  open(depth: number): void {
    this.depth = depth
  }

  /** Whether the token belongs to the units section (and was read). */
  take(token: Token, line: number): boolean {
    if (this.depth === undefined) return false
    const unit = this.units.at(-1)
    if (token.type === 'heading') {
      const heading = token as Tokens.Heading
      const title = heading.text.trim()
      if (heading.depth <= this.depth) {
        this.depth = undefined
        return false
      }

      if (heading.depth === this.depth + 1) {
        this.sub = undefined
        // A name in backticks reads as the name.
        this.units.push({instructions: '', line, name: title.replace(/^`(.*)`$/, '$1').trim(), scope: [], text: [], verify: []})
        return true
      }

      if (unit && heading.depth === this.depth + 2 && (SCOPE.test(title) || VERIFY.test(title))) {
        this.sub = {depth: heading.depth, kind: SCOPE.test(title) ? 'scope' : 'verify'}
        return true
      }

      if (this.sub && heading.depth <= this.sub.depth) this.sub = undefined
    }

    if (!unit) return true
    if (!this.sub) {
      unit.text.push(token.raw)
      return true
    }

    if (token.type !== 'list') return true
    for (const item of (token as Tokens.List).items) {
      if (this.sub.kind === 'verify') {
        const command = firstCodeSpan(item.tokens)?.trim()
        if (command && !unit.verify.includes(command)) unit.verify.push(command)
        continue
      }

      const entry = scopeEntry(item)
      if (entry === undefined) continue
      const problem = scopeProblem(entry)
      if (problem) this.problems.push(`Unit ${unit.name}'s #### Scope: ${problem}${problem.endsWith('.') ? '' : '.'}`)
      else if (!unit.scope.includes(entry)) unit.scope.push(entry)
    }

    return true
  }

  close(): ReadUnit[] {
    return this.units.map(({text, ...unit}) => ({...unit, instructions: text.join('').trim()}))
  }
}

/**
 * A plan stating its scope or its checks twice: refused wherever it is read (plan, approve, run), since a
 * reviewer reading the first would not know the second binds too.
 */
function twoSections(section: 'scope' | 'verify' | 'units', first: number, second: number): WaveError {
  const name = {scope: '## Scope', units: '## Units', verify: '## Verification'}[section]
  const what = {scope: 'scope', units: 'units', verify: 'checks'}[section]
  return usageError(
    `The plan has two ${name} sections, at line ${first} and at line ${second}: a contract states its ${what} once.`,
    `Merge them into one ${name} section (wave plan --revise <plan> --feedback "one ${name} section"), then approve that.`,
  )
}

/** The warning for files the plan changes that its scope leaves out: `wave plan` and `wave approve` show it. */
function uncoveredWarning(files: string[]): string {
  return `The plan's Changes name ${files.join(', ')}, which its ## Scope does not cover: a run held to the scope would be refused ${files.length === 1 ? 'it' : 'them'}. Add ${files.length === 1 ? 'it' : 'them'} (or a glob) to ## Scope, or approve with --scope.`
}

/** A name with a separator, or a bare name that is a file of the workspace (none known: not a path). */
function looksLikeRepositoryPath(file: string, workspace: string | undefined): boolean {
  if (file.includes('/')) return true
  return workspace !== undefined && existsSync(path.join(workspace, file))
}

/** Every code span in some tokens, nested lists included. */
function codeSpans(tokens: Token[] | undefined): string[] {
  const found: string[] = []
  for (const token of tokens ?? []) {
    if (token.type === 'codespan') found.push((token as Tokens.Codespan).text)
    else if (token.type === 'list') for (const item of (token as Tokens.List).items) found.push(...codeSpans(item.tokens))
    else if ('tokens' in token) found.push(...codeSpans(token.tokens as Token[] | undefined))
  }

  return found
}

/** A scope bullet's path: its first code span, else its first word (a path with spaces needs backticks). */
function scopeEntry(item: Tokens.ListItem): string | undefined {
  const spelled = firstCodeSpan(item.tokens) ?? item.text.split('\n')[0].trim().split(/\s+/)[0]
  if (!spelled || NOTHING.test(spelled)) return undefined
  const entry = spelled.trim().replace(/^(?:\.\/)+/, '')
  return entry === '' || entry === '.' ? '**' : entry
}

function scopeProblem(entry: string): string | undefined {
  if (path.isAbsolute(entry) || entry.startsWith('~')) return `${entry}: a scope path is relative to the workspace root`
  if (entry.split(/[\\/]/).includes('..')) return `${entry}: a scope path must not climb out of the workspace with ..`
  return undefined
}

/** The first code span of a bullet's own text (not of a list nested in it). */
function firstCodeSpan(tokens: Token[] | undefined): string | undefined {
  for (const token of tokens ?? []) {
    if (token.type === 'list') continue
    if (token.type === 'codespan') return (token as Tokens.Codespan).text
    const inner = 'tokens' in token ? firstCodeSpan(token.tokens as Token[] | undefined) : undefined
    if (inner !== undefined) return inner
  }

  return undefined
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`

/**
 * The line `wave plan` prints on stderr: `Plan: 3 paths in scope, 2 checks (npm test, npm run lint)`,
 * or what is missing.
 */
export function contractLine(contract: Pick<PlanContract, 'scope' | 'verify' | 'sections'> & {units?: PlanUnit[]}): string {
  // A plan without units runs as one job: the line says so only when there are units to count.
  const units = contract.units?.length ? `; ${plural(contract.units.length, 'unit', 'units')} (${contract.units.map((unit) => unit.name).join(', ')})` : ''
  if (!contract.sections.scope && !contract.sections.verify) return `Plan: no ## Scope or ## Verification section; nothing will be held to${units}`
  const scope = contract.sections.scope ? `${plural(contract.scope.length, 'path', 'paths')} in scope` : 'no ## Scope section (any path)'
  const checks = contract.sections.verify ? plural(contract.verify.length, 'check', 'checks') : 'no ## Verification section'
  const list = contract.verify.length > 0 ? ` (${contract.verify.join(', ')})` : ''
  return `Plan: ${scope}, ${checks}${list}${units}`
}

/** What the approver says over the plan: `--scope` (replaces), `--scope-enforce`, `--verify` (replaces), `--no-verify`. */
export interface ContractOverrides {
  scope?: string[]
  enforce?: ScopeEnforcement
  verify?: string[]
  noVerify?: boolean
  /** `--unit-budget-usd`: each unit's run's dollar cap. */
  unitBudgetUsd?: number
}

/** A unit as the approval record binds it (approval.ts's units). */
export interface BoundUnit {
  name: string
  paths: string[]
  verify: Array<{command: string}>
  budgetUsd?: number
}

/** The contract an approval record binds, and what the approver should be told of it. */
export interface BoundContract {
  scope?: {paths: string[]; enforce: ScopeEnforcement}
  verify?: Array<{command: string}>
  /** The plan's units; absent, the plan runs as one job. */
  units?: BoundUnit[]
  warnings: string[]
}

/**
 * The scope and checks an approval binds: the plan's, unless the approver replaces them. A plan with
 * neither section still approves (and runs as before), with a warning that nothing will be held to.
 */
export function bindContract(contract: PlanContract, overrides: ContractOverrides = {}): BoundContract {
  const warnings = contract.problems.map((problem) => `The plan's ## Scope: ${problem}; left out.`)
  // The approver's --scope replaces the plan's: the plan's own gaps no longer matter then.
  if (!overrides.scope) warnings.push(...(contract.warnings ?? []))
  for (const entry of overrides.scope ?? []) {
    const problem = scopeProblem(entry.trim())
    if (problem || !entry.trim())
      throw usageError(`--scope ${entry}: ${problem ?? 'empty'}.`, 'Give a path or glob relative to the workspace root, e.g. --scope "src/**".')
  }

  const paths = overrides.scope?.map((entry) => entry.trim().replace(/^(?:\.\/)+/, '')) ?? (contract.sections.scope ? contract.scope : undefined)
  if (!paths && overrides.enforce && overrides.enforce !== 'off') {
    throw usageError(
      `--scope-enforce ${overrides.enforce} needs a scope, and the plan has no ## Scope section.`,
      'Name the paths the run may change with --scope PATH (repeatable).',
    )
  }

  const commands = overrides.noVerify ? [] : (overrides.verify?.map((command) => command.trim()) ?? (contract.sections.verify ? contract.verify : undefined))
  if (commands?.some((command) => !command)) throw usageError('--verify needs a command.')
  if (!paths && commands === undefined) {
    warnings.push(
      'The plan has no ## Scope or ## Verification section: nothing will be held to (any path may change, and no checks run). --scope and --verify bind them here.',
    )
  }

  return {
    scope: paths ? {enforce: overrides.enforce ?? 'warn', paths} : undefined,
    units: bindUnits(contract, overrides, overrides.scope ? paths : undefined),
    verify: commands?.map((command) => ({command})),
    warnings,
  }
}

/**
 * The units an approval binds: refused (exit 2), naming every problem, while the units have any, or
 * reach outside the approver's --scope where it replaces the plan's. --no-verify drops the units'
 * checks too; --verify replaces the plan-level checks only.
 */
function bindUnits(contract: PlanContract, overrides: ContractOverrides, approverScope: string[] | undefined): BoundUnit[] | undefined {
  const units = contract.units ?? []
  if (units.length === 0) {
    if (overrides.unitBudgetUsd !== undefined)
      throw usageError('--unit-budget-usd bounds each unit, and the plan has no ## Units section.', 'Drop it, or bound the whole run with --max-budget-usd.')
    if (contract.unitErrors?.length) throw unitsRefused(contract.unitErrors)
    return undefined
  }

  const problems = [...(contract.unitErrors ?? []), ...(approverScope ? unitsOutside(units, approverScope, 'the approved --scope') : [])]
  if (problems.length > 0) throw unitsRefused(problems)
  return units.map((unit) => ({
    ...(overrides.unitBudgetUsd === undefined ? {} : {budgetUsd: overrides.unitBudgetUsd}),
    name: unit.name,
    paths: unit.scope,
    verify: overrides.noVerify ? [] : unit.verify.map((command) => ({command})),
  }))
}

function unitsRefused(problems: string[]): WaveError {
  return usageError(
    `The plan's ## Units cannot be approved: ${problems.join(' ')}`,
    'Revise the plan (wave plan --revise <plan> --feedback "...") so that each unit has its own paths inside the plan\'s ## Scope, then approve that.',
  )
}

/** When a planning session ends: the plan's bytes kept as its newest revision (with the feedback it answers), and its contract read. */
export async function planContractOf(planPath: string, feedback?: string, place: ContractPlace = {}): Promise<{contract: PlanContract; revision: number}> {
  const bytes = await readFile(planPath)
  const {revision} = recordRevision(planPath, bytes, feedback)
  return {contract: await parseContract(bytes.toString('utf8'), place), revision}
}
