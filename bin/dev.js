#!/usr/bin/env -S node --import tsx
// Development entry: runs the TypeScript sources directly (needs `npx tsx`); use bin/run.js otherwise.
import {execute} from '@oclif/core'

await execute({development: true, dir: import.meta.url})
