/**
 * The sticky comment's status follows the plan's (lifecycle.ts, statusAfter): one table from plan
 * statuses to the comment's words, the two a comment adds while a job works, and a plan whose task was
 * planned again.
 */
import {describe, expect, it} from 'vitest'

import {type ReviewEvent, stickyStatusAfter} from '../../../src/review/status.js'
import {stickyStateSchema} from '../../../src/review/comment-body.js'
import {ExitCode} from '../../../src/base/errors.js'
import {statusAfter} from '../../../src/plans/lifecycle.js'

const EVENTS: Array<[ReviewEvent, string, string]> = [
  [{kind: 'planning', revising: false}, 'planning', '(no plan status: a session under way)'],
  [{kind: 'planned', ok: true}, 'awaiting_approval', 'draft'],
  [{kind: 'planned', ok: false}, 'failed', 'failed'],
  [{decision: 'changes_requested', kind: 'decided'}, 'changes_requested', 'changes_requested'],
  [{kind: 'planning', revising: true}, 'revising', '(no plan status: a session under way)'],
  [{decision: 'rejected', kind: 'decided'}, 'rejected', 'rejected'],
  [{decision: 'approved', kind: 'decided'}, 'running', 'approved'],
  [{kind: 'run', run: {}}, 'running', 'running'],
  [{kind: 'run', run: {exitCode: ExitCode.ok}}, 'done', 'ran'],
  [{kind: 'run', run: {exitCode: ExitCode.limit}}, 'failed', 'failed'],
  [{kind: 'superseded'}, 'superseded', '(no plan status: its task planned again as another plan, on the forge)'],
]

describe('stickyStatusAfter', () => {
  it.each(EVENTS)('%o: the comment says %s (the plan: %s)', (event, sticky, plan) => {
    expect(stickyStatusAfter(event)).toBe(sticky)
    if (event.kind !== 'planning' && event.kind !== 'superseded') expect(statusAfter(event)).toBe(plan)
  })

  it('reaches every status a comment can show', () => {
    expect(new Set(EVENTS.map(([event]) => stickyStatusAfter(event)))).toEqual(new Set(stickyStateSchema.unwrap().shape.status.options))
  })
})
