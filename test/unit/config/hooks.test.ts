/** The hooks key as Claude Code writes it: flattened, matched, what wave does not run reported, the digest stable. */
import {describe, expect, it} from 'vitest'

import {configuredHooks, hookMatches, hooksDigest} from '../../../src/config/hooks.js'

describe('configuredHooks', () => {
  it('flattens events, groups and commands, with the default timeout', () => {
    const {hooks, unsupported} = configuredHooks(
      {
        PreToolUse: [
          {
            hooks: [
              {command: './a.sh', type: 'command'},
              {command: './b.sh', timeout: 5, type: 'command'},
            ],
            matcher: 'Edit|Write',
          },
        ],
      },
      'user',
      '/home/u/.wave/settings.json',
    )
    expect(unsupported).toEqual([])
    expect(hooks).toEqual([
      {command: './a.sh', event: 'PreToolUse', file: '/home/u/.wave/settings.json', matcher: 'Edit|Write', scope: 'user', timeout: 60},
      {command: './b.sh', event: 'PreToolUse', file: '/home/u/.wave/settings.json', matcher: 'Edit|Write', scope: 'user', timeout: 5},
    ])
  })

  it.each([
    ['an event wave does not fire', {Notification: [{hooks: [{command: 'x', type: 'command'}]}]}, /hooks for Notification are not run/],
    ['a prompt hook', {Stop: [{hooks: [{prompt: 'check', type: 'prompt'}]}]}, /of type "prompt" without a command is not run/],
    [
      'a matcher that is no regular expression',
      {PreToolUse: [{hooks: [{command: 'x', type: 'command'}], matcher: 'Bash('}]},
      /matcher "Bash\(" is not a regular expression/,
    ],
  ])('reports %s, naming the file', (_name, setting, said) => {
    const {hooks, unsupported} = configuredHooks(setting as never, 'project', '/repo/.claude/settings.json')
    expect(hooks).toEqual([])
    expect(unsupported).toHaveLength(1)
    expect(unsupported[0]).toMatch(/^\/repo\/\.claude\/settings\.json: /)
    expect(unsupported[0]).toMatch(said)
  })
})

describe('hookMatches', () => {
  const hook = (matcher?: string) => ({command: 'x', event: 'PreToolUse' as const, file: 'f', matcher, scope: 'user' as const, timeout: 60})
  it.each<[string | undefined, string, boolean]>([
    [undefined, 'Bash', true],
    ['*', 'Write', true],
    ['Bash', 'Bash', true],
    ['Bash', 'BashOutput', false],
    ['Edit|Write', 'Write', true],
    ['Edit|Write', 'Read', false],
    ['mcp__.*', 'mcp__github__search', true],
  ])('matcher %s on %s: %s', (matcher, subject, expected) => {
    expect(hookMatches(hook(matcher), subject)).toBe(expected)
  })
})

describe('hooksDigest', () => {
  const hooks = configuredHooks({PostToolUse: [{hooks: [{command: 'fmt', type: 'command'}]}]}, 'user', '/a/settings.json').hooks
  it('is the same for the same hooks from another file, and differs for another command or scope', () => {
    const moved = configuredHooks({PostToolUse: [{hooks: [{command: 'fmt', type: 'command'}]}]}, 'user', '/b/settings.json').hooks
    const other = configuredHooks({PostToolUse: [{hooks: [{command: 'fmt --all', type: 'command'}]}]}, 'user', '/a/settings.json').hooks
    const project = configuredHooks({PostToolUse: [{hooks: [{command: 'fmt', type: 'command'}]}]}, 'project', '/a/settings.json').hooks
    expect(hooksDigest(moved)).toBe(hooksDigest(hooks))
    expect(hooksDigest(other)).not.toBe(hooksDigest(hooks))
    expect(hooksDigest(project)).not.toBe(hooksDigest(hooks))
    expect(hooksDigest([])).not.toBe(hooksDigest(hooks))
  })
})
