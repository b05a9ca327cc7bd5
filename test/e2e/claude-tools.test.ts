/**
 * Claude Code's tool vocabulary end to end, against the scripted Messages API server: a background dev
 * server started with Bash run_in_background, read with TaskOutput, one stopped with TaskStop and the
 * other ended with the session; TodoWrite as progress on stderr and as stream-json events;
 * AskUserQuestion in plan mode landing in the plan; ExitPlanMode with an older `plan` string and
 * `allowedPrompts`; an unknown input key answered with the keys the tool takes.
 */
import {randomUUID} from 'node:crypto'
import {readdirSync, readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import type {Sandbox} from '../support/cli.js'
import {type MessagesServer, planPathIn, type RecordedRequest, reply, toolResults, toolUse} from '../support/messages-server.js'
import {useScriptedSession, waveIn} from '../support/session.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

/** Processes whose command line holds `marker`, the sandbox's included (its PID namespace is visible from here). */
function processesWith(marker: string): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry))
    } catch {
      // Gone while listed.
    }
  }

  return found
}

const lastResult = (request: RecordedRequest) => toolResults(request).at(-1)!
const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>)

describe('background commands', () => {
  it('a dev server starts at once, is read with TaskOutput, one is stopped with TaskStop, and the session ends the other', async () => {
    const marker = `wave-devserver-${randomUUID()}`
    // A dev server's shape: says it is ready, then logs a line every 50 ms, forever.
    const server1 = `echo ready; exec -a ${marker}-one bash -c 'i=0; while true; do echo "request $i"; i=$((i+1)); sleep 0.05; done'`
    const server2 = `exec -a ${marker}-two sleep 600`
    const seen: {one?: number[]; two?: number[]; oneAfterStop?: number[]; twoAfterStop?: number[]; stopResult?: string} = {}
    let output = ''
    let stopped = false
    // The model reads the first server until it has logged a request (each reading returns what is new),
    // stops it, and ends its turn once the stop's result is in. The processes are looked at from here
    // while wave waits for each answer.
    const model = (request: RecordedRequest) => {
      if (stopped) {
        seen.stopResult = lastResult(request).text
        seen.oneAfterStop = processesWith(`${marker}-one`)
        seen.twoAfterStop = processesWith(`${marker}-two`)
        return reply('Both servers were checked.')
      }

      // One reading a line: a reading that ends where the output so far ends ("ready", before the first
      // request is logged) has no newline of its own.
      output += `${lastResult(request).text}\n`
      if (!/request \d/.test(output)) return reply(toolUse('TaskOutput', {block: true, task_id: 'bash_1', timeout: 200}))
      seen.one = processesWith(`${marker}-one`)
      seen.two = processesWith(`${marker}-two`)
      stopped = true
      return reply(toolUse('TaskStop', {task_id: 'bash_1'}))
    }

    server.push(
      reply(
        toolUse('Bash', {command: server1, description: 'Start the dev server', run_in_background: true}),
        toolUse('Bash', {command: server2, run_in_background: true}),
      ),
      (request) => {
        expect(toolResults(request).map((r) => r.text)).toEqual([
          expect.stringMatching(/^Started in the background as task bash_1\./),
          expect.stringMatching(/^Started in the background as task bash_2\./),
        ])
        return reply(toolUse('TaskOutput', {block: false, task_id: 'bash_1'}))
      },
      // As many readings as it takes, within a bound: a server that never logs fails the test.
      ...Array.from({length: 60}, () => model),
    )
    const result = await wave(['run', '--task', 'Start the dev servers and check them', '--mode', 'bypassPermissions', '--json'])

    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({denials: 0, ok: true, result: 'Both servers were checked.'})
    expect(output).toMatch(/^Task bash_1 is running: .*\(Start the dev server\)\n/)
    expect(output).toMatch(/Output since the last reading:\nready\n/)
    // Both ran while the session ran; TaskStop ended the first at once, the second lived until the session ended.
    expect(seen.one?.length).toBeGreaterThan(0)
    expect(seen.two?.length).toBeGreaterThan(0)
    expect(seen.stopResult).toMatch(/^Stopped task bash_1\.\nTask bash_1 was stopped/)
    expect(seen.oneAfterStop).toEqual([])
    expect(seen.twoAfterStop?.length).toBeGreaterThan(0)
    expect(processesWith(marker)).toEqual([])
  })

  it("the session's end stops what is still running, through the tool set (SIGTERM), not only at exit", async () => {
    // Unsandboxed so that the command's own trap sees the SIGTERM the session sends; wave's exit hook
    // would send SIGKILL, which no trap sees.
    const command = "trap 'echo ended by the session > ended.txt; exit 0' TERM; echo ready; while true; do sleep 0.05; done"
    server.push(reply(toolUse('Bash', {command, run_in_background: true})), reply('Started.'))
    const result = await wave(['run', '--task', 'Start a watcher', '--mode', 'bypassPermissions', '--sandbox', 'off', '--json'])

    expect(result.code, result.stderr).toBe(0)
    expect(readFileSync(`${sandbox.repo}/ended.txt`, 'utf8')).toBe('ended by the session\n')
  })
})

describe('TodoWrite', () => {
  it('shows in progress on stderr and as todo events in stream-json, and the result carries the list', async () => {
    const todos = [
      {activeForm: 'Reading the code', content: 'Read the code', status: 'completed'},
      {activeForm: 'Writing the fix', content: 'Write the fix', status: 'in_progress'},
      {activeForm: 'Running the tests', content: 'Run the tests', status: 'pending'},
    ]
    server.push(reply(toolUse('TodoWrite', {todos})), reply('Done.'))
    const result = await wave(['run', '--task', 'Fix it', '--mode', 'acceptEdits', '--output-format', 'stream-json'])

    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/step 2 of 3: Writing the fix/)
    const events = jsonLines(result.stdout)
    expect(events.filter((event) => event.type === 'todo')).toEqual([{todos, type: 'todo', version: 1}])
    expect(events.at(-1)).toMatchObject({ok: true, todos, type: 'result'})
    expect(toolResults(server.messageRequests[1])[0]).toMatchObject({text: 'To-do list updated (step 2 of 3: Writing the fix). Go on with the current step.'})
  })
})

describe('AskUserQuestion', () => {
  const question = {
    header: 'Library',
    multiSelect: false,
    options: [
      {description: 'Small, no dependencies', label: 'date-fns'},
      {description: 'Already in the lockfile', label: 'dayjs'},
    ],
    question: 'Which library should format dates?',
  }

  it("in plan mode never waits: the question lands in the plan's open questions, and the result lists it", async () => {
    server.push(
      reply(toolUse('AskUserQuestion', {questions: [question]})),
      // The model writes its plan without the question: wave adds it when the session ends.
      (request) => reply(toolUse('Write', {content: '# Plan\n\n1. Format dates.\n', file_path: planPathIn(request)})),
      reply(toolUse('ExitPlanMode', {})),
    )
    const result = await wave(['plan', '--task', 'Format dates', '--json'])

    expect(result.code, result.stderr).toBe(0)
    const out = JSON.parse(result.stdout)
    const answer = toolResults(server.messageRequests[1])[0]
    expect(answer.is_error ?? false).toBe(false)
    expect(answer.text).toMatch(/No one can reply during a headless session/)
    expect(answer.text).toMatch(/request-changes/)
    expect(readFileSync(out.planPath, 'utf8')).toBe(
      '# Plan\n\n1. Format dates.\n\n## Open questions\n\n- **Library**: Which library should format dates?\n  - date-fns: Small, no dependencies\n  - dayjs: Already in the lockfile\n',
    )
    expect(out.questions).toEqual([question])
    expect(result.stderr).toMatch(/\? Which library should format dates\?/)
  })

  it('in a run answers the same and the question appears in the result', async () => {
    server.push(reply(toolUse('AskUserQuestion', {questions: [question]})), reply('Used dayjs, which is in the lockfile.'))
    const result = await wave(['run', '--task', 'Format dates', '--mode', 'acceptEdits', '--json'])

    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({denials: 0, questions: [question]})
    expect(toolResults(server.messageRequests[1])[0].text).toMatch(/reported in the run's result/)
  })
})

describe('ExitPlanMode', () => {
  it('writes an older plan string to the plan file and keeps allowedPrompts for wave approve', async () => {
    server.push(reply(toolUse('ExitPlanMode', {allowedPrompts: [{prompt: 'run tests', tool: 'Bash'}], plan: '# Plan\n\n1. Run the tests.'})))
    const result = await wave(['plan', '--task', 'Test it', '--output-format', 'stream-json'])

    expect(result.code, result.stderr).toBe(0)
    const events = jsonLines(result.stdout)
    const planPath = events.at(-1)!.planPath as string
    expect(readFileSync(planPath, 'utf8')).toBe('# Plan\n\n1. Run the tests.\n')
    // ExitPlanMode ends the session: its result is what the stream shows, never sent to the model.
    expect(server.messageRequests).toHaveLength(1)
    const answer = {text: events.find((event) => event.type === 'tool_result' && event.name === 'ExitPlanMode')!.content as string}
    expect(answer.text).toMatch(/held no plan: the plan text you passed was written to it/)
    expect(answer.text).toMatch(/Recorded the permissions the plan asks for, for the approver: Bash: run tests/)

    const approved = await wave(['approve', planPath, '--json'])
    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stderr).toMatch(/The plan asks for: Bash \(run tests\)/)
    expect(JSON.parse(approved.stdout).allowedPrompts).toEqual([{prompt: 'run tests', tool: 'Bash'}])
  })
})

describe('tool inputs and names', () => {
  it('an unknown input key is answered with the keys the tool accepts; an unknown tool is no denial', async () => {
    server.push(reply(toolUse('Read', {file_path: 'README.md', pages: '1-2'}), toolUse('NotebookEdit', {notebook_path: 'a.ipynb'})), reply('Done.'))
    const result = await wave(['run', '--task', 'Read the readme', '--mode', 'acceptEdits', '--json'])

    expect(result.code, result.stderr).toBe(0)
    const [keys, unknown] = toolResults(server.messageRequests[1])
    expect(keys).toMatchObject({is_error: true})
    expect(keys.text).toMatch(/Invalid input for Read: .*"pages".* Read accepts: file_path, limit, offset\./)
    expect(unknown).toMatchObject({is_error: true})
    expect(unknown.text).toMatch(/^Unknown tool NotebookEdit: there is no such tool here\. Available tools: .*TodoWrite, AskUserQuestion/)
    expect(JSON.parse(result.stdout).denials).toBe(0)
  })
})
