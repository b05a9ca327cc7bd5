/**
 * Issue #5, hostile tool calls in run mode (plan mode's set is in plan.test.ts): escapes through `..`,
 * absolute paths, symlinks leading out (file, directory, dangling), reads outside, Bash past its rules,
 * unknown tools and malformed inputs. Each is refused with an error result, the session goes on, and
 * nothing changes on disk outside what wave keeps beside the plan.
 */
import {mkdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {makeSandbox, runWave, type Sandbox, snapshotTree, TEST_API_KEY} from '../support/cli.js'
import {type MessagesServer, reply, startMessagesServer, toolNames, toolResults, toolUse, type ToolUseBlock} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
let outside: string

beforeEach(async () => {
  sandbox = makeSandbox()
  server = await startMessagesServer()
  // What a hostile call would reach for: a directory beside the workspace, and links into it.
  outside = path.join(sandbox.root, 'outside')
  mkdirSync(outside)
  writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n')
  symlinkSync(outside, path.join(sandbox.repo, 'link-out'))
  symlinkSync(path.join(outside, 'secret.txt'), path.join(sandbox.repo, 'secret-link'))
  symlinkSync(path.join(outside, 'not-yet.txt'), path.join(sandbox.repo, 'dangling'))
  symlinkSync(path.join(outside, 'no-dir'), path.join(sandbox.repo, 'dangling-dir'))
  symlinkSync('/', path.join(sandbox.repo, 'root-link'))
  mkdirSync(sandbox.plansDir, {recursive: true})
  writeFileSync(path.join(sandbox.plansDir, 'other-plan.md'), "# someone else's plan\n")
})

afterEach(async () => {
  await server.close()
  sandbox.cleanup()
})

const PLAN = '# Plan\n\n1. Nothing, really.\n'

/** The files wave keeps beside a plan: they may change during a run; nothing else may. */
// wave's own files: the plan's sidecars, and its cache of the model's description (model/catalog.ts), and the revision an inline approval records.
const OWN =
  /^\.wave\/(?:plans\/hostile-run\.(approval\.json|state\.json|transcript\.jsonl|revisions\.jsonl)|cache\/(?:models\/(?:claude-sonnet-5-5-[0-9a-f]{16}\.json)?)?)$/

interface Refusal {
  call: ToolUseBlock
  /** What the error result must say. */
  says: RegExp
}

const refused = (call: ToolUseBlock, says: RegExp): Refusal => ({call, says})

/**
 * Runs one approved plan in `mode` whose first turn makes every call at once; asserts each is refused
 * with its message, the run goes on to exit 0, and nothing changed on disk but wave's own files.
 */
async function expectAllRefused(mode: string, allow: string[], refusals: Refusal[]) {
  const planPath = path.join(sandbox.plansDir, 'hostile-run.md')
  writeFileSync(planPath, PLAN)
  server.push(reply(...refusals.map((r) => r.call)), reply('I could do none of it.'))
  const before = {home: snapshotTree(sandbox.home), outside: snapshotTree(outside), repo: snapshotTree(sandbox.repo)}

  const result = await runWave(['run', planPath, '--approve', '--mode', mode, ...allow.flatMap((rule) => ['--allow', rule])], {
    cwd: sandbox.repo,
    home: sandbox.home,
    server,
  })

  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout.trim()).toBe('I could do none of it.')
  const results = toolResults(server.messageRequests[1])
  expect(results).toHaveLength(refusals.length)
  for (const [i, r] of results.entries()) {
    const {call, says} = refusals[i]
    const label = `call ${i}: ${call.name} ${JSON.stringify(call.input)} → ${r.text}`
    expect(r.is_error, label).toBe(true)
    expect(r.text, label).toMatch(says)
    expect(r.text, label).not.toContain('outside secret')
  }

  expect(snapshotTree(sandbox.repo)).toEqual(before.repo)
  expect(snapshotTree(outside)).toEqual(before.outside)
  const home = snapshotTree(sandbox.home)
  const changed = Object.keys({...before.home, ...home}).filter((file) => before.home[file] !== home[file] && !OWN.test(file))
  expect(changed).toEqual([])
  expect(readFileSync(path.join(sandbox.plansDir, 'other-plan.md'), 'utf8')).toBe("# someone else's plan\n")
  expect(result.stdout + result.stderr).not.toContain(TEST_API_KEY)
  return {requests: server.messageRequests, results}
}

const OUTSIDE = /outside the workspace/
const DENIED = /Permission denied/

describe('wave run: hostile calls are refused with nothing changed', () => {
  it('acceptEdits with Bash(npm test:*): escapes, links out, reads outside, commands past the rule, bad calls', async () => {
    const out = (file: string) => path.join(outside, file)
    const {requests} = await expectAllRefused(
      'acceptEdits',
      ['Bash(npm test:*)'],
      [
        // Writes and edits that climb out, directly or through links.
        refused(toolUse('Write', {content: 'x', file_path: '../escape.txt'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: 'src/../../escape.txt'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: out('abs.txt')}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: '/etc/wave-pwned'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: '~/.bashrc'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: 'link-out/via-dir-link.txt'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: 'secret-link'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: 'dangling'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: 'dangling-dir/new.txt'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: path.join(sandbox.plansDir, 'other-plan.md')}), OUTSIDE),
        refused(toolUse('Edit', {file_path: 'secret-link', new_string: 'evil', old_string: 'outside'}), OUTSIDE),
        refused(toolUse('Edit', {file_path: '../outside/secret.txt', new_string: 'evil', old_string: 'outside'}), OUTSIDE),
        refused(toolUse('Edit', {file_path: 'root-link/etc/hostname', new_string: 'evil', old_string: 'a'}), OUTSIDE),
        // Reads outside.
        refused(toolUse('Read', {file_path: '/etc/passwd'}), OUTSIDE),
        refused(toolUse('Read', {file_path: 'link-out/secret.txt'}), OUTSIDE),
        refused(toolUse('Read', {file_path: 'secret-link'}), OUTSIDE),
        refused(toolUse('Read', {file_path: '../outside/secret.txt'}), OUTSIDE),
        refused(toolUse('Read', {file_path: path.join(sandbox.plansDir, 'other-plan.md')}), OUTSIDE),
        refused(toolUse('LS', {path: '..'}), OUTSIDE),
        refused(toolUse('LS', {path: 'link-out'}), OUTSIDE),
        refused(toolUse('LS', {path: 'root-link'}), OUTSIDE),
        refused(toolUse('Glob', {pattern: '../**'}), /must not contain "\.\."/),
        refused(toolUse('Glob', {pattern: '**/../../**'}), /must not contain "\.\."/),
        refused(toolUse('Glob', {pattern: '/etc/*'}), /must be relative/),
        refused(toolUse('Glob', {path: '..', pattern: '**/*'}), OUTSIDE),
        refused(toolUse('Glob', {path: 'link-out', pattern: '*'}), OUTSIDE),
        refused(toolUse('Grep', {path: '/etc', pattern: 'root'}), OUTSIDE),
        refused(toolUse('Grep', {glob: '../../**', pattern: 'secret'}), /must not contain "\.\."/),
        refused(toolUse('Grep', {path: 'secret-link', pattern: 'secret'}), OUTSIDE),
        refused(toolUse('Grep', {path: '~', pattern: 'secret'}), OUTSIDE),
        // Commands past the one rule: chained, substituted, piped, redirected, or simply other.
        refused(toolUse('Bash', {command: 'touch pwned'}), /headless run.*Bash\(touch pwned:\*\)/),
        refused(toolUse('Bash', {command: 'npm test && touch pwned'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test; touch pwned'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test || touch pwned'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test & touch pwned'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test | tee pwned'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test\ntouch pwned'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test $(touch pwned)'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test `touch pwned`'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test > pwned'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test < /etc/passwd'}), DENIED),
        refused(toolUse('Bash', {command: 'npm test <(cat /etc/passwd)'}), DENIED),
        refused(toolUse('Bash', {command: 'npm testing'}), DENIED),
        // Tools that do not exist or are not for this session, and malformed inputs.
        refused(toolUse('Delete', {file_path: 'src/app.ts'}), /Unknown tool Delete/),
        refused(toolUse('WebFetch', {url: 'https://example.com/'}), /WebFetch is not available in acceptEdits mode/),
        refused(toolUse('EnterPlanMode', {}), /not available in acceptEdits mode/),
        refused(toolUse('ExitPlanMode', {}), /not available in acceptEdits mode/),
        refused(toolUse('Write', {file_path: 'src/app.ts'}), /Invalid input for Write/),
        refused(toolUse('Write', {content: 'x', file_path: ''}), /must not be empty/),
        refused(toolUse('Read', {file_path: 42}), /Invalid input for Read/),
        refused(toolUse('Edit', {file_path: 'src/app.ts', new_string: 'b', old_string: 'a', replace_all: 'yes'}), /Invalid input for Edit/),
        refused(toolUse('Bash', {}), /Invalid input for Bash/),
        refused(toolUse('Bash', {command: 'npm test', timeout: -5}), /Invalid input for Bash/),
        refused(toolUse('Read', 'src/app.ts'), /Invalid input for Read/),
        refused(toolUse('Edit', {file_path: 'src', new_string: 'b', old_string: 'a'}), /not a regular file/),
        refused(toolUse('Write', {content: 'x', file_path: 'src'}), /is a directory/),
      ],
    )
    // Bash is offered (a rule names it), WebFetch and plan-mode tools are not.
    expect(toolNames(requests[0])).toContain('Bash')
    expect(toolNames(requests[0])).not.toContain('WebFetch')
  })

  it('acceptEdits without a Bash rule, and default mode: commands and edits are refused, not asked', async () => {
    await expectAllRefused(
      'acceptEdits',
      [],
      [
        refused(toolUse('Bash', {command: 'ls'}), /Bash is not available in acceptEdits mode/),
        refused(toolUse('Bash', {command: 'npm test'}), /Bash is not available in acceptEdits mode/),
      ],
    )
    const planPath = path.join(sandbox.plansDir, 'hostile-run.md')
    const before = snapshotTree(sandbox.repo)
    server.push(
      reply(
        toolUse('Write', {content: 'x', file_path: 'new.txt'}),
        toolUse('Edit', {file_path: 'src/app.ts', new_string: 'evil', old_string: 'greet'}),
        toolUse('Bash', {command: 'touch pwned'}),
        toolUse('Read', {file_path: 'secret-link'}),
      ),
      reply('Nothing allowed.'),
    )
    const result = await runWave(['run', planPath, '--approve', '--mode', 'default'], {cwd: sandbox.repo, home: sandbox.home, server})
    expect(result.code, result.stderr).toBe(0)
    const results = toolResults(server.messageRequests[3])
    expect(results.map((r) => r.is_error)).toEqual([true, true, true, true])
    expect(results[0].text).toMatch(/not available in default mode/)
    expect(results[1].text).toMatch(/not available in default mode/)
    expect(results[2].text).toMatch(/not available in default mode/)
    expect(results[3].text).toMatch(OUTSIDE)
    expect(snapshotTree(sandbox.repo)).toEqual(before)
  })

  it('bypassPermissions still keeps every file tool inside the workspace', async () => {
    await expectAllRefused(
      'bypassPermissions',
      [],
      [
        refused(toolUse('Write', {content: 'x', file_path: '../escape.txt'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: path.join(outside, 'abs.txt')}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: 'link-out/via-dir-link.txt'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: 'dangling'}), OUTSIDE),
        refused(toolUse('Write', {content: 'x', file_path: 'dangling-dir/new.txt'}), OUTSIDE),
        refused(toolUse('Edit', {file_path: 'secret-link', new_string: 'evil', old_string: 'outside'}), OUTSIDE),
        refused(toolUse('Read', {file_path: '/etc/passwd'}), OUTSIDE),
        refused(toolUse('Read', {file_path: 'link-out/secret.txt'}), OUTSIDE),
        refused(toolUse('LS', {path: '/'}), OUTSIDE),
        refused(toolUse('Glob', {pattern: '../**'}), /must not contain "\.\."/),
        refused(toolUse('Grep', {path: '/etc', pattern: 'root'}), OUTSIDE),
        refused(toolUse('WebFetch', {url: 'http://127.0.0.1:1/'}), /WebFetch is not available in bypassPermissions mode/),
        refused(toolUse('Delete', {file_path: 'src/app.ts'}), /Unknown tool Delete/),
      ],
    )
  })

  it('glob patterns that expand to ".." find nothing outside', async () => {
    const planPath = path.join(sandbox.plansDir, 'hostile-run.md')
    writeFileSync(planPath, PLAN)
    server.push(
      reply(
        toolUse('Glob', {pattern: '{..,src}/**'}),
        toolUse('Glob', {pattern: '{../outside,src}/*'}),
        toolUse('Grep', {glob: '{..,src}/**', output_mode: 'content', pattern: 'secret|greet'}),
        toolUse('Glob', {pattern: 'link-out/**'}),
        toolUse('Grep', {output_mode: 'content', pattern: 'outside secret'}),
      ),
      reply('Searched.'),
    )
    const result = await runWave(['run', planPath, '--approve', '--mode', 'acceptEdits'], {cwd: sandbox.repo, home: sandbox.home, server})
    expect(result.code, result.stderr).toBe(0)
    for (const r of toolResults(server.messageRequests[1])) {
      expect(r.text).not.toContain('outside secret')
      expect(r.text).not.toMatch(/outside\/|secret\.txt/)
    }
  })
})
