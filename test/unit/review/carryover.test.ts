/**
 * What `/wave resume` takes from a restored cache (src/app/review/carryover.ts): the plan's files only
 * with the bytes the stopping job recorded, and none of them a link (wave writes a check's output, the
 * state and the transcript there: a link would send those writes anywhere).
 */
import {mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {keptDigests, keptRun} from '../../../src/review/carryover.js'
import {sha256Of} from '../../../src/plans/approval.js'

const PLAN = '# Plan\n\n1. Do it.\n'
const NAME = 'calm-river'
let home: string
let plans: string
const before = process.env.WAVE_HOME

beforeEach(() => {
  home = mkdtempSync(path.join(tmpdir(), 'wave-carryover-'))
  plans = path.join(home, 'plans')
  mkdirSync(plans)
  process.env.WAVE_HOME = home
  writeFileSync(path.join(plans, `${NAME}.md`), PLAN)
  writeFileSync(path.join(plans, `${NAME}.approval.json`), '{"version":1}')
  writeFileSync(path.join(plans, `${NAME}.state.json`), '{}')
  writeFileSync(path.join(plans, `${NAME}.transcript.jsonl`), '')
})

afterEach(() => {
  if (before === undefined) delete process.env.WAVE_HOME
  else process.env.WAVE_HOME = before
  rmSync(home, {force: true, recursive: true})
})

const sha = sha256Of(Buffer.from(PLAN))

describe('keptRun', () => {
  it("refuses a restored state holding a link among the plan's files, whatever its digests say", async () => {
    const digests = await keptDigests(path.join(plans, `${NAME}.md`))
    symlinkSync(path.join(home, 'elsewhere'), path.join(plans, `${NAME}.check-1.log`))
    expect(await keptRun(NAME, sha, digests)).toEqual({tampered: `${NAME}.check-1.log is not a regular file`})
  })

  it('refuses bytes other than those recorded, and uses nothing when no digest was recorded', async () => {
    const digests = await keptDigests(path.join(plans, `${NAME}.md`))
    writeFileSync(path.join(plans, `${NAME}.state.json`), '{"runs":[]}')
    expect(await keptRun(NAME, sha, digests)).toMatchObject({tampered: expect.stringContaining('its state is not the one the stopped run left')})
    expect(await keptRun(NAME, sha, undefined)).toMatchObject({missing: expect.stringContaining('records no digest')})
  })

  it('control: the recorded bytes and no link pass those checks (this record approves nothing, so it stops at the approval)', async () => {
    const digests = await keptDigests(path.join(plans, `${NAME}.md`))
    writeFileSync(path.join(plans, `${NAME}.check-1.log`), 'ok\n')
    writeFileSync(path.join(plans, 'other-plan.check-1.log'), 'ok\n')
    expect(await keptRun(NAME, sha, digests)).toEqual({missing: 'no approval of this version was kept'})
  })
})
