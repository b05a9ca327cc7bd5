import {lstat, readFile, writeFile} from 'node:fs/promises'

import {z} from 'zod'

import type {AskedQuestion} from '../base/notes.js'
import {normalise} from './notes.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

const option = () =>
  z.strictObject({
    description: z.string(),
    label: z.string().min(1),
    preview: z.string().optional(),
  })

const question = () =>
  z.strictObject({
    header: z.string(),
    multiSelect: z.boolean().optional(),
    options: z.array(option()).min(2).max(4),
    question: z.string().min(1),
  })

/** The heading a plan's open questions go under; found in any case and at any level. */
const OPEN_QUESTIONS_HEADING = '## Open questions'

export default defineTool({
  access: 'control',
  description:
    'Ask 1-4 multiple-choice questions: each a question, a header of at most 12 characters, and 2-4 options (a label of 1-5 words, what choosing it means). ' +
    'wave runs headless: the call never waits and never returns an answer. In plan mode put each in the plan under "## Open questions" with the option you assume; ' +
    'the reviewer answers by requesting changes. In a run they are reported in the result: choose what best fits the approved plan and say so.',
  input: () =>
    z.object({
      questions: z.array(question()).min(1).max(4),
    }),
  name: 'AskUserQuestion',
  resultCap: DEFAULT_RESULT_CAP,
  async run(input, ctx) {
    if (!ctx.notes) throw new ToolError('No one can be asked here.')
    const asked: AskedQuestion[] = input.questions.map((q) => ({
      header: q.header,
      multiSelect: q.multiSelect ?? false,
      options: q.options.map(({description, label}) => ({description, label})),
      question: q.question,
    }))
    ctx.notes.ask(asked)
    const what = asked.length === 1 ? 'The question is' : `The ${asked.length} questions are`
    if (ctx.planFile !== undefined) {
      const plan = ` (${ctx.planFile})`
      return (
        `No one can reply during a headless session: there is no answer, and none will come. ${what} recorded as open. ` +
        `Write ${asked.length === 1 ? 'it' : 'them'} in the plan file${plan} under "${OPEN_QUESTIONS_HEADING}", with the option you assume and why, and plan on that assumption; ` +
        'the reviewer answers through request-changes, and the plan is revised with the answer.'
      )
    }

    return (
      `No one can reply during a headless session: there is no answer, and none will come. ${what} reported in the run's result. ` +
      'Choose the option that best fits the approved plan and the task, go on, and name your choice in your final message.'
    )
  },
})

/**
 * Makes sure every question asked during a planning session is in the plan's open questions: those the
 * plan file does not mention are added under its "Open questions" heading (made at the end when it has
 * none). Returns how many were added. A plan file that is missing or not a regular file is left alone.
 */
export async function keepOpenQuestions(planPath: string, questions: AskedQuestion[]): Promise<number> {
  if (questions.length === 0) return 0
  const info = await lstat(planPath).catch(() => undefined)
  if (!info?.isFile()) return 0
  const text = await readFile(planPath, 'utf8')
  const flat = normalise(text)
  const missing = questions.filter((q) => !flat.includes(normalise(q.question)))
  if (missing.length === 0) return 0
  const items = missing.map((q) => openQuestionItem(q)).join('\n')
  const lines = text.split('\n')
  const heading = lines.findIndex((line) => /^#{1,6}\s+open questions\s*:?\s*$/i.test(line.trim()))
  let updated: string
  if (heading === -1) {
    updated = `${text.replace(/\s*$/, '')}\n\n${OPEN_QUESTIONS_HEADING}\n\n${items}\n`
  } else {
    const level = /^#+/.exec(lines[heading].trim())![0].length
    let end = lines.findIndex((line, index) => index > heading && /^#{1,6}\s/.test(line) && /^#+/.exec(line)![0].length <= level)
    if (end === -1) end = lines.length
    // After the section's last non-blank line, so the items join its list.
    let at = end
    while (at > heading + 1 && lines[at - 1].trim() === '') at--
    lines.splice(at, 0, ...(at === heading + 1 ? ['', items] : [items]))
    updated = lines.join('\n')
  }

  await writeFile(planPath, updated)
  return missing.length
}

/** One open question as a plan lists it: the question, then its options. */
function openQuestionItem(q: AskedQuestion): string {
  const options = q.options.map((o) => `  - ${o.label}${o.description ? `: ${normalise(o.description)}` : ''}`)
  return [`- ${q.header ? `**${normalise(q.header)}**: ` : ''}${normalise(q.question)}${q.multiSelect ? ' (several may be chosen)' : ''}`, ...options].join(
    '\n',
  )
}
