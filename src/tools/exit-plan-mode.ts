import {lstat, readFile, writeFile} from 'node:fs/promises'

import {z} from 'zod'

import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

export default defineTool({
  access: 'control',
  description:
    'Finish planning once the plan file holds the complete plan: it goes to approval, and the session ends after this turn. ' +
    'plan, the plan text, is written to the plan file only when that file does not hold a plan yet. allowedPrompts (deprecated: name the commands under Verification) are shown to the approver. ' +
    'Fails, saying why, while the plan file is missing or empty, or when plan_path names another file.',
  input: () =>
    z.object({
      allowedPrompts: z.array(z.strictObject({prompt: z.string().min(1), tool: z.literal('Bash')})).optional(),
      plan: z.string().optional(),
      plan_path: z.string().optional(),
    }),
  name: 'ExitPlanMode',
  resultCap: DEFAULT_RESULT_CAP,
  async run(input, ctx) {
    const planFile = ctx.planFile
    const notes: string[] = []
    if (input.plan?.trim() && planFile) {
      notes.push(
        (await writePlanIfNone(planFile, input.plan))
          ? `The plan file ${planFile} held no plan: the plan text you passed was written to it.`
          : `The plan file ${planFile} already holds a plan, so the plan text you passed was not used; the file is what goes to approval.`,
      )
    }

    let done: string
    try {
      done = await ctx.session.exitPlanMode(input.plan_path, input.allowedPrompts)
    } catch (error) {
      if (error instanceof ToolError && notes.length > 0) throw new ToolError([...notes, error.message].join('\n'))
      throw error
    }

    return [...notes, done].join('\n')
  },
})

/** Writes `plan` to the plan file when it is missing or blank; false when it holds a plan already. */
async function writePlanIfNone(planFile: string, plan: string): Promise<boolean> {
  const info = await lstat(planFile).catch(() => undefined)
  if (info && !info.isFile()) throw new ToolError(`The plan file ${planFile} is not a regular file.`)
  if (info && (await readFile(planFile, 'utf8')).trim() !== '') return false
  const text = plan.endsWith('\n') ? plan : `${plan}\n`
  // wx: a file that appeared since the check is never overwritten; a blank one is replaced.
  await writeFile(planFile, text, {flag: info ? 'w' : 'wx'})
  return true
}
