import {z} from 'zod'

import {defineTool} from './tool.js'

export default defineTool({
  access: 'control',
  description: 'Finish planning: the plan file is complete and ready for approval.',
  input: z.object({
    plan_path: z.string().optional().describe('Path of the finished plan file (defaults to this session\'s plan)'),
  }),
  name: 'ExitPlanMode',
  run: (input, ctx) => ctx.session.exitPlanMode(input.plan_path),
})
