import {describe, expect, it} from 'vitest'

import {decide, type PermissionDecision, parseRules, type PermissionMode, type PolicyContext, type ToolIdentity} from '../../../src/policy/policy.js'
import {inScope, type Scope, scopeMatcher} from '../../../src/policy/scope.js'
import type {PathKind, ResolvedPath} from '../../../src/base/workspace/paths.js'

const ROOT = '/work/repo'
const PLAN = '/home/u/.wave/plans/gentle-breeze.md'
const Write: ToolIdentity = {access: 'write', name: 'Write'}
const Edit: ToolIdentity = {access: 'write', name: 'Edit'}
const Read: ToolIdentity = {access: 'read', name: 'Read'}
const PluginWrite: ToolIdentity = {access: 'write', name: 'AppendNote', origin: 'plugin'}

const target = (real: string, kind: PathKind = 'file'): ResolvedPath => ({absolute: real, input: real.replace(`${ROOT}/`, ''), kind, real, symlink: false})
const scope = (enforce: Scope['enforce'], paths = ['src/cli.ts', 'docs/**', 'test']): Scope => ({enforce, paths})
const ctx = (mode: PermissionMode, s?: Scope, allow: string[] = []): PolicyContext => ({
  headless: true,
  mode,
  planFile: mode === 'plan' ? PLAN : undefined,
  rules: parseRules(allow),
  scope: s,
  workspaceRoot: ROOT,
})

type Row = [string, PolicyContext, ToolIdentity, ResolvedPath, PermissionDecision, boolean]

// [what, context, tool, target, decision, recorded as outside the scope]
const rows: Row[] = [
  ['strict: write a listed file', ctx('acceptEdits', scope('strict')), Write, target(`${ROOT}/src/cli.ts`), 'allow', false],
  ['strict: write under a glob', ctx('acceptEdits', scope('strict')), Write, target(`${ROOT}/docs/a/b.md`, 'missing'), 'allow', false],
  ['strict: write under a listed directory', ctx('acceptEdits', scope('strict')), Edit, target(`${ROOT}/test/cli.test.ts`), 'allow', false],
  ['strict: write elsewhere', ctx('acceptEdits', scope('strict')), Write, target(`${ROOT}/src/other.ts`), 'deny', false],
  ['strict: a prefix that is not a directory', ctx('acceptEdits', scope('strict')), Write, target(`${ROOT}/testing.ts`), 'deny', false],
  ['strict: a plugin write tool elsewhere', ctx('acceptEdits', scope('strict')), PluginWrite, target(`${ROOT}/notes.md`), 'deny', false],
  ['strict: bypassPermissions is held too', ctx('bypassPermissions', scope('strict')), Write, target(`${ROOT}/src/other.ts`), 'deny', false],
  ['strict: an empty scope refuses every write', ctx('acceptEdits', scope('strict', [])), Write, target(`${ROOT}/src/cli.ts`), 'deny', false],
  ['strict: reads are not held to it', ctx('acceptEdits', scope('strict')), Read, target(`${ROOT}/src/other.ts`), 'allow', false],
  ['warn: write elsewhere is allowed and marked', ctx('acceptEdits', scope('warn')), Write, target(`${ROOT}/src/other.ts`), 'allow', true],
  ['warn: write inside is not marked', ctx('acceptEdits', scope('warn')), Write, target(`${ROOT}/src/cli.ts`), 'allow', false],
  ['off: write elsewhere', ctx('acceptEdits', scope('off')), Write, target(`${ROOT}/src/other.ts`), 'allow', false],
  ['no scope (an old record): write anywhere inside', ctx('acceptEdits'), Write, target(`${ROOT}/src/other.ts`), 'allow', false],
  ['strict: outside the workspace is denied as ever', ctx('acceptEdits', scope('strict', ['**'])), Write, target('/etc/hosts'), 'deny', false],
  ['strict: .git stays denied inside a wide scope', ctx('acceptEdits', scope('strict', ['**'])), Write, target(`${ROOT}/.git/hooks/pre-commit`), 'deny', false],
  ['strict: default mode headless still denies writes', ctx('default', scope('strict')), Write, target(`${ROOT}/src/cli.ts`), 'deny', false],
  ['strict: an Edit rule in default mode, inside', ctx('default', scope('strict'), ['Edit']), Edit, target(`${ROOT}/src/cli.ts`), 'allow', false],
  ['strict: an Edit rule in default mode, outside', ctx('default', scope('strict'), ['Edit']), Edit, target(`${ROOT}/README.md`), 'deny', false],
  ['plan mode: the plan file is not a run change', ctx('plan', scope('strict')), Write, target(PLAN), 'allow', false],
]

describe('the approved scope in the policy', () => {
  it.each(rows)('%s', (_what, context, tool, file, decision, outside) => {
    const result = decide(context, {input: {}, target: file, tool})
    expect(result.decision).toBe(decision)
    expect(Boolean(result.outOfScope)).toBe(outside)
  })

  it('names the scope and tells the model to stop and report, when strict refuses', () => {
    const result = decide(ctx('acceptEdits', scope('strict')), {input: {}, target: target(`${ROOT}/src/other.ts`), tool: Write})
    expect(result.reason).toContain('src/cli.ts, docs/**, test')
    expect(result.reason).toMatch(/stop, and report the deviation/)
  })

  it('offers write tools under a strict scope (only a call can be outside it)', () => {
    expect(decide(ctx('acceptEdits', scope('strict')), {tool: Write}).decision).toBe('allow')
  })
})

describe('scopeMatcher', () => {
  it('reads plain paths as files or directories and globs as picomatch does', () => {
    const matches = scopeMatcher(['src/cli.ts', 'docs/', './lib', '**/*.test.ts', '.github/**'])
    expect(matches('src/cli.ts')).toBe(true)
    expect(matches('src/cli.tsx')).toBe(false)
    expect(matches('docs/guide/a.md')).toBe(true)
    expect(matches('lib/x.js')).toBe(true)
    expect(matches('deep/in/x.test.ts')).toBe(true)
    expect(matches('.github/workflows/ci.yml')).toBe(true)
    expect(matches('README.md')).toBe(false)
  })

  it('never covers a path outside the workspace', () => {
    expect(inScope(scope('strict', ['**']), ROOT, '/work/other/x')).toBe(false)
    expect(inScope(scope('strict', ['**']), ROOT, `${ROOT}/x`)).toBe(true)
  })
})
