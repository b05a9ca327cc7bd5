import {z} from 'zod'

import {DEFAULT_RESULT_CAP, defineTool} from './tool.js'

export default defineTool({
  access: 'control',
  description:
    'Finish planning once the plan file holds the complete plan: it goes to approval, and the session ends after this turn. ' +
    'Fails, saying why, while the plan file is missing or empty, or when plan_path names another file.',
  input: z.object({
    plan_path: z.string().optional().describe('Path of the finished plan file (defaults to this session\'s plan)'),
  }),
  name: 'ExitPlanMode',
  resultCap: DEFAULT_RESULT_CAP,
  run: (input, ctx) => ctx.session.exitPlanMode(input.plan_path),
})
