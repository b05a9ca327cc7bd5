/**
 * The model's notes as Markdown for a job summary or a comment: its to-do list and its open questions,
 * each capped (a comment has a size limit, and the job's log has the rest).
 */
import {cappedList, inertMarkdown} from '../../base/text.js'
import {type QuestionOption, type Todo, todoProgress} from '../../base/notes.js'

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
