import {z} from 'zod'

import {type CommandResult, MAX_OUTPUT_CHARS, runCommand, spawnFor} from '../base/process/runner.js'
import {defineTool, ToolError} from './tool.js'

const DEFAULT_TIMEOUT_MS = 120_000
const MAX_TIMEOUT_MS = 600_000
const RESULT_CAP = 40_000

export default defineTool({
  access: 'execute',
  description:
    'Run a bash command in the workspace root; returns stdout and stderr combined, and the exit code when nonzero. No stdin; each call is a new shell (cd and variables do not persist). ' +
    'Runs in a sandbox: the file system is read-only but for the workspace (its .git/ and .wave/ read-only), /tmp and $HOME are private, no network unless the approval allows it. ' +
    `Timeout ${DEFAULT_TIMEOUT_MS} ms by default, at most ${MAX_TIMEOUT_MS}, then the command is killed. Output over ${MAX_OUTPUT_CHARS} characters keeps its head and tail. ` +
    'Runs only where the permission mode or an allow rule such as Bash(npm test:*) allows the command; a refused one returns "Permission denied" and why: do not retry it unchanged. ' +
    'Use Read, Glob, Grep, LS, Edit and Write, not cat, find, grep, sed or echo. ' +
    'In plan mode (and in Explore agents) each command runs in a throwaway sandbox instead: it sees the workspace as it is, nothing it writes survives it, and it has no network. ' +
    'With run_in_background: true the command starts in the same sandbox and the call returns its task_id and the path of its output file at once (no timeout applies): read the output file with Read (TaskOutput also works), end it with TaskStop; ' +
    'every background command is ended when the session ends. Use it for servers and watchers, not for commands whose result you need now.',
  input: z.object({
    command: z.string().describe('The bash command to run'),
    timeout: z.number().int().positive().max(MAX_TIMEOUT_MS).optional().describe('Timeout in milliseconds (default 120000, max 600000)'),
    description: z.string().optional().describe('What the command does, in 5-10 words (shown in progress)'),
    run_in_background: z
      .boolean()
      .optional()
      .describe('Start the command in the background and return its task_id and output file at once; read the file with Read, end it with TaskStop'),
  }),
  name: 'Bash',
  resultCap: RESULT_CAP,
  async run(input, ctx) {
    if (ctx.signal.aborted) throw new ToolError('The command was not started: the session was interrupted.')
    const timeout = Math.min(input.timeout ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
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

function formatResult(result: CommandResult, timeout: number): string {
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
