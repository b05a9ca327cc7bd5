import {defineConfig} from 'vitest/config'

// Two tiers: `unit` runs in-process (modules, plugins, the policy table, the scripted server) and takes
// under a minute; `e2e` spawns bin/run.js from dist/ (build first) against the scripted Messages API
// server. `npm run test:unit`, `npm run test:e2e`; `npm test` builds, lints and runs both.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {extends: true, test: {name: 'unit', include: ['test/**/*.test.ts'], exclude: ['test/e2e/**']}},
      {extends: true, test: {name: 'e2e', include: ['test/e2e/**/*.test.ts']}},
    ],
  },
})
