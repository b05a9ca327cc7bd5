/**
 * `wave plans merge` end to end: three units' results (made by real `wave run --unit` jobs on the
 * scripted server) merged into a fresh clone at the plan's base, the plan's own checks run on the merged
 * tree; tampered results (another plan's, a unit twice, a patch reaching into another unit's files)
 * refused with nothing applied, each beside the untampered control; missing and failed units named.
 */
import {copyFileSync, cpSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {gitStatus, readJson, runWave, type Sandbox, sha256} from '../support/cli.js'
import {type MessagesServer, startMessagesServer} from '../support/messages-server.js'
import {cloneJob, type Job, LOGO, UNIT_FILES, UNIT_NAMES, unitsSandbox, unitTurns} from '../support/units.js'

let sandbox: Sandbox
let server: MessagesServer
let planPath: string
/** The three units' results and patches, as the merge job downloads them. */
let results: string

beforeAll(async () => {
  const made = await unitsSandbox()
  sandbox = made.sandbox
  planPath = made.planPath
  server = await startMessagesServer(unitTurns(12))
  results = path.join(sandbox.root, 'results')
  mkdirSync(results)
  await Promise.all(
    UNIT_NAMES.map(async (unit) => {
      const job = cloneJob(sandbox, planPath, unit)
      const out = path.join(sandbox.root, `out-${unit}`)
      const run = await runWave(['run', job.planPath, '--unit', unit, '--result-out', `${out}/${unit}.result.json`, '--patch-out', `${out}/${unit}.patch`], {
        cwd: job.repo,
        home: job.home,
        server,
        timeoutMs: 90_000,
      })
      expect(run.code, run.stderr).toBe(0)
      // As download-artifact lays out several artifacts: a folder each.
      cpSync(out, path.join(results, `wave-unit-${unit}`), {recursive: true})
    }),
  )
}, 180_000)

afterAll(async () => {
  await server?.close()
  sandbox?.cleanup()
})

let jobs = 0
/** The merge job's machine: a fresh clone at the plan's commit, the approved plan in its HOME. */
const mergeJob = (): Job => cloneJob(sandbox, planPath, `merge-${++jobs}`)
const merge = (job: Job, ...args: string[]) => mergeWith({}, job, ...args)
const mergeWith = (env: Record<string, string>, job: Job, ...args: string[]) =>
  runWave(['plans', 'merge', job.planPath, ...args], {cwd: job.repo, env, home: job.home, timeoutMs: 60_000})

/** A copy of the results folder to tamper with. */
function resultsCopy(): string {
  const copy = path.join(sandbox.root, `tampered-${++jobs}`)
  cpSync(results, copy, {recursive: true})
  return copy
}

const resultFile = (folder: string, unit: string) => path.join(folder, `wave-unit-${unit}`, `${unit}.result.json`)
const patchFile = (folder: string, unit: string) => path.join(folder, `wave-unit-${unit}`, `${unit}.patch`)

describe('wave plans merge', () => {
  it('applies the units in order onto the base and runs the plan checks once on the merged tree', async () => {
    const job = mergeJob()
    const result = await merge(job, results, '--json')
    expect(result.code, result.stderr).toBe(0)
    const output = JSON.parse(result.stdout)
    expect(output).toMatchObject({applied: true, failed: [], missing: [], name: 'three-parts', outcome: 'merged', problem: null, version: expect.any(Number)})
    expect(output.units.map((unit: {unit: string; status: string}) => [unit.unit, unit.status])).toEqual([
      ['api', 'merged'],
      ['web', 'merged'],
      ['docs', 'merged'],
    ])
    expect(output.units[1].changed).toEqual(['src/web/logo.bin'])
    expect(output.checks).toEqual([expect.objectContaining({command: expect.stringContaining('test -f src/api/route.ts'), exitCode: 0})])
    // The merged tree, on disk: every unit's change, the logo byte for byte, nothing staged.
    expect(readFileSync(path.join(job.repo, 'src/api/route.ts'), 'utf8')).toContain('/route')
    expect(readFileSync(path.join(job.repo, 'src/web/logo.bin'))).toEqual(LOGO)
    expect(readFileSync(path.join(job.repo, 'docs/guide.md'), 'utf8')).toContain('/route')
    expect(readFileSync(path.join(job.repo, 'src/web/index.ts'), 'utf8')).toBe(UNIT_FILES['src/web/index.ts'])
    expect(
      gitStatus(job.repo)
        .split('\n')
        .map((line) => line.trim())
        .sort(),
    ).toEqual(['?? src/api/route.ts', '?? src/web/logo.bin', 'M docs/guide.md'])

    // The text report: a row per unit on stdout, the tally on stderr; in GitHub Actions, the job summary's table.
    const summary = path.join(sandbox.root, `summary-${++jobs}.md`)
    const text = await mergeWith({GITHUB_STEP_SUMMARY: summary}, mergeJob(), results)
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toMatch(/three-parts: 3 of 3 units merged\n {2}api: merged; 1 files changed/)
    expect(text.stderr).toContain('Merge complete! 3 of 3 units merged')
    const markdown = readFileSync(summary, 'utf8')
    expect(markdown).toContain('## wave plans merge: three-parts')
    expect(markdown).toMatch(/\| web \| merged \| 0 \| 1 \| 0 \| test -f src\/web\/logo\.bin passed \|/)
  })

  it('refuses results of an earlier approval of the same plan, once it is approved again', async () => {
    const job = mergeJob()
    const again = await runWave(['approve', job.planPath, '--mode', 'bypassPermissions'], {cwd: job.repo, home: job.home})
    expect(again.code, again.stderr).toBe(0)
    const result = await merge(job, results)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/ran under another approval of three-parts/)
    expect(gitStatus(job.repo)).toBe('')
  })

  it('refuses a result of another plan, naming it, and applies nothing', async () => {
    const folder = resultsCopy()
    const file = resultFile(folder, 'web')
    writeFileSync(file, JSON.stringify({...readJson(file), plan: {name: 'three-parts', sha256: sha256('another plan')}}))
    const job = mergeJob()
    const result = await merge(job, folder)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain(`The unit result ${file} is of another plan`)
    expect(gitStatus(job.repo)).toBe('')
  })

  it('refuses a unit twice, naming both results', async () => {
    const folder = resultsCopy()
    const twin = path.join(folder, 'again')
    mkdirSync(twin)
    copyFileSync(resultFile(folder, 'docs'), path.join(twin, 'docs.result.json'))
    copyFileSync(patchFile(folder, 'docs'), path.join(twin, 'docs.patch'))
    const job = mergeJob()
    const result = await merge(job, folder)
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/The unit docs has two results: .*docs\.result\.json and .*docs\.result\.json/)
    expect(gitStatus(job.repo)).toBe('')
  })

  it("refuses a patch that reaches into another unit's files (its sha256 made to match), applying nothing", async () => {
    const folder = resultsCopy()
    // api's patch also carries web's change: a sandboxed job writing what it was not given.
    const patch = Buffer.concat([readFileSync(patchFile(folder, 'api')), readFileSync(patchFile(folder, 'web'))])
    writeFileSync(patchFile(folder, 'api'), patch)
    const file = resultFile(folder, 'api')
    const result0 = readJson(file)
    writeFileSync(file, JSON.stringify({...result0, patch: {...result0.patch, bytes: patch.length, sha256: sha256(patch)}}))
    const job = mergeJob()
    const result = await merge(job, folder, '--json')
    expect(result.code).toBe(7)
    expect(result.stderr).toContain('The merge of three-parts is refused: unit api: its patch changes files outside its scope: src/web/logo.bin')
    expect(gitStatus(job.repo)).toBe('')

    // A patch whose bytes differ from what its result names is refused too.
    writeFileSync(file, JSON.stringify(result0))
    const mismatch = await merge(job, folder)
    expect(mismatch.code).toBe(2)
    expect(mismatch.stderr).toContain('is not the one its result')
  })

  it('names missing and failed units and applies nothing (exit 7); --partial applies the rest', async () => {
    const folder = resultsCopy()
    const web = resultFile(folder, 'web')
    writeFileSync(web, JSON.stringify({...readJson(web), exitCode: 7, outcome: 'failed'}))
    const withoutDocs = [path.join(folder, 'wave-unit-api'), path.join(folder, 'wave-unit-web')]

    const job = mergeJob()
    const result = await merge(job, ...withoutDocs, '--json')
    expect(result.code).toBe(7)
    const output = JSON.parse(result.stdout)
    expect(output).toMatchObject({applied: false, failed: ['web'], missing: ['docs'], outcome: 'incomplete'})
    expect(output.problem).toContain('unit docs missing (no result); unit web failed: nothing applied')
    expect(gitStatus(job.repo)).toBe('')

    const partial = await merge(job, ...withoutDocs, '--partial', '--json')
    expect(partial.code).toBe(7)
    const applied = JSON.parse(partial.stdout)
    expect(applied.applied).toBe(true)
    expect(applied.units.map((unit: {unit: string; status: string}) => [unit.unit, unit.status])).toEqual([
      ['api', 'merged'],
      ['web', 'failed'],
      ['docs', 'missing'],
    ])
    // Only api's change is in the tree, and the plan's checks, run on it, say what is not there.
    expect(gitStatus(job.repo)).toBe('?? src/api/route.ts')
    expect(applied.checks[0].exitCode).not.toBe(0)

    // Text mode says on stderr what the failing plan check printed, as wave run does at exit 7, and the way on.
    const text = await merge(mergeJob(), ...withoutDocs, '--partial')
    expect(text.code).toBe(7)
    expect(text.stderr).toContain(`$ ${applied.checks[0].command} (`)
    expect(text.stderr).toContain(applied.checks[0].outputTail)
    expect(text.stderr).toContain('Next: run the units web, docs again')
  })

  it('refuses the merge when the work tree has changes the merged patch would overwrite', async () => {
    const job = mergeJob()
    writeFileSync(path.join(job.repo, 'docs/guide.md'), '# Guide, edited here\n')
    const result = await merge(job, results)
    expect(result.code).toBe(7)
    expect(result.stderr).toContain('the work tree: the merged change does not apply to it')
    expect(readFileSync(path.join(job.repo, 'docs/guide.md'), 'utf8')).toBe('# Guide, edited here\n')
    expect(gitStatus(job.repo)).toBe('M docs/guide.md')
  })

  // Issue 48: the plan's checks run code the units wrote; what it writes outside the units' paths is
  // a change no approval covers, and the merge reads the tree again after the checks (exit 7).
  describe("the plan's checks held to the units' paths", () => {
    /** A `grep` inside unit api's paths, first on the checks' PATH: it writes `files`, then greps. */
    function hijackedGrep(job: Job, files: string[]): Record<string, string> {
      const bin = path.join(job.repo, 'src/api/bin')
      mkdirSync(bin, {recursive: true})
      const writes = files.map((file) => `echo pwned > ${JSON.stringify(path.join(job.repo, file))}`).join('\n')
      writeFileSync(path.join(bin, 'grep'), `#!/bin/sh\n${writes}\nexec /usr/bin/grep "$@"\n`, {mode: 0o755})
      return {PATH: `${bin}:${process.env.PATH}`}
    }

    it('a check that writes README.md and .gitlab-ci.yml: exit 7 naming both', async () => {
      const job = mergeJob()
      const result = await mergeWith(hijackedGrep(job, ['README.md', '.gitlab-ci.yml']), job, results, '--json')
      // The payload ran: both files are written on disk; the merge says so and fails.
      expect(readFileSync(path.join(job.repo, '.gitlab-ci.yml'), 'utf8')).toBe('pwned\n')
      expect(result.code, result.stderr).toBe(7)
      const output = JSON.parse(result.stdout)
      expect(output.problem).toMatch(/the plan's checks changed paths outside the units': (README\.md, \.gitlab-ci\.yml|\.gitlab-ci\.yml, README\.md)/)
    })

    it("control: the same check writing inside a unit's paths merges (exit 0)", async () => {
      const job = mergeJob()
      const result = await mergeWith(hijackedGrep(job, ['src/api/generated.txt']), job, results, '--json')
      expect(readFileSync(path.join(job.repo, 'src/api/generated.txt'), 'utf8')).toBe('pwned\n')
      expect(result.code, result.stderr).toBe(0)
      expect(JSON.parse(result.stdout).problem).toBeNull()
    })
  })
})
