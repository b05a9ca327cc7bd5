/**
 * oclif's command_not_found hook (package.json's oclif.hooks): `wave plann` gets wave's one line, with
 * the closest command ("did you mean plan?"), exit 2, and the JSON error object under --json, instead of
 * oclif's `command plann not found`. It never asks anything: wave runs headless.
 */
import type {Hook} from '@oclif/core'

import {outputFormatIn} from '../cli/command.js'
import {createSink} from '../output/sink.js'
import {unknownCommandError} from '../cli/usage-errors.js'

const commandNotFound: Hook.CommandNotFound = async function (options) {
  const commands = options.config.commands
    .filter((command) => !command.hidden)
    .map((command) => ({args: command.args ?? {}, flags: command.flags ?? {}, id: command.id}))
  const error = unknownCommandError(options.id, commands)
  const format = outputFormatIn([...options.id.split(':'), ...(options.argv ?? [])])
  await createSink({command: 'wave', format}).failure({exitCode: error.exitCode, message: error.message})
  // oclif's exit: an ExitError, which it does not print, ending the process with this code.
  this.exit(error.exitCode)
}

export default commandNotFound
