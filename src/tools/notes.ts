/**
 * What the model tells the people behind a headless session, beside its tool calls: its to-do list
 * (TodoWrite, shown as progress) and the questions it would have asked (AskUserQuestion, which no one
 * can answer while the session runs). Owned by the session's tool set; the session listens for the
 * events, and its result and plan carry the questions.
 */
import {cappedList, inertMarkdown} from '../base/text.js'

export const TODO_STATUSES = ['pending', 'in_progress', 'completed'] as const
type TodoStatus = (typeof TODO_STATUSES)[number]

export interface Todo {
  content: string
  status: TodoStatus
  activeForm: string
}

interface QuestionOption {
  label: string
  description: string
}

export interface AskedQuestion {
  question: string
  header: string
  options: QuestionOption[]
  multiSelect: boolean
}

/** The events the notes add to a session's own (progress, stream-json). */
export type NoteEvent = {type: 'todo'; todos: Todo[]} | {type: 'question'; questions: AskedQuestion[]}

export class SessionNotes {
  private list: Todo[] = []
  private readonly asked: AskedQuestion[] = []
  private readonly listeners = new Set<(event: NoteEvent) => void>()

  get todos(): Todo[] {
    return [...this.list]
  }

  get questions(): AskedQuestion[] {
    return [...this.asked]
  }

  /** Replaces the to-do list, as TodoWrite does; returns the list it replaced. */
  setTodos(todos: Todo[]): Todo[] {
    const old = this.list
    this.list = todos.map((todo) => ({...todo}))
    this.emit({todos: this.todos, type: 'todo'})
    return old
  }

  /** Records questions no one could answer; each is kept once, by its text. */
  ask(questions: AskedQuestion[]): void {
    const fresh = questions.filter((q) => !this.asked.some((known) => sameText(known.question, q.question)))
    this.asked.push(...fresh)
    this.emit({questions, type: 'question'})
  }

  /** Listens to the notes' events; returns the function that stops listening. */
  listen(listener: (event: NoteEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private emit(event: NoteEvent): void {
    for (const listener of this.listeners) listener(event)
  }
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

const sameText = (a: string, b: string): boolean => normalise(a) === normalise(b)
export const normalise = (text: string): string => text.replaceAll(/\s+/g, ' ').trim()

/** How much of the model's notes a Markdown surface shows: a comment has a size limit, and the job's log has the rest. */
export const NOTES_SHOWN = {items: 50, itemLength: 300}

/**
 * The to-do list as a Markdown task list for a job summary or a comment, or '' when there is none. The
 * model's words are inert there (base/text.ts): no image, link, heading or HTML of its own.
 */
export function todosMarkdown(todos: Todo[], heading = '**To-do list**', omitted = 0): string {
  if (todos.length === 0) return ''
  const mark = {completed: '[x]', in_progress: '[ ] (in progress)', pending: '[ ]'} as const
  const shown = todos.slice(0, NOTES_SHOWN.items)
  const hidden = todos.length - shown.length + omitted
  const items = shown.map((todo) => `- ${mark[todo.status]} ${inertMarkdown(todo.content, NOTES_SHOWN.itemLength)}`)
  if (hidden > 0) items.push(`- … and ${hidden} more`)
  const progress = hidden > 0 ? `${shown.length + hidden} steps; the first ${shown.length} shown` : inertMarkdown(todoProgress(todos), NOTES_SHOWN.itemLength)
  return `${heading} (${progress})\n\n${items.join('\n')}`
}

/** The questions as a Markdown list for a job summary or a comment, or '' when there are none; inert as the to-do list. */
export function questionsMarkdown(
  questions: Array<{question: string; options?: QuestionOption[]}>,
  heading = '**Open questions** (asked during the session; no one could answer them)',
  omitted = 0,
): string {
  if (questions.length === 0) return ''
  const items = questions.map(
    (q) =>
      `- ${inertMarkdown(q.question, NOTES_SHOWN.itemLength)}${q.options && q.options.length > 0 ? ` (options: ${q.options.map((o) => inertMarkdown(o.label, 80)).join(', ')})` : ''}`,
  )
  return `${heading}\n\n${cappedList(items, NOTES_SHOWN.items, (count) => `- … and ${count + omitted} more`).join('\n')}`
}
