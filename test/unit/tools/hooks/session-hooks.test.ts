import {chmodSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import type {ConfiguredHook} from '../../../../src/config/hooks.js'
import {SessionHooks} from '../../../../src/tools/hooks/session-hooks.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, {force: true, recursive: true})
})

/** User PreToolUse hooks, each printing one JSON answer. */
function sessionWith(answers: unknown[]): SessionHooks {
  const dir = mkdtempSync(path.join(tmpdir(), 'wave-hooks-test-'))
  dirs.push(dir)
  const hooks: ConfiguredHook[] = answers.map((answer, index) => {
    const file = path.join(dir, `hook-${index}.sh`)
    writeFileSync(file, `#!/bin/bash\ncat >/dev/null\necho '${JSON.stringify(answer)}'\n`)
    chmodSync(file, 0o755)
    return {command: file, event: 'PreToolUse', file: path.join(dir, 'settings.json'), scope: 'user', timeout: 30}
  })
  return new SessionHooks(hooks, {
    mode: () => 'acceptEdits',
    sessionId: 'test',
    signal: new AbortController().signal,
    transcriptPath: () => path.join(dir, 'transcript.jsonl'),
    warn() {},
    workspace: dir,
  })
}

const rewrite = (input: unknown, decision?: string) => ({hookSpecificOutput: {hookEventName: 'PreToolUse', permissionDecision: decision, updatedInput: input}})
const call = {id: 'toolu_1', input: {command: 'ls'}, name: 'Bash'}

describe('PreToolUse updatedInput', () => {
  it('hands back the rewritten input, naming the hook; the same rewrite from two hooks is one', async () => {
    const answer = await sessionWith([rewrite({command: 'ls -la'}), rewrite({command: 'ls -la'})]).preToolUse(call)
    expect(answer.blocked).toBeUndefined()
    expect(answer.updated?.input).toEqual({command: 'ls -la'})
    expect(answer.updated?.by).toMatch(/^PreToolUse hook ".*hook-0\.sh" and PreToolUse hook ".*hook-1\.sh"$/)
  })

  it('blocks a call two hooks rewrite differently, and one a hook denies whatever it rewrote; control: no rewrite, nothing handed back', async () => {
    const differ = await sessionWith([rewrite({command: 'ls -la'}), rewrite({command: 'rm -rf .'})]).preToolUse(call)
    expect(differ.blocked).toMatch(/rewrote this call's input differently; this call was not run\.$/)
    expect(differ.updated).toBeUndefined()
    const denied = await sessionWith([rewrite({command: 'ls -la'}, 'deny')]).preToolUse(call)
    expect(denied.blocked).toContain('denied this call')
    expect(denied.updated).toBeUndefined()
    const plain = await sessionWith([{hookSpecificOutput: {additionalContext: 'fine', hookEventName: 'PreToolUse'}}]).preToolUse(call)
    expect(plain).toEqual({notes: ['fine']})
  })
})
