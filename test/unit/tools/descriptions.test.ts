/**
 * The built-in tools' descriptions are the model's manual: each must name its limits (the caps and
 * defaults its implementation enforces) and its failure modes (what fails, what is refused, and what to
 * do instead). The snapshot holds every definition as the model is sent it, so a change to one is
 * reviewed on purpose: update it with `npx vitest run test/unit/tools/descriptions.test.ts -u`.
 */
import {describe, expect, it} from 'vitest'
import {z} from 'zod'

import {type ApiTool, builtinRegistry, isDeferred} from '../../../src/tools/registry.js'

const registry = builtinRegistry()
const description = (name: string) => registry.get(name)!.description

/** Per tool: phrases naming its limits, then its failure modes and what to do instead. */
const REQUIRED: Record<string, {limits: string[]; failures: string[]}> = {
  Bash: {
    failures: ['Permission denied', 'do not retry it unchanged', 'Bash(npm test:*)', 'then the command is killed', 'not cat, find, grep, sed'],
    limits: [
      '120000 ms by default',
      'at most 600000',
      'Output over 30000 characters keeps its head and tail',
      'No stdin',
      'sandbox',
      'no network',
      'run_in_background: true',
      'ended when the session ends',
    ],
  },
  Agent: {
    failures: ['Agents cannot start agents', 'returns what it found so far, marked as cut'],
    limits: ['"Explore"', '"general-purpose"', 'throwaway sandbox', 'run concurrently', 'turn cap', 'share of the budget', 'time limit'],
  },
  AskUserQuestion: {
    failures: ['never waits and never returns an answer', 'the reviewer answers by requesting changes'],
    limits: ['1-4 multiple-choice questions', '## Open questions', 'reported in the result'],
  },
  Edit: {
    failures: [
      'must occur exactly once',
      'fails with the count',
      'replace_all',
      'Fails on a missing file (create it with Write)',
      'non-UTF-8',
      'refused where Write is',
    ],
    limits: ['Read the file first', 'whitespace and indentation included', 'line endings are kept'],
  },
  EnterPlanMode: {
    failures: ['fails when plan mode is active or cannot be entered'],
    limits: ['only read tools and the plan file are allowed', 'Once per session'],
  },
  ExitPlanMode: {
    failures: ['plan file is missing or empty', 'plan_path names another file'],
    limits: ['the session ends after this turn', 'shown to the approver', 'only when that file does not hold a plan yet'],
  },
  Glob: {
    failures: ['".." is refused', 'Fails when path is missing or not a directory'],
    limits: ['at most 500', 'narrow the pattern or path', '.gitignored'],
  },
  Grep: {
    failures: ['An invalid pattern fails with the reason', 'escape literal'],
    limits: [
      'head_limit (default 250',
      'up to 30000 characters a page',
      'lines cut at 500',
      'over 10 MB',
      'says which offset comes next',
      'in content mode only',
    ],
  },
  LS: {
    failures: ['Fails on a missing path or a file (use Read)', 'denied by a rule are left out'],
    limits: ['at most 1000 entries'],
  },
  Read: {
    failures: ['Fails on a missing file or a directory (use LS)', 'binary file is described', 'Paths outside the workspace, or denied by a rule, are refused'],
    limits: ['default 2000', 'Lines over 2000 characters are cut', 'stops before 36000 characters', 'the offset to read on from', 'in parallel, in one turn'],
  },
  WebFetch: {
    failures: ['other calls are refused', 'Redirects to a domain no rule allows are refused', 'Binary content is refused'],
    limits: ['At most 5 redirects and 20000 ms', 'up to 5 MB', 'cut at 30000 characters'],
  },
  TaskOutput: {
    failures: ['Fails on an unknown task_id'],
    limits: ['default 30000, at most 600000', 'block: false returns at once', 'Unread output over 30000 characters keeps its head and tail'],
  },
  TaskStop: {
    failures: ['Fails on an unknown task_id'],
    limits: ['SIGTERM, then SIGKILL after 2 s', 'Every background command ends with the session anyway'],
  },
  TodoWrite: {
    failures: ['Changes nothing in the workspace'],
    limits: ['send the whole updated list each time', 'one at a time'],
  },
  // Nothing of it fails: a query that matches nothing is answered with the deferred tools' names.
  ToolSearch: {
    failures: [],
    limits: ['call one once loaded', '"select:A,B"', 'best first', 'default 5', 'Deferred:'],
  },
  Write: {
    failures: ['Fails on a directory or a non-regular file', 'Refused outside the workspace, in .git/ and .wave/', 'in plan mode for every file but the plan'],
    limits: ['To change part of an existing file use Edit', 'read a file before replacing it'],
  },
}

/**
 * What the definitions say twice: a sentence (of some length) in two tools' descriptions, or a property
 * description its tool's description already holds. A tool's own failure modes ("Fails on ...") may
 * read alike in two tools: each call fails on its own.
 */
function repeats(tools: ApiTool[]): string[] {
  const seen = new Map<string, string>()
  const found: string[] = []
  for (const tool of tools) {
    for (const sentence of tool.description.split(/(?<=[.;])\s+/)) {
      if (sentence.length < 30 || /^(Fails|Refused)\b/.test(sentence)) continue
      const other = seen.get(sentence)
      if (other && other !== tool.name) found.push(`${other} and ${tool.name}: ${sentence}`)
      seen.set(sentence, tool.name)
    }

    for (const [key, property] of Object.entries((tool.input_schema.properties ?? {}) as Record<string, {description?: string}>)) {
      if (property.description && tool.description.includes(property.description)) found.push(`${tool.name}.${key}: ${property.description}`)
    }
  }

  return found
}

describe('built-in tool descriptions', () => {
  it('covers every built-in tool', () => {
    expect(Object.keys(REQUIRED).sort()).toEqual(registry.tools.map((tool) => tool.name).sort())
  })

  for (const [name, {failures, limits}] of Object.entries(REQUIRED)) {
    it(`${name} names its limits and its failure modes`, () => {
      const text = description(name)
      for (const phrase of [...limits, ...failures]) expect(text, `${name}: "${phrase}"`).toContain(phrase)
    })
  }

  it('keeps every output limit it names below the result cap it declares', () => {
    // A tool that cut its own output above its declared cap would have its note cut out of the middle by the wrapper.
    for (const tool of registry.tools) {
      for (const [, chars] of tool.description.matchAll(/(\d{4,}) characters/g)) expect(Number(chars), tool.name).toBeLessThan(tool.resultCap)
    }
  })

  it('say each thing once: no sentence in two tools, no property description repeating its tool', () => {
    expect(repeats(registry.tools.map((tool) => registry.apiTool(tool)))).toEqual([])
    // Control: a sentence two descriptions share, and a property repeating its tool's description, are found.
    const twice = 'Use it for servers and watchers, not for results you need now.'
    const copied = [
      {description: `Runs a command. ${twice}`, input_schema: {type: 'object' as const}, name: 'A'},
      {description: `Starts a task. ${twice}`, input_schema: {properties: {x: {description: 'Starts a task'}}, type: 'object' as const}, name: 'B'},
    ]
    expect(repeats(copied)).toEqual([`A and B: ${twice}`, 'B.x: Starts a task'])
  })

  it('carry no safe-integer bounds, which zod writes for every integer and which tell the model nothing', () => {
    const sent = JSON.stringify(registry.tools.map((tool) => registry.apiTool(tool)))
    expect(sent).not.toContain(String(Number.MAX_SAFE_INTEGER))
    // Control: zod's own conversion of an integer writes it, and the bounds a tool declares are kept.
    expect(JSON.stringify(z.toJSONSchema(z.number().int()))).toContain(String(Number.MAX_SAFE_INTEGER))
    expect(registry.apiTool(registry.get('Bash')!).input_schema.properties).toMatchObject({timeout: {maximum: 600_000}})
  })

  it('match the reviewed snapshot, as the model is sent them', async () => {
    const definitions = registry.tools.map((tool) => {
      const api = registry.apiTool(tool)
      // A deferred tool is marked: its definition is sent with defer_loading, in the prompt only once ToolSearch loads it.
      return `## ${api.name} (${tool.access}${isDeferred(tool) ? ', deferred' : ''})\n\n${api.description}\n\n\`\`\`json\n${JSON.stringify(api.input_schema, null, 2)}\n\`\`\`\n`
    })
    await expect(`# Built-in tool definitions\n\n${definitions.join('\n')}`).toMatchFileSnapshot('./__snapshots__/tool-definitions.md')
  })
})
