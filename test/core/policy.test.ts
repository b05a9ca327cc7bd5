import {describe, expect, it} from 'vitest'

import {
  commandMatches,
  decide,
  type Decision,
  nextMode,
  offers,
  parseRule,
  parseRules,
  type PermissionMode,
  type PolicyContext,
  type ToolIdentity,
} from '../../src/core/policy.js'
import type {PathKind, ResolvedPath} from '../../src/core/workspace.js'

const ROOT = '/work/repo'
const PLAN = '/home/u/.wave/plans/gentle-breeze.md'

const Read: ToolIdentity = {access: 'read', name: 'Read'}
const Write: ToolIdentity = {access: 'write', name: 'Write'}
const Edit: ToolIdentity = {access: 'write', name: 'Edit'}
const Bash: ToolIdentity = {access: 'execute', name: 'Bash'}
const WebFetch: ToolIdentity = {access: 'network', name: 'WebFetch'}
const PluginWrite: ToolIdentity = {access: 'write', name: 'acme_patch'}
const Enter: ToolIdentity = {access: 'control', name: 'EnterPlanMode'}
const Exit: ToolIdentity = {access: 'control', name: 'ExitPlanMode'}

function target(real: string, kind: PathKind = 'file', input = real): ResolvedPath {
  return {absolute: input.startsWith('/') ? input : `${ROOT}/${input}`, input, kind, real, symlink: false}
}

function ctx(mode: PermissionMode, allow: string[] = [], deny: string[] = [], extra: Partial<PolicyContext> = {}): PolicyContext {
  return {headless: true, mode, planFile: mode === 'plan' ? PLAN : undefined, rules: parseRules(allow, deny), workspaceRoot: ROOT, ...extra}
}

type Row = [string, PolicyContext, ToolIdentity, Record<string, unknown>, ResolvedPath | undefined, Decision]

const rows: Row[] = [
  // plan mode: read inside, write only the plan file, nothing else
  ['plan: read inside', ctx('plan'), Read, {}, target(`${ROOT}/src/a.ts`), 'allow'],
  ['plan: read the plan file', ctx('plan'), Read, {}, target(PLAN), 'allow'],
  ['plan: read outside', ctx('plan'), Read, {}, target('/etc/passwd'), 'deny'],
  ['plan: read another plan', ctx('plan'), Read, {}, target('/home/u/.wave/plans/other.md'), 'deny'],
  ['plan: write the plan file (new)', ctx('plan'), Write, {}, target(PLAN, 'missing'), 'allow'],
  ['plan: edit the plan file', ctx('plan'), Edit, {}, target(PLAN), 'allow'],
  ['plan: write the plan file spelled with ..', ctx('plan'), Write, {}, target(PLAN, 'file', '/home/u/.wave/x/../plans/gentle-breeze.md'), 'allow'],
  ['plan: write a source file', ctx('plan'), Write, {}, target(`${ROOT}/src/a.ts`), 'deny'],
  ['plan: edit a source file', ctx('plan'), Edit, {}, target(`${ROOT}/src/a.ts`), 'deny'],
  ['plan: write another file in the plans dir', ctx('plan'), Write, {}, target('/home/u/.wave/plans/evil.md', 'missing'), 'deny'],
  ['plan: write outside', ctx('plan'), Write, {}, target('/tmp/x', 'missing'), 'deny'],
  ['plan: plan path is a directory', ctx('plan'), Write, {}, target(PLAN, 'directory'), 'deny'],
  ['plan: a plugin write tool on the plan file', ctx('plan'), PluginWrite, {}, target(PLAN), 'deny'],
  ['plan: Bash', ctx('plan'), Bash, {command: 'ls'}, undefined, 'deny'],
  ['plan: Bash even with an allow rule', ctx('plan', ['Bash']), Bash, {command: 'ls'}, undefined, 'deny'],
  ['plan: WebFetch without a rule', ctx('plan'), WebFetch, {url: 'https://docs.example.com/a'}, undefined, 'deny'],
  ['plan: WebFetch with a domain rule', ctx('plan', ['WebFetch(domain:example.com)']), WebFetch, {url: 'https://docs.example.com/a'}, undefined, 'allow'],
  ['plan: ExitPlanMode', ctx('plan'), Exit, {}, undefined, 'allow'],
  ['plan: EnterPlanMode again', ctx('plan'), Enter, {}, undefined, 'deny'],
  // acceptEdits
  ['acceptEdits: write inside', ctx('acceptEdits'), Write, {}, target(`${ROOT}/src/a.ts`), 'allow'],
  ['acceptEdits: write outside', ctx('acceptEdits'), Write, {}, target('/etc/hosts'), 'deny'],
  ['acceptEdits: write via symlink out', ctx('acceptEdits'), Write, {}, target('/tmp/out/x', 'missing', 'link/x'), 'deny'],
  ['acceptEdits: read outside', ctx('acceptEdits'), Read, {}, target('/etc/passwd'), 'deny'],
  ['acceptEdits: Bash without a rule (headless)', ctx('acceptEdits'), Bash, {command: 'npm test'}, undefined, 'deny'],
  ['acceptEdits: Bash without a rule (interactive)', ctx('acceptEdits', [], [], {headless: false}), Bash, {command: 'npm test'}, undefined, 'ask'],
  ['acceptEdits: Bash matching a prefix rule', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm test -- --run'}, undefined, 'allow'],
  ['acceptEdits: Bash not matching', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm publish'}, undefined, 'deny'],
  ['acceptEdits: Bash chained past a rule', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm test && rm -rf /'}, undefined, 'deny'],
  ['acceptEdits: Bash with substitution', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm test $(rm -rf /)'}, undefined, 'deny'],
  ['acceptEdits: deny rule beats allow', ctx('acceptEdits', ['Bash(npm test:*)'], ['Bash(npm test:*)']), Bash, {command: 'npm test'}, undefined, 'deny'],
  ['acceptEdits: Read deny rule', ctx('acceptEdits', [], ['Read(./.env)']), Read, {}, target(`${ROOT}/.env`), 'deny'],
  ['acceptEdits: EnterPlanMode not offered to plan runs', ctx('acceptEdits'), Enter, {}, undefined, 'deny'],
  ['acceptEdits: EnterPlanMode in run --task', ctx('acceptEdits', [], [], {canEnterPlanMode: true}), Enter, {}, undefined, 'allow'],
  ['acceptEdits: ExitPlanMode outside plan mode', ctx('acceptEdits'), Exit, {}, undefined, 'deny'],
  // default
  ['default: read inside', ctx('default'), Read, {}, target(`${ROOT}/a`), 'allow'],
  ['default: write inside, headless', ctx('default'), Write, {}, target(`${ROOT}/a`), 'deny'],
  ['default: write with a rule', ctx('default', ['Write']), Write, {}, target(`${ROOT}/a`), 'allow'],
  ['default: Bash headless', ctx('default'), Bash, {command: 'ls'}, undefined, 'deny'],
  // bypassPermissions
  ['bypass: Bash', ctx('bypassPermissions'), Bash, {command: 'rm -rf build'}, undefined, 'allow'],
  ['bypass: write inside', ctx('bypassPermissions'), Write, {}, target(`${ROOT}/a`), 'allow'],
  ['bypass: write outside', ctx('bypassPermissions'), Write, {}, target('/etc/hosts'), 'deny'],
  ['bypass: sibling directory with a common prefix', ctx('bypassPermissions'), Write, {}, target('/work/repo-evil/a'), 'deny'],
]

describe('decide', () => {
  it.each(rows)('%s', (_name, context, tool, input, path, expected) => {
    const result = decide(context, {input, target: path, tool})
    expect(result.decision).toBe(expected)
    expect(result.reason.length).toBeGreaterThan(10)
  })

  it('explains plan-mode denials with the plan file', () => {
    const result = decide(ctx('plan'), {input: {}, target: target(`${ROOT}/src/a.ts`), tool: Write})
    expect(result.reason).toContain(PLAN)
  })

  it('suggests a rule when a headless ASK becomes a DENY', () => {
    const result = decide(ctx('acceptEdits'), {input: {command: 'npm test'}, tool: Bash})
    expect(result.reason).toContain('Bash(npm test:*)')
  })
})

describe('offers', () => {
  const all = [Read, Write, Edit, Bash, WebFetch, PluginWrite, Enter, Exit]
  const offered = (context: PolicyContext) => all.filter((tool) => offers(context, tool)).map((tool) => tool.name)
  it.each<[string, PolicyContext, string[]]>([
    ['plan', ctx('plan'), ['Read', 'Write', 'Edit', 'ExitPlanMode']],
    ['plan with a WebFetch rule', ctx('plan', ['WebFetch(domain:a.com)']), ['Read', 'Write', 'Edit', 'WebFetch', 'ExitPlanMode']],
    ['acceptEdits', ctx('acceptEdits'), ['Read', 'Write', 'Edit', 'acme_patch']],
    ['acceptEdits with a Bash rule', ctx('acceptEdits', ['Bash(npm test:*)']), ['Read', 'Write', 'Edit', 'Bash', 'acme_patch']],
    ['default, headless', ctx('default'), ['Read']],
    ['bypassPermissions', ctx('bypassPermissions'), ['Read', 'Write', 'Edit', 'Bash', 'WebFetch', 'acme_patch']],
    ['run --task', ctx('acceptEdits', [], [], {canEnterPlanMode: true}), ['Read', 'Write', 'Edit', 'acme_patch', 'EnterPlanMode']],
    ['a blanket deny rule hides a tool', ctx('bypassPermissions', [], ['Bash']), ['Read', 'Write', 'Edit', 'WebFetch', 'acme_patch']],
  ])('%s', (_name, context, expected) => {
    expect(offered(context)).toEqual(expected)
  })
})

describe('modes', () => {
  it('cycles default → acceptEdits → plan → default', () => {
    expect(nextMode('default')).toBe('acceptEdits')
    expect(nextMode('acceptEdits')).toBe('plan')
    expect(nextMode('plan')).toBe('default')
  })

  it('can skip plan mode', () => {
    expect(nextMode('acceptEdits', ['plan'])).toBe('default')
  })
})

describe('rules', () => {
  it.each([
    ['Bash(npm test:*)', {specifier: 'npm test:*', tool: 'Bash'}],
    ['Edit', {specifier: undefined, tool: 'Edit'}],
    ['WebFetch(domain:example.com)', {specifier: 'domain:example.com', tool: 'WebFetch'}],
  ])('parses %s', (source, expected) => {
    expect(parseRule(source)).toMatchObject(expected)
  })

  it.each(['', 'Bash(', 'Bash()', '(x)', 'Bash(npm) extra'])('rejects %j', (source) => {
    expect(() => parseRule(source)).toThrow(/Invalid permission rule/)
  })

  it.each<[string, string, boolean]>([
    ['npm test:*', 'npm test', true],
    ['npm test:*', 'npm   test  --watch', true],
    ['npm test:*', 'npm testing', false],
    ['npm test:*', 'npm test; curl evil', false],
    ['npm test:*', 'npm test | tee out', false],
    ['npm test:*', 'npm test `id`', false],
    ['npm test', 'npm test', true],
    ['npm test', 'npm test -- -u', false],
  ])('%s vs %j', (specifier, command, expected) => {
    expect(commandMatches(specifier, command)).toBe(expected)
  })
})
