import {z} from 'zod'

import {type FinishedCommand, MAX_OUTPUT_CHARS, runCommand, spawnFor} from '../base/process/runner.js'
import {defineTool, ToolError} from './tool.js'

const DEFAULT_TIMEOUT_MS = 120_000
const MAX_TIMEOUT_MS = 600_000
const RESULT_CAP = 40_000

export default defineTool({
  access: 'execute',
  description:
    'Run a bash command in the workspace root; returns stdout and stderr combined, and the exit code when nonzero. No stdin; each call is a new shell (cd and variables do not persist). ' +
    'Runs in a sandbox: the file system read-only but for the workspace (its .git/ and .wave/ read-only), /tmp and $HOME private, no network unless the approval allows it; in plan mode and Explore agents, a throwaway one. ' +
    `Timeout ${DEFAULT_TIMEOUT_MS} ms by default, at most ${MAX_TIMEOUT_MS}, then the command is killed. Output over ${MAX_OUTPUT_CHARS} characters keeps its head and tail. ` +
    'Runs only where the permission mode or an allow rule such as Bash(npm test:*) allows it; a refused one returns "Permission denied" and why: do not retry it unchanged. ' +
    'Use the file tools, not cat, find, grep, sed or echo. ' +
    'run_in_background: true returns a task_id and an output file at once (no timeout; read the file with Read or TaskOutput, end it with TaskStop; each is ended when the session ends): for servers and watchers.',
  input: () =>
    z.object({
      command: z.string(),
      timeout: z.number().int().positive().max(MAX_TIMEOUT_MS).optional(),
      description: z.string().optional().describe('5-10 words, shown in progress'),
      run_in_background: z.boolean().optional(),
    }),
  name: 'Bash',
  resultCap: RESULT_CAP,
  async run(input, ctx) {
    if (ctx.signal.aborted) throw new ToolError('The command was not started: the session was interrupted.')
    // Allowed only as an approved check: again here, the command run is that check, exactly.
    if (ctx.approvedCheck !== undefined && input.command !== ctx.approvedCheck) {
      throw new ToolError(`Command not run: it was allowed as the approved check ${ctx.approvedCheck}, and it is not that command.`)
    }

    // An approved check gets the longest time Bash allows, as wave's own run of it does (plans/checks.ts).
    const timeout = Math.min(input.timeout ?? (ctx.approvedCheck === undefined ? DEFAULT_TIMEOUT_MS : MAX_TIMEOUT_MS), MAX_TIMEOUT_MS)
    const spawn = spawnFor(input.command, {root: ctx.root}, ctx.sandbox)
    if ('problem' in spawn) throw new ToolError(`Command not run: ${spawn.problem}`)
    const {plan} = spawn

    if (input.run_in_background) {
      if (!ctx.tasks) throw new ToolError('Background commands are not available here: run the command without run_in_background.')
      const task = ctx.tasks.start(plan, ctx.root, {command: input.command, description: input.description})
      const file = task.outputFile
        ? ` Its output is written to ${task.outputFile}: read it with the Read tool (or TaskOutput, task_id "${task.id}").`
        : ` Read its output with TaskOutput (task_id "${task.id}").`
      return `Started in the background as task ${task.id}.${file} End it with TaskStop. It is ended when the session ends.`
    }

    const result = await runCommand(plan, ctx.root, timeout, ctx.signal).catch((error: Error) => {
      throw new ToolError(error.message)
    })
    return formatResult(result, timeout)
  },
})

function formatResult(result: FinishedCommand, timeout: number): string {
  const notes: string[] = []
  if (result.timedOut) notes.push(`Command timed out after ${timeout} ms and was killed.`)
  else if (result.aborted) notes.push('Command was interrupted and killed.')
  else if (result.signal) notes.push(`Command was killed by ${result.signal}.`)
  if (result.code !== null && result.code !== 0) notes.push(`Exit code: ${result.code}`)
  if (result.detachedOutput) notes.push('(A background process still holds the output open; later output is not captured. Redirect it to a file.)')

  const output = result.output.replace(/\n+$/, '')
  if (notes.length === 0) return output || '(no output)'
  return [output, ...notes].filter(Boolean).join('\n')
}
