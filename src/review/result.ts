/** What `wave github` and `wave gitlab` print: the outcome's line, its JSON, the run's tally, and a job summary section. */
import {markdownTable} from '../base/text.js'
import {contractMarkdown, reportMarkdown, reportTally} from '../output/report-view.js'
import {questionsMarkdown, todosMarkdown} from '../output/views/notes.js'
import type {ReviewOutcome} from './steps.js'

export function reviewResult(command: string, outcome: ReviewOutcome): {data: Record<string, unknown>; text: string; tally?: string; summary?: string} {
  const rows: Array<[string, string]> = [
    ['Event', outcome.event],
    ['Outcome', outcome.outcome],
  ]
  if (outcome.plan)
    rows.push(['Plan', outcome.plan.comment ? `[${outcome.plan.name}](${outcome.plan.comment})` : outcome.plan.name], ['Status', outcome.plan.status])
  if (outcome.plan?.sha256) rows.push(['sha256', `\`${outcome.plan.sha256}\``])
  if (outcome.delivery) rows.push(['Delivered', outcome.delivery.url])
  const sections = [
    `## wave ${command}\n\n${outcome.message}\n\n${markdownTable(rows)}`,
    // What the run did against its plan (its scope and checks, the calls denied); before a run, what it will be held to.
    outcome.report
      ? reportMarkdown(outcome.report)
      : outcome.plan?.contract
        ? `**The plan's contract** (what an approved run is held to)\n\n${contractMarkdown(outcome.plan.contract)}`
        : '',
    // What the model left for the reviewer: the questions no one could answer, and its to-do list.
    questionsMarkdown((outcome.plan?.questions ?? []).map((question) => ({question}))),
    todosMarkdown(outcome.plan?.todos ?? []),
  ]
  return {
    data: {...outcome},
    summary: outcome.outcome === 'ignored' ? undefined : sections.filter(Boolean).join('\n\n'),
    tally: outcome.report ? reportTally(outcome.report) : undefined,
    text: outcome.message,
  }
}
