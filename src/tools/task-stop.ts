import {z} from 'zod'

import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'
import {describeReading} from './task-output.js'

export default defineTool({
  access: 'execute',
  description:
    'End a background command and everything it started (SIGTERM, then SIGKILL after 2 s), returning its last unread output. ' +
    'Every background command ends with the session anyway. Fails on an unknown task_id.',
  input: () =>
    z.object({
      task_id: z.string(),
    }),
  name: 'TaskStop',
  resultCap: DEFAULT_RESULT_CAP,
  async run(input, ctx) {
    if (!ctx.tasks) throw new ToolError('No background commands exist here.')
    const task = ctx.tasks.get(input.task_id)
    const wasRunning = task.status === 'running'
    await task.stop()
    const reading = describeReading(task.read())
    return wasRunning ? `Stopped task ${task.id}.\n${reading}` : `Task ${task.id} had already ended; nothing to stop.\n${reading}`
  },
})
