import {z} from 'zod'

import {TODO_STATUSES, todoProgress} from './notes.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

const todo = z.strictObject({
  activeForm: z.string().min(1).describe('The step in the present continuous, shown while it is in progress ("Running the tests")'),
  content: z.string().min(1).describe('The step in the imperative ("Run the tests")'),
  status: z.enum(TODO_STATUSES),
})

export default defineTool({
  access: 'control',
  description:
    'Keep a to-do list of the steps of a task with several steps: send the whole updated list each time (it replaces the previous one). ' +
    'Mark a step in_progress when you start it (one at a time) and completed as soon as it is done. The people watching the session see it as progress ("step 3 of 7: ..."). ' +
    'Changes nothing in the workspace. Skip it for a task of one or two steps.',
  input: z.object({
    todos: z.array(todo).describe('The updated to-do list'),
  }),
  name: 'TodoWrite',
  resultCap: DEFAULT_RESULT_CAP,
  async run(input, ctx) {
    if (!ctx.notes) throw new ToolError('The to-do list is not available here.')
    const inProgress = input.todos.filter((item) => item.status === 'in_progress').length
    ctx.notes.setTodos(input.todos)
    const many = inProgress > 1 ? ' Keep one step in_progress at a time.' : ''
    return `To-do list updated (${todoProgress(input.todos)}).${many} Go on with the current step.`
  },
})
