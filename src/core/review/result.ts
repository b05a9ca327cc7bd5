/** What `wave github` and `wave gitlab` print: the outcome's line, its JSON, and a job summary section. */
import {markdownTable} from '../output/sink.js'
import {questionsMarkdown, todosMarkdown} from '../../plugins/session-notes.js'
import type {ReviewOutcome} from './steps.js'

export function reviewResult(command: string, outcome: ReviewOutcome): {data: Record<string, unknown>; text: string; summary?: string} {
  const rows: Array<[string, string]> = [
    ['Event', outcome.event],
    ['Outcome', outcome.outcome],
  ]
  if (outcome.plan)
    rows.push(['Plan', outcome.plan.comment ? `[${outcome.plan.name}](${outcome.plan.comment})` : outcome.plan.name], ['Status', outcome.plan.status])
  if (outcome.plan?.sha256) rows.push(['sha256', `\`${outcome.plan.sha256}\``])
  if (outcome.delivery) rows.push(['Delivered', outcome.delivery.url])
  // What the model left for the reviewer: the questions no one could answer, and its to-do list.
  const notes = [questionsMarkdown((outcome.plan?.questions ?? []).map((question) => ({question}))), todosMarkdown(outcome.plan?.todos ?? [])]
  return {
    data: {...outcome},
    summary:
      outcome.outcome === 'ignored' ? undefined : [`## wave ${command}\n\n${outcome.message}\n\n${markdownTable(rows)}`, ...notes].filter(Boolean).join('\n\n'),
    text: outcome.message,
  }
}
