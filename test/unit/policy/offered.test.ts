/**
 * The offered tool list and the decisions come from one function: a tool is offered exactly when some
 * call of it can be allowed. Checked over every mode, a spread of rule sets and sample calls of every
 * kind of tool: no offered tool is always denied, and no withheld tool is ever allowed.
 */
import {beforeAll, describe, expect, it} from 'vitest'

import {decide, offered, parseRules, PERMISSION_MODES, type PolicyContext, type ToolCall, type ToolIdentity} from '../../../src/policy/policy.js'
import {analyseShell} from '../../../src/policy/shell.js'
import type {PathKind, ResolvedPath} from '../../../src/base/workspace/paths.js'

const ROOT = '/work/repo'
const PLAN = '/home/u/.wave/plans/gentle-breeze.md'

const tools: ToolIdentity[] = [
  {access: 'read', name: 'Read'},
  {access: 'read', name: 'Grep'},
  {access: 'read', name: 'LS'},
  {access: 'write', name: 'Write'},
  {access: 'write', name: 'Edit'},
  {access: 'execute', name: 'Bash'},
  {access: 'network', name: 'WebFetch'},
  {access: 'control', name: 'EnterPlanMode'},
  {access: 'control', name: 'ExitPlanMode'},
  {access: 'control', name: 'TodoWrite'},
  {access: 'control', name: 'AskUserQuestion'},
  {access: 'control', name: 'Agent'},
  {access: 'read', name: 'TaskOutput'},
  {access: 'execute', name: 'TaskStop'},
  {access: 'read', name: 'WordCount', origin: 'plugin'},
  {access: 'write', name: 'AppendNote', origin: 'plugin'},
  {access: 'control', name: 'acme_control', origin: 'plugin'},
  {access: 'read', name: 'mcp__fixture__lookup', origin: 'mcp'},
  {access: 'execute', name: 'mcp__fixture__record', origin: 'mcp'},
]

const ruleSets: Array<[string[], string[]]> = [
  [[], []],
  [['Bash(npm test:*)'], []],
  [['Bash', 'WebFetch(domain:a.com)'], []],
  [['mcp__fixture', 'AppendNote'], []],
  [['Edit(src/**)', 'Bash(git status)'], []],
  [[], ['Bash']],
  [['Bash(npm test:*)'], ['Bash(rm:*)']],
  [[], ['Read']],
  [[], ['Read(./secret.txt)', 'Edit']],
  [['WebFetch(domain:a.com)'], ['WebFetch']],
  [[], ['mcp__fixture']],
]

function target(real: string, kind: PathKind = 'file'): ResolvedPath {
  return {absolute: real, input: real, kind, real, symlink: false}
}

const targets = [
  target(`${ROOT}/src/a.ts`),
  target(`${ROOT}/secret.txt`),
  target(`${ROOT}/new.ts`, 'missing'),
  target(PLAN),
  target(PLAN, 'missing'),
  target('/etc/passwd'),
]
const commands = ['npm test', 'npm test -- --watch', 'git status', 'ls', 'rm -rf x', 'echo $(id)']
let calls: Map<string, ToolCall[]>

beforeAll(async () => {
  calls = new Map()
  for (const tool of tools) {
    const samples: ToolCall[] = [{input: {}, tool}]
    if (tool.access === 'execute') {
      for (const command of commands) samples.push({input: {command}, shell: await analyseShell(command), tool})
    } else if (tool.access === 'network') {
      samples.push({input: {url: 'https://a.com/x'}, tool}, {input: {url: 'https://b.org/'}, tool})
    } else if (tool.access !== 'control') {
      for (const t of targets) samples.push({input: {file_path: t.input}, target: t, tool})
    }

    calls.set(tool.name, samples)
  }
})

describe('offered tools and decisions agree', () => {
  const contexts: Array<[string, PolicyContext]> = []
  for (const mode of PERMISSION_MODES) {
    for (const [allow, deny] of ruleSets) {
      for (const canEnterPlanMode of mode === 'plan' ? [false] : [false, true]) {
        const name = `${mode} allow=${allow.join(',') || '-'} deny=${deny.join(',') || '-'}${canEnterPlanMode ? ' +EnterPlanMode' : ''}`
        const context: PolicyContext = {
          canEnterPlanMode,
          headless: true,
          mode,
          planFile: mode === 'plan' ? PLAN : undefined,
          rules: parseRules(allow, deny),
          workspaceRoot: ROOT,
        }
        contexts.push([name, context])
        // Plan mode with its Bash on (issue #35), and an agent's calls (no plan file, no control tools).
        if (mode === 'plan') contexts.push([`${name} +planBash`, {...context, planBash: {kind: 'read-only', offered: true}}])
        if (!canEnterPlanMode) {
          const nested = {...context, nested: true, planBash: {kind: 'read-only', offered: true}, planFile: undefined} as PolicyContext
          contexts.push([`${name} (an agent)`, nested])
        }
      }
    }
  }

  it.each(contexts)('%s', (_name, context) => {
    for (const tool of tools) {
      const allowed = calls.get(tool.name)!.filter((call) => decide(context, call).decision === 'allow')
      const claim = `${tool.name} offered=${offered(context, tool)}`
      if (offered(context, tool)) expect(allowed.length, `${claim}: no sample call allowed`).toBeGreaterThan(0)
      else
        expect(
          allowed.map((call) => call.input),
          `${claim}: a withheld tool allowed a call`,
        ).toEqual([])
    }
  })
})
