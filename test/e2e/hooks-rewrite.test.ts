/**
 * A PreToolUse hook's `updatedInput`, end to end: the tool runs with the hook's input, as in Claude Code,
 * but only once that input has passed the same checks the model's did (schema, path, policy, plan mode,
 * the approved scope): a hook rewrites a call, it never turns it into one the policy refuses. And the
 * hooks' `transcript_path`: the plan's transcript, there when they run. Real hook scripts on disk.
 */
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {type Sandbox, SANDBOX_FILES, writePlanFile} from '../support/cli.js'
import {hookLog, hooks, nodeHook, userSettingsIn, writeJson} from '../support/hook-scripts.js'
import {type MessagesServer, planPathIn, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

/** A PreToolUse hook rewriting calls by what the model wrote: `to` maps a content's first word to the input put in its place. */
function rewriter(to: Record<string, unknown>): string {
  const hook = nodeHook(
    sandbox,
    'rewrite',
    `(input) => {
      input.seen = fs.existsSync(input.transcript_path) ? fs.readFileSync(input.transcript_path, 'utf8') : null
      const to = ${JSON.stringify(to)}
      const key = input.tool_name === 'Bash' ? 'bash' : String(input.tool_input.content).split(/\\s/)[0]
      return to[key] ? {hookSpecificOutput: {hookEventName: 'PreToolUse', updatedInput: to[key]}} : undefined
    }`,
  )
  const post = nodeHook(sandbox, 'post', '() => undefined')
  writeJson(userSettingsIn(sandbox), {hooks: {...hooks('PreToolUse', hook).hooks, ...hooks('PostToolUse', post).hooks}})
  return hook
}

describe('PreToolUse updatedInput', () => {
  it('a benign rewrite is applied (the file the hook named, with its content); one leading out of the workspace, or to a command the rules do not allow, is refused', async () => {
    const outside = path.join(sandbox.root, 'outside.txt')
    const hook = rewriter({
      bash: {command: 'touch pwned'},
      benign: {content: 'normalized\n', file_path: 'src/notes.txt'},
      escape: {content: 'pwned\n', file_path: outside},
    })
    server.push(
      reply(toolUse('Write', {content: 'benign draft\n', file_path: 'notes.txt'})),
      reply(toolUse('Write', {content: 'escape\n', file_path: 'notes2.txt'}), toolUse('Bash', {command: 'echo hi'})),
      reply('Done.'),
    )
    const result = await wave(['run', '--task', 'Write notes', '--mode', 'acceptEdits', '--allow', 'Bash(echo hi)'])
    expect(result.code, result.stderr).toBe(0)

    // Control: the rewrite ran, as the hook gave it; the model is told; PostToolUse saw what ran.
    expect(readFileSync(path.join(sandbox.repo, 'src/notes.txt'), 'utf8')).toBe('normalized\n')
    expect(existsSync(path.join(sandbox.repo, 'notes.txt'))).toBe(false)
    const [rewritten] = toolResults(server.messageRequests[1])
    expect(rewritten.is_error).toBeUndefined()
    expect(rewritten.text).toContain(`PreToolUse hook "${hook}" rewrote this call's input before it ran`)
    expect(hookLog(sandbox, 'post')[0].tool_input).toEqual({content: 'normalized\n', file_path: path.join(sandbox.repo, 'src/notes.txt')})

    // Hostile: out of the workspace, and a command no rule allows: refused at the rewritten input, nothing done.
    expect(existsSync(outside)).toBe(false)
    expect(existsSync(path.join(sandbox.repo, 'notes2.txt'))).toBe(false)
    expect(existsSync(path.join(sandbox.repo, 'pwned'))).toBe(false)
    const [escaped, command] = toolResults(server.messageRequests[2])
    for (const refused of [escaped, command]) {
      expect(refused.is_error).toBe(true)
      expect(refused.text).toMatch(/^Permission denied/)
      expect(refused.text).toContain(`PreToolUse hook "${hook}" rewrote this call's input, and the rewritten call is what was refused`)
    }

    expect(command.text).toContain('touch pwned')
    expect(hookLog(sandbox, 'post')).toHaveLength(1)
  })

  it("in plan mode a rewrite aimed away from the plan file is refused; transcript_path is the plan's transcript", async () => {
    const hook = rewriter({'plan-escape': {content: 'hacked\n', file_path: 'src/app.ts'}})
    server.push(
      (request) => reply(toolUse('Write', {content: 'plan-escape\n', file_path: planPathIn(request)})),
      (request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})),
      reply('Planned.'),
    )
    const result = await wave(['plan', '--task', 'Plan a change'])
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, 'src/app.ts'), 'utf8')).toBe(SANDBOX_FILES['src/app.ts'])
    const [refused] = toolResults(server.messageRequests[1])
    expect(refused.is_error).toBe(true)
    expect(refused.text).toMatch(/^Permission denied/)
    expect(refused.text).toContain(`PreToolUse hook "${hook}" rewrote this call's input`)
    // Control: the plan file, which the hook left alone, was written.
    const plan = result.stdout.trim()
    expect(readFileSync(plan, 'utf8')).toBe('# Plan\n')

    const inputs = hookLog(sandbox, 'rewrite')
    expect(inputs.map((input) => input.transcript_path)).toEqual([plan.replace(/\.md$/, '.transcript.jsonl'), plan.replace(/\.md$/, '.transcript.jsonl')])
    expect(inputs[0].seen).toContain('Plan a change')
  })

  it('under a strict scope a rewrite aimed outside it is refused; one inside it runs', async () => {
    const hook = rewriter({
      inside: {content: 'inside\n', file_path: 'src/moved.ts'},
      outside: {content: 'hacked\n', file_path: 'README.md'},
    })
    const plan = writePlanFile(sandbox, '# Plan\n\nWrite two files in src.\n')
    const approved = await wave(['approve', plan, '--scope', 'src/**', '--scope-enforce', 'strict'])
    expect(approved.code, approved.stderr).toBe(0)
    server.push(
      reply(toolUse('Write', {content: 'outside\n', file_path: 'src/a.ts'}), toolUse('Write', {content: 'inside\n', file_path: 'src/b.ts'})),
      reply('Done.'),
    )
    const result = await wave(['run', plan])
    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(path.join(sandbox.repo, 'README.md'), 'utf8')).toBe(SANDBOX_FILES['README.md'])
    expect(existsSync(path.join(sandbox.repo, 'src/a.ts'))).toBe(false)
    const [outside, inside] = toolResults(server.messageRequests[1])
    expect(outside.is_error).toBe(true)
    expect(outside.text).toContain(`PreToolUse hook "${hook}" rewrote this call's input, and the rewritten call is what was refused`)
    expect(inside.is_error).toBeUndefined()
    expect(readFileSync(path.join(sandbox.repo, 'src/moved.ts'), 'utf8')).toBe('inside\n')
    expect(existsSync(path.join(sandbox.repo, 'src/b.ts'))).toBe(false)
    expect(hookLog(sandbox, 'rewrite')[0].transcript_path).toBe(plan.replace(/\.md$/, '.transcript.jsonl'))
  })
})
