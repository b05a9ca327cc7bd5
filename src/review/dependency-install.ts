/**
 * What the CI job's install of the project's dependencies did, before wave ran: the record its own step
 * wrote (scripts/ci/install-deps.sh in the Action, the GitLab recipe's `.wave` before_script) at the path
 * WAVE_INSTALL_RESULT names, outside the checkout and outside every sandbox's reach (the runner's temp
 * directory, wave's home). Every comment of the job says in one line what was installed; a failed
 * install stops a step that would ask the model (steps.ts, `assertInstalled`), its comment showing the
 * install's last lines. Those lines are the project's install scripts' output: untrusted, shown only in
 * a fence nothing in them can close, no one mentioned.
 */
import {z} from 'zod'

import {ExitCode, WaveError} from '../base/errors.js'
import {readJsonFile} from '../base/json.js'
import {fencedBlock, visible} from '../base/text.js'
import {given} from './options.js'

const installSchema = z.lazy(() =>
  z.object({
    version: z.literal(1),
    /** The command run; empty when nothing was installed. */
    command: z.string(),
    /** Why that command: `by package-lock.json`, `install-command`, `install-command: none`, `no lockfile or manifest`. */
    why: z.string(),
    /** The setting that says how to install (the Action's input, the recipe's variable), named as the fix. */
    setting: z.string().default('install-command'),
    exitCode: z.number().int(),
    /** The install's last lines of output, when it failed. */
    tail: z.string().optional(),
  }),
)

export type DependencyInstall = z.infer<typeof installSchema>

/** The lines of the install's output a comment shows at most, and their characters. */
const TAIL_LINES = 30
const TAIL_CHARS = 4000

/** The job's install record, when WAVE_INSTALL_RESULT names one; a named file missing or malformed is exit 1. */
export function dependencyInstall(env: NodeJS.ProcessEnv): DependencyInstall | undefined {
  const file = given(env.WAVE_INSTALL_RESULT)
  if (!file) return undefined
  return readJsonFile(file, installSchema, {
    exitCode: ExitCode.runtime,
    invalid: (problem) => `The install's record ${file} (WAVE_INSTALL_RESULT) is unusable: ${problem}.`,
    missing: () =>
      new WaveError(
        `The install's record ${file} (WAVE_INSTALL_RESULT) does not exist: the job's install step wrote none.`,
        ExitCode.runtime,
        'Install the dependencies with the step that records it (scripts/ci/install-deps.sh), or unset WAVE_INSTALL_RESULT.',
      ),
  })
}

export const installFailed = (install: DependencyInstall | undefined): install is DependencyInstall => install !== undefined && install.exitCode !== 0

/** One line for every comment of the job: what was installed, and why. */
export function dependencyLine(install: DependencyInstall | undefined): string | undefined {
  if (!install) return undefined
  const why = oneLine(install.why)
  if (install.exitCode !== 0) return `Dependencies: **not installed**: ${codeSpan(install.command)} (${why}) exited ${install.exitCode}.`
  if (!install.command) return `Dependencies: none installed (${why}).`
  return `Dependencies: ${codeSpan(install.command)} (${why}).`
}

/** The error a step stops on before any model request, when the install failed. */
export function installError(install: DependencyInstall): WaveError {
  return new WaveError(
    `The project's dependencies were not installed: \`${oneLine(install.command)}\` (${oneLine(install.why)}) exited ${install.exitCode}; wave asked no model and ran nothing.`,
    ExitCode.runtime,
    `${fixOf(install, false)}.`,
  )
}

/** What a comment says of a failed install: the command, why, its exit, the output's tail in a fence, and the fix. */
export function installFailureMarkdown(install: DependencyInstall): string {
  const tail = tailOf(install.tail ?? '')
  return [
    `**The project's dependencies were not installed**, so wave asked no model and ran nothing: ${codeSpan(install.command)} (${oneLine(install.why)}) exited ${install.exitCode}.`,
    '',
    tail ? `Its last lines:\n\n${fencedBlock(tail)}` : 'It wrote nothing.',
    '',
    `${fixOf(install)}, then ask again.`,
  ].join('\n')
}

/** The fix, where Markdown renders (the setting as code) or at a terminal. */
const fixOf = (install: DependencyInstall, markdown = true) =>
  `Fix the install, or set ${markdown ? codeSpan(install.setting) : oneLine(install.setting)} to the command that installs the project's dependencies (none installs nothing)`

/**
 * The output's last lines as a fence shows them: terminal colours dropped, other control characters
 * visible, no line starting a mention (inside a fence GitHub and GitLab mention no one; the zero-width
 * space after each `@` keeps it so wherever the text is copied), at most TAIL_LINES lines and TAIL_CHARS.
 */
function tailOf(text: string): string {
  const lines = visible(text.replaceAll(/\u001B\[[0-9;?]*[A-Za-z]/g, '').replaceAll('\r\n', '\n'))
    .replaceAll('@', '@\u200B')
    .replace(/\n+$/, '')
    .split('\n')
    .slice(-TAIL_LINES)
  const kept = lines.join('\n')
  return kept.length > TAIL_CHARS ? `[...]${kept.slice(-TAIL_CHARS)}` : kept
}

const oneLine = (text: string) => visible(text.replaceAll(/\s+/g, ' ').trim()).replaceAll('@', '@\u200B')

/** A command as inline code, whatever backticks it holds. */
function codeSpan(text: string): string {
  const line = oneLine(text)
  const longest = Math.max(0, ...Array.from(line.matchAll(/`+/g), (run) => run[0].length))
  const ticks = '`'.repeat(longest + 1)
  return line.startsWith('`') || line.endsWith('`') ? `${ticks} ${line} ${ticks}` : `${ticks}${line}${ticks}`
}
