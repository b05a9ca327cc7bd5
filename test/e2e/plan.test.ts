import {existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {gitHead, type Sandbox, snapshotTree, TEST_API_KEY} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, reply, systemText, text, toolNames, toolResults, toolUse} from '../support/messages-server.js'

const NO_PLAN_YET =
  /## Plan File Info:\nNo plan file exists yet\. You should create your plan at (\S+) using the Write tool if you need to\.\nYou should build your plan incrementally by writing to or editing this file\. NOTE that this is the only file you are allowed to edit - other than this you are only allowed to take READ-ONLY actions\.$/
const PLAN_EXISTS =
  /## Plan File Info:\nA plan file already exists at (\S+)\. You can read it and make incremental edits using the Edit tool if you need to\.\nYou should build your plan incrementally by writing to or editing this file\. NOTE that this is the only file you are allowed to edit - other than this you are only allowed to take READ-ONLY actions\.$/

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

describe('wave plan', () => {
  it('explores, writes the plan, edits it, and prints only its path', async () => {
    server.push(
      reply('Looking around.', toolUse('Glob', {pattern: '**/*.ts'}), toolUse('Read', {file_path: 'src/util.ts'})),
      reply(toolUse('Grep', {output_mode: 'content', pattern: 'greet'}), toolUse('LS', {path: '.'})),
      (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Rename greet to welcome.\n', file_path: planPathIn(request)})),
      (request) =>
        reply(
          toolUse('Edit', {file_path: planPathIn(request), new_string: '1. Rename greet to welcome everywhere.', old_string: '1. Rename greet to welcome.'}),
        ),
      reply('The plan is ready.'),
    )
    const before = snapshotTree(sandbox.repo)
    const result = await wave(['plan', '--task', 'Rename greet to welcome'])

    expect(result.stderr).not.toContain('Error')
    expect(result.code).toBe(0)
    const requests = server.messageRequests
    expect(requests).toHaveLength(5)
    const planPath = planPathIn(requests[0])
    expect(result.stdout).toBe(planPath + '\n')
    expect(path.dirname(planPath)).toBe(sandbox.plansDir)
    expect(path.basename(planPath)).toMatch(/^[a-z]+(-[a-z]+)+\.md$/)
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\n1. Rename greet to welcome everywhere.\n')

    // The reminder, word for word, as plan mode began: "no plan yet", before the Write and after it (the
    // system prompt stays the same between turns, for the prompt cache: test/e2e/prompt-cache.test.ts).
    for (const request of requests) expect(systemText(request)).toMatch(NO_PLAN_YET)
    for (const request of requests) expect(systemText(request)).not.toMatch(PLAN_EXISTS)

    // Plan mode offers read tools, the plan's writers, ExitPlanMode, Explore agents, and Bash (with its
    // background companions) in a throwaway sandbox where one can start (test/e2e/plan-observe.test.ts).
    expect(toolNames(requests[0]).sort()).toEqual([
      'Agent',
      'AskUserQuestion',
      'Bash',
      'Edit',
      'ExitPlanMode',
      'Glob',
      'Grep',
      'LS',
      'Read',
      'TaskOutput',
      'TaskStop',
      'TodoWrite',
      'ToolSearch',
      'Write',
    ])

    // The tools really ran: results carry the repository's content, and .gitignore is respected.
    const first = toolResults(requests[1])
    expect(first.map((r) => r.is_error ?? false)).toEqual([false, false])
    expect(first[0].text).toContain('src/util.ts')
    expect(first[1].text).toContain('return `hello ${name}`')
    const second = toolResults(requests[2])
    expect(second[0].text).toContain('src/util.ts:1:export function greet')
    expect(second[1].text).toContain('src/')
    expect(toolResults(requests[4])[0].is_error ?? false).toBe(false)

    // What wave knows of the plan is kept beside it; the repository is untouched.
    const state = JSON.parse(readFileSync(planPath.replace(/\.md$/, '.state.json'), 'utf8'))
    expect(state).toMatchObject({status: 'draft', task: 'Rename greet to welcome', workspace: sandbox.repo})
    expect(state.repository).toMatchObject({dirty: false, head: gitHead(sandbox.repo)})
    expect(snapshotTree(sandbox.repo)).toEqual(before)
    expect(readdirSync(sandbox.plansDir).sort()).toEqual(
      [path.basename(planPath), ...['.revisions.jsonl', '.state.json', '.transcript.jsonl'].map((suffix) => path.basename(planPath, '.md') + suffix)].sort(),
    )

    // The key goes to the API and nowhere else.
    expect(requests[0].headers.authorization).toBe(`Bearer ${TEST_API_KEY}`)
    expect(result.stdout + result.stderr).not.toContain(TEST_API_KEY)
    for (const file of readdirSync(sandbox.plansDir)) {
      expect(readFileSync(path.join(sandbox.plansDir, file), 'utf8')).not.toContain(TEST_API_KEY)
    }
  })

  it('prints one JSON object with --json', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})), reply('Done.'))
    const result = await wave(['plan', '--task', 'Do it', '--json'])
    expect(result.code).toBe(0)
    const output = JSON.parse(result.stdout)
    expect(output).toMatchObject({turns: 2, version: 1})
    expect(output.planPath).toBe(planPathIn(server.messageRequests[0]))
    expect(output.name).toBe(path.basename(output.planPath, '.md'))
    expect(output.usage.input_tokens).toBeGreaterThan(0)
    expect(output.usage.output_tokens).toBeGreaterThan(0)
    expect(result.stdout.trim().split('\n')).toHaveLength(1)
  })

  it('never reuses a plan name', async () => {
    const paths = new Set<string>()
    for (let i = 0; i < 3; i++) {
      server.push((request) => reply(toolUse('Write', {content: `# Plan ${i}\n`, file_path: planPathIn(request)})), reply('Done.'))
      const result = await wave(['plan', '--task', `Task ${i}`])
      expect(result.code).toBe(0)
      paths.add(result.stdout.trim())
    }

    expect(paths.size).toBe(3)
    for (const file of paths) expect(existsSync(file)).toBe(true)
  })

  it('ends with ExitPlanMode as with end_turn, and refuses ExitPlanMode before a plan exists', async () => {
    server.push(
      reply(toolUse('ExitPlanMode', {})),
      (request) => reply(toolUse('Write', {content: '# Plan\n', file_path: planPathIn(request)})),
      reply(toolUse('ExitPlanMode', {plan_path: 'src/app.ts'})),
      reply(toolUse('ExitPlanMode', {})),
    )
    const result = await wave(['plan', '--task', 'Plan and exit'])
    expect(result.code).toBe(0)
    expect(server.messageRequests).toHaveLength(4)
    expect(toolResults(server.messageRequests[1])[0]).toMatchObject({is_error: true})
    expect(toolResults(server.messageRequests[1])[0].text).toContain('No plan file exists yet')
    expect(toolResults(server.messageRequests[3])[0].text).toContain("not this session's plan file")
  })

  it('exits 2 naming ANTHROPIC_API_KEY when no key is set, with no request made', async () => {
    const result = await wave(['plan', '--task', 'x'], {ANTHROPIC_API_KEY: undefined})
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('ANTHROPIC_API_KEY')
    expect(result.stderr.trim().split('\n').length).toBeLessThanOrEqual(2)
    expect(result.stdout).toBe('')
    expect(server.requests).toHaveLength(0)
  })

  it('exits 2 without --task', async () => {
    const result = await wave(['plan'])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('--task')
    expect(server.requests).toHaveLength(0)
  })

  it('exits 2 for an unknown flag, in one line without a stack trace', async () => {
    const result = await wave(['plan', '--task', 'x', '--bogus'])
    expect(result.code).toBe(2)
    expect(result.stderr).not.toMatch(/\n\s+at /)
  })

  it('exits 1 when the session ends without a plan: no plan file, and nothing said to save as one, after the corrective turn', async () => {
    // A plan given in prose is saved (test/e2e/real-model.test.ts); a session that says nothing has none.
    server.push(reply(text(' ')), reply(text('')))
    const result = await wave(['plan', '--task', 'Nothing'])
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/without a plan/)
    expect(result.stdout).toBe('')
    expect(server.messageRequests).toHaveLength(2)
  })

  it('exits 5 at --max-turns', async () => {
    server.push(reply(toolUse('LS', {path: '.'})), reply(toolUse('LS', {path: 'src'})))
    const result = await wave(['plan', '--task', 'Loop', '--max-turns', '2'])
    expect(result.code).toBe(5)
    expect(result.stderr).toMatch(/turn limit/)
    expect(server.messageRequests).toHaveLength(2)
  })

  it('honours --model and WAVE_MODEL', async () => {
    server.push((request) => reply(toolUse('Write', {content: '# P\n', file_path: planPathIn(request)})), reply('ok'))
    await wave(['plan', '--task', 'x'], {WAVE_MODEL: 'env-model'})
    expect(server.messageRequests[0].body.model).toBe('env-model')
    server.push((request) => reply(toolUse('Write', {content: '# P\n', file_path: planPathIn(request)})), reply('ok'))
    await wave(['plan', '--task', 'x', '--model', 'flag-model'], {WAVE_MODEL: 'env-model'})
    expect(server.messageRequests[2].body.model).toBe('flag-model')
  })
})

describe('wave plan: hostile calls are refused with nothing changed', () => {
  it('refuses every escape, returns is_error, and exits 0 with only the plan written', async () => {
    const outside = path.join(sandbox.root, 'outside')
    mkdirSync(outside)
    writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n')
    symlinkSync(outside, path.join(sandbox.repo, 'link-out'))
    symlinkSync(path.join(outside, 'secret.txt'), path.join(sandbox.repo, 'secret-link'))
    mkdirSync(sandbox.plansDir, {recursive: true})
    writeFileSync(path.join(sandbox.plansDir, 'other-plan.md'), "# someone else's plan\n")

    const hostile = (planPath: string) => [
      toolUse('Write', {content: 'x', file_path: '../escape.txt'}),
      toolUse('Write', {content: 'x', file_path: path.join(outside, 'abs.txt')}),
      toolUse('Write', {content: 'x', file_path: 'src/app.ts'}),
      toolUse('Edit', {file_path: 'src/app.ts', new_string: 'evil', old_string: 'greet'}),
      toolUse('Write', {content: 'x', file_path: 'new-file.ts'}),
      toolUse('Write', {content: 'x', file_path: path.join(sandbox.plansDir, 'other-plan.md')}),
      toolUse('Write', {content: 'x', file_path: path.join(sandbox.plansDir, 'evil.md')}),
      toolUse('Write', {content: 'x', file_path: `${planPath}/../evil2.md`}),
      toolUse('Write', {content: 'x', file_path: path.join(sandbox.plansDir, '..', 'settings.json')}),
      toolUse('Write', {content: 'x', file_path: 'link-out/via-link.txt'}),
      toolUse('Write', {content: 'x', file_path: 'secret-link'}),
      toolUse('Edit', {file_path: 'secret-link', new_string: 'evil', old_string: 'outside'}),
      toolUse('Read', {file_path: 'secret-link'}),
      toolUse('Read', {file_path: 'link-out/secret.txt'}),
      toolUse('Read', {file_path: '/etc/passwd'}),
      toolUse('Read', {file_path: path.join(sandbox.plansDir, 'other-plan.md')}),
      toolUse('LS', {path: '/'}),
      toolUse('LS', {path: '..'}),
      toolUse('Glob', {pattern: '../**'}),
      toolUse('Glob', {pattern: '/etc/*'}),
      toolUse('Glob', {path: '..', pattern: '**/*'}),
      toolUse('Grep', {path: '/etc', pattern: 'root'}),
      toolUse('Grep', {glob: '../../**', pattern: 'secret'}),
      toolUse('Bash', {command: 'touch pwned'}),
      toolUse('Delete', {file_path: 'src/app.ts'}),
      toolUse('Write', {file_path: 'src/app.ts'}),
      toolUse('Read', {file_path: 42}),
      toolUse('Edit', {file_path: planPath, new_string: 'b', old_string: 'a', replace_all: 'yes'}),
      toolUse('EnterPlanMode', {}),
    ]
    let calls = 0
    server.push(
      (request) => {
        const list = hostile(planPathIn(request))
        calls = list.length
        return reply(...list)
      },
      // The plan path in another spelling (through ~ and ..) is still the plan file.
      (request) => reply(toolUse('Write', {content: '# Plan\n', file_path: `~/.wave/plans/../plans/${path.basename(planPathIn(request))}`})),
      reply('Done.'),
    )
    const repoBefore = snapshotTree(sandbox.repo)
    const outsideBefore = snapshotTree(outside)
    const homeBefore = snapshotTree(sandbox.home)

    const result = await wave(['plan', '--task', 'Try to escape'])

    expect(result.code).toBe(0)
    const results = toolResults(server.messageRequests[1])
    expect(results).toHaveLength(calls)
    for (const [i, r] of results.entries()) {
      // Bash runs, in plan mode's throwaway sandbox (issue #35): its write fails, and the snapshots below show nothing changed.
      if (i !== 23) expect(r.is_error, `call ${i}: ${r.text}`).toBe(true)
    }

    expect(results[0].text).toMatch(/outside the workspace|not the plan file/)
    expect(results[23].text).toMatch(/touch: cannot touch 'pwned': Read-only file system\nExit code: 1/)
    expect(results[24].text).toMatch(/Unknown tool Delete/)
    expect(results[25].text).toMatch(/Invalid input for Write/)
    expect(toolResults(server.messageRequests[2])[0].is_error ?? false).toBe(false)

    expect(snapshotTree(sandbox.repo)).toEqual(repoBefore)
    expect(snapshotTree(outside)).toEqual(outsideBefore)
    const planPath = result.stdout.trim()
    // wave's own cache of the model's description (session/catalog.ts), written by wave, not by a tool.
    const modelCache = /^\.wave\/cache\/(?:models\/(?:claude-sonnet-5-5-[0-9a-f]{16}\.json)?)?$/
    const added = Object.keys(snapshotTree(sandbox.home)).filter((file) => !(file in homeBefore) && !modelCache.test(file))
    const base = path.basename(planPath, '.md')
    expect(added.sort()).toEqual([
      `.wave/plans/${base}.md`,
      `.wave/plans/${base}.revisions.jsonl`,
      `.wave/plans/${base}.state.json`,
      `.wave/plans/${base}.transcript.jsonl`,
    ])
    expect(readFileSync(path.join(sandbox.plansDir, 'other-plan.md'), 'utf8')).toBe("# someone else's plan\n")
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n')
  })
})
