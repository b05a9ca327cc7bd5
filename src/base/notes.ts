/**
 * The vocabulary of the model's notes to the people behind a headless session, shared by the tools that
 * record them (TodoWrite, AskUserQuestion: tools/notes.ts) and every surface that shows them (progress,
 * a job summary, a comment: output/views/notes.ts): a to-do item, its list's one-line status, a question.
 */
export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const
type TodoStatus = (typeof TODO_STATUSES)[number]

export interface Todo {
  content: string
  status: TodoStatus
  activeForm: string
}

export interface QuestionOption {
  label: string
  description: string
}

export interface AskedQuestion {
  question: string
  header: string
  options: QuestionOption[]
  multiSelect: boolean
}

/** The progress line of a to-do list: "step 3 of 7: Running the tests". */
export function todoProgress(todos: Todo[]): string {
  if (todos.length === 0) return 'to-do list cleared'
  const done = todos.filter((todo) => todo.status === 'completed').length
  const current = todos.find((todo) => todo.status === 'in_progress')
  if (current) return `step ${Math.min(done + 1, todos.length)} of ${todos.length}: ${current.activeForm || current.content}`
  if (done === todos.length) return `all ${todos.length} steps done`
  return `${done} of ${todos.length} steps done; next: ${todos.find((todo) => todo.status === 'pending')?.content ?? ''}`
}
