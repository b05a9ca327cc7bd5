import {Flags} from '@oclif/core'

import {checkedRules, WaveCommand} from '../cli/command.js'
import {describeThrowaway} from '../base/process/sandbox.js'
import {EXECUTION_MODES} from '../policy/policy.js'
import {PLAN_NAME_PLACEHOLDER, previewPrompt, PROMPT_KINDS, type PromptPreview} from '../flows/preview.js'

export default class Prompt extends WaveCommand {
  static description = `Print what a session would send the model: its system prompt and tool definitions.

Built as a session of that kind builds them in this workspace (environment block, repository instructions, settings, plugins and MCP servers included), without making a request. The plan kind names its plan file ${PLAN_NAME_PLACEHOLDER}.md: a plan's name is drawn when the session starts. With --task, the first message is printed too (plan and task kinds; a run's holds the approved plan).`

  static examples = [
    '<%= config.bin %> prompt --mode plan',
    '<%= config.bin %> prompt --mode run --permission-mode bypassPermissions --allow "Bash(npm test:*)"',
    '<%= config.bin %> prompt --mode task --task "Fix the flaky date test" --json',
    '<%= config.bin %> prompt --mode run --json-schema @result.schema.json',
  ]

  static flags = {
    allow: Flags.string({description: "Run and task kinds: a permission rule beyond the settings files', as --allow gives it; repeatable", multiple: true}),
    'append-system-prompt': Flags.string({description: 'Text added at the end of the system prompt, as a session takes it; @FILE reads it from a file'}),
    cwd: Flags.directory({description: 'Workspace root (default: the top of the git repository holding the current directory)'}),
    'json-schema': Flags.string({
      description: 'A JSON Schema (JSON, or @FILE) for the result, as plan and run take it: the StructuredOutput tool is offered with it as its input_schema',
    }),
    mode: Flags.option({
      description: 'The kind of session: plan (and --revise), run (an approved plan), task (run --task)',
      options: PROMPT_KINDS,
      required: true,
    })(),
    'permission-mode': Flags.option({default: 'acceptEdits', description: 'Run and task kinds: the permission mode', options: EXECUTION_MODES})(),
    task: Flags.string({char: 't', description: 'The task, to show the first message'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Prompt)
    // What a session reads of these before it starts, read the same way (an invalid schema is exit 2).
    const {appendSystemPrompt, outputSchema} = await this.sessionInputs(flags)
    const preview = await previewPrompt({
      allow: checkedRules(flags.allow),
      appendSystemPrompt,
      cwd: flags.cwd,
      outputSchema,
      host: this.sessionHost(),
      kind: flags.mode,
      mode: flags['permission-mode'],
      task: flags.task,
    })
    await this.output.result({data: {...preview}, text: previewText(preview)})
  }
}

/** The system prompt verbatim, then each tool's description and input schema (a deferred one marked), then the first message. */
function previewText(preview: PromptPreview): string {
  // A deferred tool is sent with defer_loading: the model sees its definition once ToolSearch loads it.
  const tools = preview.tools.map(
    (tool) => `----- ${tool.name}${tool.defer_loading ? ' (deferred)' : ''} -----\n${tool.description}\n\ninput_schema: ${JSON.stringify(tool.input_schema)}`,
  )
  return [
    `===== system prompt (${preview.kind} session, ${preview.mode} mode) =====`,
    ...(preview.planBash ? [`plan-mode Bash: ${preview.planBash.offered ? describeThrowaway(preview.planBash.kind) : `off: ${preview.planBash.why}`}`] : []),
    preview.system,
    `===== tools: ${preview.tools.map((tool) => tool.name).join(', ') || 'none'} =====`,
    ...tools,
    ...(preview.firstMessage === null ? [] : ['===== first message =====', preview.firstMessage]),
    `===== skills: ${preview.skills.map((skill) => `${skill.name} (${skill.file})`).join(', ') || 'none'} =====`,
    `===== hooks: ${preview.hooks.length === 0 ? 'none' : `\n${preview.hooks.join('\n')}`}`,
  ].join('\n\n')
}
