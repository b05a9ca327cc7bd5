/**
 * The run's report (src/plans/report.ts) as people read it: the tally line on stderr, and tables
 * for the job summary and the sticky comment.
 */
import type {PlanOverview} from '../plans/overview.js'
import type {RevisionDiff} from '../plans/revisions.js'
import {checkOutcome, checkPassed, fileList, type RunReport} from '../plans/report.js'
import {describeSandbox} from '../base/process/sandbox.js'
import {fencedBlock, inertMarkdown, markdownTable} from '../base/text.js'

/**
 * The tally line, Terraform's way: `Run complete: 3 changed in scope, 1 outside (docs/x.md), 0
 * untouched; checks: npm test passed, npm run lint passed; 2 calls denied`.
 */
export function reportTally(report: RunReport, heading = 'Run complete'): string {
  const inside = report.changed.filter((file) => !report.outOfScope.includes(file)).length
  const files =
    report.scope === null
      ? `${report.changed.length} changed (no approved scope)`
      : `${inside} changed in scope, ${report.outOfScope.length} outside${report.outOfScope.length > 0 ? ` (${fileList(report.outOfScope)})` : ''}, ${report.untouched.length} untouched`
  const checks = report.checks.length > 0 ? report.checks.map((check) => `${check.command} ${checkOutcome(check)}`).join(', ') : 'none'
  const denied = `${report.denials.length} ${report.denials.length === 1 ? 'call' : 'calls'} denied`
  const dependencies = report.dependencyChanges?.length ? `; dependencies changed: ${fileList(report.dependencyChanges)}` : ''
  return `${heading}: ${files}; checks: ${checks}${checkOutputsTally(report)}${dependencies}; ${denied}`
}

/** What the checks wrote where git ignores it, after the checks in the tally: theirs, not a change of the run's. */
const checkOutputsTally = (report: RunReport) => (report.checkOutputs?.length ? ` (their outputs, not delivered: ${fileList(report.checkOutputs)})` : '')

/** A command or path in a code span; markdownTable escapes the cells' pipes. */
const code = (text: string) => `\`${text.replaceAll('`', "'")}\``

/** The report as Markdown tables, for the job summary and the sticky comment. */
export function reportMarkdown(report: RunReport): string {
  const rows: Array<[string, string]> = [
    ['Scope', report.scope === null ? '_none approved_' : `${report.scope.map(code).join(', ') || '_empty_'}${report.enforce ? ` (${report.enforce})` : ''}`],
    ['Changed in scope', String(report.changed.filter((file) => !report.outOfScope.includes(file)).length)],
    ['Outside the scope', report.outOfScope.length > 0 ? report.outOfScope.map(code).join(', ') : '0'],
    ['Untouched', report.untouched.length > 0 ? report.untouched.map(code).join(', ') : '0'],
    ...(report.checkOutputs?.length ? [['Written by the checks (ignored, not delivered)', report.checkOutputs.map(code).join(', ')] as [string, string]] : []),
    ...(report.dependencyChanges?.length
      ? [['Dependencies changed (no check ran on them)', report.dependencyChanges.map(code).join(', ')] as [string, string]]
      : []),
    ...(report.hookOutputs?.length ? [['Written by the hooks (ignored, not delivered)', report.hookOutputs.map(code).join(', ')] as [string, string]] : []),
    ['Denied calls', String(report.denials.length)],
  ]
  const logs = report.checks.some((check) => check.outputFile)
  const round = report.checkRounds?.at(-1)?.round
  const checks =
    report.checks.length > 0
      ? `\n\n${round && (report.checkRounds?.length ?? 0) > 1 ? `Checks, round ${round} (the last):\n\n` : ''}| Check | Result | Time |${logs ? ' Log |' : ''}\n|---|---|---|${logs ? '---|' : ''}\n${report.checks.map((check) => `| ${cell(code(check.command))} | ${checkPassed(check) ? '✅' : '❌'} ${checkOutcome(check)} | ${(check.durationMs / 1000).toFixed(1)} s |${logs ? ` ${check.outputFile ? cell(code(check.outputFile)) : '_none_'} |` : ''}`).join('\n')}${earlierRoundsMarkdown(report)}`
      : '\n\n_No checks approved._'
  return `**Planned versus actual**\n\n${markdownTable(rows)}${checks}`
}

const cell = (text: string) => text.replaceAll('|', '\\|')

/**
 * The rounds of the checks before the last (a failing round the retry followed), each check's outcome
 * and log, collapsed: the last round is the table above it, and a comment stays short.
 */
function earlierRoundsMarkdown(report: Pick<RunReport, 'checkRounds'>): string {
  const earlier = (report.checkRounds ?? []).slice(0, -1)
  if (earlier.length === 0) return ''
  const rows = earlier.flatMap(({checks, round}) =>
    checks.map(
      (check) =>
        `| ${round} | ${cell(code(check.command))} | ${checkPassed(check) ? '✅' : '❌'} ${checkOutcome(check)} | ${check.outputFile ? cell(code(check.outputFile)) : '_none_'} |`,
    ),
  )
  const failed = earlier.filter((round) => !round.checks.every(checkPassed)).length
  return `\n\n<details><summary>Earlier rounds of the checks: ${earlier.length} (${failed} failed)</summary>\n\n| Round | Check | Result | Log |\n|---|---|---|---|\n${rows.join('\n')}\n\n</details>`
}

/**
 * What the failing checks said, for a run that stopped on them (exit 7): each command, how it ended, and
 * its kept output (head, tail and the lines that look like failures, numbered). '' when none failed.
 */
export function failingChecksText(report: Pick<RunReport, 'checks' | 'checkRounds'>): string {
  const said = report.checks
    .filter((check) => !checkPassed(check))
    .map(
      (check) =>
        `$ ${check.command} (${checkOutcome(check)}${check.outputFile ? `; its whole output: ${check.outputFile}` : ''})\n${check.outputTail || '(no output)'}`,
    )
    .join('\n\n')
  return said ? `${said}${earlierRoundsText(report)}` : ''
}

/** The earlier rounds' logs, a line each, after the last round's failing output (a run that stopped on its checks). */
function earlierRoundsText(report: Pick<RunReport, 'checkRounds'>): string {
  const earlier = (report.checkRounds ?? []).slice(0, -1)
  if (earlier.length === 0) return ''
  const lines = earlier.flatMap(({checks, round}) =>
    checks.map((check) => `  round ${round}: ${check.command} ${checkOutcome(check)}${check.outputFile ? `: ${check.outputFile}` : ''}`),
  )
  return `\n\nEarlier rounds of the checks:\n${lines.join('\n')}`
}

/** failingChecksText as Markdown, each output in a fence nothing in it can close (a job summary, a comment). */
export function failingChecksMarkdown(report: RunReport): string {
  const failing = report.checks.filter((check) => !checkPassed(check))
  if (failing.length === 0) return ''
  const blocks = failing.map((check) => `${code(check.command)} ${checkOutcome(check)}:\n\n${fencedBlock(check.outputTail || '(no output)', 'text')}`)
  return `**What the failing ${failing.length === 1 ? 'check' : 'checks'} said**\n\n${blocks.join('\n\n')}`
}

/** The approved contract beside the plan (approve -i, the job summary, the sticky comment): scope and checks. */
export function contractMarkdown(record: {scope?: {paths: string[]; enforce: string}; verify?: Array<{command: string}>}): string {
  const scope = record.scope
    ? `${record.scope.paths.map(code).join(', ') || '_empty: no file may change_'} (${record.scope.enforce})`
    : '_none: any path in the workspace_'
  const checks = record.verify ? record.verify.map((check) => code(check.command)).join(', ') || '_none_' : '_none_'
  return markdownTable([
    ['Scope', scope],
    ['Checks', checks],
  ])
}

/** `wave plans <name>` in text: status, the record in force, the revisions, and the last run's report. */
export function overviewText(overview: PlanOverview): string {
  const {record} = overview
  const lines = [
    `${overview.name}  ${overview.status}`,
    overview.planFile ? `Plan: ${overview.path}` : `Plan: none: ${overview.path} was never written`,
    ...(overview.reason ? [`Failed: ${overview.reason}`] : []),
  ]
  if (overview.task) lines.push(`Task: ${overview.task.replaceAll(/\s+/g, ' ')}`)
  const newest = overview.revisions.at(-1)
  lines.push(
    newest
      ? `Revisions: ${overview.revisions.length} (newest ${newest.revision}, ${newest.at.slice(0, 16).replace('T', ' ')}, sha256 ${newest.sha256.slice(0, 12)})`
      : 'Revisions: none recorded',
  )
  if (record) {
    const by = record.approver ? ` by ${record.approver}` : ''
    const at = record.decidedAt ? ` at ${record.decidedAt.slice(0, 16).replace('T', ' ')}` : ''
    lines.push(
      `Decision: ${record.decision.replace('_', ' ')}${by}${at}; mode ${record.mode}, ${describeSandbox(record.sandbox)}${record.spentAt ? `; spent by a run at ${record.spentAt}` : ''}`,
    )
    if (record.allow.length > 0) lines.push(`  allow: ${record.allow.join(', ')}`)
    lines.push(`  scope: ${record.scope ? `${record.scope.paths.join(', ') || '(empty)'} (${record.scope.enforce})` : 'none'}`)
    lines.push(`  checks: ${record.verify?.map((check) => check.command).join(', ') || 'none'}`)
    if (record.feedback) lines.push(`  feedback: ${record.feedback.replaceAll(/\s+/g, ' ')}`)
  } else {
    lines.push('Decision: none recorded')
  }

  const run = overview.lastRun
  if (run) {
    const ended = run.endedAt ? `ended ${run.endedAt.slice(0, 16).replace('T', ' ')}, exit ${run.exitCode}` : 'did not end'
    lines.push(`Last run: started ${run.startedAt.slice(0, 16).replace('T', ' ')}, ${ended}`)
    if (run.report) {
      lines.push(`  ${reportTally(run.report, run.exitCode === 0 ? 'Run complete' : 'Run ended')}`)
      for (const check of run.report.checks.filter((check) => !checkPassed(check))) {
        lines.push(
          `  $ ${check.command} (${checkOutcome(check)})`,
          ...check.outputTail
            .split('\n')
            .slice(-10)
            .map((line) => `    ${line}`),
        )
      }
    }
  } else {
    lines.push('Last run: none')
  }

  return lines.join('\n')
}

/** "changed since your last review" as Markdown: the diff in a fenced block, for the job summary and the sticky comment. */
export function revisionDiffMarkdown(
  diff: Pick<RevisionDiff, 'added' | 'feedback' | 'patch' | 'removed'> & {from: {label: string}; to: {label: string}},
  cap = 20_000,
): string {
  const asked = diff.feedback.length > 0 ? `\n\nAsked for: ${diff.feedback.map((text) => `“${inertMarkdown(text, 500)}”`).join('; ')}` : ''
  // A comment has a size limit, and the whole plan is shown below the diff anyway.
  const patch = diff.patch.length > cap ? `${diff.patch.slice(0, cap)}\n[... ${diff.patch.length - cap} characters of the diff cut ...]` : diff.patch
  // The diff is the plan's text too: fenced as the plan is (a line of tildes or backticks in it closes nothing).
  const body = patch ? fencedBlock(patch.trimEnd(), 'diff') : '_no change_'
  return `**Changed since your last review** (${diff.from.label} → ${diff.to.label}: +${diff.added} −${diff.removed})${asked}\n\n${body}`
}
