import {Flags} from '@oclif/core'

import {WaveCommand} from '../cli/command.js'
import {ExitCode} from '../base/errors.js'
import {type CheckStatus, runDoctorChecks} from '../ops/doctor.js'
import {sessionWorkspace} from '../base/workspace/git.js'

const SHOWN: Record<CheckStatus, string> = {fail: 'FAIL', pass: 'ok', skip: 'skipped', warn: 'warn'}

export default class Doctor extends WaveCommand {
  static description =
    `Check that wave can work here: the sandbox Bash runs in, the network proxy that --sandbox-network-allow needs, the shell grammar, the provider (and what chose it), credentials (accepted by the endpoint?), settings files, the hooks a session here runs and the Agent Skills it loads.

Prints each check and its result; a failing check names its fix. Exits 1 when a required check fails (the sandbox, the provider, credentials, settings), else 0. Credentials are never shown, only whether they are set.`

  static examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --json', '<%= config.bin %> doctor --offline']

  static flags = {
    cwd: Flags.directory({description: 'Workspace whose .wave/settings.json to check (default: the top of the git repository holding the current directory)'}),
    offline: Flags.boolean({description: 'Do not try to reach the model endpoint'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Doctor)
    const {workspace} = await sessionWorkspace(flags.cwd ?? process.cwd(), flags.cwd !== undefined)
    const {checks, ok} = await runDoctorChecks({offline: flags.offline, workspace})
    const header = ['CHECK', 'RESULT', 'DETAIL']
    const rows = checks.map((check) => [check.name, SHOWN[check.status], check.detail])
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)))
    // The detail is the last column: not padded, however long the fix it names.
    const table = [header, ...rows].map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '))
    await this.output.result({data: {checks, ok}, text: table.join('\n')})
    if (!ok) process.exitCode = ExitCode.runtime
  }
}
