/**
 * oclif's help (package.json's oclif.helpClass), with wave's line for a command that does not exist:
 * `wave plann --help` and `wave help plann` say "unknown command plann (did you mean plan or plans?)",
 * exit 2, instead of oclif's `Command plann not found.`; words typed after a command (`wave plan fix
 * --help`) get that command's help.
 */
import {Errors, Help} from '@oclif/core'

export default class WaveHelp extends Help {
  async showHelp(argv: string[]): Promise<void> {
    try {
      await super.showHelp(argv)
    } catch (error) {
      const typed = (error as Error).message.match(/^Command (\S+) not found\.$/)?.[1]
      if (!typed) throw error
      // Loaded only now: a help that is found costs nothing more.
      const {typedCommand, unknownCommandError} = await import('../core/usage-errors.js')
      const commands = this.config.commands
        .filter((command) => !command.hidden)
        .map((command) => ({args: command.args ?? {}, flags: command.flags ?? {}, id: command.id}))
      const meant = typedCommand(typed, commands)
      if (meant.command) return super.showHelp(meant.command.id.split(':'))
      const unknown = unknownCommandError(typed, commands)
      // Help has no output format: the line as the text sink writes it.
      process.stderr.write(`Error: ${unknown.message}\n`)
      Errors.exit(unknown.exitCode)
    }
  }
}
