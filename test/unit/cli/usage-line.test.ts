import {type Command, Flags} from '@oclif/core'
import {describe, expect, it} from 'vitest'

import {flagUsage, usageLine} from '../../../src/cli/usage-line.js'

/** Flags as oclif hands them to help: each with its name. */
function named(flags: Record<string, Omit<Command.Flag.Any, 'name'>>): Record<string, Command.Flag.Any> {
  return Object.fromEntries(Object.entries(flags).map(([name, flag]) => [name, {...flag, name} as Command.Flag.Any]))
}

const line = (flags: Record<string, Omit<Command.Flag.Any, 'name'>>, args: Command.Loadable['args'] = {}) =>
  usageLine({args, flags: named(flags), strict: true}).replace('<%= command.id %> ', '')

describe('usage line', () => {
  it("leaves no empty alternative where exclusive lists overlap (wave run's flags)", () => {
    const usage = line({
      'allow-stale': Flags.boolean({exclusive: ['task', 'task-file']}),
      approval: Flags.string({exclusive: ['approve', 'task', 'task-file']}),
      approve: Flags.boolean({}),
      force: Flags.boolean({dependsOn: ['approve'], exclusive: ['task', 'task-file']}),
      resume: Flags.boolean({exclusive: ['approve', 'task', 'task-file']}),
      task: Flags.string({char: 't', exclusive: ['task-file']}),
      'task-file': Flags.string({}),
    })
    expect(usage).toBe('[--allow-stale | -t <value> | --task-file <value>] [--approval <value> | --approve] [--force] [--resume]')
    expect(usage).not.toMatch(/\|\s*\||\|\s*\]|\s\]|\[\s/)
  })

  it('groups only flags that exclude each other pairwise, each flag once', () => {
    // a excludes b and c, but b and c go together: no single group can say that.
    const usage = line({a: Flags.boolean({exclusive: ['b', 'c']}), b: Flags.boolean({}), c: Flags.boolean({})})
    expect(usage).toBe('[--a | --b] [--c]')
    // The control: a disjoint pair is one group, read from either side.
    expect(line({x: Flags.boolean({}), y: Flags.boolean({exclusive: ['x']})})).toBe('[--x | --y]')
  })

  it('leaves hidden flags out without a trace, required ones first and unbracketed', () => {
    const usage = line(
      {
        quiet: Flags.boolean({char: 'q'}),
        secret: Flags.boolean({exclusive: ['quiet'], hidden: true}),
        target: Flags.string({required: true}),
      },
      {plan: {name: 'plan', required: true} as Command.Arg.Any},
    )
    expect(usage).toBe('PLAN --target <value> [-q]')
    expect(line({one: Flags.string({exclusive: ['two'], required: true}), two: Flags.string({})})).toBe('(--one <value> | --two <value>)')
  })

  it('shows options, help values and repetition', () => {
    expect(flagUsage({...Flags.option({options: ['on', 'off'] as const})(), name: 'sandbox'} as Command.Flag.Any)).toBe('--sandbox on|off')
    expect(flagUsage({...Flags.string({multiple: true}), name: 'allow'} as Command.Flag.Any)).toBe('--allow <value>...')
    expect(flagUsage({...Flags.string({helpValue: 'N'}), name: 'max-turns'} as Command.Flag.Any)).toBe('--max-turns N')
    expect(flagUsage({...Flags.boolean({char: 'i'}), name: 'interactive'} as Command.Flag.Any)).toBe('-i')
  })
})
