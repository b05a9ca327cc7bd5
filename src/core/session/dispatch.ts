import {realpathSync} from 'node:fs'
import {z} from 'zod'

import type {ToolRegistry} from '../../plugins/registry.js'
import {type SessionControl, type ToolContext, ToolError, type ToolPlugin} from '../../plugins/tool.js'
import {decide, offers, type PolicyContext, type PolicyDecision} from '../policy/policy.js'
import {isInside, realPathOf, resolvePath, type ResolvedPath} from '../workspace/paths.js'

/** Cap on what one tool result may send back to the model; tools cap their own results below this. */
export const RESULT_CAP = 40_000

export interface ToolCallRequest {
  id: string
  name: string
  input: unknown
}

export interface ToolCallOutcome {
  content: string
  isError: boolean
  /** Set when the policy was asked: a denial is `decision: 'deny'`. */
  decision?: PolicyDecision
  /** The real path a write tool changed. */
  changed?: string
}

export interface DispatchEnv {
  registry: ToolRegistry
  policy: PolicyContext
  signal: AbortSignal
  session: SessionControl
}

/**
 * The shared wrapper every tool call goes through: unknown tool → invalid input → path resolution →
 * policy → re-check at the real path → run → cap. Nothing here throws: every failure becomes an
 * error result the model can read and act on.
 */
export async function dispatch(call: ToolCallRequest, env: DispatchEnv): Promise<ToolCallOutcome> {
  const {policy, registry} = env
  const tool = registry.get(call.name)
  if (!tool || !offers(policy, tool)) {
    const available = registry.offered(policy).map((t) => t.name).join(', ')
    const why = tool ? `${call.name} is not available in ${policy.mode} mode.` : `Unknown tool ${call.name}.`
    return refusal(`${why} Available tools: ${available}.`)
  }

  const parsed = tool.input.safeParse(call.input ?? {})
  if (!parsed.success) {
    return failure(`Invalid input for ${tool.name}: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`)
  }

  const input = parsed.data as Record<string, unknown>
  const globProblem = checkGlobs(tool, input)
  if (globProblem) return refusal(globProblem)

  let target: ResolvedPath | undefined
  if (tool.pathField) {
    const spelled = input[tool.pathField]
    if (spelled !== undefined && typeof spelled !== 'string') return failure(`${tool.pathField} must be a string.`)
    if (spelled === '') return failure(`${tool.pathField} must not be empty.`)
    target = await resolvePath(policy.workspaceRoot, spelled ?? '.')
  }

  const decision = decide(policy, {input, target, tool})
  if (decision.decision !== 'allow') return {content: `Permission denied: ${decision.reason}`, decision, isError: true}

  try {
    // Re-check at the real path just before acting: a symlink swapped in since the decision is refused.
    if (target) {
      const now = await realPathOf(target.absolute)
      if (now !== target.real) return refusal(`${target.input} changed while the call was checked; it now resolves to ${now}.`, decision)
    }

    const ctx: ToolContext = {
      policy,
      readable: (absolute) => readable(policy, absolute),
      root: policy.workspaceRoot,
      session: env.session,
      signal: env.signal,
      target,
    }
    const output = await tool.run(input as never, ctx)
    return {
      changed: tool.access === 'write' && target ? target.real : undefined,
      content: capResult(output),
      decision,
      isError: false,
    }
  } catch (error) {
    return {content: describeFailure(tool, error), decision, isError: true}
  }
}

function refusal(message: string, decision?: PolicyDecision): ToolCallOutcome {
  return {content: `Permission denied: ${message}`, decision: decision ?? {decision: 'deny', reason: message}, isError: true}
}

function failure(message: string): ToolCallOutcome {
  return {content: message, isError: true}
}

/** Glob patterns are relative to the searched directory; an absolute one or `..` would search elsewhere. */
function checkGlobs(tool: ToolPlugin, input: Record<string, unknown>): string | undefined {
  for (const field of tool.globFields ?? []) {
    const pattern = input[field]
    if (typeof pattern !== 'string') continue
    if (pattern.startsWith('/') || pattern.startsWith('~') || /^[A-Za-z]:[\\/]/.test(pattern)) {
      return `${field} must be relative to the searched directory; set path to choose where to search.`
    }

    if (pattern.split(/[\\/]/).includes('..')) return `${field} must not contain "..": set path to choose where to search.`
  }

  return undefined
}

async function readable(policy: PolicyContext, absolute: string): Promise<boolean> {
  // Glob asks this of every file it lists: realpath(3) run synchronously takes microseconds, the
  // promise-based call a trip through libuv's thread pool, 7× more over 15,000 files (bench/RESULTS.md).
  // A path that does not resolve (gone, a dangling link) takes the careful way.
  let real: string
  try {
    real = realpathSync.native(absolute)
  } catch {
    real = await realPathOf(absolute)
  }

  return isInside(policy.workspaceRoot, real) || real === policy.planFile
}

/** Keep the head and the tail: the end of a long output (an error, a summary) is often what matters. */
export function capResult(text: string, cap = RESULT_CAP): string {
  if (text.length <= cap) return text
  const keep = Math.floor(cap / 2)
  const cut = text.length - 2 * keep
  return `${text.slice(0, keep)}\n\n[... truncated: ${cut} characters cut from the middle ...]\n\n${text.slice(-keep)}`
}

function describeFailure(tool: ToolPlugin, error: unknown): string {
  if (error instanceof ToolError) return error.message
  const code = (error as NodeJS.ErrnoException)?.code
  const message = error instanceof Error ? error.message : String(error)
  switch (code) {
    case 'EACCES':
    case 'EPERM': {
      return `${tool.name} failed: permission denied by the file system (${message}).`
    }

    case 'ENOENT': {
      return `${tool.name} failed: no such file or directory (${message}).`
    }

    default: {
      return `${tool.name} failed: ${message}`
    }
  }
}
