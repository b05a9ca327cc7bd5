/**
 * What `wave demo` shows: a tiny project with a test, a task on it, and the scripted model's part in
 * both sessions. The plan is a contract (`## Scope`, `## Verification`); the run slips once, the way
 * models do (a capital letter the test does not expect), so the approved check fails when the model
 * ends its turn, and the model fixes it on the retry turn from the failing output wave sent it. The
 * model is a function of each request it receives, as a real one is: it finds the plan file in the
 * plan-mode system prompt, tells the planning session from the run by that prompt, and quotes the
 * check's real failure from the message wave sent back.
 */
import {planPathIn, type RecordedRequest, type Reply, reply, systemText, toolUse} from '../../testing/server.js'

export const DEMO_TASK = 'Make greet() greet the world when it is called without a name, and add a test for it'

/** The project's test command: the plan's one check, which wave runs when the model ends its turn. */
const TEST_COMMAND = 'npm test'

const GREET_BEFORE = 'export function greet(name) {'
/** The run's first attempt: the capital W is the slip the check catches. */
const GREET_SLIP = "export function greet(name = 'World') {"
const GREET_AFTER = "export function greet(name = 'world') {"
const NEW_TEST_PATH = 'test/greet-default.test.js'

/** The project's files (relative path → content), committed before the demo starts. */
export const PROJECT_FILES: Readonly<Record<string, string>> = {
  'README.md': '# greet\n\nA tiny project for `wave demo`: one function and its test.\n',
  'package.json': JSON.stringify({name: 'greet', private: true, scripts: {test: 'node --test'}, type: 'module', version: '1.0.0'}, null, 2) + '\n',
  'src/greet.js': `/** The greeting for \`name\`. */\n${GREET_BEFORE}\n  return \`Hello, \${name}!\`\n}\n`,
  'test/greet.test.js': testFile('greets someone by name', "greet('Ada')", 'Hello, Ada!'),
}

const PLAN = `# Plan: greet() greets the world when no name is given

## Goal

\`greet()\` called without a name returns \`Hello, undefined!\`. It should return \`Hello, world!\`;
calls that pass a name keep their greeting.

## Changes

1. \`src/greet.js\`: give the parameter a default, \`greet(name = 'world')\`.
2. New test \`${NEW_TEST_PATH}\`: \`greet()\` returns \`Hello, world!\`.

## Scope

- \`src/greet.js\`
- \`${NEW_TEST_PATH}\`

## Verification

- \`${TEST_COMMAND}\`: runs \`node --test\`; the existing test and the new one pass.

## Risks

None known: a caller that passes \`undefined\` on purpose now gets "world", which is the point.
`

/** How many model requests each session makes; one more means the script went wrong. */
export const PLAN_TURNS = 4
export const RUN_TURNS = 6

/** The model's answer to one request of either session. */
export function scriptedTurn(request: RecordedRequest): Reply {
  const turn = assistantTurns(request)
  return systemText(request).includes('## Plan File Info:') ? planTurn(request, turn) : runTurn(request, turn)
}

function planTurn(request: RecordedRequest, turn: number): Reply {
  switch (turn) {
    case 0: {
      return reply('I will look at the project first.', toolUse('Glob', {pattern: '**/*.js'}), toolUse('Read', {file_path: 'package.json'}))
    }

    case 1: {
      return reply(toolUse('Read', {file_path: 'src/greet.js'}), toolUse('Read', {file_path: 'test/greet.test.js'}))
    }

    case 2: {
      return reply('The fix is a default parameter; writing the plan.', toolUse('Write', {content: PLAN, file_path: planPathIn(request)}))
    }

    default: {
      return reply(`Plan written: a default of 'world' for greet()'s name, a test for it, then ${TEST_COMMAND}.`, toolUse('ExitPlanMode', {}))
    }
  }
}

function runTurn(request: RecordedRequest, turn: number): Reply {
  // wave's message after the checks failed: the model reads the failure and fixes its slip.
  const failure = failedCheck(request)
  if (failure !== undefined) {
    return reply(
      `${TEST_COMMAND} failed: ${failure}. The default is 'World', the new test expects 'world'.`,
      toolUse('Edit', {file_path: 'src/greet.js', new_string: GREET_AFTER, old_string: GREET_SLIP}),
    )
  }

  switch (turn) {
    case 0: {
      return reply('Carrying out the approved plan.', toolUse('Read', {file_path: 'src/greet.js'}))
    }

    case 1: {
      return reply(toolUse('Edit', {file_path: 'src/greet.js', new_string: GREET_SLIP, old_string: GREET_BEFORE}))
    }

    case 2: {
      return reply(toolUse('Write', {content: testFile('greets the world when no name is given', 'greet()', 'Hello, world!'), file_path: NEW_TEST_PATH}))
    }

    case 3: {
      return reply(`greet() now has a default name (src/greet.js), and ${NEW_TEST_PATH} tests it. wave runs ${TEST_COMMAND}, the approved check.`)
    }

    default: {
      return reply(`Fixed the default to 'world' in src/greet.js; ${NEW_TEST_PATH} tests it. wave runs ${TEST_COMMAND} again.`)
    }
  }
}

/**
 * The failing assertion, when the request's last message is wave's report of failed checks (the
 * checks' output as wave sent it: node's test runner prints the assertion's `actual:` and `expected:`).
 */
function failedCheck(request: RecordedRequest): string | undefined {
  const messages: unknown[] = Array.isArray(request.body?.messages) ? request.body.messages : []
  const last = messages.at(-1) as {role?: string; content?: unknown} | undefined
  if (last?.role !== 'user') return undefined
  const content =
    typeof last.content === 'string'
      ? last.content
      : Array.isArray(last.content)
        ? last.content.map((b: {text?: unknown}) => (typeof b.text === 'string' ? b.text : '')).join('\n')
        : ''
  if (!content.startsWith('wave ran the approved checks')) return undefined
  const field = (name: string) => new RegExp(`^\\s*${name}: (.+)$`, 'm').exec(content)?.[1]
  const [actual, expected] = [field('actual'), field('expected')]
  return actual && expected ? `got ${actual}, expected ${expected}` : 'see its output'
}

/** How many times the model has answered in this conversation so far. */
function assistantTurns(request: RecordedRequest): number {
  const messages: unknown[] = Array.isArray(request.body?.messages) ? request.body.messages : []
  return messages.filter((message) => (message as {role?: string}).role === 'assistant').length
}

function testFile(name: string, call: string, expected: string): string {
  return `import assert from 'node:assert/strict'
import {test} from 'node:test'

import {greet} from '../src/greet.js'

test('${name}', () => {
  assert.equal(${call}, '${expected}')
})
`
}
