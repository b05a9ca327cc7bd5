/**
 * Issue #13, resume: `wave run <plan> --resume` continues an interrupted run from its transcript, after
 * the same approval checks; no tool call whose result was recorded runs again (a call the run was
 * killed during is answered as having an unknown effect); turns and cost keep counting; the hints of
 * an interrupted or limited run name --resume. Nothing to resume is exit 2.
 */
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {test as base, describe, expect} from 'vitest'

import {gitCommitAll, makeSandbox, readJson, runWave, type RunWaveResult, type Sandbox, type StartedWave, startWave, waitFor} from '../support/cli.js'
import {type MessagesServer, type RecordedRequest, reply, startMessagesServer, toolResults, toolUse} from '../support/messages-server.js'

const FAST = {WAVE_RETRY_BASE_MS: '5'}
const sidecar = (planPath: string, suffix: string) => planPath.replace(/\.md$/, suffix)

interface Kit {
  sandbox: Sandbox
  server: MessagesServer
  wave(args: string[]): Promise<RunWaveResult>
  /** `wave` as a child process the test can signal. */
  startWave(args: string[]): StartedWave
  /** A plan in the plans directory, approved with `wave approve` in bypassPermissions (Bash runs). */
  approvedPlan(): Promise<string>
}

const it = base.extend<{t: Kit}>({
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from its destructuring
  async t({}, use) {
    const sandbox = makeSandbox()
    const server = await startMessagesServer()
    const wave = (args: string[]) => runWave(args, {cwd: sandbox.repo, env: FAST, home: sandbox.home, server})
    try {
      await use({
        async approvedPlan() {
          mkdirSync(sandbox.plansDir, {recursive: true})
          const planPath = path.join(sandbox.plansDir, 'steady-heron.md')
          writeFileSync(planPath, '# Plan\n\n1. Write notes.txt.\n2. Run the slow check.\n')
          const approved = await wave(['approve', planPath, '--mode', 'bypassPermissions'])
          expect(approved.code, approved.stderr).toBe(0)
          return planPath
        },
        sandbox,
        server,
        startWave: (args) => startWave(args, {cwd: sandbox.repo, env: FAST, home: sandbox.home, server}),
        wave,
      })
    } finally {
      await server.close()
      sandbox.cleanup()
    }
  },
})

const hintOf = (stderr: string) => stderr.split('\n').find((line) => line.startsWith('Hint:')) ?? ''

type Block = {
  type: string
  id?: string
  name?: string
  input?: Record<string, unknown>
  tool_use_id?: string
  is_error?: boolean
  content?: unknown
  text?: string
}
const blocksOf = (message: {content: unknown}): Block[] =>
  typeof message.content === 'string' ? [{text: message.content, type: 'text'}] : (message.content as Block[])
const textOf = (message: {content: unknown}): string =>
  blocksOf(message)
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n')
const messagesOf = (request: RecordedRequest): Array<{role: string; content: unknown}> => request.body.messages

describe.concurrent('wave run --resume', () => {
  it('goes on after SIGTERM: the earlier turns are sent again, the Write is not run again, the turns add up', async ({
    t: {approvedPlan, sandbox, server, startWave, wave},
  }) => {
    const planPath = await approvedPlan()
    const notes = path.join(sandbox.repo, 'notes.txt')
    server.push(
      reply(toolUse('Write', {content: 'written by the run\n', file_path: 'notes.txt'})),
      reply(toolUse('Bash', {command: 'touch started; sleep 30'})),
    )
    const session = startWave(['run', planPath])
    await waitFor(() => existsSync(path.join(sandbox.repo, 'started')), 'the slow command to start')
    // Changed by hand while the run was stopped: a resumed run must not write it over.
    writeFileSync(notes, 'edited by the test\n')
    session.child.kill('SIGTERM')
    const stopped = await session.done

    expect(stopped.code).toBe(143)
    expect(stopped.stderr).toContain('Error: Interrupted by SIGTERM.')
    expect(hintOf(stopped.stderr)).toContain(`wave run ${path.basename(planPath, '.md')} --resume`)
    const interrupted = readJson(sidecar(planPath, '.state.json'))
    expect(interrupted.runs).toHaveLength(1)
    expect(interrupted.runs[0]).toMatchObject({exitCode: 143, turns: 2})

    server.push(reply('Resumed and done.'))
    const resumed = await wave(['run', planPath, '--resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(JSON.parse(resumed.stdout)).toMatchObject({ok: true, result: 'Resumed and done.', resumed: true, turns: 3})
    expect(server.messageRequests).toHaveLength(3)

    // The resumed request holds the run so far: the opening, the Write and its result, the Bash call and
    // its interrupted result, then the note that the run was resumed.
    const sent = messagesOf(server.messageRequests[2])
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    expect(textOf(sent[0])).toBe(textOf(messagesOf(server.messageRequests[0])[0]))
    const write = blocksOf(sent[1]).find((block) => block.type === 'tool_use')!
    expect(write).toMatchObject({input: {content: 'written by the run\n', file_path: 'notes.txt'}, name: 'Write'})
    const writeResult = blocksOf(sent[2]).find((block) => block.type === 'tool_result')!
    expect(writeResult.tool_use_id).toBe(write.id)
    expect(writeResult.is_error).toBeFalsy()
    const last = blocksOf(sent[4])
    expect(last[0]).toMatchObject({tool_use_id: blocksOf(sent[3]).find((block) => block.type === 'tool_use')!.id, type: 'tool_result'})
    expect(JSON.stringify(last[0].content)).toMatch(/interrupted and killed/)
    expect(last.at(-1)!.text).toMatch(/terminated by SIGTERM\) and was resumed with wave run --resume/)

    // Nothing of the earlier turns ran again: the file is as the test left it.
    expect(readFileSync(notes, 'utf8')).toBe('edited by the test\n')
    const state = readJson(sidecar(planPath, '.state.json'))
    expect(state.status).toBe('ran')
    expect(state.runs).toHaveLength(1)
    expect(state.runs[0]).toMatchObject({changedFiles: ['notes.txt', 'started'], exitCode: 0, startedAt: interrupted.runs[0].startedAt, turns: 3})
    expect(existsSync(sidecar(planPath, '.lock'))).toBe(false)

    // The run succeeded: nothing is left to resume, and no request is made.
    const again = await wave(['run', planPath, '--resume'])
    expect(again.code).toBe(2)
    expect(again.stderr).toMatch(/Error: Nothing to resume: the newest run of steady-heron succeeded/)
    expect(server.messageRequests).toHaveLength(3)
  })

  it('answers the call a killed run (SIGKILL) never recorded with an unknown effect, never running it again', async ({
    t: {approvedPlan, sandbox, server, startWave, wave},
  }) => {
    const planPath = await approvedPlan()
    server.push(reply(toolUse('Bash', {command: 'echo ran >> ran.txt; sleep 10'})))
    const session = startWave(['run', planPath])
    await waitFor(() => existsSync(path.join(sandbox.repo, 'ran.txt')), 'the command to start')
    session.child.kill('SIGKILL')
    await session.done
    // The killed process recorded no end: the run is still "running", its lock left behind.
    expect(readJson(sidecar(planPath, '.state.json')).runs[0].exitCode).toBeUndefined()

    server.push((request) => reply(`saw ${toolResults(request).length} result`))
    const resumed = await wave(['run', planPath, '--resume', '--json'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toMatch(/Warning: The run was killed during a turn: Bash call is answered as having an unknown effect/)
    const sent = messagesOf(server.messageRequests[1])
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    const [result, note] = blocksOf(sent[2])
    expect(result).toMatchObject({is_error: true, tool_use_id: blocksOf(sent[1])[0].id, type: 'tool_result'})
    expect(String(result.content)).toMatch(/whether it ran, and what it changed, is unknown\. It was not run again/)
    expect(note.text).toMatch(/its process was killed/)
    expect(readFileSync(path.join(sandbox.repo, 'ran.txt'), 'utf8')).toBe('ran\n')
    // The turn before the kill counts: its progress was in the transcript.
    expect(JSON.parse(resumed.stdout)).toMatchObject({resumed: true, turns: 2})
  })

  it('counts --max-turns over the whole run, resumes twice, and names --resume in the exit-5 hint', async ({t: {approvedPlan, server, wave}}) => {
    const planPath = await approvedPlan()
    server.push(reply(toolUse('LS', {path: '.'})))
    const first = await wave(['run', planPath, '--max-turns', '1'])
    expect(first.code).toBe(5)
    expect(hintOf(first.stderr)).toBe(
      `Hint: To go on with its changes and conversation kept: wave run ${path.basename(planPath, '.md')} --resume --max-turns <more than 1> (the limit counts the turns before).`,
    )

    // The same limit again: the run has used it up, so no request is made.
    const same = await wave(['run', planPath, '--resume', '--max-turns', '1'])
    expect(same.code).toBe(5)
    expect(server.messageRequests).toHaveLength(1)

    server.push(reply(toolUse('LS', {path: 'src'})))
    const second = await wave(['run', planPath, '--resume', '--max-turns', '2'])
    expect(second.code).toBe(5)
    expect(server.messageRequests).toHaveLength(2)

    server.push(reply('Done at last.'))
    const third = await wave(['run', planPath, '--resume', '--max-turns', '3', '--json'])
    expect(third.code, third.stderr).toBe(0)
    expect(JSON.parse(third.stdout)).toMatchObject({resumed: true, turns: 3})
    // The last request carries both earlier turns, each call with its one result.
    const sent = messagesOf(server.messageRequests[2])
    expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    const calls = [sent[1], sent[3]].map((message) => blocksOf(message).find((block) => block.type === 'tool_use')!.id)
    const results = [sent[2], sent[4]].map((message) =>
      blocksOf(message)
        .filter((block) => block.type === 'tool_result')
        .map((block) => block.tool_use_id),
    )
    expect(results).toEqual([[calls[0]], [calls[1]]])
    const state = readJson(sidecar(planPath, '.state.json'))
    expect(state.runs).toHaveLength(1)
    expect(state.runs[0]).toMatchObject({exitCode: 0, turns: 3})
  })

  it('refuses with nothing to resume (exit 2): a plan that never ran', async ({t: {approvedPlan, server, wave}}) => {
    const planPath = await approvedPlan()
    const result = await wave(['run', planPath, '--resume'])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/Error: Nothing to resume: the plan steady-heron has not run yet\./)
    expect(server.requests).toHaveLength(0)
  })

  it('makes the approval checks of any run: a plan changed since approval (exit 4), a stale HEAD (exit 4)', async ({
    t: {approvedPlan, sandbox, server, wave},
  }) => {
    const planPath = await approvedPlan()
    server.push(reply(toolUse('LS', {path: '.'})))
    expect((await wave(['run', planPath, '--max-turns', '1'])).code).toBe(5)

    const original = readFileSync(planPath, 'utf8')
    writeFileSync(planPath, `${original}3. Something else.\n`)
    const changed = await wave(['run', planPath, '--resume'])
    expect(changed.code).toBe(4)
    writeFileSync(planPath, original)

    gitCommitAll(sandbox.repo, 'moved on')
    const stale = await wave(['run', planPath, '--resume'])
    expect(stale.code).toBe(4)
    expect(stale.stderr).toMatch(/stale/)
    expect(server.messageRequests).toHaveLength(1)
  })

  it('refuses --resume with --approve or --task (exit 2)', async ({t: {approvedPlan, wave}}) => {
    const planPath = await approvedPlan()
    expect((await wave(['run', planPath, '--resume', '--approve'])).code).toBe(2)
    expect((await wave(['run', '--task', 'x', '--resume'])).code).toBe(2)
  })
})
