/** Search at scale: Glob and Grep over a generated tree against ripgrep and git, with their peak memory. Run by bench/run.js (`npm run bench -- --only=search`). */
import {rmSync} from 'node:fs'
import {tmpdir} from 'node:os'

import {flag, heading, notes, QUICK, record, RUNS, timeCommand, waveSearch, waveTotal, which} from './lib/harness.js'
import {mb, median, ms, ratio} from './lib/stats.js'
import {COMMON, generateTree, NEEDLE} from './lib/tree.js'

async function search() {
  heading(`5. Search at scale (${QUICK ? 'quick tree: a smoke run, the targets are for the full tree' : 'full tree'})`)
  const tree = await generateTree(QUICK ? 'quick' : 'full')
  console.log(
    `  tree: ${tree.files.toLocaleString('en')} files, ${mb(tree.bytes / 1024)} searched; ${tree.ignoredFiles.toLocaleString('en')} files, ${mb(tree.ignoredBytes / 1024)} ignored (.gitignore, nested .gitignore files, node_modules/, build/) under ${tmpdir()}`,
  )
  const rg = !flag('no-rg') && which('rg')
  const gitGrep = which('git')
  if (!rg) notes.push('ripgrep (`rg`) was not found: the ripgrep comparison was skipped (Debian: apt-get install -y ripgrep).')
  if (!rg) console.log('  rg not found: skipping the ripgrep comparison (Debian: apt-get install -y ripgrep)')
  const cases = [
    {
      git: ['ls-files', '-co', '--exclude-standard', '--', '*.ts'],
      input: {pattern: '**/*.ts'},
      name: 'Glob `**/*.ts` (newest first, like rg --sortr modified)',
      rg: ['--files', '--sortr', 'modified', '-g', '*.ts'],
      rgPlain: ['--files', '-g', '*.ts'],
      tool: 'Glob',
    },
    {git: ['grep', '--untracked', '-l', NEEDLE], input: {pattern: NEEDLE}, name: 'Grep literal, files_with_matches', rg: ['-l', NEEDLE], tool: 'Grep'},
    {
      git: ['grep', '--untracked', '-n', 'TODO(perf)'],
      input: {output_mode: 'content', pattern: String.raw`TODO\(perf\)`},
      name: 'Grep `TODO\\(perf\\)`, content',
      rg: ['-n', String.raw`TODO\(perf\)`],
      tool: 'Grep',
    },
    {
      git: ['grep', '--untracked', '-c', '-E', String.raw`function [[:alnum:]_]+_handler\(`],
      input: {output_mode: 'count', pattern: String.raw`function \w+_handler\(`},
      name: 'Grep `function \\w+_handler\\(`, count',
      rg: ['-c', String.raw`function \w+_handler\(`],
      tool: 'Grep',
    },
    {
      git: ['grep', '--untracked', '-il', NEEDLE.toUpperCase()],
      input: {'-i': true, pattern: NEEDLE.toUpperCase()},
      name: 'Grep -i literal, files_with_matches',
      rg: ['-il', NEEDLE.toUpperCase()],
      tool: 'Grep',
    },
    // Letters only: no caseless run to rule files out by bytes, so every file is decoded (the hard case).
    {
      git: ['grep', '--untracked', '-il', 'BENCH'],
      input: {'-i': true, pattern: 'BENCH'},
      name: 'Grep -i letters-only literal, files_with_matches',
      rg: ['-il', 'BENCH'],
      tool: 'Grep',
    },
  ]
  let peakRss = 0
  try {
    for (const testCase of cases) {
      /** @type {Record<'git' | 'rg' | 'rgPlain' | 'wave', number[]>} */
      const times = {git: [], rg: [], rgPlain: [], wave: []}
      let output
      let rgOut = ''
      for (let run = 0; run < RUNS.search; run++) {
        output = waveSearch(testCase.tool, tree.root, testCase.input)
        times.wave.push(output.ms)
        peakRss = Math.max(peakRss, output.maxRssKb)
        if (rg) {
          const r = timeCommand('rg', testCase.rg, tree.root)
          times.rg.push(r.ms)
          rgOut = r.stdout
          if (testCase.rgPlain) times.rgPlain.push(timeCommand('rg', testCase.rgPlain, tree.root).ms)
        }

        if (gitGrep) times.git.push(timeCommand('git', testCase.git, tree.root).ms)
      }

      const value = median(times.wave)
      const rgMs = median(times.rg)
      const baselines = [
        rg ? `${testCase.tool === 'Glob' ? 'rg --files --sortr modified' : 'rg'} ${ms(rgMs)}` : undefined,
        times.rgPlain.length > 0 ? `rg --files ${ms(median(times.rgPlain))}` : undefined,
        gitGrep ? `${testCase.tool === 'Glob' ? 'git ls-files' : 'git grep'} ${ms(median(times.git))}` : undefined,
      ]
      let agreement = ''
      if (rg) {
        const rgLines = rgOut.split('\n').filter(Boolean)
        const rgTotal = testCase.input.output_mode === 'count' ? rgLines.length : rgLines.length
        agreement = waveTotal(output) === rgTotal ? `same result as rg (${rgTotal})` : `DIFFERENT from rg: wave ${waveTotal(output)}, rg ${rgTotal}`
      }

      record({
        baseline: baselines.filter(Boolean).join(', '),
        figure: testCase.name,
        note: `${agreement}${agreement ? '; ' : ''}peak RSS ${mb(output.maxRssKb)}, CPU ${ms(output.cpuMs)}`,
        // The targets are for the full tree: on the quick one, fixed costs (a worker's start) weigh more.
        ok: rg && !QUICK ? value <= 2 * rgMs : undefined,
        ratio: rg ? ratio(value, rgMs) : undefined,
        section: 'search',
        target: rg && !QUICK ? '≤ 2× rg' : undefined,
        value: ms(value),
      })
    }

    // What the worker threads buy, and that memory does not grow with the tree.
    const single = []
    const small = []
    for (let run = 0; run < RUNS.search; run++) {
      single.push(waveSearch('Grep', tree.root, {pattern: NEEDLE}, {WAVE_SEARCH_THREADS: '0'}).ms)
    }

    const subtree = waveSearch('Grep', tree.root, {output_mode: 'content', path: 'packages/pkg1', pattern: COMMON})
    small.push(subtree.maxRssKb)
    const whole = waveSearch('Grep', tree.root, {output_mode: 'content', pattern: COMMON})
    const everything = waveSearch('Grep', tree.root, {output_mode: 'content', pattern: 'e'})
    record({figure: 'Grep literal, main thread only', note: 'WAVE_SEARCH_THREADS=0: no worker thread', section: 'search', value: ms(median(single))})
    record({
      figure: 'Grep peak RSS: 1/50 of the tree → all of it',
      note: `content mode: ${mb(small[0])} → ${mb(whole.maxRssKb)}; a pattern matching nearly every line (${everything.tail.slice(0, 60)}...): ${mb(everything.maxRssKb)}`,
      section: 'search',
      value: mb(Math.max(whole.maxRssKb, everything.maxRssKb)),
    })
    peakRss = Math.max(peakRss, whole.maxRssKb, everything.maxRssKb)
    notes.push(
      'wave does not call ripgrep: every search figure is the pure-Node path (the main thread and one worker thread per further core), timed around the tool call in a fresh process, through the dispatcher.',
    )
    return {searchRssKb: peakRss, tree}
  } finally {
    if (!flag('keep-tree')) rmSync(tree.root, {force: true, recursive: true})
    else console.log(`  kept the tree at ${tree.root}`)
  }
}

/** 5. Search at scale. */
export const title = '5. Search at scale'
export const run = search
