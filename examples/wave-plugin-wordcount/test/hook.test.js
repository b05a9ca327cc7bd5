// The example's own unit test, with node:test and no wave: the hook returns well-formed tools.
// wave's end-to-end test (test/e2e/plugins.test.ts in the wave repository) links this package with
// `wave plugins link` and calls its tools in plan and run sessions.
import assert from 'node:assert/strict'
import {mkdtemp, readFile, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {test} from 'node:test'

import waveTools from '../hooks/tools.js'

// A stand-in for the slice of zod the hook uses, so this test needs no dependency.
const field = () => ({describe: () => field(), min: () => field()})
const z = {object: (shape) => ({shape}), string: field}
class ToolError extends Error {}

test('returns a read tool and a write tool', async () => {
  const tools = await waveTools({apiVersion: 1, ToolError, z})
  assert.deepEqual(tools.map((t) => [t.name, t.access, t.pathField]), [
    ['WordCount', 'read', 'file_path'],
    ['AppendNote', 'write', 'file_path'],
  ])
})

test('returns nothing for an API version it does not know', async () => {
  assert.deepEqual(await waveTools({apiVersion: 2, ToolError, z}), [])
})

test('counts and appends', async () => {
  const [wordCount, appendNote] = await waveTools({apiVersion: 1, ToolError, z})
  const dir = await mkdtemp(path.join(tmpdir(), 'wordcount-'))
  const file = path.join(dir, 'a.txt')
  await writeFile(file, 'one two\nthree\n')
  const target = {kind: 'file', real: file}
  assert.equal(await wordCount.run({file_path: 'a.txt'}, {target}), 'a.txt: 2 lines, 3 words, 14 characters')
  await appendNote.run({file_path: 'a.txt', note: 'four'}, {target})
  assert.equal(await readFile(file, 'utf8'), 'one two\nthree\nfour\n')
})
