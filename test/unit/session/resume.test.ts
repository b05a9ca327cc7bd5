/**
 * Resume in process: the run `--resume` picks, the conversation rebuilt from a synthetic transcript (a
 * compaction, other sessions' entries, a last line cut short, a turn killed before its results were
 * recorded), and the loop counting on from what the run had spent.
 */
import {mkdtempSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import Anthropic from '@anthropic-ai/sdk'
import type {MessageParam} from '@anthropic-ai/sdk/resources/messages'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {stoppedBy, stoppedError} from '../../../src/agent/outcome.js'
import {ExitCode, WaveError} from '../../../src/base/errors.js'
import {type ApprovalRecord, approvalRecordSchema} from '../../../src/plans/approval.js'
import type {PlanningSession, PlanRun, PlanState} from '../../../src/plans/lifecycle.js'
import {NO_RULES} from '../../../src/policy/policy.js'
import {outcomeDetails} from '../../../src/agent/loop.js'
import {agentLoop} from '../../../src/session/session.js'
import {costOf} from '../../../src/model/pricing.js'
import {resumablePlanning, resumableRun, resumePoint} from '../../../src/session/resume.js'
import {builtinRegistry} from '../../../src/tools/registry.js'
import type {BudgetCap} from '../../../src/model/budget.js'
import {type MessagesServer, reply, startMessagesServer} from '../../support/messages-server.js'

const SHA = 'a'.repeat(64)
const STARTED = '2025-01-02T03:04:05.000Z'
const OPENING = 'Approved plan "quiet-otter" (sha256 aaaa):\n\n# Plan\n\nCarry out this plan now.'

let dir: string
let planPath: string

beforeEach(() => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-resume-')))
  planPath = path.join(dir, 'quiet-otter.md')
})

afterEach(() => rmSync(dir, {force: true, recursive: true}))

const record = (fields: Partial<ApprovalRecord> = {}): ApprovalRecord =>
  approvalRecordSchema.parse({decidedAt: '2025-01-01T00:00:00.000Z', decision: 'approved', plan: {sha256: SHA}, version: 1, ...fields})

const state = (runs: PlanRun[]): PlanState => ({
  createdAt: STARTED,
  model: 'm',
  name: 'quiet-otter',
  repository: null,
  runs,
  status: 'failed',
  task: 't',
  updatedAt: STARTED,
  version: 1,
  workspace: dir,
})

const failedRun = (fields: Partial<PlanRun> = {}): PlanRun => ({
  approvalSha256: SHA,
  changedFiles: [],
  endedAt: '2025-01-02T03:05:00.000Z',
  exitCode: 143,
  startedAt: STARTED,
  ...fields,
})

/** Writes the transcript: entries as JSON lines, then `tail` as it is (a line cut short). */
function transcript(entries: unknown[], tail = ''): void {
  writeFileSync(path.join(dir, 'quiet-otter.transcript.jsonl'), entries.map((entry) => JSON.stringify(entry) + '\n').join('') + tail)
}

const run = (fields: Record<string, unknown>) => ({session: 'run', startedAt: STARTED, ...fields})
const user = (content: MessageParam['content']): MessageParam => ({content, role: 'user'})
const assistant = (content: MessageParam['content']): MessageParam => ({content, role: 'assistant'})
const use = (id: string, name: string, input: unknown = {}) => ({id, input, name, type: 'tool_use' as const})
const result = (id: string, content: string) => ({content, tool_use_id: id, type: 'tool_result' as const})

function failure(work: () => unknown): WaveError {
  try {
    work()
  } catch (error) {
    if (error instanceof WaveError) return error
    throw error
  }

  throw new Error('expected a WaveError')
}

describe('the run --resume continues', () => {
  it('is the newest run, when it did not succeed', () => {
    const older = failedRun({exitCode: 5, startedAt: '2025-01-01T10:00:00.000Z'})
    const newest = failedRun()
    expect(resumableRun({planPath, record: record(), state: state([newest, older])})).toBe(newest)
    // Killed without recording an end, its lock no longer held.
    const killed = failedRun({endedAt: undefined, exitCode: undefined})
    expect(resumableRun({planPath, record: record(), state: state([killed])})).toBe(killed)
  })

  it('is nothing (exit 2) for a plan that never ran, or whose newest run succeeded', () => {
    const never = failure(() => resumableRun({planPath, record: record(), state: undefined}))
    expect(never.exitCode).toBe(ExitCode.usage)
    expect(never.message).toBe('Nothing to resume: the plan quiet-otter has not run yet.')

    const succeeded = failure(() =>
      resumableRun({planPath, record: record(), state: state([failedRun({exitCode: 5, startedAt: '2025-01-01T00:00:00.000Z'}), failedRun({exitCode: 0})])}),
    )
    expect(succeeded.exitCode).toBe(ExitCode.usage)
    expect(succeeded.message).toMatch(/^Nothing to resume: the newest run of quiet-otter succeeded/)
    expect(succeeded.hint).toMatch(/approve it again/)

    // The record says the approval is spent, by a run newer than the state knows of.
    const spent = failure(() => resumableRun({planPath, record: record({spentAt: '2025-01-03T00:00:00.000Z'}), state: state([failedRun()])}))
    expect(spent.exitCode).toBe(ExitCode.usage)
  })

  it('is refused while its process still runs (exit 1), and under an approval of other bytes (exit 2)', () => {
    const running = failure(() =>
      resumableRun({lockOwner: process.pid, planPath, record: record(), state: state([failedRun({endedAt: undefined, exitCode: undefined})])}),
    )
    expect(running.exitCode).toBe(ExitCode.runtime)
    expect(running.message).toMatch(/still running \(pid \d+\)/)

    const other = failure(() => resumableRun({planPath, record: record(), state: state([failedRun({approvalSha256: 'b'.repeat(64)})])}))
    expect(other.exitCode).toBe(ExitCode.usage)
    expect(other.message).toMatch(/ran another version of the plan/)
  })
})

describe('the resumed conversation', () => {
  it('starts from the newest compaction, skips other sessions and runs, and answers the calls a killed turn never recorded', async () => {
    const summarized = user([
      {text: 'an opening the transcript holds', type: 'text'},
      {text: '[wave: summary of earlier turns] ...', type: 'text'},
    ])
    transcript(
      [
        {message: user('planning'), session: 'plan'},
        run({message: user(OPENING)}),
        run({message: assistant([use('t1', 'Read', {file_path: 'a'})])}),
        run({message: user([result('t1', 'old')])}),
        {message: assistant([use('x1', 'Write')]), session: 'run', startedAt: '2024-12-31T00:00:00.000Z'},
        run({compacted: [summarized, assistant([use('t2', 'Edit')]), user([result('t2', 'edited')])], compaction: {type: 'compaction'}}),
        run({
          message: assistant([{text: 'Now two things.', type: 'text'}, use('t3', 'Write', {file_path: 'b'}), use('t4', 'Bash', {command: 'make'})]),
          progress: {costUsd: 0.25, turns: 7, usage: {input_tokens: 900, output_tokens: 90}},
        }),
      ],
      // The tool results' line, cut short by the kill.
      '{"message":{"role":"user","content":[{"type":"tool_res',
    )
    const point = await resumePoint(planPath, {...failedRun({endedAt: undefined, exitCode: undefined}), kind: 'run'}, OPENING)

    const messages = point.history!
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    // The opening from the record and the plan, the summary kept.
    expect(messages[0].content).toEqual([
      {text: OPENING, type: 'text'},
      {text: '[wave: summary of earlier turns] ...', type: 'text'},
    ])
    const last = messages[4].content as Array<{type: string; tool_use_id?: string; is_error?: boolean; content?: string; text?: string}>
    expect(last.map((block) => block.type)).toEqual(['tool_result', 'tool_result', 'text'])
    expect(last.slice(0, 2).map((block) => [block.tool_use_id, block.is_error])).toEqual([
      ['t3', true],
      ['t4', true],
    ])
    expect(last[1].content).toMatch(
      /before this Bash call's result was recorded: whether it ran, and what it changed, is unknown\. It was not run again\. Check its effect/,
    )
    expect(last[2].text).toMatch(/its process was killed\) and was resumed/)
    expect(point.unanswered).toEqual(['Write', 'Bash'])
    // A killed run recorded no totals: its transcript's newest progress is what it had spent.
    expect(point.prior).toEqual({
      costUsd: 0.25,
      turns: 7,
      usage: {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 900, output_tokens: 90},
    })
  })

  it("after a complete turn: the note ends the last user message (no second user message), the record's totals count", async () => {
    transcript([run({message: user(OPENING)}), run({message: assistant([use('t1', 'LS', {path: '.'})])}), run({message: user([result('t1', 'README.md')])})])
    const point = await resumePoint(
      planPath,
      {...failedRun({costUsd: null, exitCode: 5, turns: 1, usage: {input_tokens: 10, output_tokens: 2}}), kind: 'run'},
      OPENING,
    )

    const messages = point.history!
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user'])
    expect(messages[2].content).toEqual([
      result('t1', 'README.md'),
      {text: expect.stringMatching(/at a limit: turns or budget\) and was resumed/), type: 'text'},
    ])
    expect(point.unanswered).toEqual([])
    expect(point.prior).toEqual({
      costUsd: null,
      turns: 1,
      usage: {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 10, output_tokens: 2},
    })
  })

  it('a run killed before its first message was recorded starts from the opening; a damaged transcript is refused (exit 2)', async () => {
    const none = await resumePoint(planPath, {...failedRun({exitCode: undefined}), kind: 'run'}, OPENING)
    expect(none).toEqual({
      history: undefined,
      prior: {costUsd: 0, turns: 0, usage: {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 0, output_tokens: 0}},
      unanswered: [],
    })

    transcript([run({message: user(OPENING)})], 'not json\n' + JSON.stringify(run({message: assistant('x')})) + '\n')
    const damaged = await resumePoint(planPath, {...failedRun(), kind: 'run'}, OPENING).catch((error: unknown) => error as WaveError)
    expect(damaged).toBeInstanceOf(WaveError)
    expect((damaged as WaveError).exitCode).toBe(ExitCode.usage)
    expect((damaged as WaveError).message).toMatch(/transcript .* is malformed at line 2/)
  })
})

describe('a planning session, resumed', () => {
  const planning = (fields: Partial<PlanningSession> = {}): PlanningSession => ({exitCode: 5, startedAt: STARTED, turns: 2, ...fields})
  const planned = (fields: Partial<PlanningSession>) => ({...state([]), planning: planning(fields)})
  const plan = (fields: Record<string, unknown>) => ({session: 'plan', startedAt: STARTED, ...fields})

  it('is the newest one when it did not end with a plan; refused otherwise (exit 2, or exit 1 while its process works on it)', async () => {
    expect(resumablePlanning(planPath, planned({}), undefined)).toMatchObject({exitCode: 5, startedAt: STARTED})
    // Killed outright: no exit code, its process gone.
    expect(resumablePlanning(planPath, planned({exitCode: undefined, pid: 2 ** 22 + 12_345}), undefined)).toMatchObject({startedAt: STARTED})
    const refusals = [
      [planned({exitCode: 0, endedAt: '2025-01-02T03:06:00.000Z'}), undefined, /finished with a plan/, /wave plan --revise quiet-otter --feedback/],
      [state([]), undefined, /kept no record of a planning session/, /wave plan --revise quiet-otter/],
      [planned({}), '2025-01-02T04:00:00.000Z', /a decision on quiet-otter was recorded after its planning session/, /--revise/],
    ] as const
    for (const [given, decidedAt, message, hint] of refusals) {
      const error = failure(() => resumablePlanning(planPath, given, decidedAt))
      expect(error.exitCode).toBe(ExitCode.usage)
      expect(error.message).toMatch(message)
      expect(error.hint).toMatch(hint)
    }

    // Still worked on by a live process (this test's parent): nothing to resume yet.
    const live = failure(() => resumablePlanning(planPath, planned({exitCode: undefined, pid: process.ppid}), undefined))
    expect(live.exitCode).toBe(ExitCode.runtime)
    expect(live.message).toMatch(/is still being planned/)
  })

  it("keeps the recorded opening, answers a turn stopped at a limit as not run, and reads only the session's own entries", async () => {
    transcript([
      plan({message: user('Plan this: rename greet.')}),
      plan({message: assistant([use('r1', 'Read', {file_path: 'a.ts'})])}),
      plan({message: user([result('r1', 'export const a = 1')])}),
      // Another planning session's entry (an older one) and a run's: not this session's.
      {message: assistant('older'), session: 'revise', startedAt: '2024-01-01T00:00:00.000Z'},
      run({message: assistant('a run')}),
      plan({message: assistant([use('r2', 'Read', {file_path: 'b.ts'})])}),
    ])
    const point = await resumePoint(planPath, {...planning(), kind: 'planning'})
    const messages = point.history!
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    expect(messages[0].content).toBe('Plan this: rename greet.')
    const last = messages[4].content as Array<{type: string; content?: string; text?: string; tool_use_id?: string}>
    expect(last[0]).toMatchObject({is_error: true, tool_use_id: 'r2', type: 'tool_result'})
    expect(last[0].content).toMatch(/stopped \(at a limit, or a refusal\) after this turn, before running its calls: this Read call was not run/)
    expect(last.at(-1)!.text).toMatch(/this planning session stopped \(at a limit: turns or budget\) and was resumed with wave plan --resume/)
    expect(point.unanswered).toEqual(['Read'])
    expect(point.session).toBe('plan')
    expect(point.prior).toMatchObject({turns: 2})
  })
})

describe('the loop of a resumed run', () => {
  let server: MessagesServer
  beforeEach(async () => {
    server = await startMessagesServer()
  })
  afterEach(() => server.close())

  const MODEL = 'claude-sonnet-5-5'
  const agent = async ({priorCostUsd, priorTurns, ...options}: {priorTurns: number; maxTurns: number; priorCostUsd?: number | null; budget?: BudgetCap}) => {
    const outcome = await agentLoop({
      client: new Anthropic({apiKey: 'test-key', baseURL: server.url, maxRetries: 0}),
      messages: [user('go on')],
      model: MODEL,
      policy: () => ({headless: true, mode: 'acceptEdits', rules: NO_RULES, workspaceRoot: dir}),
      prior: {
        costUsd: priorCostUsd,
        turns: priorTurns,
        usage: {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 1000, output_tokens: 100},
      },
      registry: builtinRegistry(),
      session: {enterPlanMode: async () => '', exitPlanMode: async () => ''},
      signal: new AbortController().signal,
      system: () => 'system',
      ...options,
    }).run()
    // A session stopped before it finished: the line, hint and exit code a command reports for it (ENDINGS).
    const stopped = stoppedBy(outcome, outcomeDetails(outcome))
    if (stopped) throw stoppedError(stopped)
    return outcome
  }

  it('counts turns, usage and cost on from the earlier part', async () => {
    const turn = {cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 20_000, output_tokens: 2000}
    server.push({...reply('Done.'), usage: turn})
    const outcome = await agent({maxTurns: 5, priorCostUsd: 0.5, priorTurns: 3})
    expect(outcome.turns).toBe(4)
    expect(outcome.usage).toEqual({cache_creation_input_tokens: 0, cache_read_input_tokens: 0, input_tokens: 21_000, output_tokens: 2100})
    expect(costOf(MODEL, turn)).toBeGreaterThan(0)
    expect(outcome.costUsd).toBeCloseTo(0.5 + costOf(MODEL, turn)!, 6)
  })

  it('stops at --max-turns and --max-budget-usd counted over the whole run, before any request', async () => {
    const turns = await agent({maxTurns: 3, priorTurns: 3}).catch((error: unknown) => error as WaveError)
    expect(turns).toMatchObject({exitCode: ExitCode.limit, details: {stopReason: 'max_turns', turns: 3}})
    const budget = await agent({budget: {source: {kind: 'flag'}, usd: 0.4}, maxTurns: 10, priorCostUsd: 0.5, priorTurns: 1}).catch(
      (error: unknown) => error as WaveError,
    )
    expect(budget).toMatchObject({exitCode: ExitCode.limit, details: {costUsd: 0.5, stopReason: 'budget'}})
    expect((budget as WaveError).message).toBe('Stopped at the budget: $0.5000 spent, more than --max-budget-usd 0.4, before the agent finished.')
    expect(server.messageRequests).toHaveLength(0)
  })
})
