/** Compaction: what it costs in requests, tokens and time, for conversations and for tool inputs. Run by bench/run.js (`npm run bench -- --only=compaction`). */
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {heading, record, reply, startMessagesServer, toolUse, writePlan} from './lib/harness.js'
import {makeSandbox, runWave} from './lib/sandbox.js'
import {responseEnds} from './lib/server.js'
import {kb, median, ms, ratio} from './lib/stats.js'

/**
 * What compaction costs (issue 17: the requests and tokens it costs): two `wave plan` sessions of eight
 * turns, each reading a ~6 KB file, that outgrow their window. In one wave sees it coming (settings'
 * `contextWindow`: 12,000 tokens; the turns also talk, so clearing old tool results is not enough and a
 * summary is asked for); in the other the API refuses the prompt as too long (the scripted server's
 * limit, 40 KB) and wave clears old results and sends the turn again. Counted from what the server
 * received (a token is 4 bytes there), and timed from the end of the response before the compaction to
 * the next turn's request, against the session's median turn.
 */
async function compaction() {
  heading('9. Compaction (two planning sessions outgrowing their window: what the compaction cost)')
  const line = `${'x'.repeat(59)}\n`
  const files = Object.fromEntries(Array.from({length: 8}, (_, i) => [`src/part${i}.ts`, `// part ${i}\n${line.repeat(100)}`]))
  const sandbox = makeSandbox({'README.md': '# bench\n', ...files})
  const scenarios = [
    {
      limit: undefined,
      name: 'near the window (contextWindow 12,000 tokens)',
      settings: {contextWindow: 12_000},
      talk: `Reading on, because ${'the details matter '.repeat(40)}`,
    },
    {limit: 40_000, name: 'refused by the API as too long (prompt over 40 KB)', settings: {}, talk: undefined},
  ]
  try {
    for (const scenario of scenarios) {
      mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
      writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify(scenario.settings))
      const turns = [
        ...Object.keys(files).map((file) =>
          scenario.talk ? reply(scenario.talk, toolUse('Read', {file_path: file})) : reply(toolUse('Read', {file_path: file})),
        ),
        writePlan,
        reply('Done.'),
      ]
      // A summary request (no tools) gets a summary; every other request the script's next turn.
      const router = (request) => {
        if (!request.body.tools) return reply('Summary: read parts 0 to 5 of src; next, plan the change.')
        const next = turns.shift() ?? reply('Done.')
        return typeof next === 'function' ? next(request) : next
      }
      const server = await startMessagesServer(Array.from({length: 40}, () => router))
      server.limitPrompt(scenario.limit)
      responseEnds.length = 0
      const result = await runWave(['plan', '--task', 'Read the eight parts, then plan', '--output-format', 'stream-json'], {
        cwd: sandbox.repo,
        home: sandbox.home,
        server,
      })
      await server.close()
      if (result.code !== 0) throw new Error(`wave plan failed (${result.code}): ${result.stderr}`)
      const events = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text))
      const compactions = events.filter((event) => event.type === 'compaction')
      const requests = server.messageRequests
      const refused = requests.filter((request) => request.outcome === 'too-long')
      const summaries = requests.filter((request) => !request.body.tools)
      const turnsSent = requests.filter((request) => request.body.tools && request.outcome !== 'too-long')
      const tokens = (request) => Math.ceil(request.rawBody.length / 4)
      // Time: the end of the response before the first extra request, to the next turn's request after it.
      const firstExtra = Math.min(...[...refused, ...summaries].map((request) => request.index))
      const resumed = turnsSent.find((request) => request.index > firstExtra)
      const gaps = turnsSent
        .slice(1)
        .filter((request) => request.index < firstExtra || request.index > (resumed?.index ?? 0))
        .map((request) => request.receivedAt - responseEnds[request.index - 1].at)
      const cost = resumed && firstExtra > 0 ? resumed.receivedAt - responseEnds[firstExtra - 1].at : Number.NaN
      const before = requests[firstExtra - 1]
      const summaryTokens = summaries.reduce((sum, request) => sum + tokens(request), 0)
      const plural = (count, word) => `${count} ${word}${count === 1 ? '' : 's'}`
      const triggers = [...new Set(compactions.map((event) => event.trigger))].map(
        (trigger) => `${trigger} ×${compactions.filter((event) => event.trigger === trigger).length}`,
      )
      const total = (field) => compactions.reduce((sum, event) => sum + event[field], 0)
      const [first] = compactions
      record({
        baseline: `a turn ${ms(median(gaps))}`,
        figure: `compaction, ${scenario.name}`,
        note: [
          `${plural(compactions.length, 'compaction')} in ${turnsSent.length} turns (${triggers.join(', ')}): ${total('clearedToolResults')} tool results cleared, ${total('summarizedMessages')} messages summarised; the first took the prompt from ${first?.tokensBefore.toLocaleString('en')} to ${first?.tokensAfter.toLocaleString('en')} tokens (wave's estimate)`,
          `${plural(summaries.length, 'summary request')} (${summaryTokens.toLocaleString('en')} input tokens), ${plural(refused.length, 'refused request')} (${kb(refused.reduce((sum, request) => sum + request.rawBody.length, 0))} sent, not billed)`,
          `the turn's request ${kb(before?.rawBody.length ?? 0)} before the first, ${kb(resumed?.rawBody.length ?? 0)} after; ${ms(cost)} from the response before it to the next turn's request`,
        ].join('; '),
        section: 'compaction',
        value: `+${plural(refused.length + summaries.length, 'request')}, ${summaryTokens.toLocaleString('en')} tokens`,
      })
    }
  } finally {
    sandbox.cleanup()
  }
}

/**
 * Compaction of tool inputs (issue 24): a `wave run --task` whose first turn Writes a 200 KB file, then
 * eight turns that talk (~8 KB each, text compaction cannot clear) and list a directory. With a window
 * of 90,000 tokens (settings' `contextWindow`) the conversation nears it after a few turns, and
 * compaction replaces the old Write's content with a stub (its path and size); the baseline is the same
 * script in the same run with the default window, where nothing is compacted and every later request
 * carries the 200 KB again. Reported: the last request's size with the stub against without, as a ratio.
 */
async function toolInputCompaction() {
  const sandbox = makeSandbox({'README.md': '# bench\n'})
  const big = `${'export const line = "abcdefghijklmnopqrstuvwxyz0123456789";\n'.repeat(3500)}`
  const talk = `Looking further, because ${'the layout of this repository matters '.repeat(200)}`
  try {
    const sessions = {}
    for (const [label, settings] of [
      ['stubbed', {contextWindow: 90_000}],
      ['baseline', {}],
    ]) {
      mkdirSync(path.join(sandbox.home, '.wave'), {recursive: true})
      writeFileSync(path.join(sandbox.home, '.wave', 'settings.json'), JSON.stringify(settings))
      const turns = [
        reply(toolUse('Write', {content: big, file_path: 'big.ts'})),
        ...Array.from({length: 8}, () => reply(talk, toolUse('LS', {path: '.'}))),
        reply('Done.'),
      ]
      // A summary request (no tools) gets a summary; every other request the script's next turn.
      const router = (request) => (request.body.tools ? (turns.shift() ?? reply('Done.')) : reply('Summary: wrote big.ts, then looked around.'))
      const server = await startMessagesServer(Array.from({length: 30}, () => router))
      const result = await runWave(['run', '--task', 'Write big.ts, then look around', '--output-format', 'stream-json'], {
        cwd: sandbox.repo,
        home: sandbox.home,
        server,
      })
      await server.close()
      if (result.code !== 0) throw new Error(`wave run (${label}) failed (${result.code}): ${result.stderr}`)
      const compactions = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((text) => JSON.parse(text))
        .filter((event) => event.type === 'compaction')
      const turnsSent = server.messageRequests.filter((request) => request.body.tools)
      sessions[label] = {compactions, last: turnsSent.at(-1).rawBody.length, summaries: server.messageRequests.length - turnsSent.length, turns: turnsSent}
      rmSync(path.join(sandbox.repo, 'big.ts'), {force: true})
    }

    const {baseline, stubbed} = sessions
    const total = (field) => stubbed.compactions.reduce((sum, event) => sum + event[field], 0)
    const tokens = (bytes) => `${Math.ceil(bytes / 4).toLocaleString('en')} tokens`
    record({
      baseline: `not stubbed ${kb(baseline.last)} (${tokens(baseline.last)})`,
      figure: 'compaction of tool inputs: last request of 10 turns',
      note: [
        `a ${kb(big.length)} Write in turn 1 of a 90,000-token window: ${stubbed.compactions.length} compaction(s), ${total('clearedToolInputs')} tool input(s) and ${total('clearedToolResults')} result(s) cleared, ${total('summarizedMessages')} messages summarised, ${stubbed.summaries} summary request(s)`,
        `request bytes by turn, stubbed: ${stubbed.turns.map((request) => kb(request.rawBody.length)).join(', ')}; not stubbed: ${baseline.turns.map((request) => kb(request.rawBody.length)).join(', ')}`,
        'a token is 4 bytes at the scripted server',
      ].join('; '),
      ratio: ratio(stubbed.last, baseline.last),
      section: 'compaction',
      value: `${kb(stubbed.last)} (${tokens(stubbed.last)})`,
    })
  } finally {
    sandbox.cleanup()
  }
}

/** 9. Compaction. */
export const title = '9. Compaction'
export async function run() {
  await compaction()
  await toolInputCompaction()
}
