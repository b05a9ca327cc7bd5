/**
 * Issue #11, item 5: the API key never leaves through a tool call. A call whose input holds the literal
 * key is refused by the dispatcher, whatever the tool (written, run, sent), and the refusal does not
 * repeat the key; the sandbox settings of the session reach the tool.
 */
import {existsSync, mkdtempSync, readFileSync, realpathSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {NO_RULES, parseRule} from '../../../src/policy/policy.js'
import {dispatch, type DispatchEnv} from '../../../src/tools/dispatch.js'
import bash from '../../../src/tools/bash.js'
import edit from '../../../src/tools/edit.js'
import {ToolRegistry} from '../../../src/tools/registry.js'
import write from '../../../src/tools/write.js'

const KEY = 'sk-ant-api03-never-leaves-0123456789'
let repo: string

beforeEach(() => {
  repo = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-key-')))
  process.env.ANTHROPIC_API_KEY = KEY
})

afterEach(() => {
  delete process.env.ANTHROPIC_API_KEY
  rmSync(repo, {force: true, recursive: true})
})

function env(sandbox?: DispatchEnv['sandbox']): DispatchEnv {
  const refuse = async (): Promise<string> => {
    throw new Error('no session control here')
  }

  return {
    policy: {headless: true, mode: 'bypassPermissions', rules: {...NO_RULES, allow: [parseRule('Bash')]}, workspaceRoot: repo},
    registry: new ToolRegistry([write, edit, bash]),
    sandbox,
    session: {enterPlanMode: refuse, exitPlanMode: refuse},
    signal: new AbortController().signal,
  }
}

describe('a tool call holding the API key', () => {
  const calls: Array<[string, string, Record<string, unknown>]> = [
    ['Write, in the content', 'Write', {content: `key=${KEY}\n`, file_path: 'leak.txt'}],
    ['Write, in the path', 'Write', {content: 'x', file_path: `${KEY}.txt`}],
    ['Bash', 'Bash', {command: `echo ${KEY} > leak.txt`}],
  ]
  for (const [label, name, input] of calls) {
    it(`is refused: ${label}`, async () => {
      const outcome = await dispatch({id: 'call-1', input, name}, env())
      expect(outcome.isError).toBe(true)
      expect(outcome.content).toMatch(/^Permission denied: the input of \w+ holds wave's API key/)
      expect(outcome.content).not.toContain(KEY)
      expect(existsSync(path.join(repo, 'leak.txt'))).toBe(false)
      expect(existsSync(path.join(repo, `${KEY}.txt`))).toBe(false)
    })
  }

  it('is refused for Edit even when the file exists and the edit would apply', async () => {
    await dispatch({id: 'call-0', input: {content: 'token = PLACEHOLDER\n', file_path: 'config.txt'}, name: 'Write'}, env())
    const outcome = await dispatch({id: 'call-1', input: {file_path: 'config.txt', new_string: KEY, old_string: 'PLACEHOLDER'}, name: 'Edit'}, env())
    expect(outcome.isError).toBe(true)
    expect(readFileSync(path.join(repo, 'config.txt'), 'utf8')).toBe('token = PLACEHOLDER\n')
  })

  it('is not confused with a call that does not hold it', async () => {
    const outcome = await dispatch({id: 'call-1', input: {content: 'sk-ant-something-else\n', file_path: 'ok.txt'}, name: 'Write'}, env())
    expect(outcome.isError).toBe(false)
    expect(readFileSync(path.join(repo, 'ok.txt'), 'utf8')).toBe('sk-ant-something-else\n')
  })
})

describe("the session's sandbox settings", () => {
  it('reach Bash: no network namespace of its own only when the session allows the network', async () => {
    const interfaces = async (sandbox?: DispatchEnv['sandbox']) =>
      Number((await dispatch({id: 'call-1', input: {command: 'grep -c : /proc/net/dev'}, name: 'Bash'}, env(sandbox))).content.trim())
    // /proc/net/dev lists the interfaces of the reader's network namespace: a sandbox's own has only lo.
    const onHost = await interfaces({enabled: false, network: false})
    expect(onHost).toBeGreaterThan(1)
    expect(await interfaces()).toBe(1)
    expect(await interfaces({enabled: true, network: false})).toBe(1)
    expect(await interfaces({enabled: true, network: true})).toBe(onHost)
  })
})
