import {z} from 'zod'

import {type TaskReading, TASK_OUTPUT_CAP} from './background.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

const DEFAULT_WAIT_MS = 30_000
const MAX_WAIT_MS = 600_000

export default defineTool({
  access: 'read',
  description:
    "Read a background command's output since the last reading, and whether it still runs or how it ended. " +
    `block (default true) waits until it ends, at most timeout ms (default ${DEFAULT_WAIT_MS}, at most ${MAX_WAIT_MS}); block: false returns at once. ` +
    `Unread output over ${TASK_OUTPUT_CAP} characters keeps its head and tail. Fails on an unknown task_id.`,
  input: () =>
    z.object({
      block: z.boolean().optional(),
      task_id: z.string(),
      timeout: z.number().int().nonnegative().max(MAX_WAIT_MS).optional(),
    }),
  name: 'TaskOutput',
  resultCap: DEFAULT_RESULT_CAP,
  async run(input, ctx) {
    if (!ctx.tasks) throw new ToolError('No background commands exist here.')
    const task = ctx.tasks.get(input.task_id)
    const block = input.block ?? true
    const wait = input.timeout ?? DEFAULT_WAIT_MS
    const ended = block ? await task.waitForEnd(wait, ctx.signal) : task.status !== 'running'
    return describeReading(task.read(), block && !ended ? wait : undefined)
  },
})

/** A reading as the model gets it: the state line, then the new output. */
export function describeReading(reading: TaskReading, waitedMs?: number): string {
  const what = reading.description ? `${reading.command} (${reading.description})` : reading.command
  const state =
    reading.status === 'running'
      ? waitedMs === undefined
        ? 'is running'
        : `is still running after ${waitedMs} ms`
      : reading.status === 'killed'
        ? 'was stopped'
        : `exited with ${reading.exitCode === null ? `signal ${reading.signal}` : `code ${reading.exitCode}`}`
  const output = reading.output.replace(/\n+$/, '')
  return `Task ${reading.id} ${state}: ${what}\n${output ? `Output since the last reading:\n${output}` : '(no new output)'}`
}
