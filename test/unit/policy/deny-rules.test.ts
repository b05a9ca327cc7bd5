/**
 * Issue #11, "deny that denies": deny rules through the real dispatcher, judged by files on disk and by
 * what the tools return. A Bash deny rule denies when any simple command matches, or when the command
 * cannot be fully analysed; `Read(...)` and `Edit(...)` deny rules cover every reading and writing tool.
 */
import {existsSync} from 'node:fs'
import {readFile, symlink} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import {useWorkspaces} from '../tools/context.js'
import {callTool} from './dispatcher.js'

const workspace = useWorkspaces()

describe('a Bash deny rule', () => {
  const RM = {deny: ['Bash(rm:*)']}

  // Each would remove `victim` if it ran (the control run proves it); under the deny rule it must not run.
  it.each([
    'rm victim',
    'true; rm victim',
    'ls && rm victim',
    'ls || true; rm victim',
    'ls | rm victim',
    'ls\nrm victim',
    '(ls; rm victim)',
    '{ ls; rm victim; }',
    'rm victim </dev/null',
    'rm victim 2>&1 >/dev/null',
    'rm $(echo victim)',
    'rm "$(echo victim)"',
    'rm ${x:-victim}',
    'X=1 rm victim',
    '"rm" victim',
    String.raw`\rm victim`,
    '/bin/rm victim',
    'env rm victim',
    'env -i PATH=/usr/bin:/bin rm victim',
    'command rm victim',
    'builtin command rm victim',
    'exec rm victim',
    'nohup rm victim',
    'time rm victim',
    'nice -n 5 rm victim',
    'timeout 5 rm victim',
    'echo victim | xargs rm',
    'find . -name victim -exec rm "{}" ";"',
    "bash -c 'rm victim'",
    `sh -c "ls; rm victim"`,
    "bash -o pipefail -c 'timeout 5 rm victim'",
    "eval 'rm victim'",
    `bash -c "rm \\$(echo victim)"`,
  ])('%j is denied and does not run', async (command) => {
    const root = await workspace({victim: 'still here\n'})
    const victim = path.join(root, 'victim')

    const control = await callTool(root, 'bypassPermissions', {}, 'Bash', {command})
    expect(existsSync(victim), `control run of ${JSON.stringify(command)}: ${control.content}`).toBe(false)

    const again = await workspace({victim: 'still here\n'})
    const outcome = await callTool(again, 'bypassPermissions', RM, 'Bash', {command})
    expect(outcome.decision?.decision).toBe('deny')
    expect(outcome.content).toMatch(/^Permission denied: Bash is denied by the rule Bash\(rm:\*\)/)
    expect(await readFile(path.join(again, 'victim'), 'utf8')).toBe('still here\n')
  })

  it.each([
    ['ls', 'victim'],
    ['echo rm victim', 'rm victim'],
    ['echo "a; rm victim" | cat', 'a; rm victim'],
    ["bash -c 'echo fine'", 'fine'],
    ['rmdir --help >/dev/null && echo ok', 'ok'],
  ])('%j runs: no simple command is rm', async (command, output) => {
    const root = await workspace({victim: 'still here\n'})
    const outcome = await callTool(root, 'bypassPermissions', RM, 'Bash', {command})
    expect(outcome.decision?.decision).toBe('allow')
    expect(outcome.content).toBe(output)
    expect(existsSync(path.join(root, 'victim'))).toBe(true)
  })

  it('says why a command it cannot analyse is denied', async () => {
    const root = await workspace()
    const outcome = await callTool(root, 'bypassPermissions', RM, 'Bash', {command: 'ls $HOME'})
    expect(outcome.content).toBe(
      'Permission denied: Bash is denied by the rule Bash(rm:*): a command wave cannot fully analyse (it has a parameter expansion ($name)) counts as matching every deny rule.',
    )
  })

  it('denies git push after git status', async () => {
    const root = await workspace()
    const outcome = await callTool(root, 'bypassPermissions', {deny: ['Bash(git push:*)']}, 'Bash', {command: 'git status && git push origin main'})
    expect(outcome.decision?.decision).toBe('deny')
    expect(outcome.content).toBe('Permission denied: Bash is denied by the rule Bash(git push:*).')
  })
})

describe('a Read deny rule covers every reading tool', () => {
  const FILES = {'.env': 'SECRET=hunter2\n', 'a.txt': 'SECRET is referenced here\n', 'secrets/key.txt': 'SECRET key\n', 'src/b.txt': 'SECRET too\n'}
  const DENY = {deny: ['Read(./.env)', 'Read(./secrets/**)']}

  async function files(): Promise<string> {
    const root = await workspace(FILES)
    await symlink('.env', path.join(root, 'env-link'))
    return root
  }

  it.each<[string, string, Record<string, unknown>]>([
    ['Read', 'Read', {file_path: '.env'}],
    ['Read through a symlink', 'Read', {file_path: 'env-link'}],
    ['Read in a denied directory', 'Read', {file_path: 'secrets/key.txt'}],
    ['Grep on the file', 'Grep', {path: '.env', pattern: 'SECRET'}],
    ['Grep in a denied directory', 'Grep', {path: 'secrets', pattern: 'SECRET'}],
    ['LS of a denied directory', 'LS', {path: 'secrets'}],
    ['Glob in a denied directory', 'Glob', {path: 'secrets', pattern: '*'}],
  ])('%s is refused', async (_name, tool, input) => {
    const root = await files()
    const outcome = await callTool(root, 'acceptEdits', DENY, tool, input)
    expect(outcome.decision?.decision).toBe('deny')
    expect(outcome.content).toMatch(/^Permission denied: \w+ is denied by the rule Read\(/)
    expect(outcome.content).not.toContain('hunter2')
  })

  it.each<[string, string, Record<string, unknown>, string, string]>([
    ['Grep, files', 'Grep', {pattern: 'SECRET'}, 'a.txt\nsrc/b.txt', '.env\na.txt\nsecrets/key.txt\nsrc/b.txt'],
    [
      'Grep, content',
      'Grep',
      {output_mode: 'content', pattern: 'SECRET'},
      'a.txt:1:SECRET is referenced here\nsrc/b.txt:1:SECRET too',
      '.env:1:SECRET=hunter2\na.txt:1:SECRET is referenced here\nsecrets/key.txt:1:SECRET key\nsrc/b.txt:1:SECRET too',
    ],
    ['Grep, count', 'Grep', {output_mode: 'count', pattern: 'SECRET'}, 'a.txt:1\nsrc/b.txt:1', '.env:1\na.txt:1\nsecrets/key.txt:1\nsrc/b.txt:1'],
    ['Grep with a glob', 'Grep', {glob: '.env', pattern: 'hunter2'}, 'No files found', '.env'],
    ['LS', 'LS', {path: '.'}, 'a.txt\nsrc/', '.env\na.txt\nenv-link -> .env\nsecrets/\nsrc/'],
  ])('%s leaves the denied files out', async (_name, tool, input, denied, unruled) => {
    const root = await files()
    const control = await callTool(root, 'acceptEdits', {}, tool, input)
    expect(control.content).toBe(unruled)
    const outcome = await callTool(root, 'acceptEdits', DENY, tool, input)
    expect(outcome.isError).toBe(false)
    expect(outcome.content).toBe(denied)
  })

  it('Glob leaves the denied files out', async () => {
    const root = await files()
    const sorted = (text: string) => text.split('\n').sort()
    const control = await callTool(root, 'acceptEdits', {}, 'Glob', {pattern: '**/*'})
    expect(sorted(control.content)).toEqual(['.env', 'a.txt', 'secrets/key.txt', 'src/b.txt'])
    const outcome = await callTool(root, 'acceptEdits', DENY, 'Glob', {pattern: '**/*'})
    expect(sorted(outcome.content)).toEqual(['a.txt', 'src/b.txt'])
  })
})

describe('an Edit deny rule covers every writing tool', () => {
  const DENY = {deny: ['Edit(./src/**)', 'Edit(./config.json)']}

  it.each<[string, string, Record<string, unknown>]>([
    ['Write a new file', 'Write', {content: 'x\n', file_path: 'src/new.ts'}],
    ['Write over a file', 'Write', {content: 'x\n', file_path: 'src/a.ts'}],
    ['Write a denied file', 'Write', {content: '{"evil":true}\n', file_path: 'config.json'}],
    ['Edit a file', 'Edit', {file_path: 'src/a.ts', new_string: 'evil', old_string: 'original'}],
    ['Edit a denied file', 'Edit', {file_path: 'config.json', new_string: 'true', old_string: 'false'}],
  ])('%s is refused and changes nothing', async (_name, tool, input) => {
    const root = await workspace({'config.json': '{"on":false}\n', 'src/a.ts': 'original\n'})
    const outcome = await callTool(root, 'acceptEdits', DENY, tool, input)
    expect(outcome.decision?.decision).toBe('deny')
    expect(outcome.content).toMatch(/^Permission denied: (Write|Edit) is denied by the rule Edit\(/)
    expect(await readFile(path.join(root, 'src/a.ts'), 'utf8')).toBe('original\n')
    expect(await readFile(path.join(root, 'config.json'), 'utf8')).toBe('{"on":false}\n')
    expect(existsSync(path.join(root, 'src/new.ts'))).toBe(false)
  })

  it('leaves other files writable', async () => {
    const root = await workspace({'src/a.ts': 'original\n'})
    const outcome = await callTool(root, 'acceptEdits', DENY, 'Write', {content: 'notes\n', file_path: 'docs/notes.md'})
    expect(outcome.isError).toBe(false)
    expect(await readFile(path.join(root, 'docs/notes.md'), 'utf8')).toBe('notes\n')
  })
})
