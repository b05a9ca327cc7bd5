/**
 * The body of a plan's sticky comment, its text alone: what a reviewer reads (status, the plan itself,
 * its sha256 and commit, the proposed mode and rules, cost, the exact comments that answer it) and, in a
 * hidden block at its end, what the next workflow run needs (transport.ts); rendered here and parsed
 * back. The comment on the forge, found by the marker on its first line (`<!-- wave:plan:<name> -->`)
 * and edited in place, is plan-comment.ts's.
 */
import path from 'node:path'

import {z} from 'zod'

import {ExitCode, type ExitCodeValue} from '../base/errors.js'
import {EXECUTION_MODES} from '../policy/modes.js'
import {cappedList, fencedBlock, inertMarkdown, markdownTable} from '../base/text.js'
import {formatCost} from '../output/progress.js'
import {failingChecksMarkdown, reportMarkdown} from '../output/report-view.js'
import {runReportSchema} from '../plans/report.js'
import {TODO_STATUSES} from '../base/notes.js'
import {NOTES_SHOWN, todosMarkdown} from '../output/views/notes.js'
import {PLAN_NAME} from '../plans/store.js'
import type {ForgeWords} from './forge.js'
import {checkRowSchema, unitRowSchema, unitsMarkdown} from './unit-rows.js'

/** GitHub's words: what a sticky comment says where its forge is not named. */
const DEFAULT_WORDS: Pick<ForgeWords, 'changeRequest' | 'comment' | 'run'> = {changeRequest: 'pull request', comment: 'comment', run: 'Workflow run'}

const STICKY_STATUSES = ['planning', 'awaiting_approval', 'changes_requested', 'revising', 'running', 'done', 'failed', 'rejected', 'superseded'] as const
export type StickyStatus = (typeof STICKY_STATUSES)[number]

const sha256 = z.lazy(() => z.string().regex(/^[0-9a-f]{64}$/))
const cost = z.lazy(() => z.number().nullable())

const historySchema = z.lazy(() =>
  z.object({
    at: z.string(),
    by: z.string().optional(),
    /** The forge's id of who acted, where recorded: an approval counted toward required-approvals (distinct people by id). */
    byId: z.number().int().optional(),
    /** `approval`: one of the required-approvals counted, not yet the last (duties.ts); `approved`: the one that runs the plan. */
    /** `superseded`: its task was planned again as another plan (replan.ts), which is the one to answer. */
    event: z.enum(['planned', 'changes_requested', 'revised', 'approval', 'approved', 'resumed', 'rejected', 'ran', 'failed', 'superseded']),
    sha256: sha256.optional(),
    /** Feedback, a reason, or what failed. */
    text: z.string().optional(),
    /** The comment that asked for it. */
    url: z.string().optional(),
  }),
)

/** What the sticky comment records of its plan; it travels in the comment (transport.ts). */
export const stickyStateSchema = z.lazy(() =>
  z.object({
    allow: z.array(z.string()),
    /** The branch `commit` was taken from: the pull request's head branch, else the default (or dispatched) branch. */
    base: z.string(),
    commit: z.string().regex(/^[0-9a-f]{40,64}$/),
    cost: z.object({plan: cost.optional(), run: cost.optional()}).default({}),
    delivery: z.object({branch: z.string(), commit: z.string(), kind: z.enum(['push', 'pull_request']), url: z.string()}).optional(),
    failure: z.object({exitCode: z.number(), message: z.string(), phase: z.enum(['plan', 'run', 'delivery'])}).optional(),
    history: z.array(historySchema).default([]),
    /** The proposed mode and rules: an approval without --mode / --allow takes them. */
    mode: z.enum(EXECUTION_MODES),
    /** The dollar cap of each session (--max-budget-usd), as the approver is shown it; an approval records it. */
    maxBudgetUsd: z.number().positive().optional(),
    model: z.string().optional(),
    /** The hosts the sandbox may reach through wave's proxy: proposed with the plan, then as approved. Absent: none. */
    networkAllow: z.array(z.string()).optional(),
    name: z.string().regex(PLAN_NAME),
    requestedBy: z.string(),
    /**
     * The plan its task was planned again as (`/wave plan NAME`, replan-on-push), on its commit, with its
     * comment: set with the status `superseded`, when this plan could no longer be approved.
     */
    replacedBy: z.object({commit: z.string().regex(/^[0-9a-f]{40,64}$/), name: z.string().regex(PLAN_NAME), url: z.string().optional()}).optional(),
    /** How many distinct people must approve (WAVE_REQUIRED_APPROVALS), once a first of them was counted. */
    requiredApprovals: z.number().int().min(2).optional(),
    /** The forge's id of the requester: who they are, whatever they are called by the time of an approval. */
    requestedById: z.number().int().optional(),
    /**
     * What a run stopped at its checks or a limit left for `/wave resume`, by sha256 (carryover.ts): the
     * resuming job uses the state a cache restored only when it has these bytes. Absent: nothing kept.
     */
    kept: z.object({approval: sha256, changes: sha256.optional(), state: sha256, transcript: sha256}).optional(),
    /** What a planning session stopped at a limit left for `/wave resume`, by sha256 (carryover.ts): its state, transcript and plan so far. */
    keptPlanning: z.object({plan: sha256.optional(), state: sha256, transcript: sha256}).optional(),
    /** Planned versus actual, once the plan ran (outputs' tails shortened: the comment has a size limit). */
    report: runReportSchema.optional(),
    /** The workflow run that last changed the comment. */
    runUrl: z.string().optional(),
    /** The job that ran the plan and wrote `report`: its artifacts hold the check logs the report names. */
    logsUrl: z.string().optional(),
    sha256: sha256.optional(),
    status: z.enum(STICKY_STATUSES),
    task: z.string(),
    thread: z.object({number: z.number().int().positive(), pull: z.boolean()}),
    version: z.literal(1),
    /** Questions the model asked that no one could answer (the plan lists them too); the reviewer answers by requesting changes. */
    questions: z.array(z.string()).optional(),
    /** How many of the model's notes the comment left out (cappedNotes): a comment has a size limit. */
    omitted: z.object({questions: z.number().int().nonnegative(), todos: z.number().int().nonnegative()}).optional(),
    /**
     * The units of an approved plan with a `## Units` section, each run as its own CI job (units.ts): a
     * unit without an exit code has no result yet; `merged` once `wave plans merge` applied its patch.
     */
    units: z.array(unitRowSchema).optional(),
    /** When the approval that bound the units was recorded (its record's decidedAt): a unit's result must be of this approval. */
    unitsApprovedAt: z.string().optional(),
    /** The plan's own checks as `wave plans merge` ran them on the merged tree. */
    mergeChecks: z.array(checkRowSchema).optional(),
    /** The model's to-do list as its newest session left it. */
    todos: z.array(z.object({activeForm: z.string().default(''), content: z.string(), status: z.enum(TODO_STATUSES)})).optional(),
  }),
)

export type StickyState = z.infer<typeof stickyStateSchema>
type HistoryEntry = z.infer<typeof historySchema>

/** What each exit code of the one table (base/errors.ts, docs/design.md) means, for a failure a reviewer reads. */
export const EXIT_MEANINGS: Partial<Record<ExitCodeValue, string>> = {
  [ExitCode.runtime]: 'runtime failure (the model API unreachable after retries, or an internal error)',
  [ExitCode.usage]: 'usage or input error',
  [ExitCode.notApproved]: 'not approved',
  [ExitCode.mismatch]: 'the approval does not match: the plan changed since approval, or the plan is stale',
  [ExitCode.limit]: 'the agent stopped at a limit (max turns, budget) before finishing',
  [ExitCode.refused]:
    'the result is not as asked: the model refused, ended without a result, its answer stayed cut at the output limit, or its result never matched the JSON Schema',
  [ExitCode.unmet]: 'the run did not meet its approved checks: a check still failing, a change outside a strict scope, or a merge of units incomplete',
  [ExitCode.awaitsApproval]: 'a plan awaits approval',
  [ExitCode.interrupted]: 'interrupted (SIGINT)',
  [ExitCode.terminated]: 'terminated (SIGTERM: the job was cancelled or timed out)',
}

const exitMeaning = (code: number) => EXIT_MEANINGS[code as ExitCodeValue] ?? 'failure'

const STATUS_LABELS: Record<StickyStatus, string> = {
  awaiting_approval: '⏳ awaiting approval',
  changes_requested: '✏️ changes requested',
  done: '✅ done',
  failed: '❌ failed',
  planning: '🕐 planning',
  rejected: '🚫 rejected',
  revising: '🕐 revising',
  running: '🏃 running',
  superseded: '↪️ superseded',
}

const markerOf = (name: string) => `<!-- wave:plan:${name} -->`
const MARKER = /^<!-- wave:plan:([^\s>]+) -->\r?\n/
const DATA = /\r?\n<!-- wave:data ([A-Za-z0-9+/=]+) -->\s*$/
const SHOWN_SHA = /^\| sha256 \| `([0-9a-f]{64})` \|\s*$/m

/**
 * What the comment shows besides its state, made by the job that saves it: the plan's contract (scope
 * and checks, as Markdown) and what changed since the reviewer's last decision (a diff, as Markdown).
 */
export interface StickyExtras {
  contract?: string
  changes?: string
  /** What the job installed of the project's dependencies, in one line (dependency-install.ts). */
  dependencies?: string
  /** What stopped this job before any model request (a failed install), above the table; the plan's state is left as it was. */
  blocked?: string
}

/** What the comment shows (everything but the hidden block): what a reviewer reads. */
export function renderSticky(
  state: StickyState,
  plan: string | undefined,
  words: Pick<ForgeWords, 'changeRequest' | 'comment' | 'run'> = DEFAULT_WORDS,
  extras: StickyExtras = {},
): string {
  const parts = [markerOf(state.name), `### wave plan \`${state.name}\`: ${STATUS_LABELS[state.status]}`, '']
  const news = newsOf(state, words)
  if (news) parts.push(news, '')
  if (extras.blocked) parts.push(extras.blocked, '')
  parts.push(markdownTable(rowsOf(state, words)), '')
  if (extras.dependencies) parts.push(extras.dependencies, '')
  parts.push(...contractParts(state, extras, words))
  if (plan !== undefined) {
    const lines = plan.split('\n').length
    // Shown verbatim in a fence, not rendered: rendered Markdown can hide text (an HTML comment, a
    // collapsed block), and the reviewer approves every byte.
    parts.push(
      `<details${state.status === 'awaiting_approval' ? ' open' : ''}><summary>The plan (${lines} lines)</summary>`,
      '',
      fencedBlock(plan, 'markdown'),
      '',
      '</details>',
      '',
    )
  }

  if (state.questions && state.questions.length > 0) {
    parts.push(
      // Once the run has reported, the questions are the run's (steps.ts): the plan is past review then.
      state.report
        ? '**Questions the run asked** (no one could answer them during the session):'
        : '**Open questions** (no one could answer them during the session; answer with `/wave request-changes`):',
      '',
      // The model's words, inert: no image (a fetch of its choosing), link, heading or HTML of its own.
      ...cappedList(
        state.questions.map((q) => `- ${inertMarkdown(q, NOTES_SHOWN.itemLength)}`),
        NOTES_SHOWN.items,
        (count) => `- … and ${count + (state.omitted?.questions ?? 0)} more`,
      ),
      ...(state.questions.length <= NOTES_SHOWN.items && state.omitted?.questions ? [`- … and ${state.omitted.questions} more`] : []),
      '',
    )
  }

  // The model's words, as untrusted as the questions' (todosMarkdown makes them inert).
  if (state.todos && state.todos.length > 0) parts.push(todosMarkdown(state.todos, undefined, state.omitted?.todos), '')
  const answers = answersOf(state, words)
  if (answers) parts.push(answers, '')
  if (state.history.length > 0) {
    parts.push('<details><summary>History</summary>', '', ...state.history.map((entry) => historyLine(entry, words)), '', '</details>', '')
  }

  return parts.join('\n')
}

/** The contract beside the plan, the run's report once there is one, and the changes since the last review while one is awaited. */
function contractParts(state: StickyState, extras: StickyExtras, words: Pick<ForgeWords, 'run'>): string[] {
  const parts: string[] = []
  if (extras.contract) parts.push(extras.contract, '')
  if (state.units?.length) parts.push(unitsMarkdown(state.units, state.mergeChecks), '')
  if (state.report) parts.push(reportMarkdown(state.report), '')
  const logs = state.report && logsWhere(state.report, state.logsUrl, words)
  if (logs) parts.push(logs, '')
  const said = state.report && state.status === 'failed' ? failingChecksMarkdown(state.report) : ''
  if (said) parts.push(said, '')
  if (extras.changes && state.status === 'awaiting_approval') parts.push(extras.changes, '')
  return parts
}

/** Where the logs the report names are: the artifacts of the job that ran the plan (the Action and the GitLab recipe keep the plans directory). */
function logsWhere(report: z.infer<typeof runReportSchema>, url: string | undefined, words: Pick<ForgeWords, 'run'>): string | undefined {
  const rounds = report.checkRounds ?? [{checks: report.checks, round: 1}]
  if (!rounds.some((round) => round.checks.some((check) => check.outputFile))) return undefined
  const where = url ? `in the artifacts of the [${words.run.toLowerCase()}](${url}) that ran it` : 'beside the plan on the runner that ran it'
  return `The whole output of every check, each round its own log (named above): ${where}.`
}

/**
 * A report as the comment keeps it (the comment has a size limit, and the workflow's logs and artifact
 * have the rest): a passing check's output dropped, a failing one's kept output (head, failures, tail)
 * cut to its first characters, where its header and the failures come; each round's logs named by
 * their files' names.
 */
export function stickyReport(report: z.infer<typeof runReportSchema>): z.infer<typeof runReportSchema> {
  const kept = (text: string) => (text.length > STICKY_CHECK_CHARS ? `${text.slice(0, STICKY_CHECK_CHARS)}\n[... cut: the job's logs have the rest]` : text)
  return {
    ...report,
    checks: report.checks.map(({outputFile, ...check}) => ({
      ...check,
      ...logName(outputFile),
      outputTail: check.exitCode === 0 ? '' : kept(check.outputTail),
    })),
    ...(report.checkRounds
      ? {
          checkRounds: report.checkRounds.map(({checks, round}) => ({
            checks: checks.map(({outputFile, ...check}) => ({...check, ...logName(outputFile)})),
            round,
          })),
        }
      : {}),
  }
}

/** A log by its file's name: the runner's path means nothing on the forge, the name finds it in the job's artifacts. */
const logName = (file: string | undefined) => (file ? {outputFile: path.basename(file)} : {})

/**
 * The model's notes as the comment carries them: at most as many as it shows, each cut as it is shown.
 * A to-do list of thousands of items would otherwise make the comment too big to save.
 */
export function cappedNotes(state: StickyState): StickyState {
  const cut = (text: string) => (text.length > NOTES_SHOWN.itemLength ? text.slice(0, NOTES_SHOWN.itemLength) : text)
  // A list at the cap already is one this cut before (a fresh list as long is rare and loses only the count).
  const left = (list: unknown[] | undefined, before = 0) =>
    !list || list.length < NOTES_SHOWN.items ? 0 : list.length === NOTES_SHOWN.items ? before : list.length - NOTES_SHOWN.items
  const omitted = {questions: left(state.questions, state.omitted?.questions), todos: left(state.todos, state.omitted?.todos)}
  return {
    ...state,
    omitted: omitted.questions + omitted.todos > 0 ? omitted : undefined,
    questions: state.questions?.slice(0, NOTES_SHOWN.items).map(cut),
    todos: state.todos?.slice(0, NOTES_SHOWN.items).map((todo) => ({...todo, activeForm: cut(todo.activeForm), content: cut(todo.content)})),
  }
}

/** A failing check's kept output in the comment, at most. */
const STICKY_CHECK_CHARS = 4000

/** The whole body: what it shows, then the hidden block (transport.ts), always last. */
export const stickyBody = (shown: string, data: string) => `${shown}<!-- wave:data ${data} -->`

/** What just happened, above the table: the newest decision, or the failure. */
function newsOf(state: StickyState, words: Pick<ForgeWords, 'comment'>): string | undefined {
  const last = state.history.at(-1)
  if (state.status === 'failed' && state.failure) {
    const {exitCode, message, phase} = state.failure
    const what = phase === 'delivery' ? 'Delivering the changes failed' : phase === 'run' ? 'The run failed' : 'Planning failed'
    return `**${what}** (exit ${exitCode}: ${exitMeaning(exitCode)}):\n${quote(message)}`
  }

  if (state.status === 'superseded' && state.replacedBy) {
    const {commit, name, url} = state.replacedBy
    const where = url ? ` ([its ${words.comment}](${url}))` : ''
    return `**Planned again as \`${name}\`** on \`${commit.slice(0, 12)}\`${where}: this plan can no longer be approved; answer \`${name}\` instead.`
  }

  if (!last?.by) return undefined
  if (state.status === 'changes_requested' || state.status === 'revising') return `@${last.by} requested changes:\n${quote(last.text ?? '')}`
  if (state.status === 'rejected') return `Rejected by @${last.by}${last.text ? ':' : '.'}${last.text ? '\n' + quote(last.text) : ''}`
  if (state.status === 'running') return `Approved by @${last.by}${last.url ? ` ([${words.comment}](${last.url}))` : ''}; running now.`
  return undefined
}

function rowsOf(state: StickyState, words: Pick<ForgeWords, 'changeRequest' | 'run'>): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['Status', STATUS_LABELS[state.status]],
    ['Task', inline(firstLines(state.task))],
    ['Requested by', `@${state.requestedBy}`],
    ['Commit', `\`${state.commit}\` (${inline(state.base)})`],
  ]
  if (state.sha256) rows.push(['sha256', `\`${state.sha256}\``])
  if (state.replacedBy) rows.push(['Planned again as', `\`${state.replacedBy.name}\` on \`${state.replacedBy.commit.slice(0, 12)}\``])
  const approved = [...state.history].reverse().find((entry) => entry.event === 'approved')
  const running = ['running', 'done'].includes(state.status) || (state.status === 'failed' && state.failure?.phase !== 'plan')
  rows.push(
    [running ? 'Mode' : 'Proposed mode', `\`${state.mode}\``],
    [running ? 'Rules' : 'Proposed rules', state.allow.length > 0 ? state.allow.map((rule) => `\`${rule}\``).join(', ') : 'none'],
  )
  rows.push([
    running ? 'Network' : 'Proposed network',
    state.networkAllow?.length ? `${state.networkAllow.map((host) => `\`${inline(host)}\``).join(', ')} only` : 'none',
  ])
  if (running && approved?.by) rows.push(['Approved by', `@${approved.by}`])
  const counted = countedApprovals(state)
  if (['awaiting_approval', 'failed'].includes(state.status) && state.requiredApprovals && counted.length > 0)
    rows.push(['Approvals', `${counted.length} of ${state.requiredApprovals}: ${counted.map((entry) => `@${entry.by}`).join(', ')}`])
  const costs = [
    state.cost.plan === undefined ? undefined : `planning ${formatCost(state.cost.plan)}`,
    state.cost.run === undefined ? undefined : `run ${formatCost(state.cost.run)}`,
  ].filter(Boolean)
  if (costs.length > 0) rows.push(['Cost', costs.join(' · ')])
  if (state.maxBudgetUsd !== undefined) rows.push(['Budget', `at most ${formatCost(state.maxBudgetUsd)} a session (each plan, revision and run)`])
  if (state.delivery) {
    const {delivery} = state
    rows.push([
      'Delivered',
      delivery.kind === 'push'
        ? `[${delivery.commit.slice(0, 12)}](${delivery.url}) pushed to \`${delivery.branch}\``
        : `[${words.changeRequest}](${delivery.url}) from \`${delivery.branch}\``,
    ])
  }

  if (state.runUrl) rows.push([words.run, `[logs](${state.runUrl})`])
  return rows
}

/** The exact comments that answer the plan, where it can be answered. */
function answersOf(state: StickyState, words: Pick<ForgeWords, 'comment'>): string | undefined {
  const {name} = state
  const revise = `\`/wave request-changes ${name} <what to change>\``
  if (state.status === 'rejected') return `To revise it instead, answer with ${revise}; for a new plan, \`/wave plan <task>\`.`
  if (state.status === 'superseded' && state.replacedBy)
    return `To approve this task's plan, answer \`${state.replacedBy.name}\`'s ${words.comment} (\`/wave approve ${state.replacedBy.name}\`).`
  if (state.status === 'failed' && state.failure?.phase === 'plan' && state.keptPlanning) {
    return [
      `**To go on planning where it stopped** (its exploration kept by the job's cache), answer with:`,
      '',
      '```',
      `/wave resume ${name}`,
      '```',
      '',
      `Or plan its task again: \`/wave plan ${name}\`.`,
    ].join('\n')
  }

  const approvable = state.sha256 && (state.status === 'awaiting_approval' || (state.status === 'failed' && state.failure?.phase !== 'plan'))
  if (!approvable) return undefined
  const rules = state.allow.length > 0 ? `the rules ${state.allow.map((rule) => `\`${rule}\``).join(', ')}` : 'no extra rules'
  // A run stopped at its checks or a limit goes on from where it stopped, under the same approval.
  // A plan's units go on by re-running the failed units' jobs, not by /wave resume.
  // Not one stopped at its budget: the budget shown with the plan binds its runs, a resumed one's too
  // (steps.ts, forgeRunHint); the failure's line is ENDINGS' (agent/outcome.ts).
  const atBudget = state.failure?.message.startsWith('Stopped at the budget') === true
  const stopped = state.status === 'failed' && state.failure?.phase === 'run' && [5, 7].includes(state.failure.exitCode) && !atBudget && !state.units?.length
  const resume = stopped
    ? [
        `**To continue the run where it stopped** (same approval, its changes and conversation kept by the job's cache), answer with:`,
        '',
        '```',
        `/wave resume ${name}`,
        '```',
        '',
        'Or start over:',
        '',
      ]
    : []
  return [
    ...resume,
    `**Answer with one of these ${words.comment}s.** To approve and run this version of the plan (in mode \`${state.mode}\` with ${rules}):`,
    '',
    '```',
    `/wave approve ${name} --sha256 ${state.sha256}`,
    '```',
    '',
    'Add `--mode M`, `--allow RULE` or `--sandbox-network-allow HOST` (both repeatable) to run it otherwise; rules and hosts you give replace the proposed ones.',
    `To request changes: ${revise}. To reject it: \`/wave reject ${name} <reason>\`.`,
  ].join('\n')
}

/**
 * The approvals counted toward required-approvals for the plan as it stands: of its bytes (its sha256),
 * since it was last planned, revised, sent back, approved or failed (a new run needs its approvals anew).
 */
export function countedApprovals(state: StickyState): HistoryEntry[] {
  const resets = ['planned', 'revised', 'changes_requested', 'approved', 'failed']
  let since = state.history.length - 1
  while (since >= 0 && !resets.includes(state.history[since].event)) since--
  return state.history.slice(since + 1).filter((entry) => entry.event === 'approval' && entry.sha256 === state.sha256 && entry.by)
}

function historyLine(entry: HistoryEntry, words: Pick<ForgeWords, 'comment'>): string {
  const by = entry.by ? ` by @${entry.by}` : ''
  const sha = entry.sha256 ? ` (sha256 \`${entry.sha256.slice(0, 12)}\`)` : ''
  const link = entry.url ? ` ([${words.comment}](${entry.url}))` : ''
  const text = entry.text ? `: ${inline(firstLines(entry.text, 1))}` : ''
  return `- ${entry.at} ${entry.event.replace('_', ' ')}${by}${sha}${link}${text}`
}

export interface ParsedSticky {
  name: string
  /** Everything but the hidden block: what a reader sees. */
  shown: string
  /** The hidden block, still encoded (transport.ts decodes it). */
  data: string
  /** The sha256 the comment shows its reader, when it shows one. */
  shownSha256?: string
}

/** A sticky comment's parts, or undefined when the body is not one (no marker on its first line). */
export function parseSticky(body: string): ParsedSticky | undefined {
  const marker = MARKER.exec(body)
  if (!marker) return undefined
  const data = DATA.exec(body)
  const shown = data ? body.slice(0, data.index + (data[0].startsWith('\r\n') ? 2 : 1)) : body
  // The sha256 shown is in the table, above the plan: text inside the plan cannot stand in for it.
  const details = shown.search(/\n<details/)
  const head = details === -1 ? shown : shown.slice(0, details)
  return {data: data?.[1] ?? '', name: marker[1], shown, shownSha256: SHOWN_SHA.exec(head)?.[1]}
}

/** Untrusted text for one table cell: no HTML (a comment or a tag could hide what follows), no mentions pinging on each edit. */
function inline(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('@', '@\u200B')
}

function quote(text: string): string {
  return inline(text)
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n')
}

function firstLines(text: string, lines = 3, max = 300): string {
  const kept = text.trim().split('\n').slice(0, lines).join(' ')
  return kept.length > max ? kept.slice(0, max) + '…' : kept.length < text.trim().length ? kept + ' …' : kept
}
