/** The run's work-tree snapshot: the reading before and after each command, against the status it replaced. Run by bench/run.js (`npm run bench -- --only=snapshot`). */
import {execFileSync} from 'node:child_process'
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {heading, QUICK, record} from './lib/harness.js'
import {PROJECT_ROOT} from './lib/sandbox.js'
import {median, ms, ratio} from './lib/stats.js'
import {generateTree} from './lib/tree.js'

/**
 * What a run reads of its work tree before and after each command and around the checks (issue 34):
 * the fuller reading (src/base/workspace/worktree.ts: ignored files, the paths checks run from,
 * submodules, nested repositories, content hashes) against the reading it replaced (`git status
 * --untracked-files=all` and an lstat of each path it lists), on a tree of 100,000 committed files
 * with ignored directories, a node_modules/.bin, a few dirty and untracked files, one after the other.
 */
async function workTreeSnapshot() {
  heading("12. The run's work-tree snapshot (a reading before and after each command, and around the checks)")
  const {changedPaths} = await import(path.join(PROJECT_ROOT, 'dist', 'base', 'workspace', 'git.js'))
  const {WorkTreeWatch} = await import(path.join(PROJECT_ROOT, 'dist', 'base', 'workspace', 'worktree.js'))
  const {lstat} = await import('node:fs/promises')
  const tree = await generateTree(QUICK ? 'snapshotQuick' : 'snapshot', {commit: true})
  try {
    // What a real work tree has besides: an npm-style .bin, a few edits, a few new files.
    const bin = path.join(tree.root, 'node_modules', '.bin')
    mkdirSync(bin, {recursive: true})
    for (let i = 0; i < 40; i++) execFileSync('ln', ['-s', `../dep${i % 40}/lib/index0.ts`, path.join(bin, `tool${i}`)])
    for (let i = 0; i < 10; i++) writeFileSync(path.join(tree.root, 'packages', `pkg${i}`, 'src', 'mod1', 'file1.ts'), `// edited ${i}\n`)
    for (let i = 0; i < 10; i++) writeFileSync(path.join(tree.root, `new${i}.ts`), `export const n = ${i}\n`)
    const place = {top: tree.root, workspace: tree.root}
    /** Today's reading before issue 34: the status, and each listed path's size and mtime. */
    const previous = async () => {
      const status = await changedPaths(tree.root)
      await Promise.all([...status.keys()].map((file) => lstat(path.join(tree.root, file)).catch(() => undefined)))
      return status.size
    }

    const warm = new WorkTreeWatch(place)
    await warm.read()
    const runs = QUICK ? 5 : 9
    /** @type {Record<'first' | 'previous' | 'warm', number[]>} */
    const times = {first: [], previous: [], warm: []}
    let listed = 0
    for (let run = 0; run < runs; run++) {
      // Interleaved, so that the machine's load weighs on all three alike.
      let at = performance.now()
      await previous()
      times.previous.push(performance.now() - at)
      at = performance.now()
      listed = (await warm.read()).size
      times.warm.push(performance.now() - at)
      at = performance.now()
      await new WorkTreeWatch(place).read()
      times.first.push(performance.now() - at)
    }

    const [before, now, first] = [median(times.previous), median(times.warm), median(times.first)]
    const files = (QUICK ? 25_000 : 100_000).toLocaleString('en')
    record({
      baseline: `status + lstat ${ms(before)}`,
      figure: `work-tree reading, ${files} files`,
      note: `${listed} entries (ignored files and directories, node_modules/.bin by content, edits); each reading after the run's first reuses the hashes of unchanged files`,
      ok: now <= 1.2 * before,
      ratio: ratio(now, before),
      section: 'snapshot',
      target: '≤ 1.2× the status it replaced',
      value: ms(now),
    })
    record({
      baseline: `status + lstat ${ms(before)}`,
      figure: `the run's first reading, ${files} files`,
      note: 'once per run, before the first tool: every listed file hashed, the submodules listed (git ls-files --stage)',
      ratio: ratio(first, before),
      section: 'snapshot',
      value: ms(first),
    })
  } finally {
    rmSync(tree.root, {force: true, maxRetries: 5, recursive: true})
  }
}

/** 12. The run's work-tree snapshot. */
export const title = "12. The run's work-tree snapshot"
export const run = workTreeSnapshot
