/**
 * What `wave plan` shows of a plan written: the fields of `--json`, the plan's path on stdout, the
 * closing tally on stderr and the job summary's Markdown with the plan itself folded in. The outcome is
 * taken by its shape (flows/plan.ts returns it; this folder does not import it).
 */
import {readFile} from 'node:fs/promises'

import type {AskedQuestion, Todo} from '../../base/notes.js'
import {fencedBlock, inertMarkdown, markdownTable} from '../../base/text.js'
import type {StopReason, TokenUsage} from '../../agent/loop.js'
import {contractLine, type PlanContract} from '../../plans/contract.js'
import type {PlanSource} from '../../plans/lifecycle.js'
import {formatCost, formatUsage, tokenCounts} from '../progress.js'
import type {CommandResult} from '../sink.js'
import {questionsMarkdown, todosMarkdown} from './notes.js'

/** A plan session's outcome as this view shows it: the plan driver's PlanOutcome is one (flows/plan.ts). */
export interface PlanShown {
  planPath: string
  name: string
  /** Where the plan came from: the plan file the model wrote, or its final message when it wrote none. */
  planSource: PlanSource
  turns: number
  usage: TokenUsage
  stopReason: StopReason
  costUsd: number | null
  summary: string
  /** The plan's ## Scope and ## Verification, as the session left them. */
  contract: PlanContract
  /** The revision of the plan this session wrote (every revision is kept: revisions.ts). */
  revision: number
  /** Questions the model asked that no one could answer; each is in the plan's open questions. */
  questions: AskedQuestion[]
  todos: Todo[]
}

export async function planResult(outcome: PlanShown, task: string): Promise<CommandResult> {
  const plan = await readFile(outcome.planPath, 'utf8').catch(() => '')
  const summary = `## wave plan: ${outcome.name}

${markdownTable([
  ['Task', task],
  ['Plan', `\`${outcome.planPath}\``],
  // The plan's checks as the plan wrote them: inert text, not Markdown or HTML of the plan's.
  ['Contract', inertMarkdown(contractLine(outcome.contract).replace(/^Plan: /, ''), 2000)],
  ['Turns', String(outcome.turns)],
  ['Stop reason', outcome.stopReason],
  ['Cost', formatCost(outcome.costUsd)],
  ['Tokens', tokenCounts(outcome.usage)],
])}

${questionsMarkdown(outcome.questions)}

${todosMarkdown(outcome.todos)}

<details><summary>The plan</summary>

${fencedBlock(plan, 'markdown')}

</details>`
  return {
    data: {
      contract: {
        scope: outcome.contract.scope,
        unitErrors: outcome.contract.unitErrors,
        units: outcome.contract.units.map(({name, scope, verify}) => ({name, scope, verify})),
        verify: outcome.contract.verify,
        warnings: outcome.contract.warnings,
      },
      costUsd: outcome.costUsd,
      name: outcome.name,
      planPath: outcome.planPath,
      planSource: outcome.planSource,
      revision: outcome.revision,
      questions: outcome.questions,
      stopReason: outcome.stopReason,
      summary: outcome.summary,
      todos: outcome.todos,
      turns: outcome.turns,
      usage: outcome.usage,
    },
    summary,
    tally: `plan written in ${outcome.turns} turns; ${formatUsage(outcome.usage)}; ${formatCost(outcome.costUsd)}`,
    text: outcome.planPath,
  }
}
