/**
 * What the model tells the people behind a headless session, beside its tool calls: its to-do list
 * (TodoWrite, shown as progress) and the questions it would have asked (AskUserQuestion, which no one
 * can answer while the session runs). Owned by the session's tool set; the session listens for the
 * events, and its result and plan carry the questions. The words shown of them are base/notes.ts's.
 */
import type {AskedQuestion, Todo} from '../base/notes.js'

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

const sameText = (a: string, b: string): boolean => normalise(a) === normalise(b)
export const normalise = (text: string): string => text.replaceAll(/\s+/g, ' ').trim()
