#!/usr/bin/env node
/**
 * What a session costs with the API's prompt caching (issue 50): a 7-turn plan, a 20-turn plan and an
 * 11-turn run with edits, each scripted the same way against a fresh scripted server whose usage follows
 * the API's caching rules (src/testing/cache.ts: its token counts are the server's approximation, a
 * block's JSON characters / 4). Each is run with this build and with the base commit's (built from
 * `git archive` in a temporary directory, in the same run): cache writes, reads, uncached input and
 * output, and the cost at Sonnet-class list prices ($3 input, $3.75 5-minute write, $0.30 read, $15
 * output per million tokens). Claude Code 2.1.332's cost of the issue's sessions is not measured here
 * (it is not installed): the issue's figures stand beside ours, said so.
 *
 *   node bench/cache-cost.js                 # base: the commit before the prompt layout (issue 50, item 2)
 *   node bench/cache-cost.js --base=<commit>
 *   node bench/cache-cost.js --dump=plan20 [--requests=FILE] [--with="--disallowed-tools AskUserQuestion"]
 *                                            # one session, this build only, request by request (and the bodies)
 *
 * Two readings against Claude Code, both printed: this build's cost over the issue's dollar figure for
 * Claude Code (fair where the bench's session costs what the issue's did: the 20-turn plan and the run), and
 * the projection, the issue's own wave/Claude Code ratio times this build / base measured here (the
 * 7-turn plan's issue session was much lighter than the bench's, so only the projection reads it).
 *
 * Runs against the compiled CLI (`npm run build` first); building the base takes a minute.
 */
import {execFileSync, execSync} from 'node:child_process'
import {mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {planPathOf, reply, startMessagesServer, text, toolUse} from './lib/harness.js'
import {BIN_RUN, makeSandbox, PROJECT_ROOT, runWave} from './lib/sandbox.js'

const PRICES = {input: 3, output: 15, read: 0.3, write: 3.75}
/** The issue's figures (Claude Code 2.1.332 on its own scripted sessions, the same rules simulated). */
const CLAUDE_CODE = {plan20: 0.218, plan7: 0.081, run: 0.121}
const TARGETS = {plan20: 0.5, plan7: 0.3, run: 0.35}
/** The issue's ratios of wave (the base's layout) to Claude Code on its own sessions. */
const ISSUE_RATIOS = {plan20: 0.74, plan7: 0.32, run: 0.41}

/** What `usage` ({input, output, read, write} tokens) costs at PRICES, in dollars. */
const priced = (usage) => Object.entries(PRICES).reduce((total, [key, price]) => total + (usage[key] * price) / 1e6, 0)
const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3)

/** A project shaped like a real one: a dozen source files of 2–5 KB, tests, a README and AGENTS.md. */
function projectFiles() {
  const files = {
    'AGENTS.md': `# Conventions\n\n${'- Keep functions small and named by what they do; test every change with npm test.\n'.repeat(12)}`,
    'README.md': `# shop\n\nA small shop service.\n\n${'It lists products, takes orders and sends invoices. '.repeat(30)}\n`,
    'package.json': JSON.stringify({name: 'shop', scripts: {test: 'node --test'}, type: 'module', version: '1.0.0'}, null, 2),
  }
  for (const name of ['orders', 'products', 'invoices', 'customers', 'payments', 'stock', 'mail', 'prices', 'tax', 'cart']) {
    const body = Array.from(
      {length: 24},
      (_, i) => `export function ${name}Step${i}(input) {\n  // Step ${i} of ${name}: validate, then compute.\n  return {...input, ${name}${i}: true}\n}\n`,
    ).join('\n')
    files[`src/${name}.js`] = body
    files[`test/${name}.test.js`] = `import {${name}Step0} from '../src/${name}.js'\n\ntest('${name}', () => ${name}Step0({}))\n`
  }
  return files
}

const PLAN = `# Plan: invoices in euros\n\n## Goal\nInvoices show euros.\n\n## Changes\n${'- src/invoices.js: format the total in euros.\n'.repeat(8)}`

/** The sessions, each a list of turns (the same for both builds) and the command that runs it. */
const SESSIONS = {
  plan7: {
    args: ['plan', '--task', 'Make invoices show euros'],
    figure: 'a 7-turn plan',
    turns: [
      reply(text('Looking around.'), toolUse('Glob', {pattern: 'src/**/*.js'}), toolUse('Read', {file_path: 'README.md'})),
      reply(toolUse('Read', {file_path: 'src/invoices.js'})),
      reply(toolUse('Grep', {output_mode: 'content', pattern: 'prices'})),
      reply(toolUse('Read', {file_path: 'src/prices.js'})),
      (request) => reply(toolUse('Write', {content: PLAN, file_path: planPathOf(request)})),
      (request) => reply(toolUse('Edit', {file_path: planPathOf(request), new_string: 'Invoices show euros, rounded.', old_string: 'Invoices show euros.'})),
      (request) => reply(text('The plan is ready.'), toolUse('ExitPlanMode', {plan_path: planPathOf(request)})),
    ],
  },
  plan20: {
    args: ['plan', '--task', 'Make invoices show euros everywhere', '--max-turns', '30'],
    figure: 'a 20-turn plan',
    turns: [
      ...['README.md', 'src/invoices.js', 'src/prices.js', 'src/tax.js', 'src/orders.js', 'src/cart.js', 'src/payments.js'].map((file) =>
        reply(toolUse('Read', {file_path: file})),
      ),
      reply(toolUse('Grep', {output_mode: 'content', pattern: 'Step1'})),
      reply(toolUse('Glob', {pattern: 'test/**/*.js'})),
      (request) => reply(toolUse('Write', {content: PLAN, file_path: planPathOf(request)})),
      ...['test/invoices.test.js', 'src/customers.js', 'src/stock.js', 'test/prices.test.js'].map((file) => reply(toolUse('Read', {file_path: file}))),
      ...[1, 2, 3, 4].map(
        (n) => (request) =>
          reply(
            toolUse('Edit', {
              file_path: planPathOf(request),
              new_string: `Invoices show euros (${n}).`,
              old_string: n === 1 ? 'Invoices show euros.' : `Invoices show euros (${n - 1}).`,
            }),
          ),
      ),
      reply(toolUse('Read', {file_path: 'package.json'})),
      (request) => reply(text('The plan is ready.'), toolUse('ExitPlanMode', {plan_path: planPathOf(request)})),
    ],
  },
  run: {
    args: ['run', '--task', 'Make invoices show euros', '--mode', 'acceptEdits'],
    figure: 'an 11-turn run with edits',
    turns: [
      reply(text('Reading first.'), toolUse('Read', {file_path: 'src/invoices.js'}), toolUse('Read', {file_path: 'src/prices.js'})),
      reply(toolUse('Grep', {output_mode: 'content', pattern: 'invoicesStep'})),
      ...[1, 2, 3, 4].map((n) =>
        reply(
          toolUse('Edit', {
            file_path: 'src/invoices.js',
            new_string: `return {...input, invoices${n}: 'EUR'}`,
            old_string: `return {...input, invoices${n}: true}`,
          }),
        ),
      ),
      reply(toolUse('Read', {file_path: 'test/invoices.test.js'})),
      reply(
        toolUse('Write', {
          content: "import {invoicesStep1} from '../src/invoices.js'\n\ntest('euros', () => invoicesStep1({}))\n",
          file_path: 'test/euros.test.js',
        }),
      ),
      reply(toolUse('Edit', {file_path: 'README.md', new_string: 'A small shop service, in euros.', old_string: 'A small shop service.'})),
      reply(toolUse('Grep', {output_mode: 'content', pattern: 'EUR'})),
      reply(text('Done: invoices show euros; src/invoices.js, test/euros.test.js and README.md changed.')),
    ],
  },
}

/**
 * Runs one session with one build against a fresh server: the summed usage and what the first request
 * weighed. `after`: the same session once before, against the same server (a plan's next unit job, the
 * repository's next plan), and only the second one counted.
 */
async function measure(bin, session, after = false) {
  const sandbox = makeSandbox(projectFiles())
  const server = await startMessagesServer()
  try {
    let from = 0
    for (const _ of after ? [1, 2] : [1]) {
      from = server.messageRequests.length
      server.push(...session.turns)
      const result = await runWave(session.args, {bin, cwd: sandbox.repo, home: sandbox.home, server})
      if (result.code !== 0 && result.code !== 10) throw new Error(`${session.figure} exited ${result.code}: ${result.stderr}`)
    }
    const requests = server.messageRequests.slice(from).filter((r) => r.usage)
    const sum = (key) => requests.reduce((total, r) => total + (r.usage[key] ?? 0), 0)
    const usage = {input: sum('input_tokens'), output: sum('output_tokens'), read: sum('cache_read_input_tokens'), write: sum('cache_creation_input_tokens')}
    const cost = priced(usage)
    const first = requests[0].body
    const weight = Buffer.byteLength(JSON.stringify(first.system)) + Buffer.byteLength(JSON.stringify(first.tools))
    const breakpoints = Math.max(...requests.map((r) => (r.rawBody.match(/"cache_control"/g) ?? []).length))
    return {breakpoints, cost, requests: requests.length, usage, weight}
  } finally {
    await server.close()
    sandbox.cleanup()
  }
}

/** The base commit's CLI, built in a temporary directory from `git archive` (node_modules linked from here). */
function buildBase(commit) {
  const dir = mkdtempSync(path.join(tmpdir(), 'wave-bench-base-'))
  execSync(`git -C ${JSON.stringify(PROJECT_ROOT)} archive ${commit} | tar -x -C ${JSON.stringify(dir)}`)
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(dir, 'node_modules'))
  execFileSync('npm', ['run', 'build'], {cwd: dir, stdio: 'ignore'})
  return {bin: path.join(dir, 'bin', 'run.js'), cleanup: () => rmSync(dir, {force: true, recursive: true})}
}

function defaultBase() {
  const layout = execFileSync('git', ['log', '--format=%H', '-1', '--grep=A prefix that holds across turns and across sessions'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
  }).trim()
  if (!layout) throw new Error('bench: no commit of the prompt layout (issue 50) in this history: pass --base=<commit>')
  return `${layout}~1`
}

/**
 * `--dump=<session>`: that session with this build only, request by request: what each read, wrote and
 * left uncached, where its breakpoints are, and the newest blocks' tokens (what a turn adds).
 */
async function dump(name) {
  const session = SESSIONS[name]
  if (!session) throw new Error(`bench: no session ${name} (${Object.keys(SESSIONS).join(', ')})`)
  const sandbox = makeSandbox(projectFiles())
  const server = await startMessagesServer()
  try {
    server.push(...session.turns)
    // `--with="--disallowed-tools AskUserQuestion"`: what a flag would change, the session otherwise the same.
    const extra = option('with')?.split(' ').filter(Boolean) ?? []
    const result = await runWave([...session.args, ...extra], {cwd: sandbox.repo, home: sandbox.home, server})
    if (result.code !== 0 && result.code !== 10) throw new Error(`${session.figure} exited ${result.code}: ${result.stderr}`)
    const tokens = (block) => Math.ceil(JSON.stringify(block, (key, value) => (key === 'cache_control' ? undefined : value)).length / 4)
    const sum = (blocks) => blocks.reduce((total, block) => total + tokens(block), 0)
    for (const [index, {body, usage}] of server.messageRequests.entries()) {
      if (!usage) continue
      const system = Array.isArray(body.system) ? body.system : [{text: body.system, type: 'text'}]
      // A deferred tool (defer_loading) is not in the prompt: the API counts it where a tool_reference loads it.
      const tools = (body.tools ?? []).filter((tool) => !tool.defer_loading)
      const deferred = (body.tools ?? []).filter((tool) => tool.defer_loading)
      const blocks = [...tools, ...system, ...body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [{text: m.content, type: 'text'}]))]
      const marks = blocks.flatMap((block, at) => (block.cache_control ? [at] : []))
      const last = body.messages.at(-1)
      const newest = (Array.isArray(last.content) ? last.content : [{text: last.content, type: 'text'}]).map((b) => `${b.type}:${tokens(b)}`)
      console.log(
        `#${index} tools ${sum(tools)}${deferred.length > 0 ? ` (+${sum(deferred)} deferred)` : ''} system ${system.map(tokens).join('+')} messages ${body.messages.length} (${sum(blocks) - sum(tools) - sum(system)}) | read ${usage.cache_read_input_tokens} write ${usage.cache_creation_input_tokens} input ${usage.input_tokens} out ${usage.output_tokens} | breakpoints at ${marks.join(',')} of ${blocks.length} | newest ${newest.join(' ')}`,
      )
    }
    const answered = server.messageRequests.filter((r) => r.usage)
    const total = (key) => answered.reduce((sum, r) => sum + r.usage[key], 0)
    const usage = {
      input: total('input_tokens'),
      output: total('output_tokens'),
      read: total('cache_read_input_tokens'),
      write: total('cache_creation_input_tokens'),
    }
    console.log(
      `${session.figure}: ${JSON.stringify(usage)} $${priced(usage).toFixed(4)}, ${(priced(usage) / CLAUDE_CODE[name]).toFixed(3)}× of Claude Code's $${CLAUDE_CODE[name]}`,
    )
    const requestsFile = option('requests')
    if (requestsFile)
      writeFileSync(
        requestsFile,
        JSON.stringify(
          server.messageRequests.map((r) => r.body),
          null,
          1,
        ),
      )
  } finally {
    await server.close()
    sandbox.cleanup()
  }
}

if (option('dump')) {
  await dump(option('dump'))
  process.exit(0)
}

const base = option('base') ?? defaultBase()
const baseSha = execFileSync('git', ['rev-parse', '--short', base], {cwd: PROJECT_ROOT, encoding: 'utf8'}).trim()
console.error(`bench: building the base (${baseSha}) ...`)
const built = buildBase(base)
const usd = (n) => `$${n.toFixed(4)}`
const k = (n) => `${(n / 1000).toFixed(1)}k`
const rows = []
try {
  for (const [name, session] of Object.entries(SESSIONS)) {
    const now = await measure(BIN_RUN, session)
    const before = await measure(built.bin, session)
    const show = (m) => `writes ${k(m.usage.write)}, reads ${k(m.usage.read)}, uncached ${k(m.usage.input)}, output ${k(m.usage.output)}: ${usd(m.cost)}`
    const vsClaude = now.cost / CLAUDE_CODE[name]
    const projected = ISSUE_RATIOS[name] * (now.cost / before.cost)
    const verdict = (ratio) => `${ratio.toFixed(2)}× (${ratio <= TARGETS[name] ? 'met' : 'MISSED'})`
    rows.push(
      `| ${session.figure} (${now.requests} requests) | ${show(now)} | ${show(before)} | ${(now.cost / before.cost).toFixed(2)}× | ${verdict(vsClaude)} of $${CLAUDE_CODE[name]} | ${ISSUE_RATIOS[name]} × ${(now.cost / before.cost).toFixed(2)} = ${verdict(projected)} | ≤ ${TARGETS[name]}× | ${(now.weight / 1024).toFixed(1)} KB, ≤ ${now.breakpoints} breakpoints (base ${(before.weight / 1024).toFixed(1)} KB) |`,
    )
    console.error(`bench: ${session.figure} done`)
  }
  // The repository's next session: a plan's next unit job, the next plan. Its cost against Claude Code is not the issue's.
  const next = {...SESSIONS.plan7, figure: "a 7-turn plan, the repository's second session on one server"}
  const now = await measure(BIN_RUN, next, true)
  const before = await measure(built.bin, next, true)
  const show = (m) => `writes ${k(m.usage.write)}, reads ${k(m.usage.read)}, uncached ${k(m.usage.input)}, output ${k(m.usage.output)}: ${usd(m.cost)}`
  rows.push(
    `| ${next.figure} (${now.requests} requests) | ${show(now)} | ${show(before)} | ${(now.cost / before.cost).toFixed(2)}× | not measured by the issue | | | |`,
  )
} finally {
  built.cleanup()
}

const table = [
  `Base ${baseSha}; prices $3 in / $3.75 cache write / $0.30 cache read / $15 out per MTok; tokens as the scripted server counts them (JSON chars / 4).`,
  '',
  "| session | this build | base | this / base | over Claude Code's dollars (the issue's figure) | projected: the issue's ratio × this / base | target | first request: system + tools |",
  '|---|---|---|---|---|---|---|---|',
  ...rows,
].join('\n')
console.log(table)
if (process.argv.includes('--out')) writeFileSync(option('out') ?? 'cache-cost.md', `${table}\n`)
