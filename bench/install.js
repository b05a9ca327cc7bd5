/** Install: the packed package's size and packages, and the Action's install step. Run by bench/run.js (`npm run bench -- --only=install`). */
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'

import {QUICK, record} from './lib/harness.js'
import {PROJECT_ROOT} from './lib/sandbox.js'
import {median, ms} from './lib/stats.js'

// The package as a user installs it (scripts/package-install.js, the suite's package test measures the
// same): size and packages of `npm install -g` of the packed tarball, and the Action's install step
// (scripts/ci/install-wave.sh) from job start to `wave` ready, with the package already in npm's cache.

async function installCost() {
  const {INSTALL_LIMITS, install, pack} = await import('../scripts/package-install.js')
  const work = mkdtempSync(path.join(tmpdir(), 'wave-bench-install-'))
  try {
    const packed = pack(path.join(work, 'dist'))
    const installed = install(packed.tarball, path.join(work, 'prefix'))
    record({
      figure: 'npm install -g of the packed tarball: size',
      ok: installed.bytes <= INSTALL_LIMITS.bytes,
      section: 'install',
      target: `≤ ${INSTALL_LIMITS.bytes / 1e6} MB`,
      value: `${(installed.bytes / 1e6).toFixed(1)} MB`,
    })
    record({
      figure: 'npm install -g of the packed tarball: packages',
      ok: installed.packages <= INSTALL_LIMITS.packages,
      section: 'install',
      target: `≤ ${INSTALL_LIMITS.packages}`,
      value: String(installed.packages),
    })
    // The Action's step, npm's cache warm (the install above filled it): a fresh prefix each run.
    const times = []
    for (let i = 0; i < (QUICK ? 2 : 3); i++) {
      const runnerTemp = mkdtempSync(path.join(work, 'runner-'))
      const env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))),
        RUNNER_TEMP: runnerTemp,
        WAVE_PACKAGE: packed.tarball,
      }
      const begun = performance.now()
      const step = spawnSync('bash', [path.join(PROJECT_ROOT, 'scripts/ci/install-wave.sh')], {encoding: 'utf8', env})
      if (step.status !== 0) throw new Error(`install-wave.sh failed: ${step.stderr}`)
      times.push(performance.now() - begun)
    }
    const value = median(times)
    record({figure: "the Action's install step to wave ready (npm cache warm)", ok: value <= 10_000, section: 'install', target: '≤ 10 s', value: ms(value)})
  } finally {
    rmSync(work, {force: true, recursive: true})
  }
}

/** 10. Install. */
export const title = '10. Install'
export const run = installCost
