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
      // default there) leaves the other core idle.
      {extends: true, test: {maxWorkers: 2, name: 'unit', include: ['test/unit/**/*.test.ts']}},
      {extends: true, test: {name: 'e2e', include: ['test/e2e/**/*.test.ts']}},
      {extends: true, test: {name: 'build', include: ['test/build/**/*.test.ts']}},
    ],
  },
})
