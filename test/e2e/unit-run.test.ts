/**
 * `wave run <plan> --unit <name>` end to end on the scripted server: three units' jobs started at once,
 * each from its own clone and HOME (its own machine), each held to its unit's paths (strict) and checks,
 * each writing its result and patch; a failed unit run again while the others stay done; the plan's state.
 */
import {execFileSync} from 'node:child_process'
import {existsSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {readJson, runWave, type Sandbox, sha256, startWave, writePlanFile} from '../support/cli.js'
import {type MessagesServer, reply, startMessagesServer, toolUse} from '../support/messages-server.js'
import {cloneJob, LOGO, UNIT_FILES, UNIT_NAMES, unitOfRequest, unitsSandbox, unitTurns, writeRecord} from '../support/units.js'

let sandbox: Sandbox | undefined
let server: MessagesServer | undefined
afterEach(async () => {
  await server?.close()
  sandbox?.cleanup()
  sandbox = server = undefined
})

const TIMEOUT = 90_000
const stateOf = (planPath: string) => readJson(planPath.replace(/\.md$/, '.state.json'))

describe('wave run --unit', () => {
  it('three units run at once from three clones: each changes only its paths, and writes its result and patch', {timeout: 180_000}, async () => {
    const made = await unitsSandbox()
    sandbox = made.sandbox
    server = await startMessagesServer(unitTurns(12))
    const jobs = UNIT_NAMES.map((unit) => ({job: cloneJob(made.sandbox, made.planPath, unit), unit}))
    const started = jobs.map(({job, unit}) =>
      startWave(['run', job.planPath, '--unit', unit, '--json'], {cwd: job.repo, home: job.home, server, timeoutMs: TIMEOUT}),
    )
    const finished = await Promise.all(started.map((run) => run.done))
    for (const [index, result] of finished.entries()) expect(result.code, `${UNIT_NAMES[index]}: ${result.stderr}`).toBe(0)

    // Each job was told which unit is its own, in its first message, with the whole plan.
    const firsts = server.messageRequests.filter((request) => request.body.messages.length === 1)
    expect(firsts.map((request) => unitOfRequest(request)).sort()).toEqual(['api', 'docs', 'web'])
    for (const request of firsts) expect(JSON.stringify(request.body.messages[0].content)).toContain('## Units')

    const [api, web, docs] = jobs.map(({job}) => job)
    // api's write into web's paths was refused: the file is as committed, and the report shows the denial.
    expect(readFileSync(path.join(api.repo, 'src/web/index.ts'), 'utf8')).toBe(UNIT_FILES['src/web/index.ts'])
    expect(readFileSync(path.join(api.repo, 'src/api/route.ts'), 'utf8')).toContain('route')
    expect(readFileSync(path.join(web.repo, 'src/web/logo.bin'))).toEqual(LOGO)
    expect(readFileSync(path.join(docs.repo, 'docs/guide.md'), 'utf8')).toContain('/route')

    for (const [index, {job, unit}] of jobs.entries()) {
      const output = JSON.parse(finished[index].stdout)
      const resultPath = job.planPath.replace(/\.md$/, `.unit-${unit}.json`)
      const patchPath = job.planPath.replace(/\.md$/, `.unit-${unit}.patch`)
      expect(output.unit).toEqual({name: unit, patch: patchPath, result: resultPath})
      const result = readJson(resultPath)
      const patch = readFileSync(patchPath)
      expect(result).toMatchObject({
        base: made.head,
        exitCode: 0,
        outcome: 'succeeded',
        patch: {bytes: patch.length, file: path.basename(patchPath), sha256: sha256(patch)},
        plan: {name: 'three-parts', sha256: sha256(readFileSync(job.planPath))},
        unit,
        version: 1,
      })
      expect(result.report).toMatchObject({enforce: 'strict', outOfScope: [], scope: [`${unit === 'docs' ? 'docs' : `src/${unit}`}/**`]})
      expect(result.report.checks.map((check: {exitCode: number}) => check.exitCode)).toEqual([0])
      // The patch applies with git apply at the plan's base, in a clean clone, and makes the unit's files.
      const fresh = cloneJob(made.sandbox, made.planPath, `check-${unit}`)
      execFileSync('git', ['apply', '--check', patchPath], {cwd: fresh.repo})
      execFileSync('git', ['apply', patchPath], {cwd: fresh.repo})
      expect(execFileSync('git', ['status', '--porcelain', '--untracked-files=all'], {cwd: fresh.repo, encoding: 'utf8'})).toMatch(
        unit === 'docs' ? /docs\/guide\.md/ : new RegExp(`src/${unit}/`),
      )
      // The state on the job's machine: this unit's run, and the plan still approved (two units are not done here).
      const state = stateOf(job.planPath)
      expect(state.runs).toHaveLength(1)
      expect(state.runs[0]).toMatchObject({exitCode: 0, unit})
      expect(state.status).toBe('approved')
    }

    expect(readJson(api.planPath.replace(/\.md$/, '.unit-api.json')).report.denials).toEqual([
      expect.objectContaining({summary: 'src/web/index.ts', tool: 'Write'}),
    ])
    // The web unit's patch is binary: the logo goes through git apply byte for byte.
    const fresh = cloneJob(made.sandbox, made.planPath, 'logo')
    execFileSync('git', ['apply', web.planPath.replace(/\.md$/, '.unit-web.patch')], {cwd: fresh.repo})
    expect(readFileSync(path.join(fresh.repo, 'src/web/logo.bin'))).toEqual(LOGO)
  })

  it('a failed unit runs again (--resume, or afresh) while the others stay done; a succeeded unit does not run twice', {timeout: 180_000}, async () => {
    const made = await unitsSandbox()
    sandbox = made.sandbox
    server = await startMessagesServer()
    // One machine (one HOME), a clone per unit: units never share a work tree.
    const clones = Object.fromEntries(UNIT_NAMES.map((unit) => [unit, cloneJob(made.sandbox, made.planPath, unit).repo]))
    const planPath = made.planPath
    const home = made.sandbox.home
    const run = (unit: string, ...flags: string[]) =>
      runWave(['run', planPath, '--unit', unit, ...flags], {cwd: clones[unit], home, server, timeoutMs: TIMEOUT})

    // api's job first writes the wrong file: its check fails, it gets no retry (--verify-retries 0), exit 7.
    server.push(...unitTurns(2, {api: [reply(toolUse('Write', {content: 'export const x = 1\n', file_path: 'src/api/other.ts'})), reply('api done.')]}))
    const failed = await run('api', '--verify-retries', '0')
    expect(failed.code, failed.stderr).toBe(7)
    expect(failed.stderr).toContain('wave run three-parts --unit api --resume')
    const failedResult = readJson(planPath.replace(/\.md$/, '.unit-api.json'))
    expect(failedResult).toMatchObject({exitCode: 7, outcome: 'failed', unit: 'api'})
    expect(stateOf(planPath).status).toBe('failed')

    // A failed unit runs again afresh: a new run of its own (here failing the same way).
    const wrong = {api: [reply(toolUse('Write', {content: 'export const y = 1\n', file_path: 'src/api/other.ts'})), reply('api done again.')]}
    server.push(...unitTurns(2, wrong))
    const afresh = await run('api', '--verify-retries', '0')
    expect(afresh.code, afresh.stderr).toBe(7)
    expect(server.messageRequests.at(-2)?.body.messages).toHaveLength(1)

    server.push(...unitTurns(2))
    const docs = await run('docs')
    expect(docs.code, docs.stderr).toBe(0)
    server.push(...unitTurns(2))
    expect((await run('web')).code).toBe(0)
    let state = stateOf(planPath)
    expect(state.runs.map((r: {unit: string; exitCode: number}) => [r.unit, r.exitCode])).toEqual([
      ['api', 7],
      ['api', 7],
      ['docs', 0],
      ['web', 0],
    ])
    // Two of three units done: the plan is not spent.
    expect(state.status).toBe('approved')
    expect(readJson(planPath.replace(/\.md$/, '.approval.json')).spentAt).toBeUndefined()

    // A succeeded unit does not run twice (exit 3), and nothing was asked of the model; its files are untouched.
    const before = server.messageRequests.length
    const resultBefore = readFileSync(planPath.replace(/\.md$/, '.unit-docs.json'), 'utf8')
    const again = await run('docs')
    expect(again.code, again.stderr).toBe(3)
    expect(again.stderr).toContain('The unit docs of three-parts already succeeded under this approval')
    expect(server.messageRequests.length).toBe(before)
    expect(readFileSync(planPath.replace(/\.md$/, '.unit-docs.json'), 'utf8')).toBe(resultBefore)

    // The failed unit goes on with --resume: its own conversation, the others' runs untouched.
    server.push((request) => {
      expect(unitOfRequest(request)).toBe('api')
      return reply(toolUse('Write', {content: 'export const route = "/route"\n', file_path: 'src/api/route.ts'}))
    }, reply('api fixed.'))
    const resumed = await run('api', '--resume')
    expect(resumed.code, resumed.stderr).toBe(0)
    const resumedRequest = server.messageRequests[before]
    expect(JSON.stringify(resumedRequest.body.messages)).toContain('api done again.')
    state = stateOf(planPath)
    // The resumed run is api's newest record, gone on (ended again); the first attempt stays as it was.
    expect(state.runs.map((r: {unit: string; exitCode: number}) => [r.unit, r.exitCode]).sort()).toEqual([
      ['api', 0],
      ['api', 7],
      ['docs', 0],
      ['web', 0],
    ])
    // Every unit succeeded: the plan ran, and its approval is spent.
    expect(state.status).toBe('ran')
    expect(readJson(planPath.replace(/\.md$/, '.approval.json')).spentAt).toEqual(expect.any(String))
    expect(readJson(planPath.replace(/\.md$/, '.unit-api.json'))).toMatchObject({exitCode: 0, outcome: 'succeeded'})
    const spent = await run('web')
    expect(spent.code).toBe(3)
    expect(spent.stderr).toContain('every unit succeeded')

    // Units on one machine each keep their checks' whole output in a log of their own, named in their reports.
    const stem = planPath.replace(/\.md$/, '')
    // Each round its own: api failed, then ran again, so its last round is not its first, whose log is kept.
    const logs = new Map<string, string>()
    for (const unit of UNIT_NAMES) {
      const log: string = readJson(`${stem}.unit-${unit}.json`).report.checks[0].outputFile
      expect(log.startsWith(`${stem}.unit-${unit}.check-`) && /\.check-\d+-1\.log$/.test(log), log).toBe(true)
      expect(existsSync(log), log).toBe(true)
      logs.set(unit, log)
    }
    expect(logs.get('api')).not.toBe(`${stem}.unit-api.check-1-1.log`)
    expect(existsSync(`${stem}.unit-api.check-1-1.log`)).toBe(true)

    // wave plans rm removes the units' results, patches and check logs with the plan, and lists them;
    // another plan's files beside it stay (control).
    const other = writePlanFile(made.sandbox, '# Plan: another\n', 'three-parts-2')
    writeFileSync(other.replace(/\.md$/, '.unit-api.json'), '{}')
    const removed = await runWave(['plans', 'rm', 'three-parts', '--json'], {cwd: made.sandbox.repo, home})
    expect(removed.code, removed.stderr).toBe(0)
    const files: string[] = JSON.parse(removed.stdout).removed[0].files
    for (const unit of UNIT_NAMES) {
      for (const file of [`${stem}.unit-${unit}.json`, `${stem}.unit-${unit}.patch`, logs.get(unit)!, `${stem}.unit-${unit}.check-1-1.log`]) {
        expect(files).toContain(file)
        expect(existsSync(file), file).toBe(false)
      }
    }
    expect(readdirSync(path.dirname(planPath)).sort()).toEqual(['three-parts-2.md', 'three-parts-2.unit-api.json'])
  })

  it("holds a unit's job to the budget the approver gave each unit (--unit-budget-usd)", {timeout: 60_000}, async () => {
    const made = await unitsSandbox('--unit-budget-usd', '0.001')
    sandbox = made.sandbox
    expect(readJson(made.planPath.replace(/\.md$/, '.approval.json')).units[0]).toMatchObject({budgetUsd: 0.001, name: 'api'})
    server = await startMessagesServer(unitTurns(3))
    const run = await runWave(['run', made.planPath, '--unit', 'api'], {cwd: made.sandbox.repo, home: made.sandbox.home, server, timeoutMs: TIMEOUT})
    expect(run.code, run.stderr).toBe(5)
    expect(run.stderr).toMatch(/Stopped at the budget/)
    // The job hands on what it did, a failed result with its patch: the merge will say so.
    expect(readJson(made.planPath.replace(/\.md$/, '.unit-api.json'))).toMatchObject({exitCode: 5, outcome: 'failed', unit: 'api'})
  })

  it('an unknown unit, and --unit on a plan without units, are usage errors naming what there is', {timeout: 60_000}, async () => {
    const made = await unitsSandbox()
    sandbox = made.sandbox
    server = await startMessagesServer()
    const unknown = await runWave(['run', made.planPath, '--unit', 'mobile'], {cwd: made.sandbox.repo, home: made.sandbox.home, server})
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('has no unit named mobile; its units: api, web, docs')

    const plain = writePlanFile(made.sandbox, '# Plan\n\n1. Do it.\n', 'plain-plan')
    writeRecord(plain, made.head, {plan: {name: 'plain-plan', sha256: sha256('# Plan\n\n1. Do it.\n')}, units: undefined, history: []})
    const none = await runWave(['run', plain, '--unit', 'api'], {cwd: made.sandbox.repo, home: made.sandbox.home, server})
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('has no units')
    // Control: the unit that exists gets past these checks to the model.
    server.push(...unitTurns(3))
    const known = await runWave(['run', made.planPath, '--unit', 'api'], {cwd: made.sandbox.repo, home: made.sandbox.home, server})
    expect(known.code, known.stderr).toBe(0)
    expect(server.messageRequests.length).toBeGreaterThan(0)
    expect(existsSync(made.planPath.replace(/\.md$/, '.unit-api.patch'))).toBe(true)
  })
})
