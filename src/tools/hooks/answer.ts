/**
 * How a hook answered, read as Claude Code reads it: exit 0 goes on (its stdout a JSON answer, or plain
 * text), exit 2 blocks with its stderr, any other exit is an error that does not block. A hook that
 * could not start, timed out, or printed JSON wave cannot read is a failure naming the hook.
 */
import {z} from 'zod'

import type {FinishedCommand} from '../../base/process/runner.js'
import type {ConfiguredHook} from '../../config/hooks.js'

/** Claude Code's JSON answer: the common fields and `hookSpecificOutput`. Unknown fields are let through, as Claude Code does. */
const answerSchema = z.lazy(() =>
  z.looseObject({
    continue: z.boolean().optional(),
    stopReason: z.string().optional(),
    suppressOutput: z.boolean().optional(),
    systemMessage: z.string().optional(),
    decision: z.enum(['approve', 'block']).optional(),
    reason: z.string().optional(),
    hookSpecificOutput: z
      .looseObject({
        hookEventName: z.string().optional(),
        permissionDecision: z.enum(['allow', 'deny', 'ask']).optional(),
        permissionDecisionReason: z.string().optional(),
        additionalContext: z.string().optional(),
        updatedInput: z.record(z.string(), z.unknown()).optional(),
      })
      .optional(),
  }),
)

export type HookAnswer = z.infer<typeof answerSchema>

export type HookRun =
  /** Exit 0: its JSON answer, or its stdout as plain text. */
  | {kind: 'ok'; hook: ConfiguredHook; answer?: HookAnswer; text: string; exitCode: 0}
  /** Exit 2: blocks, its stderr the reason. */
  | {kind: 'block'; hook: ConfiguredHook; stderr: string; exitCode: 2}
  /** Another exit: an error that does not block (Claude Code's "non-blocking error"), its stderr reported. */
  | {kind: 'nonzero'; hook: ConfiguredHook; stderr: string; exitCode: number}
  /** It could not start, timed out, was killed, or answered with JSON wave cannot read. */
  | {kind: 'failed'; hook: ConfiguredHook; problem: string; exitCode: number | null}

/** The short name of a hook in messages: `PreToolUse hook "./guard.sh"`. */
export const hookName = (hook: ConfiguredHook) => `${hook.event} hook "${hook.command}"`

/** What a finished hook process said, as a HookRun. */
export function readHookRun(hook: ConfiguredHook, result: FinishedCommand): HookRun {
  if (result.timedOut)
    return {exitCode: null, hook, kind: 'failed', problem: `timed out after ${hook.timeout}s (its timeout; set "timeout" in seconds in ${hook.file})`}
  if (result.aborted) return {exitCode: null, hook, kind: 'failed', problem: 'was stopped: the session was interrupted'}
  if (result.code === null) return {exitCode: null, hook, kind: 'failed', problem: `was killed by ${result.signal ?? 'a signal'}`}
  const stderr = result.stderr.trim()
  if (result.code === 2) return {exitCode: 2, hook, kind: 'block', stderr}
  // 126/127: the shell could not run it (not executable, not found): it never started.
  if (result.code === 126 || result.code === 127) {
    return {exitCode: result.code, hook, kind: 'failed', problem: `could not start (exit ${result.code}${stderr ? `: ${oneLine(stderr)}` : ''})`}
  }

  if (result.code !== 0) return {exitCode: result.code, hook, kind: 'nonzero', stderr}
  const text = result.stdout.trim()
  if (!text.startsWith('{')) return {exitCode: 0, hook, kind: 'ok', text}
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return {exitCode: 0, hook, kind: 'failed', problem: `printed JSON wave cannot read (${(error as Error).message})`}
  }

  const answer = answerSchema.safeParse(json)
  if (!answer.success)
    return {exitCode: 0, hook, kind: 'failed', problem: `printed JSON wave cannot read (${z.prettifyError(answer.error).replaceAll('\n', ' ')})`}
  return {answer: answer.data, exitCode: 0, hook, kind: 'ok', text: ''}
}

export const oneLine = (text: string, max = 500) => {
  const line = text.replaceAll(/\s*\n\s*/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max)}…` : line
}
