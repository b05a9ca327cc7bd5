/**
 * What `wave tools` says of each tool in each mode is the policy's answer (src/policy/offers.ts):
 * the built-ins' cells, and a plugin's or MCP server's tools, held to less trust.
 */
import {describe, expect, it} from 'vitest'

import {offerOf} from '../../../src/policy/offers.js'
import {NO_RULES, parseRules, type ToolIdentity} from '../../../src/policy/policy.js'

const BUILTINS: ToolIdentity[] = [
  {access: 'read', name: 'Read'},
  {access: 'write', name: 'Write'},
  {access: 'execute', name: 'Bash'},
  {access: 'read', name: 'TaskOutput'},
  {access: 'network', name: 'WebFetch'},
  {access: 'control', name: 'EnterPlanMode'},
  {access: 'control', name: 'ExitPlanMode'},
]
const PLUGIN_WRITE: ToolIdentity = {access: 'write', name: 'Deploy', origin: 'plugin'}
const MCP_READ: ToolIdentity = {access: 'read', name: 'mcp__docs__search', origin: 'mcp'}
const ALL = [...BUILTINS, PLUGIN_WRITE, MCP_READ]

const row = (tool: ToolIdentity, rules = NO_RULES) =>
  Object.fromEntries((['default', 'acceptEdits', 'plan', 'bypassPermissions'] as const).map((mode) => [mode, offerOf(mode, tool, rules, ALL)]))

describe('offerOf', () => {
  it.each([
    ['Read', {acceptEdits: 'yes', bypassPermissions: 'yes', default: 'yes', plan: 'yes'}],
    ['Write', {acceptEdits: 'yes', bypassPermissions: 'yes', default: 'withRule', plan: 'planFileOnly'}],
    ['Bash', {acceptEdits: 'withRule', bypassPermissions: 'yes', default: 'withRule', plan: 'no'}],
    ['TaskOutput', {acceptEdits: 'withRule', bypassPermissions: 'yes', default: 'withRule', plan: 'no'}],
    ['WebFetch', {acceptEdits: 'withRule', bypassPermissions: 'withRule', default: 'withRule', plan: 'withRule'}],
    ['EnterPlanMode', {acceptEdits: 'runTaskOnly', bypassPermissions: 'runTaskOnly', default: 'runTaskOnly', plan: 'alreadyActive'}],
    ['ExitPlanMode', {acceptEdits: 'no', bypassPermissions: 'no', default: 'no', plan: 'yes'}],
  ])('%s', (name, expected) => {
    expect(row(BUILTINS.find((tool) => tool.name === name)!)).toEqual(expected)
  })

  it('StructuredOutput: offered in every mode to a session given --json-schema, in none otherwise', () => {
    const structured: ToolIdentity = {access: 'control', name: 'StructuredOutput'}
    const modes = ['default', 'acceptEdits', 'plan', 'bypassPermissions'] as const
    const offers = (structuredOutput: boolean) => modes.map((mode) => offerOf(mode, structured, NO_RULES, [...ALL, structured], {structuredOutput}))
    expect(offers(true)).toEqual(['yes', 'yes', 'yes', 'yes'])
    expect(offers(false)).toEqual(['no', 'no', 'no', 'no'])
  })

  it("a plugin's write tool is never the plan file's, and an MCP read tool is offered everywhere", () => {
    expect(row(PLUGIN_WRITE)).toEqual({acceptEdits: 'yes', bypassPermissions: 'yes', default: 'withRule', plan: 'no'})
    expect(row(MCP_READ)).toEqual({acceptEdits: 'yes', bypassPermissions: 'yes', default: 'yes', plan: 'yes'})
  })

  it('a rule that allows the tool makes it plainly offered; a deny rule without a specifier makes it never offered', () => {
    const bash = BUILTINS.find((tool) => tool.name === 'Bash')!
    expect(offerOf('acceptEdits', bash, parseRules(['Bash(npm test:*)']), ALL)).toBe('yes')
    expect(offerOf('acceptEdits', bash, parseRules([], ['Bash']), ALL)).toBe('no')
    expect(offerOf('bypassPermissions', bash, parseRules([], ['Bash']), ALL)).toBe('no')
  })
})
