/**
 * oclif's help (package.json's oclif.helpClass), with wave's line for a command that does not exist:
 * `wave plann --help` and `wave help plann` say "unknown command plann (did you mean plan or plans?)",
 * exit 2, instead of oclif's `Command plann not found.`; words typed after a command (`wave plan fix
 * --help`) get that command's help. A command's USAGE line is cli/usage-line.ts's, without oclif's empty
 * alternatives.
 */
import {CommandHelp, Errors, Help} from '@oclif/core'

import {typedCommand, unknownCommandLine} from '../base/suggestions.js'
import {usageLine} from '../cli/usage-line.js'

class WaveCommandHelp extends CommandHelp {
  protected defaultUsage(): string {
    return usageLine(this.command)
  }
}

export default class WaveHelp extends Help {
  protected CommandHelpClass = WaveCommandHelp

  async showHelp(argv: string[]): Promise<void> {
    try {
      await super.showHelp(argv)
    } catch (error) {
      const typed = (error as Error).message.match(/^Command (\S+) not found\.$/)?.[1]
      if (!typed) throw error
      const meant = typedCommand(
        typed,
        this.config.commands.filter((command) => !command.hidden),
      )
      if (meant.command) return super.showHelp(meant.command.id.split(':'))
      // Help has no output format: the line as the text sink writes it. Exit 2, errors.ts's usage error
      // (not imported: its table brings zod into every help).
      process.stderr.write(`Error: ${unknownCommandLine(meant)}\n`)
      Errors.exit(2)
    }
  }
}
