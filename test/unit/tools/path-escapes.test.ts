/**
 * Issue #12: writes that must not escape however the path is spelled. Through the dispatcher, as the
 * model's calls arrive (resolution, policy, re-check, the tool's confined write), in the two modes that
 * allow writing without asking: 45 missing directories below a link to `..`, a link to `.git`, a link
 * out; a link loop; a link swapped between two calls. Checked on disk: nothing outside the workspace,
 * nothing in .git or .wave.
 */
import {mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {dispatch, type DispatchEnv} from '../../../src/tools/dispatch.js'
import {NO_RULES, type PermissionMode} from '../../../src/policy/policy.js'
import {ToolRegistry} from '../../../src/tools/registry.js'
import edit from '../../../src/tools/edit.js'
import write from '../../../src/tools/write.js'

let base: string
let repo: string
let outside: string

beforeEach(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-escapes-')))
  repo = path.join(base, 'repo')
  outside = path.join(base, 'outside')
  mkdirSync(path.join(repo, '.git', 'hooks'), {recursive: true})
  mkdirSync(path.join(repo, '.wave'))
  mkdirSync(path.join(repo, 'src'))
  mkdirSync(outside)
  writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n')
  symlinkSync('..', path.join(repo, 'up'))
  symlinkSync('.git', path.join(repo, 'git'))
  symlinkSync('.wave', path.join(repo, 'cfg'))
  symlinkSync(outside, path.join(repo, 'out'))
  symlinkSync('src', path.join(repo, 'src-link'))
  symlinkSync('loop-b', path.join(repo, 'loop-a'))
  symlinkSync('loop-a', path.join(repo, 'loop-b'))
})

afterEach(() => {
  rmSync(base, {force: true, recursive: true})
})

function env(mode: PermissionMode): DispatchEnv {
  const refuse = async (): Promise<string> => {
    throw new Error('no session control here')
  }

  return {
    policy: {headless: true, mode, rules: NO_RULES, workspaceRoot: repo},
    registry: new ToolRegistry([write, edit]),
    session: {enterPlanMode: refuse, exitPlanMode: refuse},
    signal: new AbortController().signal,
  }
}

/** Every entry below `dir`, links listed but not followed. */
function tree(dir: string): string[] {
  const found: string[] = []
  const walk = (at: string) => {
    for (const entry of readdirSync(at, {withFileTypes: true})) {
      const full = path.join(at, entry.name)
      found.push(path.relative(dir, full))
      if (entry.isDirectory()) walk(full)
    }
  }

  walk(dir)
  return found.sort()
}

const deep = Array.from({length: 45}, (_, i) => `d${i}`).join('/')
const modes: PermissionMode[] = ['acceptEdits', 'bypassPermissions']

describe.each(modes)('%s: writes stay inside the workspace and out of .git and .wave', (mode) => {
  it.each<[string, RegExp]>([
    [`up/${deep}/escape.txt`, /outside the workspace/],
    [`up/outside/${deep}/escape.txt`, /outside the workspace/],
    [`out/${deep}/escape.txt`, /outside the workspace/],
    [`git/${deep}/hooks/post-checkout`, /inside a \.git directory/],
    [`git/hooks/${deep}/pre-commit`, /inside a \.git directory/],
    ['git/hooks/pre-commit', /inside a \.git directory/],
    [`cfg/${deep}/settings.json`, /\.wave directory/],
    ['cfg/settings.json', /\.wave directory/],
    ['.wave/settings.json', /\.wave directory/],
    [`loop-a/${deep}/f.txt`, /symbolic link/],
    ['loop-b', /symbolic link/],
  ])('Write %s is refused', async (file, says) => {
    const before = {base: readdirSync(base).sort(), git: tree(path.join(repo, '.git')), outside: tree(outside), wave: tree(path.join(repo, '.wave'))}
    const outcome = await dispatch({id: 't', input: {content: 'pwned', file_path: file}, name: 'Write'}, env(mode))
    expect(outcome.isError, outcome.content).toBe(true)
    expect(outcome.content).toMatch(/^Permission denied: /)
    expect(outcome.content).toMatch(says)
    expect({base: readdirSync(base).sort(), git: tree(path.join(repo, '.git')), outside: tree(outside), wave: tree(path.join(repo, '.wave'))}).toEqual(before)
  })

  it('Edit through a link into .wave or out is refused', async () => {
    writeFileSync(path.join(repo, '.wave', 'settings.json'), '{"permissions": {"allow": []}}\n')
    const call = (file: string) => ({id: 't', input: {file_path: file, new_string: '["Bash"]', old_string: '[]'}, name: 'Edit'})
    expect((await dispatch(call('cfg/settings.json'), env(mode))).content).toMatch(/\.wave directory/)
    expect((await dispatch(call('out/secret.txt'), env(mode))).content).toMatch(/outside the workspace/)
    expect(readdirSync(path.join(repo, '.wave'))).toEqual(['settings.json'])
  })

  it(`Write below a link inside the workspace creates all 45 directories where the link leads`, async () => {
    const outcome = await dispatch({id: 't', input: {content: 'ok', file_path: `src-link/${deep}/f.txt`}, name: 'Write'}, env(mode))
    expect(outcome.isError, outcome.content).toBe(false)
    expect(outcome.changed).toBe(path.join(repo, 'src', deep, 'f.txt'))
    expect(tree(path.join(repo, 'src'))).toContain(path.join(deep, 'f.txt'))
  })

  it('a directory swapped for a link between two calls: the second call is refused', async () => {
    const first = await dispatch({id: 't', input: {content: 'one', file_path: `work/${deep}/f.txt`}, name: 'Write'}, env(mode))
    expect(first.isError, first.content).toBe(false)
    rmSync(path.join(repo, 'work'), {recursive: true})
    symlinkSync(outside, path.join(repo, 'work'))
    const second = await dispatch({id: 't', input: {content: 'two', file_path: `work/${deep}/f.txt`}, name: 'Write'}, env(mode))
    expect(second.content).toMatch(/outside the workspace/)
    expect(tree(outside)).toEqual(['secret.txt'])
  })
})
