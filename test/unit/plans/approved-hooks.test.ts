import {describe, expect, it} from 'vitest'

import {type ConfiguredHook, describeHook, hooksDigest} from '../../../src/config/hooks.js'
import {type ApprovalRecord, checkApprovedHooks} from '../../../src/plans/approval.js'

const hook = (command: string, extra: Partial<ConfiguredHook> = {}): ConfiguredHook => ({
  command,
  event: 'PostToolUse',
  file: '/repo/.claude/settings.json',
  scope: 'project',
  timeout: 60,
  ...extra,
})

const recordWith = (hooks: ConfiguredHook[]) => ({hooks: {digest: hooksDigest(hooks), list: hooks.map((each) => describeHook(each))}}) as ApprovalRecord

describe('approved hooks are policy (issue 47)', () => {
  const fmt = hook('npx prettier --write .')
  const guard = hook('./guard.sh', {event: 'PreToolUse', matcher: 'Bash', scope: 'user', file: '/home/u/.wave/settings.json'})

  it('refuses hooks other than those approved (exit 4), naming what is missing and what was not approved', () => {
    const warned: string[] = []
    const check = () => checkApprovedHooks(recordWith([fmt, guard]), [guard, hook('./other.sh')], 'p.approval.json', {warn: (line) => warned.push(line)})
    expect(check).toThrow(
      expect.objectContaining({
        exitCode: 4,
        message: `The hooks in effect differ from those approved in p.approval.json: approved but not in effect: ${describeHook(fmt)}; in effect but not approved: ${describeHook(hook('./other.sh'))}.`,
      }),
    )
    expect(warned).toEqual([])
  })

  it('names a change of order or timeout, which the digest binds', () => {
    expect(() => checkApprovedHooks(recordWith([fmt, guard]), [guard, fmt], 'p.approval.json', {warn: () => {}})).toThrow(
      /the same hooks with another order or timeout/,
    )
  })

  it('runs with a warning under --allow-hook-drift; the same hooks, from another checkout, pass without a word (control)', () => {
    const warned: string[] = []
    checkApprovedHooks(recordWith([fmt]), [], 'p.approval.json', {allow: true, warn: (line) => warned.push(line)})
    expect(warned).toEqual([expect.stringContaining('approved but not in effect: PostToolUse "npx prettier --write ." (project')])
    expect(warned[0]).toContain('(--allow-hook-drift)')
    checkApprovedHooks(recordWith([fmt]), [{...fmt, file: '/elsewhere/.claude/settings.json'}], 'p.approval.json', {warn: (line) => warned.push(line)})
    checkApprovedHooks({} as ApprovalRecord, [], 'p.approval.json', {warn: (line) => warned.push(line)})
    expect(warned).toHaveLength(1)
  })
})
