/**
 * A run's watch around each command: what reading the work tree before and after a Bash call costs the
 * call. Run by bench/run.js (`npm run bench -- --only=watch`).
 */
import {execFileSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {heading, QUICK, record} from './lib/harness.js'
import {makeSandbox, PROJECT_ROOT, smallFiles} from './lib/sandbox.js'
import {median, ms, ratio} from './lib/stats.js'

/**
 * A Bash call (`true`, in the run's sandbox) as a run makes it (src/tools/turn.ts: the command watch's
 * `before`, the call, its `after`), through the compiled Enforcement of src/plans/enforcement.ts, in a
 * repository of 20,000 committed files: with an approval that has no scope (only the protected paths are
 * watched), with a scope (every change outside it is a deviation), and the same call with no watch at all;
 * interleaved, medians.
 */
async function commandWatch() {
  heading("15. A run's watch around each command (a Bash call in a 20,000-file repository)")
  const {default: bash} = await import(path.join(PROJECT_ROOT, 'dist', 'tools', 'bash.js'))
  const {Enforcement} = await import(path.join(PROJECT_ROOT, 'dist', 'plans', 'enforcement.js'))
  const files = 20_000
  const repo = makeRepository(files)
  try {
    const place = {top: repo.repo, workspace: repo.repo}
    const checks = {cwd: repo.repo, sandbox: {enabled: true, network: false}}
    const enforcement = (scope) => new Enforcement({checks, place, record: scope ? {scope: {enforce: 'warn', paths: scope}} : {}})
    const watches = {protected: enforcement(undefined), scoped: enforcement(['src/m1/**'])}
    await Promise.all(Object.values(watches).map((watch) => watch.ready()))
    const ctx = {readable: async () => true, root: repo.repo, sandbox: {enabled: true, network: false}, session: {}, signal: new AbortController().signal}
    const call = async (watch) => {
      const at = performance.now()
      const before = await watch?.beforeCommand()
      await bash.run({command: 'true'}, ctx)
      await watch?.afterCommand(before)
      return performance.now() - at
    }

    /** @type {Record<'none' | 'protected' | 'scoped', number[]>} */
    const times = {none: [], protected: [], scoped: []}
    for (let run = 0; run < 2; run++) await Promise.all([call(undefined), call(watches.protected), call(watches.scoped)]) // warm up
    for (let run = 0; run < (QUICK ? 7 : 15); run++) {
      times.none.push(await call(undefined))
      times.protected.push(await call(watches.protected))
      times.scoped.push(await call(watches.scoped))
    }

    const none = median(times.none)
    record({
      baseline: `no watch ${ms(none)}`,
      figure: 'Bash call, approval without a scope',
      note: `${files.toLocaleString('en')} committed files: the watch reads what commands could change in the protected paths (src/policy/protected.ts)`,
      ratio: ratio(median(times.protected), none),
      section: 'watch',
      value: ms(median(times.protected)),
    })
    record({
      baseline: `no watch ${ms(none)}`,
      figure: 'Bash call, approval with a scope',
      note: 'the whole work tree read before and after the command (src/base/workspace/worktree.ts), as a scope needs',
      ratio: ratio(median(times.scoped), none),
      section: 'watch',
      value: ms(median(times.scoped)),
    })
  } finally {
    repo.cleanup()
  }
}

/** A git repository of `files` small committed files in 200 directories, plus a node_modules/.bin that git ignores. */
function makeRepository(files) {
  const sandbox = makeSandbox({'.gitignore': 'node_modules/\n', ...smallFiles(files, 200)})
  const bin = path.join(sandbox.repo, 'node_modules', '.bin')
  mkdirSync(bin, {recursive: true})
  writeFileSync(path.join(sandbox.repo, 'node_modules', 'tool.js'), 'console.log(1)\n')
  execFileSync('ln', ['-s', '../tool.js', path.join(bin, 'tool')])
  return sandbox
}

/** 15. A run's watch around each command. */
export const title = "15. A run's watch around each command"
export const run = commandWatch
