/**
 * A plan is a contract: its `## Scope` section lists the workspace paths or globs the run may change,
 * its `## Verification` section the commands that check the work. This module reads them out of the
 * plan's Markdown with marked's lexer (a real Markdown reader: a heading inside a code block, a nested
 * list or a command with backticks in it read as a person reading the plan would read them).
 */
import {readFile} from 'node:fs/promises'
import path from 'node:path'

import type {Token, Tokens} from 'marked'

import {usageError, type WaveError} from '../base/errors.js'
import type {ScopeEnforcement} from '../policy/scope.js'
import {recordRevision} from './revisions.js'

export interface PlanContract {
  /** Workspace-relative paths or globs, as the plan lists them (a leading `./` dropped). */
  scope: string[]
  /** Commands, one per bullet, each the bullet's first `code span`. */
  verify: string[]
  /** Which of the two sections the plan has at all (a section may be there and list nothing). */
  sections: {scope: boolean; verify: boolean}
  /** Bullets that were left out, and why (an absolute path, a path climbing out with `..`). */
  problems: string[]
}

const SCOPE = /^scope\b/i
const VERIFY = /^verification\b/i
/** A bullet saying the section is empty on purpose. */
const NOTHING = /^(?:_?none_?|nothing|n\/a|-)\.?$/i

/** The contract a plan's text states. Loads marked on first use: only the commands that read a contract pay for it. */
export async function parseContract(text: string): Promise<PlanContract> {
  // marked's lexer through its Marked class: the one export of the vendored module (scripts/bundle.js).
  const {Marked} = await import('marked')
  const tokens = new Marked().lexer(text)
  const contract: PlanContract = {problems: [], scope: [], sections: {scope: false, verify: false}, verify: []}
  let section: 'scope' | 'verify' | undefined
  let depth = 0
  // Where each section's heading is (its line): a second one is refused, naming both.
  const seen: Partial<Record<'scope' | 'verify', number>> = {}
  let line = 1
  for (const token of tokens) {
    const at = line
    line += (token.raw.match(/\n/g) ?? []).length
    if (token.type === 'heading') {
      const heading = token as Tokens.Heading
      const title = heading.text.trim()
      if (heading.depth >= 2 && (SCOPE.test(title) || VERIFY.test(title))) {
        section = SCOPE.test(title) ? 'scope' : 'verify'
        const first = seen[section]
        if (first !== undefined) throw twoSections(section, first, at)
        seen[section] = at
        depth = heading.depth
        contract.sections[section] = true
      } else if (section && heading.depth <= depth) {
        section = undefined
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

  return contract
}

/**
 * A plan stating its scope or its checks twice: refused wherever it is read (plan, approve, run), since a
 * reviewer reading the first would not know the second binds too.
 */
function twoSections(section: 'scope' | 'verify', first: number, second: number): WaveError {
  const name = section === 'scope' ? '## Scope' : '## Verification'
  return usageError(
    `The plan has two ${name} sections, at line ${first} and at line ${second}: a contract states its ${section === 'scope' ? 'scope' : 'checks'} once.`,
    `Merge them into one ${name} section (wave plan --revise <plan> --feedback "one ${name} section"), then approve that.`,
  )
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
export function contractLine(contract: Pick<PlanContract, 'scope' | 'verify' | 'sections'>): string {
  if (!contract.sections.scope && !contract.sections.verify) return 'Plan: no ## Scope or ## Verification section; nothing will be held to'
  const scope = contract.sections.scope ? `${plural(contract.scope.length, 'path', 'paths')} in scope` : 'no ## Scope section (any path)'
  const checks = contract.sections.verify ? plural(contract.verify.length, 'check', 'checks') : 'no ## Verification section'
  const list = contract.verify.length > 0 ? ` (${contract.verify.join(', ')})` : ''
  return `Plan: ${scope}, ${checks}${list}`
}

/** What the approver says over the plan: `--scope` (replaces), `--scope-enforce`, `--verify` (replaces), `--no-verify`. */
interface ContractOverrides {
  scope?: string[]
  enforce?: ScopeEnforcement
  verify?: string[]
  noVerify?: boolean
}

/** The contract an approval record binds, and what the approver should be told of it. */
export interface BoundContract {
  scope?: {paths: string[]; enforce: ScopeEnforcement}
  verify?: Array<{command: string}>
  warnings: string[]
}

/**
 * The scope and checks an approval binds: the plan's, unless the approver replaces them. A plan with
 * neither section still approves (and runs as before), with a warning that nothing will be held to.
 */
export function bindContract(contract: PlanContract, overrides: ContractOverrides = {}): BoundContract {
  const warnings = contract.problems.map((problem) => `The plan's ## Scope: ${problem}; left out.`)
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
    verify: commands?.map((command) => ({command})),
    warnings,
  }
}

/** When a planning session ends: the plan's bytes kept as its newest revision (with the feedback it answers), and its contract read. */
export async function planContractOf(planPath: string, feedback?: string): Promise<{contract: PlanContract; revision: number}> {
  const bytes = await readFile(planPath)
  const {revision} = recordRevision(planPath, bytes, feedback)
  return {contract: await parseContract(bytes.toString('utf8')), revision}
}
