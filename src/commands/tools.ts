import {Flags} from '@oclif/core'

import {WaveCommand} from '../core/command.js'
import {offered, parseRules, PERMISSION_MODES, type PermissionMode} from '../core/policy/policy.js'
import {loadSettings} from '../core/settings.js'
import {openSessionTools} from '../plugins/toolset.js'
import {workspaceRoot} from '../core/workspace/paths.js'

export default class Tools extends WaveCommand {
  static description = `List the tool plugins, their access class, and which permission modes offer them.

Lists the built-ins, the tools of installed plugins and those of the MCP servers in the settings files
(which it starts, then stops). Offers are those of a headless session under the settings files' rules
and no --allow rules: Bash appears in acceptEdits once a rule such as Bash(npm test:*) allows it.`

  static examples = ['<%= config.bin %> tools', '<%= config.bin %> tools --mode plan', '<%= config.bin %> tools --json']

  static flags = {
    mode: Flags.option({description: 'Show only this mode', options: PERMISSION_MODES})(),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Tools)
    const modes: readonly PermissionMode[] = flags.mode ? [flags.mode] : PERMISSION_MODES
    const workspace = await workspaceRoot(process.cwd())
    const settings = loadSettings(workspace)
    const rules = parseRules(settings.allow, settings.deny)
    const {close, registry} = await openSessionTools({config: this.config, settings, warn: (message) => this.output.warn(message), workspace})
    await close()
    const tools = registry.tools.map((tool) => ({
      access: tool.access,
      origin: tool.origin ?? 'builtin',
      description: tool.description.split('\n')[0],
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
    const table = [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd())
    await this.output.result({data: {modes, tools}, text: table.join('\n')})
  }
}
