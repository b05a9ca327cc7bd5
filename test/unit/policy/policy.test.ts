import {describe, expect, it} from 'vitest'

import {
  AGENT_REFUSAL,
  decide,
  type PermissionDecision,
  NESTED_AGENT_REFUSAL,
  nextMode,
  offered,
  parseRule,
  parseRules,
  type PermissionMode,
  type PolicyContext,
  ruleNamesHost,
  rulesNamingNoTool,
  ruleSchema,
  type ToolIdentity,
} from '../../../src/policy/policy.js'
import {analyseShell} from '../../../src/policy/shell.js'
import AgentTool from '../../../src/tools/agent.js'
import type {PathKind, ResolvedPath} from '../../../src/base/workspace/paths.js'

const ROOT = '/work/repo'
const PLAN = '/home/u/.wave/plans/gentle-breeze.md'

const Read: ToolIdentity = {access: 'read', name: 'Read'}
const Write: ToolIdentity = {access: 'write', name: 'Write'}
const Edit: ToolIdentity = {access: 'write', name: 'Edit'}
const Bash: ToolIdentity = {access: 'execute', name: 'Bash'}
const Grep: ToolIdentity = {access: 'read', name: 'Grep'}
const LS: ToolIdentity = {access: 'read', name: 'LS'}
const WebFetch: ToolIdentity = {access: 'network', name: 'WebFetch'}
const PluginWrite: ToolIdentity = {access: 'write', name: 'acme_patch'}
const PluginRead: ToolIdentity = {access: 'read', name: 'WordCount', origin: 'plugin'}
const PluginNamedWrite: ToolIdentity = {access: 'write', name: 'AppendNote', origin: 'plugin'}
const PluginNet: ToolIdentity = {access: 'network', name: 'acme_fetch', origin: 'plugin'}
const PluginControl: ToolIdentity = {access: 'control', name: 'acme_control', origin: 'plugin'}
const PluginAsWrite: ToolIdentity = {access: 'write', name: 'Write', origin: 'plugin'}
const McpRead: ToolIdentity = {access: 'read', name: 'mcp__fixture__lookup', origin: 'mcp'}
const McpWrite: ToolIdentity = {access: 'execute', name: 'mcp__fixture__record', origin: 'mcp'}
const Enter: ToolIdentity = {access: 'control', name: 'EnterPlanMode'}
const Exit: ToolIdentity = {access: 'control', name: 'ExitPlanMode'}
const TodoWrite: ToolIdentity = {access: 'control', name: 'TodoWrite'}
const Ask: ToolIdentity = {access: 'control', name: 'AskUserQuestion'}
// The Agent tool as the registry has it: by its name of now and its older one, Task (issue 48).
const Agent: ToolIdentity = AgentTool
const TaskStop: ToolIdentity = {access: 'execute', name: 'TaskStop'}
const PLAN_BASH = {kind: 'read-only', offered: true} as const
const PLAN_BASH_OFF = {offered: false, why: 'planMode.bash is false in the settings'} as const
const OUTPUTS = '/tmp/wave-tasks-1-abc'
const TaskOutput: ToolIdentity = {access: 'read', name: 'TaskOutput'}
const CHECKS: Partial<PolicyContext> = {approvedChecks: ['npx ava', 'npm run lint -- --max-warnings=0']}
const PluginTaskOutput: ToolIdentity = {access: 'read', name: 'TaskOutput', origin: 'plugin'}

function target(real: string, kind: PathKind = 'file', input = real): ResolvedPath {
  return {absolute: input.startsWith('/') ? input : `${ROOT}/${input}`, input, kind, real, symlink: false}
}

function ctx(mode: PermissionMode, allow: string[] = [], deny: string[] = [], extra: Partial<PolicyContext> = {}): PolicyContext {
  return {headless: true, mode, planFile: mode === 'plan' ? PLAN : undefined, rules: parseRules(allow, deny), workspaceRoot: ROOT, ...extra}
}

type Row = [string, PolicyContext, ToolIdentity, Record<string, unknown>, ResolvedPath | undefined, PermissionDecision]

const rows: Row[] = [
  // plan mode: read inside, write only the plan file, nothing else
  ['plan: read inside', ctx('plan'), Read, {}, target(`${ROOT}/src/a.ts`), 'allow'],
  ['plan: read the plan file', ctx('plan'), Read, {}, target(PLAN), 'allow'],
  ['plan: read outside', ctx('plan'), Read, {}, target('/etc/passwd'), 'deny'],
  ['plan: read another plan', ctx('plan'), Read, {}, target('/home/u/.wave/plans/other.md'), 'deny'],
  ['plan: write the plan file (new)', ctx('plan'), Write, {}, target(PLAN, 'missing'), 'allow'],
  ['plan: edit the plan file', ctx('plan'), Edit, {}, target(PLAN), 'allow'],
  ['plan: write the plan file spelled with ..', ctx('plan'), Write, {}, target(PLAN, 'file', '/home/u/.wave/x/../plans/gentle-breeze.md'), 'allow'],
  ['plan: write a source file', ctx('plan'), Write, {}, target(`${ROOT}/src/a.ts`), 'deny'],
  ['plan: edit a source file', ctx('plan'), Edit, {}, target(`${ROOT}/src/a.ts`), 'deny'],
  ['plan: write another file in the plans dir', ctx('plan'), Write, {}, target('/home/u/.wave/plans/evil.md', 'missing'), 'deny'],
  ['plan: write outside', ctx('plan'), Write, {}, target('/tmp/x', 'missing'), 'deny'],
  ['plan: plan path is a directory', ctx('plan'), Write, {}, target(PLAN, 'directory'), 'deny'],
  ['plan: a plugin write tool on the plan file', ctx('plan'), PluginWrite, {}, target(PLAN), 'deny'],
  ['plan: Bash', ctx('plan'), Bash, {command: 'ls'}, undefined, 'deny'],
  ['plan: Bash even with an allow rule', ctx('plan', ['Bash']), Bash, {command: 'ls'}, undefined, 'deny'],
  ['plan: WebFetch without a rule', ctx('plan'), WebFetch, {url: 'https://docs.example.com/a'}, undefined, 'deny'],
  ['plan: WebFetch with a domain rule', ctx('plan', ['WebFetch(domain:example.com)']), WebFetch, {url: 'https://docs.example.com/a'}, undefined, 'allow'],
  ['plan: ExitPlanMode', ctx('plan'), Exit, {}, undefined, 'allow'],
  // issue #35: plan-mode Bash in a throwaway sandbox, where the session offers one
  ['plan: Bash in the throwaway sandbox', ctx('plan', [], [], {planBash: PLAN_BASH}), Bash, {command: 'npm test'}, undefined, 'allow'],
  ['plan: Bash writing, still throwaway', ctx('plan', [], [], {planBash: PLAN_BASH}), Bash, {command: 'rm -rf . > out'}, undefined, 'allow'],
  ['plan: Bash when plan-mode Bash is off', ctx('plan', [], [], {planBash: PLAN_BASH_OFF}), Bash, {command: 'ls'}, undefined, 'deny'],
  ['plan: Bash denied by a deny rule', ctx('plan', [], ['Bash(rm:*)'], {planBash: PLAN_BASH}), Bash, {command: 'rm -rf x'}, undefined, 'deny'],
  ['plan: Bash not denied by another deny rule', ctx('plan', [], ['Bash(rm:*)'], {planBash: PLAN_BASH}), Bash, {command: 'git log'}, undefined, 'allow'],
  ['plan: an MCP execute tool, plan-mode Bash on', ctx('plan', ['mcp__fixture'], [], {planBash: PLAN_BASH}), McpWrite, {}, undefined, 'deny'],
  ['plan: TaskStop with plan-mode Bash', ctx('plan', [], [], {planBash: PLAN_BASH}), TaskStop, {task_id: 'bash_1'}, undefined, 'allow'],
  ['plan: TaskStop without plan-mode Bash', ctx('plan', [], [], {planBash: PLAN_BASH_OFF}), TaskStop, {task_id: 'bash_1'}, undefined, 'deny'],
  ['plan: Agent', ctx('plan'), Agent, {}, undefined, 'allow'],
  ['plan: Agent denied by a rule', ctx('plan', [], ['Agent']), Agent, {}, undefined, 'deny'],
  // issue 48: a rule names a tool by any of its names; Claude Code's configurations say Task
  ['plan: Agent denied by a Task rule', ctx('plan', [], ['Task']), Agent, {}, undefined, 'deny'],
  ['bypass: Agent denied by a Task rule', ctx('bypassPermissions', [], ['Task']), Agent, {}, undefined, 'deny'],
  ['bypass: Agent not denied by a rule naming another tool', ctx('bypassPermissions', [], ['TaskStop']), Agent, {}, undefined, 'allow'],
  ['default: Agent allowed by a Task allow rule', ctx('default', ['Task'], []), Agent, {}, undefined, 'allow'],
  ['bypass: a Task rule governs no other tool', ctx('bypassPermissions', [], ['Task']), Read, {}, target(`${ROOT}/src/a.ts`), 'allow'],
  // an agent: plan mode's row without a plan file, no control tools
  ['agent: Read', ctx('plan', [], [], {nested: true, planBash: PLAN_BASH, planFile: undefined}), Read, {}, target(`${ROOT}/src/a.ts`), 'allow'],
  ['agent: Bash', ctx('plan', [], [], {nested: true, planBash: PLAN_BASH, planFile: undefined}), Bash, {command: 'git log'}, undefined, 'allow'],
  ['agent: Write', ctx('plan', [], [], {nested: true, planFile: undefined}), Write, {}, target(`${ROOT}/src/a.ts`), 'deny'],
  ['agent: Agent', ctx('plan', [], [], {nested: true, planFile: undefined}), Agent, {}, undefined, 'deny'],
  ['agent: ExitPlanMode', ctx('plan', [], [], {nested: true, planFile: undefined}), Exit, {}, undefined, 'deny'],
  ['agent: TodoWrite', ctx('acceptEdits', [], [], {nested: true}), TodoWrite, {}, undefined, 'deny'],
  ['agent, general-purpose: Write', ctx('acceptEdits', [], [], {nested: true}), Write, {}, target(`${ROOT}/src/a.ts`), 'allow'],
  // the session's background output files: readable, never writable
  ['read a background output file', ctx('acceptEdits', [], [], {taskOutputs: OUTPUTS}), Read, {}, target(`${OUTPUTS}/bash_1.output`), 'allow'],
  ['read the output directory itself', ctx('acceptEdits', [], [], {taskOutputs: OUTPUTS}), LS, {}, target(OUTPUTS, 'directory'), 'deny'],
  ['write a background output file', ctx('acceptEdits', [], [], {taskOutputs: OUTPUTS}), Write, {}, target(`${OUTPUTS}/bash_1.output`), 'deny'],
  ['read beside the output directory', ctx('acceptEdits', [], [], {taskOutputs: OUTPUTS}), Read, {}, target('/tmp/other/bash_1.output'), 'deny'],
  ['plan: EnterPlanMode again', ctx('plan'), Enter, {}, undefined, 'deny'],
  // acceptEdits
  ['acceptEdits: write inside', ctx('acceptEdits'), Write, {}, target(`${ROOT}/src/a.ts`), 'allow'],
  ['acceptEdits: write outside', ctx('acceptEdits'), Write, {}, target('/etc/hosts'), 'deny'],
  ['acceptEdits: write via symlink out', ctx('acceptEdits'), Write, {}, target('/tmp/out/x', 'missing', 'link/x'), 'deny'],
  ['acceptEdits: read outside', ctx('acceptEdits'), Read, {}, target('/etc/passwd'), 'deny'],
  ['acceptEdits: Bash without a rule (headless)', ctx('acceptEdits'), Bash, {command: 'npm test'}, undefined, 'deny'],
  ['acceptEdits: Bash without a rule (interactive)', ctx('acceptEdits', [], [], {headless: false}), Bash, {command: 'npm test'}, undefined, 'ask'],
  ['acceptEdits: Bash matching a prefix rule', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm test -- --run'}, undefined, 'allow'],
  ['acceptEdits: Bash not matching', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm publish'}, undefined, 'deny'],
  ['acceptEdits: Bash chained past a rule', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm test && rm -rf /'}, undefined, 'deny'],
  ['acceptEdits: Bash with substitution', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm test $(rm -rf /)'}, undefined, 'deny'],
  ['acceptEdits: deny rule beats allow', ctx('acceptEdits', ['Bash(npm test:*)'], ['Bash(npm test:*)']), Bash, {command: 'npm test'}, undefined, 'deny'],
  ['acceptEdits: Read deny rule', ctx('acceptEdits', [], ['Read(./.env)']), Read, {}, target(`${ROOT}/.env`), 'deny'],
  ['acceptEdits: EnterPlanMode not offered to plan runs', ctx('acceptEdits'), Enter, {}, undefined, 'deny'],
  ['acceptEdits: EnterPlanMode in run --task', ctx('acceptEdits', [], [], {canEnterPlanMode: true}), Enter, {}, undefined, 'allow'],
  ['acceptEdits: ExitPlanMode outside plan mode', ctx('acceptEdits'), Exit, {}, undefined, 'deny'],
  // Claude Code's session tools: the to-do list and questions in every mode; TaskOutput and TaskStop
  // exactly where Bash may run (they act only on what Bash started), so never in plan mode
  ['plan: TodoWrite', ctx('plan'), TodoWrite, {todos: []}, undefined, 'allow'],
  ['plan: AskUserQuestion', ctx('plan'), Ask, {questions: []}, undefined, 'allow'],
  ['acceptEdits: TodoWrite', ctx('acceptEdits'), TodoWrite, {todos: []}, undefined, 'allow'],
  ['default: AskUserQuestion', ctx('default'), Ask, {questions: []}, undefined, 'allow'],
  ['bypass: TodoWrite', ctx('bypassPermissions'), TodoWrite, {todos: []}, undefined, 'allow'],
  ['plan: TaskOutput', ctx('plan'), TaskOutput, {task_id: 'bash_1'}, undefined, 'deny'],
  ['plan: TaskStop', ctx('plan'), TaskStop, {task_id: 'bash_1'}, undefined, 'deny'],
  ['plan: TaskOutput even with a Bash rule', ctx('plan', ['Bash']), TaskOutput, {task_id: 'bash_1'}, undefined, 'deny'],
  ['acceptEdits: TaskOutput without a Bash rule', ctx('acceptEdits'), TaskOutput, {task_id: 'bash_1'}, undefined, 'deny'],
  ['acceptEdits: TaskOutput with a Bash rule', ctx('acceptEdits', ['Bash(npm run dev:*)']), TaskOutput, {task_id: 'bash_1'}, undefined, 'allow'],
  ['acceptEdits: TaskStop with a Bash rule', ctx('acceptEdits', ['Bash(npm run dev:*)']), TaskStop, {task_id: 'bash_1'}, undefined, 'allow'],
  [
    'acceptEdits: TaskStop when Bash is denied outright',
    ctx('acceptEdits', ['Bash(npm run dev:*)'], ['Bash']),
    TaskStop,
    {task_id: 'bash_1'},
    undefined,
    'deny',
  ],
  ['acceptEdits: TaskStop denied by name', ctx('acceptEdits', ['Bash(npm run dev:*)'], ['TaskStop']), TaskStop, {task_id: 'bash_1'}, undefined, 'deny'],
  ['default: TaskOutput headless', ctx('default'), TaskOutput, {task_id: 'bash_1'}, undefined, 'deny'],
  ['bypass: TaskOutput', ctx('bypassPermissions'), TaskOutput, {task_id: 'bash_1'}, undefined, 'allow'],
  ['bypass: TaskStop', ctx('bypassPermissions'), TaskStop, {task_id: 'bash_1'}, undefined, 'allow'],
  ['plan: a plugin tool named TaskOutput is an ordinary read tool', ctx('plan'), PluginTaskOutput, {}, target(`${ROOT}/a`), 'allow'],
  // default
  ['default: read inside', ctx('default'), Read, {}, target(`${ROOT}/a`), 'allow'],
  ['default: write inside, headless', ctx('default'), Write, {}, target(`${ROOT}/a`), 'deny'],
  ['default: write with a rule', ctx('default', ['Write']), Write, {}, target(`${ROOT}/a`), 'allow'],
  ['default: Bash headless', ctx('default'), Bash, {command: 'ls'}, undefined, 'deny'],
  // bypassPermissions
  ['bypass: Bash', ctx('bypassPermissions'), Bash, {command: 'rm -rf build'}, undefined, 'allow'],
  ['bypass: write inside', ctx('bypassPermissions'), Write, {}, target(`${ROOT}/a`), 'allow'],
  ['bypass: write outside', ctx('bypassPermissions'), Write, {}, target('/etc/hosts'), 'deny'],
  ['bypass: write into .git', ctx('bypassPermissions'), Write, {}, target(`${ROOT}/.git/hooks/pre-commit`, 'missing'), 'deny'],
  ['acceptEdits: edit a nested .git config', ctx('acceptEdits'), Edit, {}, target(`${ROOT}/vendor/lib/.git/config`), 'deny'],
  ['acceptEdits: write .gitignore', ctx('acceptEdits'), Write, {}, target(`${ROOT}/.gitignore`), 'allow'],
  ['acceptEdits: read inside .git', ctx('acceptEdits'), Read, {}, target(`${ROOT}/.git/HEAD`), 'allow'],
  // .wave/ at the workspace root holds the project settings: never written by a file tool, in any mode
  ['bypass: write the project settings', ctx('bypassPermissions'), Write, {}, target(`${ROOT}/.wave/settings.json`, 'missing'), 'deny'],
  ['acceptEdits: edit the project settings', ctx('acceptEdits'), Edit, {}, target(`${ROOT}/.wave/settings.json`), 'deny'],
  ['acceptEdits: write deep below .wave', ctx('acceptEdits'), Write, {}, target(`${ROOT}/.wave/a/b/c.json`, 'missing'), 'deny'],
  ['default: write into .wave even with a Write rule', ctx('default', ['Write']), Write, {}, target(`${ROOT}/.wave/settings.json`), 'deny'],
  [
    'bypass: write .wave through a link spelled elsewhere',
    ctx('bypassPermissions'),
    Write,
    {},
    target(`${ROOT}/.wave/settings.json`, 'file', 'cfg-link/settings.json'),
    'deny',
  ],
  ['bypass: plugin write tool into .wave', ctx('bypassPermissions'), PluginNamedWrite, {}, target(`${ROOT}/.wave/settings.json`), 'deny'],
  ['plan: write .wave/settings.json', ctx('plan'), Write, {}, target(`${ROOT}/.wave/settings.json`), 'deny'],
  [
    'plan: the plan file kept in .wave is still writable',
    ctx('plan', [], [], {planFile: `${ROOT}/.wave/plans/p.md`}),
    Write,
    {},
    target(`${ROOT}/.wave/plans/p.md`, 'missing'),
    'allow',
  ],
  ['acceptEdits: read .wave/settings.json', ctx('acceptEdits'), Read, {}, target(`${ROOT}/.wave/settings.json`), 'allow'],
  ['acceptEdits: a nested .wave is an ordinary directory', ctx('acceptEdits'), Write, {}, target(`${ROOT}/docs/.wave/notes.md`, 'missing'), 'allow'],
  ['acceptEdits: .waverc beside it is an ordinary file', ctx('acceptEdits'), Write, {}, target(`${ROOT}/.waverc`, 'missing'), 'allow'],
  ['bypass: sibling directory with a common prefix', ctx('bypassPermissions'), Write, {}, target('/work/repo-evil/a'), 'deny'],
  // the network is off in every mode unless a rule allows the domain
  ['bypass: WebFetch without a rule', ctx('bypassPermissions'), WebFetch, {url: 'https://example.com/'}, undefined, 'deny'],
  [
    'bypass: WebFetch with a domain rule',
    ctx('bypassPermissions', ['WebFetch(domain:example.com)']),
    WebFetch,
    {url: 'https://example.com/'},
    undefined,
    'allow',
  ],
  [
    'acceptEdits: WebFetch with a domain rule',
    ctx('acceptEdits', ['WebFetch(domain:example.com)']),
    WebFetch,
    {url: 'https://api.example.com/x'},
    undefined,
    'allow',
  ],
  ['acceptEdits: WebFetch to another domain', ctx('acceptEdits', ['WebFetch(domain:example.com)']), WebFetch, {url: 'https://example.org/'}, undefined, 'deny'],
  [
    'acceptEdits: WebFetch to a look-alike domain',
    ctx('acceptEdits', ['WebFetch(domain:example.com)']),
    WebFetch,
    {url: 'https://evilexample.com/'},
    undefined,
    'deny',
  ],
  ['acceptEdits: WebFetch any domain with a bare rule', ctx('acceptEdits', ['WebFetch']), WebFetch, {url: 'https://example.org/'}, undefined, 'allow'],
  ['acceptEdits: an IP rule matches only that IP', ctx('acceptEdits', ['WebFetch(domain:0.0.1)']), WebFetch, {url: 'http://127.0.0.1/'}, undefined, 'deny'],
  ['acceptEdits: an IP rule', ctx('acceptEdits', ['WebFetch(domain:127.0.0.1)']), WebFetch, {url: 'http://127.0.0.1:8080/'}, undefined, 'allow'],
  ['acceptEdits: an IPv6 rule', ctx('acceptEdits', ['WebFetch(domain:::1)']), WebFetch, {url: 'http://[::1]:8080/'}, undefined, 'allow'],
  [
    'plan: WebFetch domain deny beats allow',
    ctx('plan', ['WebFetch(domain:example.com)'], ['WebFetch(domain:evil.example.com)']),
    WebFetch,
    {url: 'https://evil.example.com/'},
    undefined,
    'deny',
  ],
  // plugin tools: plan mode allows only read ones; never control, never the plan file
  ['plan: plugin read tool inside', ctx('plan'), PluginRead, {}, target(`${ROOT}/README.md`), 'allow'],
  ['plan: plugin read tool outside', ctx('plan'), PluginRead, {}, target('/etc/passwd'), 'deny'],
  ['plan: plugin write tool', ctx('plan'), PluginNamedWrite, {}, target(`${ROOT}/notes.md`), 'deny'],
  ['plan: plugin write tool on the plan file', ctx('plan'), PluginNamedWrite, {}, target(PLAN), 'deny'],
  ['plan: plugin tool named Write on the plan file', ctx('plan'), PluginAsWrite, {}, target(PLAN), 'deny'],
  ['plan: plugin network tool with a rule', ctx('plan', ['acme_fetch']), PluginNet, {url: 'https://a.com/'}, undefined, 'deny'],
  ['acceptEdits: plugin network tool with a rule', ctx('acceptEdits', ['acme_fetch']), PluginNet, {url: 'https://a.com/'}, undefined, 'allow'],
  ['acceptEdits: plugin write tool inside', ctx('acceptEdits'), PluginNamedWrite, {}, target(`${ROOT}/notes.md`, 'missing'), 'allow'],
  ['acceptEdits: plugin write tool outside', ctx('acceptEdits'), PluginNamedWrite, {}, target('/tmp/notes.md', 'missing'), 'deny'],
  ['bypass: plugin control tool', ctx('bypassPermissions'), PluginControl, {}, undefined, 'deny'],
  ['acceptEdits: plugin tool denied by name', ctx('acceptEdits', [], ['WordCount']), PluginRead, {}, target(`${ROOT}/README.md`), 'deny'],
  // MCP tools: readOnlyHint maps to read, anything else to execute
  ['plan: MCP read-only tool', ctx('plan'), McpRead, {key: 'a'}, undefined, 'allow'],
  ['plan: MCP writing tool', ctx('plan'), McpWrite, {line: 'x'}, undefined, 'deny'],
  ['plan: MCP writing tool even with a rule', ctx('plan', ['mcp__fixture']), McpWrite, {line: 'x'}, undefined, 'deny'],
  ['acceptEdits: MCP writing tool without a rule', ctx('acceptEdits'), McpWrite, {line: 'x'}, undefined, 'deny'],
  ['acceptEdits: MCP writing tool with a server rule', ctx('acceptEdits', ['mcp__fixture']), McpWrite, {line: 'x'}, undefined, 'allow'],
  ['acceptEdits: MCP writing tool with a tool rule', ctx('acceptEdits', ['mcp__fixture__record']), McpWrite, {line: 'x'}, undefined, 'allow'],
  ['acceptEdits: a server rule does not cover a look-alike server', ctx('acceptEdits', ['mcp__fix']), McpWrite, {line: 'x'}, undefined, 'deny'],
  [
    'acceptEdits: MCP server denied beats a tool allow',
    ctx('acceptEdits', ['mcp__fixture__record'], ['mcp__fixture']),
    McpWrite,
    {line: 'x'},
    undefined,
    'deny',
  ],
  ['default: MCP read-only tool', ctx('default'), McpRead, {key: 'a'}, undefined, 'allow'],
  ['bypass: MCP writing tool', ctx('bypassPermissions'), McpWrite, {line: 'x'}, undefined, 'allow'],
  // Bash rules read the command as the shell grammar does: allow needs every command, deny any one
  ['acceptEdits: a quoted operator is an argument', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'npm test -- -t "a|b"'}, undefined, 'allow'],
  ['acceptEdits: an env prefix is not plain words', ctx('acceptEdits', ['Bash(npm test:*)']), Bash, {command: 'CI=1 npm test'}, undefined, 'deny'],
  [
    'bypass: a deny rule on the second command',
    ctx('bypassPermissions', [], ['Bash(git push:*)']),
    Bash,
    {command: 'git status && git push origin main'},
    undefined,
    'deny',
  ],
  ['bypass: a deny rule behind true;', ctx('bypassPermissions', [], ['Bash(rm:*)']), Bash, {command: 'true; rm -rf build'}, undefined, 'deny'],
  [
    'bypass: a deny rule with an input redirection',
    ctx('bypassPermissions', [], ['Bash(rm:*)']),
    Bash,
    {command: 'rm -rf build </dev/null'},
    undefined,
    'deny',
  ],
  ['bypass: a deny rule with a substitution', ctx('bypassPermissions', [], ['Bash(rm:*)']), Bash, {command: 'ls $(echo build)'}, undefined, 'deny'],
  ['bypass: a deny rule that matches nothing', ctx('bypassPermissions', [], ['Bash(rm:*)']), Bash, {command: 'ls -la && git status'}, undefined, 'allow'],
  // Read(...) and Edit(...) rules govern their tool families
  ['bypass: a Read deny stops Grep on the file', ctx('bypassPermissions', [], ['Read(./.env)']), Grep, {}, target(`${ROOT}/.env`), 'deny'],
  [
    'bypass: a Read deny stops LS on a denied directory',
    ctx('bypassPermissions', [], ['Read(./secrets/**)']),
    LS,
    {},
    target(`${ROOT}/secrets`, 'directory'),
    'deny',
  ],
  ['bypass: a Read deny stops a plugin read tool', ctx('bypassPermissions', [], ['Read(./.env)']), PluginRead, {}, target(`${ROOT}/.env`), 'deny'],
  ['bypass: a Read deny leaves Grep on the root', ctx('bypassPermissions', [], ['Read(./.env)']), Grep, {}, target(ROOT, 'directory'), 'allow'],
  ['bypass: a bare Read deny stops every reading tool', ctx('bypassPermissions', [], ['Read']), McpRead, {key: 'a'}, undefined, 'deny'],
  ['bypass: an Edit deny stops Write', ctx('bypassPermissions', [], ['Edit(./src/**)']), Write, {}, target(`${ROOT}/src/a.ts`, 'missing'), 'deny'],
  [
    'bypass: an Edit deny stops a plugin write tool',
    ctx('bypassPermissions', [], ['Edit(./src/**)']),
    PluginNamedWrite,
    {},
    target(`${ROOT}/src/a.ts`),
    'deny',
  ],
  ['bypass: an Edit deny does not stop Read', ctx('bypassPermissions', [], ['Edit(./src/**)']), Read, {}, target(`${ROOT}/src/a.ts`), 'allow'],
  ['bypass: a Read deny does not stop Write', ctx('bypassPermissions', [], ['Read(./.env)']), Write, {}, target(`${ROOT}/.env`), 'allow'],
  ['default: an Edit allow lets Write in', ctx('default', ['Edit(./src/**)']), Write, {}, target(`${ROOT}/src/a.ts`, 'missing'), 'allow'],
  ['default: an Edit allow elsewhere does not', ctx('default', ['Edit(./src/**)']), Write, {}, target(`${ROOT}/docs/a.md`, 'missing'), 'deny'],
  // The approved checks (issue 47): exactly as written, in acceptEdits and default, with no rule; nothing else
  ['acceptEdits: an approved check', ctx('acceptEdits', [], [], CHECKS), Bash, {command: 'npx ava'}, undefined, 'allow'],
  ['default: an approved check', ctx('default', [], [], CHECKS), Bash, {command: 'npm run lint -- --max-warnings=0'}, undefined, 'allow'],
  ['acceptEdits: another command beside the checks', ctx('acceptEdits', [], [], CHECKS), Bash, {command: 'npm test'}, undefined, 'deny'],
  ['acceptEdits: a check with more after it', ctx('acceptEdits', [], [], CHECKS), Bash, {command: 'npx ava && curl x.io'}, undefined, 'deny'],
  ['acceptEdits: a check with other arguments', ctx('acceptEdits', [], [], CHECKS), Bash, {command: 'npx ava --fail-fast'}, undefined, 'deny'],
  ['acceptEdits: a check spelled otherwise', ctx('acceptEdits', [], [], CHECKS), Bash, {command: 'npx  ava'}, undefined, 'deny'],
  ['acceptEdits: a deny rule beats an approved check', ctx('acceptEdits', [], ['Bash(npx:*)'], CHECKS), Bash, {command: 'npx ava'}, undefined, 'deny'],
  ['acceptEdits: a command without checks (control)', ctx('acceptEdits'), Bash, {command: 'npx ava'}, undefined, 'deny'],
  ['plan: an approved check is no plan-mode command', ctx('plan', [], [], CHECKS), Bash, {command: 'npx ava'}, undefined, 'deny'],
  [
    'acceptEdits: a plugin tool named Bash gets no check',
    ctx('acceptEdits', [], [], CHECKS),
    {...Bash, origin: 'plugin'},
    {command: 'npx ava'},
    undefined,
    'deny',
  ],
]

describe('decide', () => {
  it.each(rows)('%s', async (_name, context, tool, input, path, expected) => {
    // As dispatch does: a command is parsed before the policy is asked.
    const shell = typeof input.command === 'string' ? await analyseShell(input.command) : undefined
    const result = decide(context, {input, shell, target: path, tool})
    expect(result.decision).toBe(expected)
    expect(result.reason.length).toBeGreaterThan(10)
  })

  it("refuses an agent's Agent call in Claude Code's words, for Explore and general-purpose agents alike; its other control calls in the generic words", () => {
    for (const agent of [ctx('plan', [], [], {nested: true, planFile: undefined}), ctx('bypassPermissions', [], [], {nested: true})]) {
      expect(decide(agent, {input: {}, tool: Agent})).toEqual({decision: 'deny', reason: NESTED_AGENT_REFUSAL})
      expect(decide(agent, {input: {}, tool: TodoWrite}).reason).toBe(`TodoWrite ${AGENT_REFUSAL}`)
    }

    expect(NESTED_AGENT_REFUSAL).toMatch(/^Subagents cannot spawn other subagents/)
    // Control: the session itself may start agents.
    expect(decide(ctx('bypassPermissions'), {input: {}, tool: Agent}).decision).toBe('allow')
  })

  it('explains plan-mode denials with the plan file', () => {
    const result = decide(ctx('plan'), {input: {}, target: target(`${ROOT}/src/a.ts`), tool: Write})
    expect(result.reason).toContain(PLAN)
  })

  it('says why .wave is closed: settings read at session start could grant themselves', () => {
    const result = decide(ctx('bypassPermissions'), {input: {}, target: target(`${ROOT}/.wave/settings.json`), tool: Write})
    expect(result.reason).toMatch(/\.wave directory.*read when a session starts.*grant themselves/)
  })

  it('suggests a rule when a headless ASK becomes a DENY', async () => {
    const result = decide(ctx('acceptEdits'), {input: {command: 'npm test'}, shell: await analyseShell('npm test'), tool: Bash})
    expect(result.reason).toContain('Bash(npm test:*)')
  })

  it('says why no rule can allow a command that is not plain words', async () => {
    const command = 'npm test ${x:=1}'
    const result = decide(ctx('acceptEdits', ['Bash(npm test:*)']), {input: {command}, shell: await analyseShell(command), tool: Bash})
    expect(result.decision).toBe('deny')
    expect(result.reason).toContain('Allow rules match only plain commands')
    expect(result.reason).toContain('a parameter expansion')
  })

  it('says a deny rule matched because the command could not be analysed', async () => {
    const command = 'ls $(pwd)'
    const result = decide(ctx('bypassPermissions', [], ['Bash(rm:*)']), {input: {command}, shell: await analyseShell(command), tool: Bash})
    expect(result.decision).toBe('deny')
    expect(result.reason).toMatch(
      /denied by the rule Bash\(rm:\*\): a command wave cannot fully analyse .*command substitution.* counts as matching every deny rule/,
    )
  })

  it('allows an approved check as that check, and names the checks where another command is refused', async () => {
    const allowed = decide(ctx('acceptEdits', [], [], CHECKS), {input: {command: 'npx ava'}, shell: await analyseShell('npx ava'), tool: Bash})
    expect(allowed).toMatchObject({approvedCheck: 'npx ava', decision: 'allow'})
    const refused = decide(ctx('acceptEdits', [], [], CHECKS), {input: {command: 'npm test'}, shell: await analyseShell('npm test'), tool: Bash})
    expect(refused.reason).toContain('The approved checks run exactly as written: npx ava; npm run lint -- --max-warnings=0.')
    // Control: a command a rule allows is no approved check, and a session without checks names none.
    const ruled = decide(ctx('acceptEdits', ['Bash(npx ava:*)'], [], CHECKS), {
      input: {command: 'npx ava -v'},
      shell: await analyseShell('npx ava -v'),
      tool: Bash,
    })
    expect(ruled).toMatchObject({decision: 'allow'})
    expect(ruled.approvedCheck).toBeUndefined()
    expect(decide(ctx('acceptEdits'), {input: {command: 'npm test'}, shell: await analyseShell('npm test'), tool: Bash}).reason).not.toContain(
      'approved checks',
    )
  })

  it('fails closed for a Bash call that reaches the policy without an analysis', () => {
    const call = {input: {command: 'npm test'}, tool: Bash}
    expect(decide(ctx('acceptEdits', ['Bash(npm test:*)']), call).decision).toBe('deny')
    expect(decide(ctx('bypassPermissions', [], ['Bash(rm:*)']), call).decision).toBe('deny')
    expect(decide(ctx('bypassPermissions'), call).decision).toBe('allow')
  })
})

describe('offered', () => {
  const all = [Read, Write, Edit, Bash, WebFetch, PluginWrite, Enter, Exit]
  const offeredNames = (context: PolicyContext) => all.filter((tool) => offered(context, tool)).map((tool) => tool.name)
  it.each<[string, PolicyContext, string[]]>([
    ['plan', ctx('plan'), ['Read', 'Write', 'Edit', 'ExitPlanMode']],
    ['plan with a WebFetch rule', ctx('plan', ['WebFetch(domain:a.com)']), ['Read', 'Write', 'Edit', 'WebFetch', 'ExitPlanMode']],
    ['acceptEdits', ctx('acceptEdits'), ['Read', 'Write', 'Edit', 'acme_patch']],
    ['acceptEdits with a Bash rule', ctx('acceptEdits', ['Bash(npm test:*)']), ['Read', 'Write', 'Edit', 'Bash', 'acme_patch']],
    ['default, headless', ctx('default'), ['Read']],
    ['bypassPermissions (the network still needs a rule)', ctx('bypassPermissions'), ['Read', 'Write', 'Edit', 'Bash', 'acme_patch']],
    [
      'bypassPermissions with a WebFetch rule',
      ctx('bypassPermissions', ['WebFetch(domain:a.com)']),
      ['Read', 'Write', 'Edit', 'Bash', 'WebFetch', 'acme_patch'],
    ],
    ['run --task', ctx('acceptEdits', [], [], {canEnterPlanMode: true}), ['Read', 'Write', 'Edit', 'acme_patch', 'EnterPlanMode']],
    ['a blanket deny rule hides a tool', ctx('bypassPermissions', [], ['Bash']), ['Read', 'Write', 'Edit', 'acme_patch']],
    ['acceptEdits with approved checks', ctx('acceptEdits', [], [], CHECKS), ['Read', 'Write', 'Edit', 'Bash', 'acme_patch']],
    ['default with approved checks', ctx('default', [], [], CHECKS), ['Read', 'Bash']],
    ['approved checks and a blanket Bash deny', ctx('acceptEdits', [], ['Bash'], CHECKS), ['Read', 'Write', 'Edit', 'acme_patch']],
  ])('%s', (_name, context, expected) => {
    expect(offeredNames(context)).toEqual(expected)
  })
})

describe('offered plugin and MCP tools', () => {
  const all = [PluginRead, PluginNamedWrite, PluginNet, PluginControl, McpRead, McpWrite]
  const offeredNames = (context: PolicyContext) => all.filter((tool) => offered(context, tool)).map((tool) => tool.name)
  it.each<[string, PolicyContext, string[]]>([
    ['plan: read-only ones only', ctx('plan'), ['WordCount', 'mcp__fixture__lookup']],
    ['plan: rules do not widen it', ctx('plan', ['acme_fetch', 'mcp__fixture', 'AppendNote']), ['WordCount', 'mcp__fixture__lookup']],
    ['default, headless', ctx('default'), ['WordCount', 'mcp__fixture__lookup']],
    ['acceptEdits', ctx('acceptEdits'), ['WordCount', 'AppendNote', 'mcp__fixture__lookup']],
    ['acceptEdits with a server rule', ctx('acceptEdits', ['mcp__fixture']), ['WordCount', 'AppendNote', 'mcp__fixture__lookup', 'mcp__fixture__record']],
    ['acceptEdits with a network rule', ctx('acceptEdits', ['acme_fetch']), ['WordCount', 'AppendNote', 'acme_fetch', 'mcp__fixture__lookup']],
    ['bypassPermissions', ctx('bypassPermissions'), ['WordCount', 'AppendNote', 'mcp__fixture__lookup', 'mcp__fixture__record']],
    ['a server deny rule hides all its tools', ctx('bypassPermissions', [], ['mcp__fixture']), ['WordCount', 'AppendNote']],
  ])('%s', (_name, context, expected) => {
    expect(offeredNames(context)).toEqual(expected)
  })
})

describe('hosts named by rules', () => {
  it.each<[string[], string, boolean]>([
    [['WebFetch(domain:localhost)'], 'localhost', true],
    [['WebFetch(domain:LocalHost.)'], 'localhost', true],
    [['WebFetch(domain:example.com)'], 'intranet.example.com', false],
    [['WebFetch'], '127.0.0.1', false],
    [['WebFetch(domain:127.0.0.1)'], '127.0.0.1', true],
    [['WebFetch(domain:::1)'], '[::1]', true],
    [['Other(domain:127.0.0.1)'], '127.0.0.1', false],
  ])('%j names %s: %s', (allow, host, expected) => {
    expect(ruleNamesHost(parseRules(allow), 'WebFetch', host)).toBe(expected)
  })
})

describe('modes', () => {
  it('cycles default → acceptEdits → plan → default', () => {
    expect(nextMode('default')).toBe('acceptEdits')
    expect(nextMode('acceptEdits')).toBe('plan')
    expect(nextMode('plan')).toBe('default')
  })

  it('can skip plan mode', () => {
    expect(nextMode('acceptEdits', ['plan'])).toBe('default')
  })
})

describe('rules naming no tool', () => {
  const tools = [Read, Write, Edit, Bash, Agent, McpRead]
  it('finds each rule that names no tool by any of its names, its MCP server or a family', () => {
    const rules = parseRules(['Task', 'Read(./src/**)', 'mcp__fixture', 'Bash(npm test:*)', 'MultiEdit'], ['Agent', 'mcp__other', 'Tsak'])
    expect(rulesNamingNoTool(rules, tools).map((rule) => rule.source)).toEqual(['MultiEdit', 'mcp__other', 'Tsak'])
  })

  it('finds none where every rule names a tool', () => {
    expect(rulesNamingNoTool(parseRules(['Task', 'Edit(./a)'], ['Bash(rm:*)']), tools)).toEqual([])
  })
})

describe('rules', () => {
  it.each([
    ['Bash(npm test:*)', {specifier: 'npm test:*', tool: 'Bash'}],
    ['Edit', {specifier: undefined, tool: 'Edit'}],
    ['WebFetch(domain:example.com)', {specifier: 'domain:example.com', tool: 'WebFetch'}],
  ])('parses %s', (source, expected) => {
    expect(parseRule(source)).toMatchObject(expected)
  })

  it.each(['', 'Bash(', 'Bash()', '(x)', 'Bash(npm) extra'])('rejects %j', (source) => {
    expect(() => parseRule(source)).toThrow(/Invalid permission rule/)
  })

  it('checks rules in schemas with parseRule, keeping each rule as written and its message', () => {
    expect(ruleSchema.parse(' Bash(npm test:*)')).toBe(' Bash(npm test:*)')
    const rejected = ruleSchema.safeParse('Bash()')
    expect(rejected.success).toBe(false)
    expect(rejected.error?.issues[0].message).toBe('Invalid permission rule "Bash()": the specifier in () is empty.')
    expect(ruleSchema.safeParse(7).success).toBe(false)
  })
})

describe('StructuredOutput (--json-schema)', () => {
  const Structured: ToolIdentity = {access: 'control', name: 'StructuredOutput'}
  const session = (mode: PermissionMode, more: Partial<PolicyContext> = {}): PolicyContext => ({
    headless: true,
    mode,
    planFile: mode === 'plan' ? PLAN : undefined,
    rules: parseRules(),
    workspaceRoot: ROOT,
    ...more,
  })

  for (const mode of ['plan', 'default', 'acceptEdits', 'bypassPermissions'] as const) {
    it(`is offered in ${mode} mode only to a session given a schema`, () => {
      expect(offered(session(mode, {structuredOutput: true}), Structured)).toBe(true)
      expect(offered(session(mode), Structured)).toBe(false)
      expect(decide(session(mode), {input: {}, tool: Structured}).reason).toMatch(/only to a session given a JSON Schema/)
    })
  }

  it('is never offered to an agent, nor taken from a plugin or MCP server under its name', () => {
    expect(offered(session('acceptEdits', {nested: true, structuredOutput: true}), Structured)).toBe(false)
    expect(offered(session('acceptEdits', {structuredOutput: true}), {...Structured, origin: 'mcp'})).toBe(false)
    // Control: a deny rule naming it wins, as for any tool.
    expect(offered(session('plan', {rules: parseRules([], ['StructuredOutput']), structuredOutput: true}), Structured)).toBe(false)
  })
})
