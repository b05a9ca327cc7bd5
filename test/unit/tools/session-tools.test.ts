/**
 * TodoWrite, AskUserQuestion and ExitPlanMode's Claude Code inputs, called as a session calls them, with
 * the session's notes; and the open questions a planning session leaves in its plan.
 */
import {mkdir, readFile, writeFile} from 'node:fs/promises'
import path from 'node:path'
import {describe, expect, it} from 'vitest'

import type {PolicyContext} from '../../../src/policy/policy.js'
import {PlanMode} from '../../../src/session/plan-mode.js'
import askUserQuestion, {keepOpenQuestions} from '../../../src/tools/ask-user-question.js'
import exitPlanMode from '../../../src/tools/exit-plan-mode.js'
import {type AskedQuestion, todoProgress} from '../../../src/base/notes.js'
import {type NoteEvent, SessionNotes} from '../../../src/tools/notes.js'
import todoWrite from '../../../src/tools/todo-write.js'
import type {ToolContext} from '../../../src/tools/tool.js'
import {contextFor, useWorkspaces} from './context.js'

const workspace = useWorkspaces()

async function sessionContext(
  root: string,
  policy?: Partial<PolicyContext>,
  exit?: ToolContext['session']['exitPlanMode'],
): Promise<ToolContext & {notes: SessionNotes}> {
  const ctx = await contextFor(root)
  const notes = new SessionNotes()
  return {
    ...ctx,
    notes,
    planFile: policy?.mode === 'plan' ? policy.planFile : undefined,
    session: {...ctx.session, exitPlanMode: exit ?? ctx.session.exitPlanMode},
    target: undefined,
  }
}

const QUESTION: AskedQuestion = {
  header: 'Library',
  multiSelect: false,
  options: [
    {description: 'Small, no dependencies', label: 'date-fns'},
    {description: 'Already in the lockfile', label: 'dayjs'},
  ],
  question: 'Which library should format dates?',
}

describe('TodoWrite', () => {
  it('replaces the list, tells listeners, and answers with the step in progress', async () => {
    const ctx = await sessionContext(await workspace())
    const events: NoteEvent[] = []
    ctx.notes.listen((event) => events.push(event))
    const todos = [
      {activeForm: 'Reading the code', content: 'Read the code', status: 'completed' as const},
      {activeForm: 'Writing the fix', content: 'Write the fix', status: 'in_progress' as const},
      {activeForm: 'Running the tests', content: 'Run the tests', status: 'pending' as const},
    ]
    const result = await todoWrite.run({todos}, ctx)
    expect(result).toBe('To-do list updated (step 2 of 3: Writing the fix). Go on with the current step.')
    expect(ctx.notes.todos).toEqual(todos)
    expect(events).toEqual([{todos, type: 'todo'}])
    await todoWrite.run({todos: [todos[0]]}, ctx)
    expect(ctx.notes.todos).toEqual([todos[0]])
  })

  it('describes every shape of list as progress', () => {
    const item = (status: 'pending' | 'in_progress' | 'completed', n: number) => ({activeForm: `Doing ${n}`, content: `Do ${n}`, status})
    expect(todoProgress([])).toBe('to-do list cleared')
    expect(todoProgress([item('completed', 1), item('completed', 2)])).toBe('all 2 steps done')
    expect(todoProgress([item('completed', 1), item('pending', 2)])).toBe('1 of 2 steps done; next: Do 2')
    expect(todoProgress([item('completed', 1), item('completed', 2), item('in_progress', 3), ...[4, 5, 6, 7].map((n) => item('pending', n))])).toBe(
      'step 3 of 7: Doing 3',
    )
  })
})

describe('AskUserQuestion', () => {
  it('in plan mode: records the question, answers that no one can reply, and points at the plan', async () => {
    const ctx = await sessionContext(await workspace(), {mode: 'plan', planFile: '/plans/p.md'})
    const result = await askUserQuestion.run({questions: [QUESTION]}, ctx)
    expect(result).toMatch(/No one can reply during a headless session/)
    expect(result).toMatch(/plan file \(\/plans\/p\.md\) under "## Open questions"/)
    expect(result).toMatch(/request-changes/)
    expect(ctx.notes.questions).toEqual([QUESTION])
  })

  it('in a run: answers the same, invents no answer, and the question is kept for the result', async () => {
    const ctx = await sessionContext(await workspace(), {mode: 'acceptEdits'})
    const result = await askUserQuestion.run({questions: [{...QUESTION, multiSelect: undefined}]}, ctx)
    expect(result).toMatch(/No one can reply during a headless session: there is no answer, and none will come/)
    expect(result).toMatch(/reported in the run's result/)
    expect(result).not.toMatch(/date-fns|dayjs/)
    expect(ctx.notes.questions).toEqual([QUESTION])
    // Asked twice, kept once.
    await askUserQuestion.run({questions: [QUESTION]}, ctx)
    expect(ctx.notes.questions).toHaveLength(1)
  })
})

describe('keepOpenQuestions', () => {
  it('adds an Open questions section to a plan that has none', async () => {
    const root = await workspace({'plan.md': '# Plan\n\n1. Do it.\n'})
    const plan = path.join(root, 'plan.md')
    expect(await keepOpenQuestions(plan, [QUESTION])).toBe(1)
    expect(await readFile(plan, 'utf8')).toBe(
      '# Plan\n\n1. Do it.\n\n## Open questions\n\n- **Library**: Which library should format dates?\n  - date-fns: Small, no dependencies\n  - dayjs: Already in the lockfile\n',
    )
  })

  it('adds the missing ones to the section the plan has, and leaves those it holds', async () => {
    const root = await workspace({'plan.md': '# Plan\n\n## Open questions\n\n- Should the cache expire?\n\n## Steps\n\n1. Do it.\n'})
    const plan = path.join(root, 'plan.md')
    const held = {...QUESTION, question: 'Should the   cache expire?'}
    expect(await keepOpenQuestions(plan, [held, QUESTION])).toBe(1)
    expect(await readFile(plan, 'utf8')).toBe(
      '# Plan\n\n## Open questions\n\n- Should the cache expire?\n- **Library**: Which library should format dates?\n  - date-fns: Small, no dependencies\n  - dayjs: Already in the lockfile\n\n## Steps\n\n1. Do it.\n',
    )
    expect(await keepOpenQuestions(plan, [held, QUESTION])).toBe(0)
  })

  it('leaves a missing plan file alone', async () => {
    const root = await workspace()
    expect(await keepOpenQuestions(path.join(root, 'none.md'), [QUESTION])).toBe(0)
  })
})

describe('ExitPlanMode', () => {
  async function planWorkspace(plan?: string) {
    const root = await workspace()
    const plansDir = path.join(root, 'plans')
    await mkdir(plansDir)
    const planFile = path.join(plansDir, 'p.md')
    if (plan !== undefined) await writeFile(planFile, plan)
    await writeFile(
      path.join(plansDir, 'p.state.json'),
      JSON.stringify({
        createdAt: 'x',
        model: 'm',
        name: 'p',
        repository: null,
        runs: [],
        status: 'draft',
        task: 't',
        updatedAt: 'x',
        version: 1,
        workspace: root,
      }),
    )
    let exited = 0
    // The session's own plan mode records allowedPrompts: the tool only passes them on.
    const planMode = new PlanMode({exitMessage: 'The plan is complete. End your turn now.', plan: {name: 'p', path: planFile}, workspace: root})
    const ctx = await sessionContext(root, {mode: 'plan', planFile}, (given, allowedPrompts) => {
      exited++
      return planMode.exitPlanMode(given, allowedPrompts)
    })
    return {ctx, exited: () => exited, planFile, stateFile: path.join(plansDir, 'p.state.json')}
  }

  it('writes an older `plan` string to the plan file when none exists, and says so', async () => {
    const {ctx, planFile} = await planWorkspace()
    const result = await exitPlanMode.run({plan: '# Plan\n\n1. Do it.'}, ctx)
    expect(await readFile(planFile, 'utf8')).toBe('# Plan\n\n1. Do it.\n')
    expect(result).toBe(`The plan file ${planFile} held no plan: the plan text you passed was written to it.\nThe plan is complete. End your turn now.`)
  })

  it('keeps the plan file when it holds a plan, and says the string was not used', async () => {
    const {ctx, planFile} = await planWorkspace('# The real plan\n')
    const result = await exitPlanMode.run({plan: 'something else'}, ctx)
    expect(await readFile(planFile, 'utf8')).toBe('# The real plan\n')
    expect(result).toMatch(/already holds a plan, so the plan text you passed was not used/)
  })

  it('keeps allowedPrompts in the plan state, for the approver', async () => {
    const {ctx, stateFile} = await planWorkspace('# Plan\n')
    const allowedPrompts = [{prompt: 'run tests', tool: 'Bash' as const}]
    const result = await exitPlanMode.run({allowedPrompts}, ctx)
    expect(result).toMatch(/Recorded the permissions the plan asks for, for the approver: Bash: run tests\./)
    expect(JSON.parse(await readFile(stateFile, 'utf8')).allowedPrompts).toEqual(allowedPrompts)
  })

  it('records nothing when the plan cannot be finished', async () => {
    const {ctx, exited, stateFile} = await planWorkspace()
    await expect(exitPlanMode.run({allowedPrompts: [{prompt: 'run tests', tool: 'Bash'}]}, ctx)).rejects.toThrow(/No plan file exists yet/)
    expect(exited()).toBe(1)
    expect(JSON.parse(await readFile(stateFile, 'utf8')).allowedPrompts).toBeUndefined()
  })
})
