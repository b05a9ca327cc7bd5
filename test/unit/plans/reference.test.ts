import {mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {resolvePlanReference} from '../../../src/plans/store.js'

let root: string
let plans: string
let cwd: string
const previous = {cwd: process.cwd(), home: process.env.WAVE_HOME}

beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-reference-')))
  plans = path.join(root, 'home', 'plans')
  cwd = path.join(root, 'cwd')
  mkdirSync(plans, {recursive: true})
  mkdirSync(cwd)
  process.env.WAVE_HOME = path.join(root, 'home')
  process.chdir(cwd)
})

afterEach(() => {
  process.chdir(previous.cwd)
  if (previous.home === undefined) delete process.env.WAVE_HOME
  else process.env.WAVE_HOME = previous.home
  rmSync(root, {force: true, recursive: true})
})

describe('resolvePlanReference', () => {
  it('finds a plan by its name, with or without .md, in the plans directory', async () => {
    writeFileSync(path.join(plans, 'gentle-breeze.md'), '# plan\n')
    expect(await resolvePlanReference('gentle-breeze')).toBe(path.join(plans, 'gentle-breeze.md'))
    expect(await resolvePlanReference('gentle-breeze.md')).toBe(path.join(plans, 'gentle-breeze.md'))
  })

  it('prefers a path that exists, and leaves a missing path to the caller', async () => {
    writeFileSync(path.join(plans, 'gentle-breeze.md'), '# plan\n')
    writeFileSync(path.join(cwd, 'gentle-breeze.md'), '# mine\n')
    expect(await resolvePlanReference('gentle-breeze.md')).toBe(path.join(cwd, 'gentle-breeze.md'))
    expect(await resolvePlanReference('./missing/plan.md')).toBe(path.join(cwd, 'missing', 'plan.md'))
  })

  it('refuses a file that is not Markdown, and a name that names nothing (exit 2)', async () => {
    writeFileSync(path.join(cwd, 'index.js'), '1\n')
    await expect(resolvePlanReference('index.js')).rejects.toMatchObject({exitCode: 2, message: expect.stringContaining('not a Markdown file')})
    await expect(resolvePlanReference('no-such-plan')).rejects.toMatchObject({exitCode: 2, message: expect.stringContaining('no plan named no-such-plan')})
    // A name never climbs out of the plans directory.
    writeFileSync(path.join(root, 'home', 'escape.md'), '# not a plan\n')
    await expect(resolvePlanReference('..')).rejects.toMatchObject({exitCode: 2})
  })

  it('counts a plan not written yet, by its state, only where asked', async () => {
    writeFileSync(path.join(plans, 'quiet-fox.state.json'), '{}')
    await expect(resolvePlanReference('quiet-fox')).rejects.toMatchObject({exitCode: 2})
    expect(await resolvePlanReference('quiet-fox', {unwritten: true})).toBe(path.join(plans, 'quiet-fox.md'))
  })
})
