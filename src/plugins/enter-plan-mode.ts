import {z} from 'zod'

import {defineTool} from './tool.js'

export default defineTool({
  access: 'control',
  description:
    'Switch to plan mode before a complex or risky change: explore read-only and write a plan to the plan file you are given; then call ExitPlanMode for approval.',
  input: z.object({
    reason: z.string().optional().describe('Why planning first helps here'),
  }),
  name: 'EnterPlanMode',
  run: (input, ctx) => ctx.session.enterPlanMode(input.reason),
})
