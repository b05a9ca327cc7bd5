/**
 * The calls of one turn. Reads run together: consecutive calls that only read (Read, Glob, Grep, LS,
 * read-only plugin and MCP tools, WebFetch), and Agent calls (each its own conversation, bounded by the
 * session's agent limit), run concurrently, at most READ_CONCURRENCY at once. Anything
 * else (a write, a command, a control call such as EnterPlanMode, a tool wave does not know) runs
 * alone, after every call before it ended and before any call after it starts: a read that follows a
 * write sees what it wrote, and a control call changes the policy the next call is checked against.
 * Results come back in call order whatever order the calls ended in.
 */
import {scrubSecrets} from '../base/secrets.js'
import {type DispatchEnv, dispatch, type ToolCallRequest} from './dispatch.js'
import type {ToolRegistry} from './registry.js'

/** How many reads of one turn run at once: enough for a model's usual fan-out, few enough for a small machine. */
export const READ_CONCURRENCY = 8

export interface TurnEnv extends Omit<DispatchEnv, 'policy'> {
  /** The policy in force, asked when each call starts: a control call earlier in the turn may have changed it. */
  policy(): DispatchEnv['policy']
  /** Around each allowed command (a run held to a scope, src/plans/enforcement.ts). */
  commandWatch?: CommandWatch
}

/**
 * Around each allowed command (an execute-class call, which runs alone): `before` reads what `after`
 * compares with, and `after` may return a note appended to the call's result (what it changed outside the scope).
 */
export interface CommandWatch {
  before(): Promise<unknown>
  after(before: unknown): Promise<string | undefined>
}

/** What one tool call came to, as the loop answers the model with it. */
export interface CallResult {
  /** What the model is sent (secrets already scrubbed). */
  content: string
  isError: boolean
  /** The policy refused the call. */
  denied: boolean
  /** The real path a write tool changed. */
  changed?: string
  /** The deferred tools the call loaded (ToolSearch): sent as tool_reference blocks in place of `content`. */
  references?: string[]
}

/** Runs a turn's tool calls and returns their results in call order: what the loop is given, bound once per session. */
export type CallExecutor = (calls: readonly ToolCallRequest[]) => Promise<CallResult[]>

interface TurnObserver {
  /** The call at `index` starts: it is about to be checked and run (or refused, the session being interrupted). */
  started?(call: ToolCallRequest, index: number): void
  /** The call at `index` ended, with what the model will be sent. As calls end: reads may end out of call order. */
  ended?(call: ToolCallRequest, result: CallResult, index: number): void
}

/** The session's executor: `env` and `observer` bound once, a turn's calls given each turn. */
export function turnExecutor(env: TurnEnv, observer: TurnObserver = {}): CallExecutor {
  return (calls) => executeTurn(calls, env, observer)
}

/** Runs a turn's calls: reads together, everything else alone and in order. Results in call order. */
export async function executeTurn(calls: readonly ToolCallRequest[], env: TurnEnv, observer: TurnObserver = {}): Promise<CallResult[]> {
  const results: CallResult[] = new Array(calls.length)
  const runOne = async (index: number) => {
    const call = calls[index]
    observer.started?.(call, index)
    // A call not yet started when the session is interrupted does not run.
    const watched = env.commandWatch && !env.signal.aborted && env.registry.get(call.name)?.access === 'execute' ? env.commandWatch : undefined
    const before = await watched?.before()
    const outcome = env.signal.aborted
      ? {content: 'The session was interrupted before this call ran.', isError: true}
      : await dispatch(call, {...env, policy: env.policy()})
    const note = watched && 'decision' in outcome && outcome.decision?.decision === 'allow' ? await watched.after(before) : undefined
    results[index] = {
      changed: 'changed' in outcome ? outcome.changed : undefined,
      content: scrubSecrets(note ? `${outcome.content}\n\n${note}` : outcome.content),
      denied: 'decision' in outcome && outcome.decision?.decision === 'deny',
      isError: outcome.isError,
      ...('references' in outcome && outcome.references ? {references: outcome.references} : {}),
    }
    observer.ended?.(call, results[index], index)
  }

  for (const batch of batches(calls, env.registry)) {
    if (batch.length === 1) await runOne(batch[0])
    else await pool(batch, READ_CONCURRENCY, runOne)
  }

  return results
}

/** Whether a call may run beside others: its tool only reads (the network included: WebFetch changes nothing here), or says it may (Agent). */
function runsConcurrently(call: ToolCallRequest, registry: ToolRegistry): boolean {
  const tool = registry.get(call.name)
  if (!tool) return false
  return tool.concurrent === true || tool.access === 'read' || (tool.access === 'network' && (tool.origin ?? 'builtin') === 'builtin')
}

/** The turn's calls as groups of indices run one group after another: each run of reads together, every other call alone. */
function batches(calls: readonly ToolCallRequest[], registry: ToolRegistry): number[][] {
  const groups: number[][] = []
  let reads: number[] = []
  for (const [index, call] of calls.entries()) {
    if (runsConcurrently(call, registry)) {
      reads.push(index)
      continue
    }

    if (reads.length > 0) groups.push(reads)
    reads = []
    groups.push([index])
  }

  if (reads.length > 0) groups.push(reads)
  return groups
}

/** Runs `work` on every item, at most `limit` at once; resolves when all are done. `work` must not throw. */
async function pool(items: number[], limit: number, work: (item: number) => Promise<void>): Promise<void> {
  let next = 0
  const worker = async () => {
    while (next < items.length) await work(items[next++])
  }

  await Promise.all(Array.from({length: Math.min(limit, items.length)}, worker))
}
