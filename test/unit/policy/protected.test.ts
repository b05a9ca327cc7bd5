import {describe, expect, it} from 'vitest'

import {decide, type PermissionDecision, parseRules, type PermissionMode, type PolicyContext, type ToolIdentity} from '../../../src/policy/policy.js'
import {DEFAULT_PROTECTED_PATHS, describeProtected, protectedMatcher, protectedPathsWith, protectedPlainPaths} from '../../../src/policy/protected.js'
import type {Scope} from '../../../src/policy/scope.js'
import type {PathKind, ResolvedPath} from '../../../src/base/workspace/paths.js'

const ROOT = '/work/repo'
const PLAN = `${ROOT}/.claude/plans/gentle-breeze.md`
const Write: ToolIdentity = {access: 'write', name: 'Write'}
const Edit: ToolIdentity = {access: 'write', name: 'Edit'}
const Read: ToolIdentity = {access: 'read', name: 'Read'}
const PluginWrite: ToolIdentity = {access: 'write', name: 'AppendNote', origin: 'plugin'}

const target = (relative: string, kind: PathKind = 'file'): ResolvedPath => ({
  absolute: `${ROOT}/${relative}`,
  input: relative,
  kind,
  real: `${ROOT}/${relative}`,
  symlink: false,
})
const ctx = (mode: PermissionMode, scope?: Scope, extra: Partial<PolicyContext> = {}): PolicyContext => ({
  headless: true,
  mode,
  planFile: mode === 'plan' ? PLAN : undefined,
  rules: parseRules(),
  scope,
  workspaceRoot: ROOT,
  ...extra,
})
const warn = (...paths: string[]): Scope => ({enforce: 'warn', paths})

type Row = [string, PolicyContext, ToolIdentity, ResolvedPath, PermissionDecision]

// [what, context, tool, target, decision]
const rows: Row[] = [
  // Control: the same writes elsewhere are allowed, in the same modes and scopes.
  ['control: warn scope, a source file', ctx('acceptEdits', warn('src')), Write, target('src/a.ts'), 'allow'],
  ['control: warn scope, a file outside it (reported, not refused)', ctx('acceptEdits', warn('src')), Write, target('README.md'), 'allow'],
  ['warn scope: a workflow', ctx('acceptEdits', warn('src')), Write, target('.github/workflows/ci.yml', 'missing'), 'deny'],
  ['no scope (run --task): a workflow', ctx('acceptEdits'), Write, target('.github/workflows/ci.yml'), 'deny'],
  ['scope off: a workflow', ctx('acceptEdits', {enforce: 'off', paths: []}), Write, target('.github/workflows/ci.yml'), 'deny'],
  ['bypassPermissions: .gitlab-ci.yml', ctx('bypassPermissions'), Edit, target('.gitlab-ci.yml'), 'deny'],
  ['a CODEOWNERS at the root', ctx('acceptEdits', warn('**')), Write, target('CODEOWNERS'), 'deny'],
  ['.github/CODEOWNERS', ctx('acceptEdits', warn('**')), Write, target('.github/CODEOWNERS'), 'deny'],
  ['.claude/settings.json', ctx('acceptEdits', warn('**')), Write, target('.claude/settings.json'), 'deny'],
  ['a skill', ctx('acceptEdits', warn('**')), Write, target('.claude/skills/deploy/SKILL.md', 'missing'), 'deny'],
  ['.agents/skills', ctx('acceptEdits', warn('**')), Write, target('.agents/skills/x/SKILL.md', 'missing'), 'deny'],
  ['.mcp.json', ctx('acceptEdits', warn('**')), Write, target('.mcp.json'), 'deny'],
  ['a plugin write tool on a workflow', ctx('acceptEdits', warn('**')), PluginWrite, target('.github/workflows/ci.yml'), 'deny'],
  // What the scope must say: the path plainly, or a protected folder plainly; no glob, no parent.
  ['the scope names the workflow file', ctx('acceptEdits', warn('src', '.github/workflows/ci.yml')), Write, target('.github/workflows/ci.yml'), 'allow'],
  ['the scope names the workflows folder', ctx('acceptEdits', warn('.github/workflows')), Write, target('.github/workflows/ci.yml'), 'allow'],
  ['./ and a trailing / read as the same entry', ctx('acceptEdits', warn('./.github/workflows/')), Write, target('.github/workflows/ci.yml'), 'allow'],
  ['strict scope naming it', ctx('acceptEdits', {enforce: 'strict', paths: ['.gitlab-ci.yml']}), Edit, target('.gitlab-ci.yml'), 'allow'],
  ['** does not name it', ctx('acceptEdits', warn('**')), Write, target('.github/workflows/ci.yml'), 'deny'],
  ['.github/** does not name it', ctx('acceptEdits', warn('.github/**')), Write, target('.github/workflows/ci.yml'), 'deny'],
  ['.github/workflows/*.yml does not name it', ctx('acceptEdits', warn('.github/workflows/*.yml')), Write, target('.github/workflows/ci.yml'), 'deny'],
  ['the parent .github does not name it', ctx('acceptEdits', warn('.github')), Write, target('.github/workflows/ci.yml'), 'deny'],
  ['. does not name it', ctx('acceptEdits', warn('.')), Write, target('.gitlab-ci.yml'), 'deny'],
  ['naming one workflow leaves the others', ctx('acceptEdits', warn('.github/workflows/ci.yml')), Write, target('.github/workflows/release.yml'), 'deny'],
  ['.git stays refused even when named', ctx('acceptEdits', warn('.git/hooks')), Write, target('.git/hooks/pre-commit'), 'deny'],
  ['.wave stays refused even when named', ctx('acceptEdits', warn('.wave/settings.json')), Write, target('.wave/settings.json'), 'deny'],
  ['.github outside the protected folders is not protected', ctx('acceptEdits', warn('**')), Write, target('.github/ISSUE_TEMPLATE/bug.md'), 'allow'],
  ['reads are not held to it', ctx('acceptEdits', warn('src')), Read, target('.github/workflows/ci.yml'), 'allow'],
  ['the plan file, kept in .claude, is still the plan file', ctx('plan'), Write, target('.claude/plans/gentle-breeze.md', 'missing'), 'allow'],
  // The settings' additions.
  ['an added path', ctx('acceptEdits', warn('**'), {protectedPaths: protectedPathsWith(['deploy/**'])}), Write, target('deploy/prod.tf'), 'deny'],
  [
    'an added path named by the scope',
    ctx('acceptEdits', warn('deploy/prod.tf'), {protectedPaths: protectedPathsWith(['deploy/**'])}),
    Write,
    target('deploy/prod.tf'),
    'allow',
  ],
]

describe('protected paths in the policy', () => {
  it.each(rows)('%s', (_what, context, tool, file, decision) => {
    expect(decide(context, {input: {}, target: file, tool}).decision).toBe(decision)
  })

  it('names the protected entry and what would allow the write', () => {
    const result = decide(ctx('acceptEdits', warn('**')), {input: {}, target: target('.github/workflows/ci.yml'), tool: Write})
    expect(result.reason).toContain('.github/workflows/ci.yml is a protected path (.github/workflows)')
    expect(result.reason).toContain('unless the approved Scope names the path itself')
  })
})

describe('protectedMatcher', () => {
  it('answers the entry holding a path, nothing for the rest', () => {
    const guarded = protectedMatcher(DEFAULT_PROTECTED_PATHS, ['src/**'])
    expect(guarded('.github/workflows/deep/x.yml')).toBe('.github/workflows')
    expect(guarded('.gitlab-ci.yml')).toBe('.gitlab-ci.yml')
    expect(guarded('src/.gitlab-ci.yml')).toBeUndefined()
    expect(guarded('src/a.ts')).toBeUndefined()
  })

  it('adds settings entries once, after the defaults', () => {
    expect(protectedPathsWith(['x', '.claude'], ['x'])).toEqual([...DEFAULT_PROTECTED_PATHS, 'x'])
  })

  it('shows the list, and which scope entries name a protected path', () => {
    const line = describeProtected(protectedPathsWith(), ['src', '**', '.github/workflows/ci.yml'])
    expect(line).toContain('.github/workflows, ')
    expect(line).toContain('the Scope names .github/workflows/ci.yml, which the run may write')
    expect(line).not.toContain('names src')
  })
})

describe('protectedPlainPaths', () => {
  it('gives the entries as plain paths a reading can be limited to, or nothing when one needs the whole tree', () => {
    expect(protectedPlainPaths(DEFAULT_PROTECTED_PATHS)).toEqual([...DEFAULT_PROTECTED_PATHS])
    expect(protectedPlainPaths(['./deploy/', 'infra\\prod'])).toEqual(['deploy', 'infra/prod'])
    for (const entry of ['deploy/**', '*.tf', '../outside', '/etc', '.', './']) expect(protectedPlainPaths(['.github/workflows', entry])).toBeUndefined()
  })
})
