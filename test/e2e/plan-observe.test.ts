/**
 * Issue #35: plan mode that observes. Bash in a throwaway sandbox (here bubblewrap 0.8: the workspace
 * read-only, /tmp and $HOME private), Explore agents bounded and charged to the session, and a
 * background command's output file read with Read; all against the scripted server, through bin/run.js.
 */
import {existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {processesOutliving, snapshotTree, TEST_API_KEY} from '../support/cli.js'
import {
  apiKeyOf,
  planPathIn,
  type RecordedRequest,
  reply,
  type StaticTurn,
  systemText,
  text,
  toolNames,
  toolResults,
  toolUse,
} from '../support/messages-server.js'
import {type ScriptedSession, useScriptedSession, waveIn} from '../support/session.js'

let session: ScriptedSession
useScriptedSession((ready) => (session = ready))
const wave = waveIn(() => session)

const PLAN = '# Plan\n\n## Scope\n- `src/util.ts`\n\n## Verification\n- `bash test.sh`\n'

/** The turn that ends a planning session: the plan written, then ExitPlanMode. */
const finish = (request: RecordedRequest) => reply(toolUse('Write', {content: PLAN, file_path: planPathIn(request)}), toolUse('ExitPlanMode', {}))
const done = reply(text('Planned.'))

const plan = (extra: string[] = [], env?: Record<string, string | undefined>) =>
  wave(['plan', '--task', 'Fix the failing test', ...(extra.includes('--output-format') ? [] : ['--json']), ...extra], env)

/** Writes the user's settings file (WAVE_HOME is $HOME/.wave). */
function userSettings(settings: object): void {
  mkdirSync(path.join(session.sandbox.home, '.wave'), {recursive: true})
  writeFileSync(path.join(session.sandbox.home, '.wave', 'settings.json'), JSON.stringify(settings))
}

/** PATH with bwrap shadowed out (sandbox.test.ts does the same). */
function pathWithoutBwrap(): string {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .map((dir, i) => {
      if (!existsSync(path.join(dir, 'bwrap'))) return dir
      const shadow = path.join(session.sandbox.root, `path-${i}`)
      mkdirSync(shadow)
      for (const name of readdirSync(dir)) if (name !== 'bwrap') symlinkSync(path.join(dir, name), path.join(shadow, name))
      return shadow
    })
    .join(path.delimiter)
}

describe('Bash in plan mode', () => {
  it("runs the project's failing test and gets its output and exit code", async () => {
    writeFileSync(path.join(session.sandbox.repo, 'test.sh'), 'echo "FAIL greet: expected welcome, got hello"\nexit 3\n')
    session.server.push(reply(toolUse('Bash', {command: 'bash test.sh'})), finish, done)
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    const [first, second] = session.server.messageRequests
    expect(toolNames(first)).toContain('Bash')
    expect(systemText(first)).toContain('reproduce the failure the task reports')
    expect(systemText(first)).toContain('throwaway sandbox (read-only)')
    const [ran] = toolResults(second)
    expect(ran.is_error ?? false).toBe(false)
    expect(ran.text).toContain('FAIL greet: expected welcome, got hello')
    expect(ran.text).toContain('Exit code: 3')
  })

  it('leaves every byte of the workspace, .git, HOME and /tmp as it was', async () => {
    const {home, repo} = session.sandbox
    const marker = path.join('/tmp', `wave-observe-${process.pid}-${Date.now()}`)
    const hostile = [
      'echo changed > README.md',
      'rm -f src/util.ts',
      'mv src/app.ts src/moved.ts',
      'echo x > new-file',
      'echo "[core] hooksPath = /tmp" >> .git/config',
      'rm -rf .git/objects',
      `echo x > ${JSON.stringify(home)}/dropped`,
      'echo x > "$HOME/dropped"',
      `echo x > ${marker}`,
      'mkdir -p .wave && echo "{}" > .wave/settings.json',
    ]
      .map((command) => `${command}; echo "[$?] ${command.replaceAll('"', "'")}"`)
      .join('\n')
    const before = snapshotTree(repo)
    const homeBefore = snapshotTree(home)
    session.server.push(reply(toolUse('Bash', {command: hostile})), finish, done)
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    expect(snapshotTree(repo)).toEqual(before)
    // The plan and its sidecars are wave's own, written outside the command; nothing else in HOME changed.
    const mine = (tree: Record<string, string>) => Object.fromEntries(Object.entries(tree).filter(([file]) => !file.startsWith('.wave')))
    expect(mine(snapshotTree(home))).toEqual(mine(homeBefore))
    expect(existsSync(marker)).toBe(false)
    const [ran] = toolResults(session.server.messageRequests[1])
    // Writes to the workspace fail with the file system's own error; /tmp and HOME writes land in private, dropped ones.
    expect(ran.text).toContain('Read-only file system')
    expect(ran.text).toMatch(/\[0\] echo x > \/tmp\/wave-observe/)
  })

  it('has no network, none of wave’s credentials, and nothing it started outlives it', async () => {
    const port = new URL(session.server.url).port
    const tag = `wave-observe-sleeper-${process.pid}`
    let aliveDuringSession: number[] | undefined
    session.server.push(
      reply(
        toolUse('Bash', {command: `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected || echo refused`}),
        toolUse('Bash', {command: '[ -z "$ANTHROPIC_API_KEY" ] && echo key-absent || echo key-present; echo "path=${PATH:+set}"'}),
        toolUse('Bash', {command: `(exec -a ${tag} sleep 300) > /dev/null 2>&1 & echo started`}),
      ),
      // Asked during the session, at the next request: the sleeper went with its sandbox (given the moment
      // the kernel takes to empty the namespace; a sleeper the sandbox let live would still be there).
      async (request) => {
        aliveDuringSession = await processesOutliving(tag, 10_000)
        return finish(request)
      },
      done,
    )
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    const [net, env, background] = toolResults(session.server.messageRequests[1])
    expect(net.text).toContain('refused')
    expect(net.text).not.toContain('connected')
    expect(env.text).toContain('key-absent')
    expect(env.text).toContain('path=set')
    expect(background.text).toContain('started')
    expect(aliveDuringSession).toEqual([])
    // Control: the server the command could not reach was up, and the key was wave's all along.
    expect(apiKeyOf(session.server.messageRequests[0])).toBe(TEST_API_KEY)
  })

  it('still denies what a deny rule denies', async () => {
    userSettings({permissions: {deny: ['Bash(git log:*)']}})
    session.server.push(reply(toolUse('Bash', {command: 'git log --oneline'}), toolUse('Bash', {command: 'git status --short'})), finish, done)
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    const [log, status] = toolResults(session.server.messageRequests[1])
    expect(log.is_error).toBe(true)
    expect(log.text).toContain('denied by the rule Bash(git log:*)')
    expect(status.is_error ?? false).toBe(false)
  })

  it('is not offered without bubblewrap, and the plan still completes', async () => {
    session.server.push(finish, done)
    const result = await plan([], {PATH: pathWithoutBwrap()})
    expect(result.code, result.stderr).toBe(0)
    const [first] = session.server.messageRequests
    expect(toolNames(first)).not.toContain('Bash')
    expect(toolNames(first)).not.toContain('TaskOutput')
    expect(systemText(first)).toContain('Bash is not available in this planning session')
    expect(systemText(first)).toContain('bubblewrap (bwrap) is not installed')
  })

  it('is off with planMode.bash: false, and wave tools, prompt and doctor say so', async () => {
    userSettings({planMode: {bash: false}})
    const tools = await wave(['tools', '--mode', 'plan'])
    expect(tools.stdout).toMatch(/^Bash\s+execute\s+-\s+-$/m)
    expect(tools.stdout).toContain('plan-mode Bash: off: planMode.bash is false in the settings')
    const prompt = await wave(['prompt', '--mode', 'plan', '--json'])
    expect(JSON.parse(prompt.stdout).planBash).toEqual({offered: false, why: 'planMode.bash is false in the settings'})
    const doctor = await wave(['doctor', '--offline'])
    expect(doctor.stdout).toMatch(/^plan-bash\s+skipped\s+plan-mode Bash is off/m)
    // Control: without the setting, each names the read-only throwaway sandbox.
    writeFileSync(path.join(session.sandbox.home, '.wave', 'settings.json'), '{}')
    const on = await wave(['tools', '--mode', 'plan'])
    expect(on.stdout).toMatch(/^Bash\s+execute\s+-\s+yes$/m)
    expect(on.stdout).toContain('plan-mode Bash: throwaway sandbox (read-only)')
    expect(JSON.parse((await wave(['prompt', '--mode', 'plan', '--json'])).stdout).planBash).toEqual({kind: 'read-only', offered: true})
    expect((await wave(['doctor', '--offline'])).stdout).toMatch(/^plan-bash\s+ok\s+plan mode runs Bash in a throwaway sandbox \(read-only\)/m)
  })

  it("gives a background command's output file, which Read reads", async () => {
    let outputFile = ''
    session.server.push(
      reply(toolUse('Bash', {command: 'echo from-the-background; sleep 0.2; echo second-line', run_in_background: true})),
      (request) => {
        const file = /written to (\S+?): read it/.exec(toolResults(request)[0].text)?.[1]
        if (!file) throw new Error(`no output file in ${toolResults(request)[0].text}`)
        outputFile = file
        return reply(toolUse('TaskOutput', {task_id: 'bash_1'}))
      },
      () => reply(toolUse('Read', {file_path: outputFile})),
      finish,
      done,
    )
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    const [waited] = toolResults(session.server.messageRequests[2])
    const [read] = toolResults(session.server.messageRequests[3])
    expect(waited.text).toContain('exited with code 0')
    expect(read.is_error ?? false).toBe(false)
    expect(read.text).toContain('from-the-background')
    expect(read.text).toContain('second-line')
  })
})

/** The text of a request's first user message: an agent's prompt. */
function firstMessage(request: RecordedRequest): string {
  const content = request.body.messages[0].content
  return typeof content === 'string' ? content : content.map((block: {text?: string}) => block.text ?? '').join('')
}

const isAgent = (request: RecordedRequest) => systemText(request).includes('You are an Explore agent')

describe('Explore agents', () => {
  it('run three at once, read-only, results in call order, one stopped at its turn cap', async () => {
    userSettings({agents: {maxTurns: 3}})
    let parentTurn = 0
    const router = (request: RecordedRequest): StaticTurn => {
      if (!isAgent(request)) {
        parentTurn++
        if (parentTurn === 1) {
          return reply(
            toolUse('Agent', {description: 'find greet', prompt: 'AGENT-A: where is greet defined?', subagent_type: 'Explore'}),
            toolUse('Agent', {description: 'try writing', prompt: 'AGENT-B: try to change things', subagent_type: 'Explore'}),
            toolUse('Task', {description: 'loop forever', prompt: 'AGENT-C: keep reading', subagent_type: 'Explore'}),
          )
        }

        return parentTurn === 2 ? finish(request) : done
      }

      const who = firstMessage(request)
      const results = toolResults(request)
      if (who.startsWith('AGENT-A')) return results.length === 0 ? reply(toolUse('Grep', {pattern: 'function greet'})) : reply(text(`A: ${results[0].text}`))
      if (who.startsWith('AGENT-B')) {
        if (results.length === 0) {
          return reply(
            toolUse('Write', {content: 'x', file_path: 'src/util.ts'}),
            toolUse('Agent', {description: 'nested', prompt: 'nested', subagent_type: 'Explore'}),
            toolUse('Bash', {command: 'touch src/new.ts'}),
          )
        }

        return reply(text(`B: ${results.map((result) => `${result.is_error ? 'ERR' : 'OK'} ${result.text.split('\n')[0]}`).join(' | ')}`))
      }

      return reply(text('C: still looking'), toolUse('Read', {file_path: 'README.md'}))
    }

    session.server.push(...Array.from({length: 12}, () => router))
    const before = snapshotTree(session.sandbox.repo)
    const result = await plan(['--output-format', 'stream-json'])
    expect(result.code, result.stderr).toBe(0)
    expect(snapshotTree(session.sandbox.repo)).toEqual(before)

    const parent = session.server.messageRequests.filter((request) => !isAgent(request))
    const [a, b, c] = toolResults(parent[1])
    expect(a.text).toMatch(/^A: src\/util\.ts/)
    expect(b.text).toContain('ERR Permission denied: Write is not available in plan mode')
    expect(b.text).toContain('ERR Permission denied: Subagents cannot spawn other subagents')
    expect(b.text).toContain('Read-only file system')
    expect(c.text).toMatch(/^\[Agent cut short: it reached its turn cap of 3 turns\. What it found so far follows\.\]\n\nC: still looking/)
    // Each agent: its own system prompt, plan mode's read-only tools and Bash, no plan file, and Agent among them only to be refused.
    const agentRequest = session.server.messageRequests.find(isAgent)!
    expect(systemText(agentRequest)).not.toContain('Plan File Info')
    expect(toolNames(agentRequest)).toEqual(expect.arrayContaining(['Read', 'Glob', 'Grep', 'LS', 'Bash']))
    expect(toolNames(agentRequest)).not.toContain('Write')
    expect(toolNames(agentRequest)).not.toContain('ExitPlanMode')

    // stream-json: agent_start and agent_end for each, with their cost; the result counts their usage.
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.filter((event) => event.type === 'agent_start')).toHaveLength(3)
    const ends = events.filter((event) => event.type === 'agent_end')
    expect(ends).toHaveLength(3)
    expect(ends.find((event) => event.description === 'loop forever')).toMatchObject({cut: 'it reached its turn cap of 3 turns', turns: 3})
    for (const end of ends) expect(typeof end.costUsd).toBe('number')
    const final = events.at(-1)
    const inputTokens = session.server.messageRequests.length // every request's usage is counted once
    expect(final.type).toBe('result')
    expect(final.usage.input_tokens).toBeGreaterThanOrEqual(inputTokens)
    // stderr's progress names them; the transcript nests their calls under the Agent call.
    const planPath = planPathIn(parent[0])
    const transcript = readFileSync(planPath.replace(/\.md$/, '.transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    const nested = transcript.filter((entry) => entry.agent)
    expect(nested).toHaveLength(3)
    const callIds = (parent[0] as RecordedRequest) && toolUseIds(session.server.messageRequests, parent[1])
    expect(nested.map((entry) => entry.agent.toolUseId).sort()).toEqual(callIds.sort())
  })

  it("count in the session's usage and stop under --max-budget-usd", async () => {
    const usage = {input_tokens: 100_000, output_tokens: 10}
    let parentTurn = 0
    const router = (request: RecordedRequest): StaticTurn => {
      if (!isAgent(request)) {
        parentTurn++
        if (parentTurn > 1) return {...finish(request), usage}
        return {
          ...reply(...['1', '2', '3'].map((n) => toolUse('Agent', {description: `look ${n}`, prompt: `look ${n}`, subagent_type: 'Explore'}))),
          usage,
        }
      }

      return {...reply(text('still looking'), toolUse('Read', {file_path: 'README.md'})), usage}
    }

    session.server.push(...Array.from({length: 12}, () => router))
    const result = await plan(['--max-budget-usd', '1'])
    expect(result.code, result.stderr).toBe(5)
    const body = JSON.parse(result.stdout)
    expect(body.stopReason).toBe('budget')
    // One parent turn and one turn of each agent (each stopped at its share, 0.25 of 1 USD): four responses counted.
    expect(body.usage.input_tokens).toBe(4 * 100_000)
    expect(result.stderr).toContain('agent cut (it reached its share of the budget')
  })
})

describe('the Agent tool refuses clearly', () => {
  it('model, run_in_background and a type plan mode does not offer', async () => {
    session.server.push(
      reply(
        toolUse('Agent', {description: 'd', model: 'haiku', prompt: 'p', subagent_type: 'Explore'}),
        toolUse('Agent', {description: 'd', prompt: 'p', run_in_background: true, subagent_type: 'Explore'}),
        toolUse('Agent', {description: 'd', prompt: 'p', subagent_type: 'general-purpose'}),
      ),
      finish,
      done,
    )
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    const [model, background, type] = toolResults(session.server.messageRequests[1])
    expect(model.text).toContain('model is not supported')
    expect(background.text).toContain('run_in_background is not supported')
    expect(type.text).toContain('Unknown subagent_type "general-purpose": in plan mode the types are "Explore"')
  })
})

/** The ids of the Agent calls the parent's first turn made, as the results in `answered` name them. */
function toolUseIds(_all: RecordedRequest[], answered: RecordedRequest): string[] {
  return toolResults(answered).map((result) => result.tool_use_id)
}

describe('the Scope warning', () => {
  const planWith = (scope: string) =>
    `# Rename greet\n\n## Changes\n- \`src/util.ts\`: rename greet to welcome.\n- \`src/app.ts\`: call welcome.\n\n## Scope\n${scope}\n\n## Verification\n- \`bash test.sh\`\n`
  const writing = (content: string) => (request: RecordedRequest) =>
    reply(toolUse('Write', {content, file_path: planPathIn(request)}), toolUse('ExitPlanMode', {}))

  it('names the files the Changes touch that the Scope does not cover, in wave plan and wave approve', async () => {
    session.server.push(writing(planWith('- `src/util.ts`')), done)
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    const body = JSON.parse(result.stdout)
    expect(body.contract.warnings).toEqual([expect.stringContaining("The plan's Changes name src/app.ts, which its ## Scope does not cover")])
    expect(result.stderr).toContain("The plan's Changes name src/app.ts, which its ## Scope does not cover")
    const approve = await wave(['approve', body.planPath])
    expect(approve.code, approve.stderr).toBe(0)
    expect(approve.stderr).toContain('src/app.ts, which its ## Scope does not cover')
  })

  it('takes an identifier in backticks for no path, and names a file of the repository at its top (issue 47)', async () => {
    const prose = planWith('- `src/**`').replace('call welcome.', 'call welcome; assert with `t.throws` and `path.join`.\n- `README.md`: say so.')
    session.server.push(writing(prose), done)
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    // README.md is a file of the repository: named. t.throws and path.join are not.
    expect(JSON.parse(result.stdout).contract.warnings).toEqual([expect.stringContaining("The plan's Changes name README.md, which")])
    const approve = await wave(['approve', JSON.parse(result.stdout).planPath])
    expect(approve.code, approve.stderr).toBe(0)
    expect(approve.stderr).toContain('name README.md, which its ## Scope does not cover')
    expect(`${result.stderr}${approve.stderr}`).not.toMatch(/t\.throws|path\.join/)
  })

  it('says nothing when a glob covers them (control)', async () => {
    session.server.push(writing(planWith('- `src/**`')), done)
    const result = await plan()
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).contract.warnings).toEqual([])
    expect(result.stderr).not.toContain('does not cover')
  })
})
