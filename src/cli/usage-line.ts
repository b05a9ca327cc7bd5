/**
 * The USAGE line of a command's help. oclif's own (DocOpts) folds each flag's `exclusive` list into one
 * group greedily: a flag whose partners were already folded into an earlier group leaves an empty
 * alternative behind (`wave run`'s `[--approval <value> | --approve |  | ]`, `[--resume |  |  | ]`), and
 * a flag that `dependsOn` one already folded prints as `[--force ]`. Here a group is only flags that
 * exclude each other pairwise (exclusion read both ways, as the parser refuses either order), each flag
 * is printed once, and a flag with no group stands alone.
 */
import type {Command} from '@oclif/core'

type Flag = Command.Flag.Any

/** A flag as usage shows it: `-t <value>`, `--mode default|acceptEdits`, `--allow <value>...`, `--json`. */
export function flagUsage(flag: Flag): string {
  const name = flag.char ? `-${flag.char}` : `--${flag.name}`
  if (flag.type !== 'option') return name
  const values = flag.helpValue ? [flag.helpValue].flat() : [flag.options ? flag.options.join('|') : '<value>']
  return `${name} ${values.map((value) => `${value}${flag.multiple ? '...' : ''}`).join(' ')}`
}

/** The usage line after the command's id: its arguments, then its visible flags, required ones first. */
export function usageLine(command: Pick<Command.Loadable, 'args' | 'flags' | 'strict'>): string {
  const args = Object.values(command.args ?? {})
    .filter((arg) => !arg.hidden)
    .map((arg) => {
      const name = `${arg.name.toUpperCase()}${arg.multiple || command.strict === false ? '...' : ''}`
      return arg.required ? name : `[${name}]`
    })
  const visible = Object.values(command.flags ?? {}).filter((flag) => !flag.hidden)
  const flags = [...visible.filter((flag) => flag.required), ...visible.filter((flag) => !flag.required)]
  const names = new Set(flags.map((flag) => flag.name))
  const excludes = (a: Flag, b: Flag) => Boolean(a.exclusive?.includes(b.name) || b.exclusive?.includes(a.name))
  const placed = new Set<string>()
  const elements: string[] = []
  for (const flag of flags) {
    if (placed.has(flag.name)) continue
    const group = [flag]
    for (const other of flags) {
      if (other === flag || placed.has(other.name) || !names.has(other.name)) continue
      if (excludes(flag, other) && group.every((member) => excludes(member, other))) group.push(other)
    }
    for (const member of group) placed.add(member.name)
    const body = group.map(flagUsage).join(' | ')
    elements.push(group.some((member) => member.required) ? (group.length > 1 ? `(${body})` : body) : `[${body}]`)
  }

  // oclif's usage() puts the command's name where this placeholder is, as it does with DocOpts' line.
  return ['<%= command.id %>', ...args, ...elements].join(' ')
}
