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
    // One group of two workers for all three tiers: the build tier's longest file (a whole build, ~50 s)
    // then runs beside the end-to-end files instead of after them, on a core they leave idle at the end.
    projects: [
      // Two workers on two cores (vitest's default there is one): a test waits on a sandboxed process, its wave
      // child or a socket much of its time, and one worker left a core idle (the e2e tier: 534 s with one,
      // 450 s with two). Not isolated: a worker imports a module once for all its files, not once per file
      // (the unit tier's CPU 63 s → 30 s; the e2e tier's 582 → 490 CPU-seconds, 319 → 270 s, measured
      // quiet); every file passes in shuffled orders.
      {extends: true, test: {include: ['test/unit/**/*.test.ts'], isolate: false, maxWorkers: 2, name: 'unit', sequence: {groupOrder: 0}}},
      // e2e: twice the time per test and hook. On a loaded machine (load average 15 on two cores) one spawn of
      // bin/run.js took up to 26 s (p99 12 s, median 1.3 s), so a test of two spawns met 30 s without anything
      // wrong; the tests wait for events, never for time, so a healthy run finishes no later.
      {
        extends: true,
        test: {hookTimeout: 60_000, include: ['test/e2e/**/*.test.ts'], isolate: false, maxWorkers: 2, name: 'e2e', sequence: {groupOrder: 0}, testTimeout: 60_000},
      },
      {extends: true, test: {include: ['test/build/**/*.test.ts'], maxWorkers: 2, name: 'build', sequence: {groupOrder: 0}}},
    ],
  },
})
