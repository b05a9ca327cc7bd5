/**
 * The GitLab recipes for a plan's units (docs/ci/units.md): examples/gitlab-ci/wave-units.gitlab-ci.yml
 * (plan -> a manual approval in a protected environment -> the units' child pipeline, strategy depend),
 * the unit jobs' template examples/gitlab-ci/wave-unit.gitlab-ci.yml (one job per unit, then wave:merge),
 * and the /wave note flow's trigger in wave.gitlab-ci.yml; the child pipelines `wave plans units --format
 * gitlab-pipeline` and `wave gitlab` write, parsed together with the template as GitLab would include it.
 */
import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {formatJobList} from '../../../src/plans/job-matrix.js'
import {UNITS_PIPELINE_FILE, writeUnitsPipeline} from '../../../src/forges/gitlab/units-pipeline.js'
import type {ReviewOutcome} from '../../../src/review/steps.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8')

interface GitLabJob {
  stage?: string
  extends?: string | string[]
  needs?: unknown[]
  when?: string
  allow_failure?: boolean
  environment?: string | {name: string}
  script?: unknown[]
  before_script?: unknown[]
  after_script?: unknown[]
  variables?: Record<string, string>
  rules?: Array<{if: string}>
  trigger?: {include: Array<{artifact: string; job: string}>; strategy?: string}
  artifacts?: {paths?: string[]; when?: string; reports?: Record<string, string>}
}

type Pipeline = Record<string, GitLabJob> & {stages?: string[]; include?: Array<{local: string}>}

const recipe = parse(read('examples/gitlab-ci/wave-units.gitlab-ci.yml')) as Pipeline
const template = parse(read('examples/gitlab-ci/wave-unit.gitlab-ci.yml')) as Pipeline
const noteRecipe = parse(read('examples/gitlab-ci/wave.gitlab-ci.yml')) as Pipeline

const lines = (job: GitLabJob, key: 'script' | 'before_script' | 'after_script') => (job[key] ?? []).flat().map(String).join('\n')

/** A job with its `extends` chain resolved as GitLab resolves it (a deep merge of hashes, the job's own keys last). */
function resolved(pipeline: Pipeline, name: string): GitLabJob {
  const job = pipeline[name]
  if (!job) throw new Error(`no job ${name}`)
  const parents = [job.extends ?? []].flat().map((parent) => resolved(pipeline, parent))
  const merged: Record<string, unknown> = {}
  for (const layer of [...parents, job] as Array<Record<string, unknown>>) {
    for (const [key, value] of Object.entries(layer)) {
      const before = merged[key]
      merged[key] =
        value && typeof value === 'object' && !Array.isArray(value) && before && typeof before === 'object' && !Array.isArray(before)
          ? {...before, ...value}
          : value
    }
  }

  delete merged.extends
  return merged as GitLabJob
}

/** The child pipeline as GitLab builds it: the file, with the template it includes merged in. */
function withTemplate(child: Pipeline): Pipeline {
  expect(child.include).toEqual([{local: 'wave-unit.gitlab-ci.yml'}])
  const {include: _include, ...jobs} = child
  return {...template, ...jobs} as Pipeline
}

const realJobs = (pipeline: Pipeline) => Object.keys(pipeline).filter((key) => !key.startsWith('.') && !['stages', 'variables', 'include'].includes(key))

const LIST = {
  plan: {name: 'gentle-breeze', sha256: 'a'.repeat(64)},
  recordPath: '',
  units: ['api', 'web', '1.0'].map((name) => ({name, paths: [`${name}/**`], verify: []})),
}

describe('the GitLab units recipe (examples/gitlab-ci/wave-units.gitlab-ci.yml)', () => {
  it('plans, waits for a manual approval in the protected environment, then triggers the units child pipeline and mirrors its status', () => {
    expect(recipe.stages).toEqual(['wave-plan', 'wave-approve', 'wave-units'])
    const approve = recipe['wave:approve']
    expect(approve).toMatchObject({allow_failure: false, environment: {name: 'wave-apply'}, needs: ['wave:plan'], stage: 'wave-approve', when: 'manual'})
    expect(recipe['wave:units']).toMatchObject({
      needs: ['wave:approve'],
      trigger: {include: [{artifact: 'wave-units.gitlab-ci.yml', job: 'wave:approve'}], strategy: 'depend'},
      variables: {WAVE_PARENT_PIPELINE_ID: '$CI_PIPELINE_ID'},
    })
  })

  it('approves exactly the planned bytes, then writes the child pipeline from wave plans units as an artifact', () => {
    expect(recipe['wave:plan'].artifacts).toMatchObject({paths: ['wave-plan/'], reports: {dotenv: 'wave-plan.env'}})
    const script = lines(recipe['wave:approve'], 'script')
    const check = script.indexOf('sha256sum --check --strict')
    expect(check).toBeGreaterThan(-1)
    expect(script.indexOf('wave approve')).toBeGreaterThan(check)
    expect(script).toContain('--unit-budget-usd "$WAVE_UNIT_BUDGET_USD"')
    expect(script).toContain('--extends .wave-unit --include "$WAVE_UNIT_TEMPLATE"')
    expect(script).toContain('--format gitlab-pipeline "$@" > wave-units.gitlab-ci.yml')
    expect(recipe['wave:approve'].artifacts?.paths).toEqual(['wave-plan/', 'wave-units.gitlab-ci.yml'])
    expect((recipe.variables as unknown as Record<string, string>).WAVE_UNIT_TEMPLATE).toBe('wave-unit.gitlab-ci.yml')
  })

  it('every script of the recipe and the template parses as bash', () => {
    for (const [pipeline, names] of [
      [recipe, ['wave:plan', 'wave:approve']],
      [template, ['.wave-unit-job', '.wave-unit-base', 'wave:merge']],
    ] as const) {
      for (const name of names) {
        for (const key of ['before_script', 'script', 'after_script'] as const) {
          execFileSync('bash', ['-n', '-c', lines(pipeline[name], key)], {stdio: ['ignore', 'pipe', 'pipe']})
        }
      }
    }
  })
})

describe('the unit jobs template (examples/gitlab-ci/wave-unit.gitlab-ci.yml)', () => {
  it('runs the units in one stage and wave:merge after them, even after a failed unit', () => {
    expect(template.stages).toEqual(['wave-units', 'wave-merge'])
    const merge = resolved(template, 'wave:merge')
    expect(merge).toMatchObject({stage: 'wave-merge', when: 'always'})
    // No needs: the merge takes the artifacts of every job of the earlier stage, whatever their names.
    expect(merge.needs).toBeUndefined()
    const script = lines(merge, 'script')
    expect(script).toContain('wave plans merge "$WAVE_HOME/plans/$WAVE_PLAN.md" wave-units --json > wave-merge.json')
    expect(script).toContain('wave gitlab --units-merged wave-merge.json')
    expect(script.indexOf('push')).toBeGreaterThan(script.indexOf('wave plans merge'))
    expect(script).toContain('-o merge_request.create')
  })

  it("keeps each unit's result and patch, and the plan, whatever its outcome; checks out the planned commit first", () => {
    const unit = resolved(template, '.wave-unit')
    expect(unit.artifacts).toMatchObject({paths: ['wave-units/', 'wave-plan/'], when: 'always'})
    const after = lines(unit, 'after_script')
    expect(after).toContain('cp "$WAVE_HOME/plans/$WAVE_PLAN.unit-$UNIT".* wave-units/')
    // From a /wave note, the unit's row in the plan's note, after the run whatever its outcome; never failing the job.
    const report = after.indexOf('wave gitlab --unit-result "$WAVE_HOME/plans/$WAVE_PLAN.unit-$UNIT.json"')
    expect(report).toBeGreaterThan(after.indexOf('if [ -n "$WAVE_THREAD" ]'))
    expect(after.slice(report).split('\n')[0]).toMatch(/\|\| echo /)
    const before = lines(unit, 'before_script')
    expect(before).toContain('git checkout --quiet --detach "$COMMIT"')
    expect(before.indexOf('git checkout')).toBeLessThan(before.indexOf('WAVE_INSTALL_COMMAND'))
  })

  it("installs a unit's dependencies as the note flow's jobs do: by the lockfile, else by the manifest", () => {
    const before = lines(resolved(template, '.wave-unit'), 'before_script')
    const noteJob = Object.values(noteRecipe)
      .map((job) =>
        typeof job === 'object' && job && !Array.isArray(job) ? [lines(job as GitLabJob, 'before_script'), lines(job as GitLabJob, 'script')].join('\n') : '',
      )
      .find((text) => text.includes('WAVE_INSTALL_RESULT'))!
    for (const command of ['npm ci --no-audit --no-fund', 'npm install --no-package-lock --no-audit --no-fund', 'python3 -m pip install -e .']) {
      expect(noteJob, command).toContain(command)
      expect(before, command).toContain(command)
    }
  })

  it('takes the approved plan from the job that approved it: wave:approve, or wave:run for a /wave note', () => {
    expect(resolved(template, '.wave-unit').needs).toEqual([{job: 'wave:approve', pipeline: '$WAVE_PARENT_PIPELINE_ID'}])
    expect(resolved(template, '.wave-unit-from-note').needs).toEqual([{job: 'wave:run', pipeline: '$WAVE_PARENT_PIPELINE_ID'}])
  })
})

describe('the child pipelines, with the template', () => {
  it('wave plans units --format gitlab-pipeline --extends .wave-unit: one job per unit in the units stage, then wave:merge', () => {
    const child = withTemplate(parse(formatJobList(LIST, 'gitlab-pipeline', {extends: '.wave-unit', include: 'wave-unit.gitlab-ci.yml'})) as Pipeline)
    expect(realJobs(child).sort()).toEqual(['wave-unit-1.0', 'wave-unit-api', 'wave-unit-web', 'wave:merge'])
    for (const name of ['api', 'web', '1.0']) {
      const job = resolved(child, `wave-unit-${name}`)
      expect(job.variables).toMatchObject({UNIT: name, WAVE_PLAN: 'gentle-breeze'})
      expect(job.stage).toBe('wave-units')
      expect(child.stages).toContain(job.stage)
      expect(job.needs).toEqual([{job: 'wave:approve', pipeline: '$WAVE_PARENT_PIPELINE_ID'}])
      expect(lines(job, 'script')).toBe('wave run "$WAVE_PLAN" --unit "$UNIT"')
      expect(job.before_script).toBeDefined()
    }
  })

  it("wave gitlab's file for /wave approve: the same jobs, extending .wave-unit-from-note, at the path wave.gitlab-ci.yml triggers", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'wave-units-pipeline-'))
    try {
      const outcome: ReviewOutcome = {
        event: 'note',
        message: 'Approved',
        outcome: 'approved',
        plan: {name: 'gentle-breeze', sha256: 'a'.repeat(64), status: 'running'},
        units: ['api', 'web'],
      }
      const file = await writeUnitsPipeline(outcome, {CI_PROJECT_DIR: dir}, '/nowhere')
      expect(file).toBe(path.join(dir, UNITS_PIPELINE_FILE))
      const child = withTemplate(parse(readFileSync(file!, 'utf8')) as Pipeline)
      expect(realJobs(child).sort()).toEqual(['wave-unit-api', 'wave-unit-web', 'wave:merge'])
      expect(resolved(child, 'wave-unit-api').needs).toEqual([{job: 'wave:run', pipeline: '$WAVE_PARENT_PIPELINE_ID'}])

      // The /wave note pipeline triggers that file from wave:run, which is told where to write it.
      expect(noteRecipe['wave:units']).toMatchObject({
        needs: ['wave:run'],
        trigger: {include: [{artifact: UNITS_PIPELINE_FILE, job: 'wave:run'}], strategy: 'depend'},
      })
      expect(noteRecipe['wave:run'].variables?.WAVE_GITLAB_UNITS_FILE).toBe(UNITS_PIPELINE_FILE)

      // Control: another outcome of a job told where to write gets a child with one job that only says so.
      // It runs (no `when: manual`): a child of manual jobs only is skipped, and a `strategy: depend`
      // trigger of a skipped child fails, so every /wave plan note would end with a red wave:units.
      const other = await writeUnitsPipeline(
        {event: 'note', message: 'Planned', outcome: 'planned'},
        {CI_PROJECT_DIR: dir, WAVE_GITLAB_UNITS_FILE: UNITS_PIPELINE_FILE},
        '/nowhere',
      )
      const idle = parse(readFileSync(other!, 'utf8'))
      expect(idle).toEqual({
        'wave:no-units': {script: ['echo "$WAVE_NOTE"'], variables: {WAVE_NOTE: 'wave gitlab: planned, no plan units to run.'}},
      })
      for (const job of Object.values(idle) as Array<{when?: string; rules?: unknown}>) {
        expect(job.when).toBeUndefined()
        expect(job.rules).toBeUndefined()
      }
      // ... and a job not told so writes nothing.
      expect(await writeUnitsPipeline({event: 'note', message: 'Planned', outcome: 'planned'}, {CI_PROJECT_DIR: dir}, '/nowhere')).toBeUndefined()
    } finally {
      rmSync(dir, {force: true, recursive: true})
    }
  })
})

describe('the GitLab formats of wave plans units, as data', () => {
  it('the child pipeline is JSON (which GitLab reads as YAML): both parsers read the same jobs', () => {
    const text = formatJobList(LIST, 'gitlab-pipeline', {extends: '.wave-unit', include: 'wave-unit.gitlab-ci.yml'})
    const asJson = JSON.parse(text)
    expect(parse(text)).toEqual(asJson)
    expect(asJson['wave-unit-1.0']).toEqual({
      extends: '.wave-unit',
      script: ['wave run "$WAVE_PLAN" --unit "$UNIT"'],
      variables: {UNIT: '1.0', WAVE_PLAN: 'gentle-breeze'},
    })
  })

  it('names YAML would read as something else stay strings, in both GitLab formats; a template name full of YAML syntax stays whole', () => {
    const list = {...LIST, units: ['1.0', 'true', 'null', '0x10', '1e3', '.inf', 'NO', '-'].map((name) => ({name, paths: [], verify: []}))}
    const names = list.units.map((unit) => unit.name)
    expect(parse(formatJobList(list, 'gitlab'))).toEqual({parallel: {matrix: [{UNIT: names}]}})
    const hostile = `.t: "x" # y\n- *z 'q'`
    const child = parse(formatJobList(list, 'gitlab-pipeline', {extends: hostile, include: '{a}: [b]'})) as Pipeline
    expect(child.include).toEqual([{local: '{a}: [b]'}])
    expect(Object.keys(child).filter((key) => key !== 'include')).toEqual(names.map((name) => `wave-unit-${name}`))
    for (const name of names) expect(child[`wave-unit-${name}`]).toMatchObject({extends: hostile, variables: {UNIT: name}})
  })

  it('the snippet stays the block YAML a reader pastes into a job; a plan without units is an empty matrix, and a child pipeline of one job saying so', () => {
    expect(formatJobList(LIST, 'gitlab')).toBe('parallel:\n  matrix:\n    - UNIT: ["api","web","1.0"]\n')
    const empty = {...LIST, units: []}
    expect(parse(formatJobList(empty, 'gitlab'))).toEqual({parallel: {matrix: [{UNIT: []}]}})
    expect(JSON.parse(formatJobList(empty, 'gitlab-pipeline'))).toEqual({
      'wave-no-units': {script: ['echo "$WAVE_NOTE"'], variables: {WAVE_NOTE: 'The plan gentle-breeze has no units: it runs as one job.'}},
    })
  })
})
