/**
 * Plan units end to end (issue 36): a repository with three parts, a plan with three units and its
 * approval record as `wave approve` writes it, clones of the repository as separate CI jobs (each its own
 * HOME, its own copy of the plan and record), and the scripted model's turns for each unit's job, told
 * apart by the unit the run's first message names (the jobs run at once, so the order of their requests
 * is not known).
 */
import {copyFileSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {gitHead, makeSandbox, runWave, type Sandbox, sha256, writePlanFile} from './cli.js'
import {git} from './forge-fixture.js'
import {type RecordedRequest, reply, type StaticTurn, toolUse, type Turn} from './messages-server.js'

export const UNIT_FILES: Readonly<Record<string, string>> = {
  '.gitignore': 'ignored/\n',
  'README.md': '# three parts\n',
  'docs/guide.md': '# Guide\n',
  'src/api/index.ts': 'export const api = 1\n',
  'src/web/index.ts': 'export const web = 1\n',
}

export const UNITS_PLAN = `# Plan: a change in three parts

## Changes
- src/api/: add a route.
- src/web/: add a logo.
- docs/: document both.

## Scope
- src/**
- docs/**

## Verification
- \`test -f src/api/route.ts && test -f src/web/logo.bin && grep -q route docs/guide.md\`

## Units

### api
Add src/api/route.ts.

#### Scope
- src/api/**

#### Verification
- \`test -f src/api/route.ts\`

### web
Add the logo, src/web/logo.bin.

#### Scope
- src/web/**

#### Verification
- \`test -f src/web/logo.bin\`

### docs
Document the route in docs/guide.md.

#### Scope
- docs/**

#### Verification
- \`grep -q route docs/guide.md\`
`

export const UNIT_NAMES = ['api', 'web', 'docs'] as const

/** The logo's bytes: not text (NUL, 0xff, no final newline), so the patch must be binary-safe. */
export const LOGO = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0xfe, 0x0a, 0x00])

/** A repository with three parts and the plan written into its HOME's plans directory, approved with `wave approve` (its units bound from the plan). */
export async function unitsSandbox(...approveFlags: string[]): Promise<{sandbox: Sandbox; planPath: string; head: string}> {
  const sandbox = makeSandbox(UNIT_FILES)
  const planPath = writePlanFile(sandbox, UNITS_PLAN, 'three-parts')
  const head = gitHead(sandbox.repo)
  const approved = await runWave(['approve', planPath, '--mode', 'bypassPermissions', '--approver', 'reviewer', ...approveFlags], {
    cwd: sandbox.repo,
    home: sandbox.home,
  })
  if (approved.code !== 0) throw new Error(`wave approve failed: ${approved.stderr}`)
  return {head, planPath, sandbox}
}

/** A record written by hand, as another tool following the schema would. */
export function writeRecord(planPath: string, head: string, extra: Record<string, unknown> = {}): void {
  const decidedAt = '2026-11-27T18:00:00.000Z'
  const record = {
    allow: [],
    approver: 'reviewer',
    decidedAt,
    decision: 'approved',
    history: [{approver: 'reviewer', decidedAt, decision: 'approved', planSha256: sha256(UNITS_PLAN)}],
    mode: 'bypassPermissions',
    plan: {name: 'three-parts', sha256: sha256(UNITS_PLAN)},
    repository: {branch: 'main', dirty: false, head},
    sandbox: {enabled: true, network: false},
    scope: {enforce: 'warn', paths: ['src/**', 'docs/**']},
    task: 'Add a route, a logo and their docs',
    units: [
      {name: 'api', paths: ['src/api/**'], verify: [{command: 'test -f src/api/route.ts'}]},
      {name: 'web', paths: ['src/web/**'], verify: [{command: 'test -f src/web/logo.bin'}]},
      {name: 'docs', paths: ['docs/**'], verify: [{command: 'grep -q route docs/guide.md'}]},
    ],
    verify: [{command: 'test -f src/api/route.ts && test -f src/web/logo.bin && grep -q route docs/guide.md'}],
    version: 1,
    ...extra,
  }
  writeFileSync(planPath.replace(/\.md$/, '.approval.json'), JSON.stringify(record, null, 2))
}

/** A job's machine: a clone of the repository at the plan's commit, and a HOME holding a copy of the plan and its record. */
export interface Job {
  repo: string
  home: string
  planPath: string
}

export function cloneJob(sandbox: Sandbox, planPath: string, name: string): Job {
  const root = path.join(sandbox.root, `job-${name}`)
  const repo = path.join(root, 'repo')
  const home = path.join(root, 'home')
  mkdirSync(root, {recursive: true})
  git(sandbox.root, ['clone', '-q', '--template=', sandbox.repo, repo])
  const plans = path.join(home, '.wave', 'plans')
  mkdirSync(plans, {recursive: true})
  const copy = path.join(plans, path.basename(planPath))
  copyFileSync(planPath, copy)
  copyFileSync(planPath.replace(/\.md$/, '.approval.json'), copy.replace(/\.md$/, '.approval.json'))
  return {home, planPath: copy, repo}
}

/** The unit a run's request is for: named in its first message. */
export function unitOfRequest(request: RecordedRequest): string | undefined {
  const first = request.body?.messages?.[0]
  const text = typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content ?? '')
  // As JSON (content blocks), the quotes around the name are escaped.
  return /This job is unit \\?"([^"\\]+)/.exec(text)?.[1]
}

/** How many model turns the run has had: the assistant messages it sends back. */
const turnsSoFar = (request: RecordedRequest) => (request.body?.messages ?? []).filter((m: {role: string}) => m.role === 'assistant').length

/** Each unit's job, turn by turn: api first tries to write web's file (refused), then does its own. */
export const UNIT_TURNS: Record<string, StaticTurn[]> = {
  api: [
    reply(toolUse('Write', {content: 'export const web = 2\n', file_path: 'src/web/index.ts'})),
    reply(toolUse('Write', {content: 'export const route = "/route"\n', file_path: 'src/api/route.ts'})),
    reply('api done.'),
  ],
  docs: [reply(toolUse('Write', {content: '# Guide\n\nThe route is /route.\n', file_path: 'docs/guide.md'})), reply('docs done.')],
  web: [reply(toolUse('Bash', {command: String.raw`printf '\211PNG\000\001\377\376\n\000' > src/web/logo.bin`})), reply('web done.')],
}

/** One turn answering any unit's job with its next step; `turns` overrides a unit's steps. */
export function unitTurn(turns: Record<string, StaticTurn[]> = UNIT_TURNS): Turn {
  return (request) => {
    const unit = unitOfRequest(request)
    const steps = unit ? turns[unit] : undefined
    if (!steps) return reply('No unit named.')
    return steps[Math.min(turnsSoFar(request), steps.length - 1)]
  }
}

/** Enough turns for `count` requests of any unit. */
export const unitTurns = (count: number, turns?: Record<string, StaticTurn[]>): Turn[] => Array.from({length: count}, () => unitTurn(turns))

export {git as gitIn}
