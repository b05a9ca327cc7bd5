import {z} from 'zod'

import {TODO_STATUSES, todoProgress} from '../base/notes.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

const todo = () =>
  z.strictObject({
    activeForm: z.string().min(1),
    content: z.string().min(1),
    status: z.enum(TODO_STATUSES),
  })

export default defineTool({
  access: 'control',
  description:
    'Keep a to-do list for a task of three or more steps: send the whole updated list each time. ' +
    'Each step: content in the imperative ("Run the tests"), activeForm in the present continuous ("Running the tests"), shown as progress. ' +
    'Mark a step in_progress when you start it (one at a time), completed as soon as it is done. Changes nothing in the workspace.',
  input: () =>
    z.object({
      todos: z.array(todo()),
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
