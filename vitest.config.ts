import {defineConfig} from 'vitest/config'

// Three tiers. `unit` runs in-process only (modules, tools, the policy table, the drivers and the review
// core against the scripted server) and takes under a minute; `e2e` spawns bin/run.js from dist/ against
// the scripted Messages API server; `build` builds and packs the package itself. `npm run test:unit`,
// `npm run test:e2e`, `npm run test:build`; `npm test` (CI's) builds once when dist/ is stale, lints and
// runs all three.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      // Two workers on two cores: many unit tests wait on a sandboxed process or a socket, and one worker (the
      // default there) leaves the other core idle. Tiers with their own worker counts run one after another
      // (groupOrder): the fast one first. Not isolated: a worker imports wave's modules once for all its files,
      // not once per file (the tier's CPU 63 s → 30 s, measured at load 7; every file passes in shuffled orders).
      {extends: true, test: {include: ['test/unit/**/*.test.ts'], isolate: false, maxWorkers: 2, name: 'unit', sequence: {groupOrder: 0}}},
      // e2e: twice the time per test and hook. On a loaded machine (load average 15 on two cores) one spawn of
      // bin/run.js took up to 26 s (p99 12 s, median 1.3 s), so a test of two spawns met 30 s without anything
      // wrong; the tests wait for events, never for time, so a healthy run finishes no later.
      // Two workers too (vitest's default on two cores is one): a test waits on its wave child, the scripted
      // server and the sandbox most of its time, so one worker left a core idle. Measured: the tier in 450 s
      // with two at a load average of 7 from other work, against 534 s with one at 2 (issue 32's closing note).
      {
        extends: true,
        test: {hookTimeout: 60_000, include: ['test/e2e/**/*.test.ts'], maxWorkers: 2, name: 'e2e', sequence: {groupOrder: 1}, testTimeout: 60_000},
      },
      {extends: true, test: {include: ['test/build/**/*.test.ts'], name: 'build', sequence: {groupOrder: 2}}},
    ],
  },
})
