import {Flags} from '@oclif/core'

import {WaveCommand} from '../core/command.js'
import {offered, parseRules, PERMISSION_MODES, type PermissionMode} from '../core/policy/policy.js'
import {openSession} from '../core/session/context.js'

export default class Tools extends WaveCommand {
  static description = `List the tool plugins, their access class, and which permission modes offer them.

Lists the built-ins, the tools of installed plugins and those of the MCP servers in the settings files (which it starts, then stops). Offers are those of a headless session under the settings files' rules and no --allow rules: Bash appears in acceptEdits once a rule such as Bash(npm test:*) allows it.`

  static examples = ['<%= config.bin %> tools', '<%= config.bin %> tools --mode plan', '<%= config.bin %> tools --verbose', '<%= config.bin %> tools --json']

  static flags = {
    mode: Flags.option({description: 'Show only this mode', options: PERMISSION_MODES})(),
    verbose: Flags.boolean({description: "Also print each tool's whole description and input schema, as the model is sent them"}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Tools)
    const modes: readonly PermissionMode[] = flags.mode ? [flags.mode] : PERMISSION_MODES
    // The project settings a session started here would read: the repository's, from any subdirectory.
    const session = await openSession({host: this.sessionHost(), maxTurns: 0}, {preview: true})
    const {settings} = session
    const rules = parseRules(settings.allow, settings.deny)
    const {registry} = await session.tools()
    await session.close()
    const tools = registry.tools.map((tool) => ({
      access: tool.access,
      origin: tool.origin ?? 'builtin',
      description: flags.verbose ? tool.description : tool.description.split('\n')[0],
      ...(flags.verbose ? {input_schema: registry.apiTool(tool).input_schema} : {}),
      name: tool.name,
      offered: Object.fromEntries(
        modes.map((mode) => [
          mode,
          offered(
            // A placeholder plan file: in plan mode, Write and Edit are offered for the session's plan.
            {canEnterPlanMode: false, headless: true, mode, planFile: mode === 'plan' ? '/plan.md' : undefined, rules, workspaceRoot: '/'},
            tool,
          ),
        ]),
      ),
    }))
    const header = ['TOOL', 'ACCESS', ...modes.map((m) => m.toUpperCase())]
    const rows = tools.map((t) => [t.name, t.access, ...modes.map((m) => (t.offered[m] ? 'yes' : '-'))])
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
    await this.output.result({data: {modes, tools}, text: [...table, ...details].join('\n')})
  }
}
