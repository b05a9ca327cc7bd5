/**
 * StructuredOutput, Claude Code's tool for `--json-schema`: the model gives the session's result as the
 * tool's input, whose input_schema is the schema given. wave checks the input against that schema with
 * ajv (base/json-schema.ts) rather than trusting it (Claude Code lets "placeholder" pass,
 * anthropics/claude-code#77026); what does not match is the tool's error result, for a bounded number of
 * tries. The tool is in a session's tool set only when a schema is given, and the policy offers it only
 * then (policy.ts, `structuredOutput`). What the session does when the model ends without it is
 * app/session.ts's.
 */
import {z} from 'zod'

import type {OutputSchema} from '../base/json-schema.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError, type ToolPlugin} from './tool.js'

export const STRUCTURED_OUTPUT_TOOL = 'StructuredOutput'

/** Tries the model has to give a matching result: each call that does not match, and each ending without a call after the reminder. */
export const STRUCTURED_OUTPUT_TRIES = 3

/** Said once the model ended without giving its result; `left` tries remain. */
export function structuredOutputReminder(left: number): string {
  return (
    `You ended without calling ${STRUCTURED_OUTPUT_TOOL}. This session's result must be given as the input of the ${STRUCTURED_OUTPUT_TOOL} tool, ` +
    `matching its input schema: call it now (${triesLeft(left)}).`
  )
}

const triesLeft = (left: number) => `${left} ${left === 1 ? 'try' : 'tries'} left`

/**
 * The session's structured result: the value once one matched, and the tries that did not. One per tool
 * set; a conversation starts it afresh (`begin`), so the planning half of `run --task --approve` does
 * not satisfy the run.
 */
export class StructuredResult {
  /** The value that matched (the newest, if the model gave it twice). */
  value: unknown
  given = false
  failures = 0
  /** What was wrong with the newest try: the line a session that never matched ends with. */
  lastProblem = ''
  /** The model was reminded once, after ending without the call. */
  reminded = false
  private readonly listeners = new Set<(value: unknown) => void>()

  constructor(readonly schema: OutputSchema) {}

  begin(): void {
    this.value = undefined
    this.given = false
    this.failures = 0
    this.lastProblem = ''
    this.reminded = false
  }

  /** Told of each value that matched (the session's events: the result's `structured_output`). */
  listen(listener: (value: unknown) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Tries left. */
  get left(): number {
    return Math.max(0, STRUCTURED_OUTPUT_TRIES - this.failures)
  }

  get exhausted(): boolean {
    return !this.given && this.failures >= STRUCTURED_OUTPUT_TRIES
  }

  /** One failed try, with what was wrong; the tries left after it. */
  fail(problem: string): number {
    this.failures++
    this.lastProblem = problem
    return this.left
  }

  /** The tool's call: accepted, or an error saying what does not match and how many tries are left. */
  give(input: Record<string, unknown>): string {
    const problems = this.schema.problems(input)
    if (problems.length === 0) {
      this.value = input
      this.given = true
      for (const listener of this.listeners) listener(input)
      return 'Accepted: this is the structured result of the session. Finish anything still left to do, then end your turn.'
    }

    const left = this.fail(`the input does not match the schema: ${problems.join('; ')}`)
    const next = left > 0 ? `Call ${STRUCTURED_OUTPUT_TOOL} again with a corrected input (${triesLeft(left)}).` : 'No tries are left.'
    throw new ToolError(`The input does not match the JSON schema asked for: ${problems.join('; ')}. ${next}`)
  }
}

/** The tool for a session given a schema: its input_schema is the schema, its input checked by the schema alone. */
export function structuredOutputTool(result: StructuredResult): ToolPlugin {
  return defineTool({
    access: 'control',
    description:
      'Give the result of this session in the structured form asked for: call it once the work is done, with the result as the input ' +
      '(the input schema is the form asked for). An input that does not match is answered with what is wrong: call it again, corrected. ' +
      'The session ends with no result if it is never called with a matching input.',
    // The schema, not zod, decides what the input may hold (dispatch.ts takes `input` as it is for a tool with its own inputSchema).
    input: z.looseObject({}),
    inputSchema: result.schema.schema,
    name: STRUCTURED_OUTPUT_TOOL,
    resultCap: DEFAULT_RESULT_CAP,
    async run(input) {
      return result.give(input)
    },
  }) as unknown as ToolPlugin
}
