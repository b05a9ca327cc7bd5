import {z} from 'zod'

import {DEFAULT_RESULT_CAP, defineTool} from './tool.js'

export default defineTool({
  access: 'control',
  description:
    'Switch to plan mode before a complex, risky or ambiguous change. From then on only read tools and the plan file are allowed: explore, write the plan to the plan file the result names, ' +
    'then call ExitPlanMode so it is approved before anything changes. Once per session: fails when plan mode is active or cannot be entered.',
  input: () =>
    z.object({
      reason: z.string().optional(),
    }),
  name: 'EnterPlanMode',
  resultCap: DEFAULT_RESULT_CAP,
  run: (input, ctx) => ctx.session.enterPlanMode(input.reason),
})
