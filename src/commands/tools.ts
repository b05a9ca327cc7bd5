import {Flags} from '@oclif/core'

import {WaveCommand} from '../cli/command.js'
import {type Offer, OFFER_LABELS, offerOf} from '../policy/offers.js'
import {parseRules, PERMISSION_MODES, type PermissionMode} from '../policy/policy.js'
import {openSession} from '../session/context.js'
import {planBashOf} from '../session/plan-mode.js'
import {describeThrowaway} from '../base/process/sandbox.js'

export default class Tools extends WaveCommand {
  static description = `List the tool plugins, their access class, and which permission modes offer them.

Lists the built-ins, the tools of installed plugins and those of the MCP servers in the settings files (which it starts, then stops). Each cell is the policy's answer for a headless session of the mode under the settings files' rules: yes; plan file only (Write and Edit in plan mode); run --task only (EnterPlanMode: only wave run --task lets the model plan first); already active (EnterPlanMode in plan mode); with a rule (once an --allow or settings rule such as Bash(npm test:*) allows it; TaskOutput and TaskStop go with Bash); - (never). DEFERRED yes: sent with defer_loading, its definition outside the cached prompt until the model loads it with ToolSearch.`

  static examples = [
    '<%= config.bin %> tools',
    '<%= config.bin %> tools --mode plan',
    '<%= config.bin %> tools --verbose',
    '<%= config.bin %> tools --json',
    `<%= config.bin %> tools --json-schema '{"type":"object","properties":{"ok":{"type":"boolean"}}}' --verbose`,
  ]

  static flags = {
    'json-schema': Flags.string({
      description: 'As a session given --json-schema (JSON, or @FILE) lists them: with the StructuredOutput tool, its input_schema this schema',
    }),
    mode: Flags.option({description: 'Show only this mode', options: PERMISSION_MODES})(),
    verbose: Flags.boolean({description: "Also print each tool's whole description and input schema, as the model is sent them"}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Tools)
    const modes: readonly PermissionMode[] = flags.mode ? [flags.mode] : PERMISSION_MODES
    // The project settings a session started here would read: the repository's, from any subdirectory.
    const {outputSchema} = await this.sessionInputs(flags)
    const session = await openSession({host: this.sessionHost(), outputSchema}, {preview: true})
    const {settings} = session
    const rules = parseRules(settings.allow, settings.deny, settings.ask)
    const {registry} = await session.tools()
    await session.close()
    // Plan mode's Bash depends on the sandbox here: asked only when plan mode is listed.
    const planBash = modes.includes('plan') ? planBashOf(settings) : undefined
    const context = {planBash, structuredOutput: outputSchema !== undefined}
    const tools = registry.tools.map((tool) => {
      const offers = Object.fromEntries(modes.map((mode) => [mode, offerOf(mode, tool, rules, registry.tools, context)])) as Record<PermissionMode, Offer>
      return {
        access: tool.access,
        // Sent with defer_loading wherever ToolSearch is offered (it is not where tool search is off): the model loads it with ToolSearch.
        deferred: registry.sendsDeferred(tool),
        origin: tool.origin ?? 'builtin',
        description: flags.verbose ? tool.description : tool.description.split('\n')[0],
        ...(flags.verbose ? {input_schema: registry.apiTool(tool).input_schema} : {}),
        name: tool.name,
        // Whether a plain headless session of the mode (wave plan, wave run plan.md) offers it; `offers` says when, and what for.
        offered: Object.fromEntries(modes.map((mode) => [mode, offers[mode] === 'yes' || offers[mode] === 'planFileOnly'])),
        offers,
      }
    })
    const header = ['TOOL', 'ACCESS', 'DEFERRED', ...modes.map((m) => m.toUpperCase())]
    const rows = tools.map((t) => [t.name, t.access, t.deferred ? 'yes' : '-', ...modes.map((m) => OFFER_LABELS[t.offers[m]])])
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
    const table = [header, ...rows].map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]))
        .join('  ')
        .trimEnd(),
    )
    const details = flags.verbose
      ? tools.map((t) => `\n----- ${t.name} (${t.access}, ${t.origin}) -----\n${t.description}\n\ninput_schema: ${JSON.stringify(t.input_schema)}`)
      : []
    const note = planBash ? [`\nplan-mode Bash: ${planBash.offered ? describeThrowaway(planBash.kind) : `off: ${planBash.why}`}`] : []
    await this.output.result({data: {modes, ...(planBash ? {planBash} : {}), tools}, text: [...table, ...note, ...details].join('\n')})
  }
}
