/**
 * A plan's units end to end on the scripted server (issue 36, points 1 to 3): `wave plan` reads them
 * with the contract (their JSON, the summary line, what is wrong with them), `wave approve` binds them
 * (or refuses them), and `wave plans units` lists the bound units for a CI system in each format.
 */
import {existsSync, readFileSync, writeFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'
import {parse as parseYaml} from 'yaml'

import {type Sandbox, writePlanFile} from '../support/cli.js'
import {useScriptedSession, waveIn} from '../support/session.js'
import {type MessagesServer, planPathIn, reply, toolUse} from '../support/messages-server.js'

let sandbox: Sandbox
let server: MessagesServer
useScriptedSession((session) => ({sandbox, server} = session))
const wave = waveIn(() => ({sandbox, server}))

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'))
const recordOf = (planPath: string) => planPath.replace(/\.md$/, '.approval.json')

const UNITS_PLAN = `# Rename the user endpoint across the API, the web client and the docs

## Goal
One name for the endpoint everywhere.

## Scope
- src/**
- docs/**

## Verification
- \`npm test\`

## Units

### api
Rename the route in \`src/api/routes.ts\`; keep the old one as an alias.

#### Scope
- \`src/api/**\`

#### Verification
- \`npm test -- src/api\`

### web
Call the new route from the client.

#### Scope
- src/web/**

#### Verification
- \`npm run build:web\`

### docs
#### Scope
- docs/**

## Risks
- The alias could outlive its use.
`

/** The scripted model writes `plan` as its plan file, then ends its turn. */
function modelWrites(plan: string): void {
  server.push((request) => reply(toolUse('Write', {content: plan, file_path: planPathIn(request)})), reply('Planned.'))
}

describe('wave plan reads the units', () => {
  it('three units: their contract in --json, counted in the summary line', async () => {
    modelWrites(UNITS_PLAN)
    const result = await wave(['plan', '--task', 'Rename the endpoint', '--json'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain('Plan: 2 paths in scope, 1 check (npm test); 3 units (api, web, docs)')
    expect(result.stderr).not.toContain('wave approve refuses')
    const {contract} = JSON.parse(result.stdout)
    expect(contract.units).toEqual([
      {name: 'api', scope: ['src/api/**'], verify: ['npm test -- src/api']},
      {name: 'web', scope: ['src/web/**'], verify: ['npm run build:web']},
      {name: 'docs', scope: ['docs/**'], verify: []},
    ])
    expect(contract.unitErrors).toEqual([])
    // The units' #### Scope sections are not taken for a second ## Scope (which would be refused), nor added to the plan's.
    expect(contract.scope).toEqual(['src/**', 'docs/**'])
  })

  it('two units that can touch the same file: named both at plan (the plan is kept), refused at approve (exit 2, no record)', async () => {
    modelWrites(UNITS_PLAN.replace('- src/web/**', '- `src/**/*.ts`'))
    const planned = await wave(['plan', '--task', 'Rename the endpoint', '--json'])
    expect(planned.code, planned.stderr).toBe(0)
    const overlap = "Units api and web can change the same files: api's src/api/** and web's src/**/*.ts overlap."
    expect(planned.stderr).toContain(overlap)
    expect(planned.stderr).toContain('wave approve refuses the plan until this is fixed')
    const {contract, planPath} = JSON.parse(planned.stdout)
    expect(contract.unitErrors).toEqual([expect.stringContaining(overlap)])

    const approved = await wave(['approve', planPath])
    expect(approved.code).toBe(2)
    expect(approved.stderr).toContain(`Error: The plan's ## Units cannot be approved: ${overlap}`)
    expect(existsSync(recordOf(planPath))).toBe(false)
  })

  it("a unit scope outside the plan's: named at plan, refused at approve; the same unit inside approves (control)", async () => {
    modelWrites(UNITS_PLAN.replace('- docs/**\n\n## Risks', '- site/docs/**\n\n## Risks'))
    const planned = await wave(['plan', '--task', 'Rename the endpoint', '--json'])
    expect(planned.code, planned.stderr).toBe(0)
    const outside = "Unit docs's scope site/docs/** is not inside the plan's ## Scope (src/**, docs/**)."
    expect(planned.stderr).toContain(outside)
    const {planPath} = JSON.parse(planned.stdout)
    const refused = await wave(['approve', planPath])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(outside)
    expect(existsSync(recordOf(planPath))).toBe(false)

    // The plan fixed by hand: approved.
    writeFileSync(planPath, UNITS_PLAN)
    expect((await wave(['approve', planPath])).code).toBe(0)
  })
})

describe('wave approve binds the units', () => {
  it('records each unit with its paths, checks and budget, and the plan budget; shows them', async () => {
    const planPath = writePlanFile(sandbox, UNITS_PLAN)
    const result = await wave(['approve', planPath, '--unit-budget-usd', '2', '--max-budget-usd', '5'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout.trim()).toBe(recordOf(planPath))
    const record = readJson(recordOf(planPath))
    expect(record.units).toEqual([
      {budgetUsd: 2, name: 'api', paths: ['src/api/**'], verify: [{command: 'npm test -- src/api'}]},
      {budgetUsd: 2, name: 'web', paths: ['src/web/**'], verify: [{command: 'npm run build:web'}]},
      {budgetUsd: 2, name: 'docs', paths: ['docs/**'], verify: []},
    ])
    expect(record.maxBudgetUsd).toBe(5)
    expect(result.stderr).toContain('Unit api: src/api/**; checks: npm test -- src/api, which the model may run (at most $2.00)')
    expect(result.stderr).toContain('Unit docs: docs/**; no checks (at most $2.00)')
    expect(result.stderr).toMatch(/scope 2 paths \(warn\), checks: npm test; at most \$5\.00; 3 units, at most \$2\.00 each/)

    const json = await wave(['approve', planPath, '--json'])
    expect(json.code, json.stderr).toBe(0)
    const output = JSON.parse(json.stdout)
    expect(output.version).toBe(1)
    expect(output.units.map((unit: {name: string}) => unit.name)).toEqual(['api', 'web', 'docs'])
    // No flag this time: no budget recorded.
    expect(output.units[0].budgetUsd).toBeUndefined()
    expect(output.maxBudgetUsd).toBeUndefined()
  })

  it('--unit-budget-usd on a plan without units is refused (exit 2); without the flag it approves', async () => {
    const planPath = writePlanFile(sandbox, '# P\n\n## Scope\n- src\n')
    const refused = await wave(['approve', planPath, '--unit-budget-usd', '1'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('--unit-budget-usd bounds each unit, and the plan has no ## Units section.')
    expect(existsSync(recordOf(planPath))).toBe(false)
    const approved = await wave(['approve', planPath])
    expect(approved.code, approved.stderr).toBe(0)
    expect(readJson(recordOf(planPath)).units).toBeUndefined()
  })

  it('the budget approve binds stops the run (exit 5); a run given more is refused (exit 2)', async () => {
    const planPath = writePlanFile(sandbox, '# P\n\n## Scope\n- src\n')
    expect((await wave(['approve', planPath, '--max-budget-usd', '0.000001'])).code).toBe(0)
    // Above the approved cap: refused before any request, naming both (record-budget.test.ts has the rest).
    const above = await wave(['run', planPath, '--max-budget-usd', '100'])
    expect(above.code, above.stderr).toBe(2)
    expect(above.stderr).toContain('--max-budget-usd 100 is above the budget of 0.000001 USD')
    server.push(reply('Working on it at length.'))
    const run = await wave(['run', planPath])
    expect(run.code, run.stderr).toBe(5)
    expect(run.stderr).toMatch(/budget/i)
  })
})

describe('wave plans units', () => {
  it('prints the bound units in each format, ready for a CI matrix', async () => {
    const planPath = writePlanFile(sandbox, UNITS_PLAN)
    expect((await wave(['approve', planPath, '--unit-budget-usd', '3'])).code).toBe(0)

    const lines = await wave(['plans', 'units', 'brave-otter'])
    expect(lines.code, lines.stderr).toBe(0)
    expect(lines.stdout).toBe('api\nweb\ndocs\n')

    const github = await wave(['plans', 'units', planPath, '--format', 'github-matrix'])
    expect(github.code, github.stderr).toBe(0)
    expect(github.stdout.trim().split('\n')).toHaveLength(1)
    expect(JSON.parse(github.stdout)).toEqual({include: [{unit: 'api'}, {unit: 'web'}, {unit: 'docs'}]})

    const gitlab = await wave(['plans', 'units', planPath, '--format', 'gitlab'])
    expect(gitlab.code, gitlab.stderr).toBe(0)
    expect(parseYaml(gitlab.stdout)).toEqual({parallel: {matrix: [{UNIT: ['api', 'web', 'docs']}]}})

    const pipeline = await wave(['plans', 'units', planPath, '--format', 'gitlab-pipeline', '--extends', '.wave-unit', '--include', '.gitlab/wave-unit.yml'])
    expect(pipeline.code, pipeline.stderr).toBe(0)
    const child = parseYaml(pipeline.stdout)
    expect(child.include).toEqual([{local: '.gitlab/wave-unit.yml'}])
    expect(Object.keys(child).filter((key) => key !== 'include')).toEqual(['wave-unit-api', 'wave-unit-web', 'wave-unit-docs'])
    expect(child['wave-unit-web']).toEqual({
      extends: '.wave-unit',
      script: ['wave run "$WAVE_PLAN" --unit "$UNIT"'],
      variables: {UNIT: 'web', WAVE_PLAN: 'brave-otter'},
    })

    const json = await wave(['plans', 'units', planPath, '--format', 'json'])
    expect(json.code, json.stderr).toBe(0)
    const listed = JSON.parse(json.stdout)
    expect(listed.version).toBe(1)
    expect(listed.plan).toEqual({name: 'brave-otter', sha256: readJson(recordOf(planPath)).plan.sha256})
    expect(listed.units[0]).toEqual({budgetUsd: 3, name: 'api', paths: ['src/api/**'], verify: [{command: 'npm test -- src/api'}]})
    // --json says the same as --format json.
    expect(JSON.parse((await wave(['plans', 'units', planPath, '--json'])).stdout)).toMatchObject({plan: listed.plan, units: listed.units, version: 1})
  })

  it('a unit named like a YAML number or boolean stays a string in the GitLab formats', async () => {
    const planPath = writePlanFile(sandbox, UNITS_PLAN.replace('### web', '### 1.0').replace('### docs', '### true'))
    expect((await wave(['approve', planPath])).code).toBe(0)
    const gitlab = await wave(['plans', 'units', planPath, '--format', 'gitlab'])
    expect(parseYaml(gitlab.stdout)).toEqual({parallel: {matrix: [{UNIT: ['api', '1.0', 'true']}]}})
    const child = parseYaml((await wave(['plans', 'units', planPath, '--format', 'gitlab-pipeline'])).stdout)
    expect(child['wave-unit-1.0'].variables.UNIT).toBe('1.0')
  })

  it('a plan without units: an empty list (it runs as one job)', async () => {
    const planPath = writePlanFile(sandbox, '# P\n\n## Scope\n- src\n')
    expect((await wave(['approve', planPath])).code).toBe(0)
    const lines = await wave(['plans', 'units', planPath])
    expect(lines.code, lines.stderr).toBe(0)
    expect(lines.stdout).toBe('')
    expect(lines.stderr).toContain('0 units in brave-otter (it runs as one job)')
    expect(JSON.parse((await wave(['plans', 'units', planPath, '--format', 'github-matrix'])).stdout)).toEqual({include: []})
  })

  it('exit 3 for a plan not approved (no record, rejected); exit 4 for one changed since', async () => {
    const planPath = writePlanFile(sandbox, UNITS_PLAN)
    const none = await wave(['plans', 'units', planPath, '--format', 'github-matrix'])
    expect(none.code).toBe(3)
    expect(none.stdout).toBe('')
    expect(none.stderr).toContain(`No approval record for ${planPath}`)

    expect((await wave(['approve', planPath, '--reject', '--feedback', 'Not now'])).code).toBe(0)
    const rejected = await wave(['plans', 'units', planPath])
    expect(rejected.code).toBe(3)
    expect(rejected.stderr).toContain('was rejected')

    expect((await wave(['approve', planPath])).code).toBe(0)
    writeFileSync(planPath, UNITS_PLAN.replace('### web', '### client'))
    const changed = await wave(['plans', 'units', planPath])
    expect(changed.code).toBe(4)
    expect(changed.stdout).toBe('')
    expect(changed.stderr).toContain('changed since it was approved')
  })
})
