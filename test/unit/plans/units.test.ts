import {describe, expect, it} from 'vitest'

import {bindContract, contractLine, parseContract} from '../../../src/plans/contract.js'

const PLAN = `# Split the API and the web client

## Goal
Rename the user endpoint.

## Scope
- src/**
- test/**

## Verification
- \`npm test\`

## Units

These run as separate jobs.

### api
Rename the route in \`src/api/routes.ts\`.

#### Scope
- \`src/api/**\`
- test/api

#### Verification
- \`npm test -- test/api\`

#### Notes
Keep the old route as an alias.

### web
Call the new route.

#### Scope
- src/web/**

#### Verification
- \`npm run build:web\`

### docs-site
#### Scope
- src/docs/**

## Risks
- The alias could outlive its use.
`

describe('a plan with ## Units', () => {
  it('reads each unit: its name, its own scope and checks, and the rest of its text as instructions', async () => {
    const contract = await parseContract(PLAN)
    expect(contract.units).toEqual([
      {
        instructions: 'Rename the route in `src/api/routes.ts`.\n\n#### Notes\nKeep the old route as an alias.',
        name: 'api',
        scope: ['src/api/**', 'test/api'],
        verify: ['npm test -- test/api'],
      },
      {instructions: 'Call the new route.', name: 'web', scope: ['src/web/**'], verify: ['npm run build:web']},
      {instructions: '', name: 'docs-site', scope: ['src/docs/**'], verify: []},
    ])
    expect(contract.unitErrors).toEqual([])
    // A unit's #### Scope is the unit's, not a second plan ## Scope (which would be refused); the plan's own lists are untouched.
    expect(contract.scope).toEqual(['src/**', 'test/**'])
    expect(contract.verify).toEqual(['npm test'])
    expect(contract.sections).toEqual({scope: true, units: true, verify: true})
    expect(contractLine(contract)).toBe('Plan: 2 paths in scope, 1 check (npm test); 3 units (api, web, docs-site)')
  })

  it('a plan without units runs as one job: no units, no unit count', async () => {
    const contract = await parseContract('## Scope\n- src\n\n## Verification\n- `npm test`\n')
    expect(contract.units).toEqual([])
    expect(contractLine(contract)).toBe('Plan: 1 path in scope, 1 check (npm test)')
    expect(bindContract(contract).units).toBeUndefined()
  })

  it('ends the units section at the next heading of its level', async () => {
    const contract = await parseContract(PLAN)
    expect(contract.units.at(-1)?.instructions).not.toContain('alias could outlive')
  })

  it('names both units whose scopes can touch the same file, and the entries that overlap', async () => {
    const contract = await parseContract(PLAN.replace('- src/web/**', '- src/**/*.ts'))
    expect(contract.unitErrors).toEqual([
      "Units api and web can change the same files: api's src/api/** and web's src/**/*.ts overlap. Give each unit paths no other unit's cover.",
      "Units web and docs-site can change the same files: web's src/**/*.ts and docs-site's src/docs/** overlap. Give each unit paths no other unit's cover.",
    ])
  })

  it('names a unit path outside the plan scope; a plan without ## Scope allows any', async () => {
    const outside = await parseContract(PLAN.replace('- src/docs/**', '- lib/docs/**'))
    expect(outside.unitErrors).toEqual(["Unit docs-site's scope lib/docs/** is not inside the plan's ## Scope (src/**, test/**)."])
    const noScope = await parseContract(PLAN.replace('## Scope\n- src/**\n- test/**\n', '').replace('- src/docs/**', '- lib/docs/**'))
    expect(noScope.unitErrors).toEqual([])
  })

  it('refuses names that cannot name a job, names twice, units without a path', async () => {
    const contract = await parseContract(
      PLAN.replace('### web', '### API').replace('### docs-site\n#### Scope\n- src/docs/**', '### docs site\nNothing to scope.'),
    )
    expect(contract.unitErrors).toEqual([
      "Two units are named API (lines 17 and 30): each unit's name is its own.",
      expect.stringMatching(/^Unit "docs site" \(line \d+\): a unit name is up to 64 letters/),
      'Unit docs site (line 39) lists no path in its #### Scope: every unit names at least one.',
    ])
  })

  it('refuses a unit path that is absolute or climbs out, and an empty ## Units', async () => {
    const climbing = await parseContract(PLAN.replace('- src/docs/**', '- ../elsewhere/**'))
    expect(climbing.unitErrors[0]).toBe("Unit docs-site's #### Scope: ../elsewhere/**: a scope path must not climb out of the workspace with ..")
    const empty = await parseContract('## Scope\n- src\n\n## Units\nNone yet.\n')
    expect(empty.unitErrors).toEqual(['The plan has a ## Units section with no unit in it: give each unit a ### <name> heading.'])
  })

  it('refuses a second ## Units section, naming both lines', async () => {
    await expect(parseContract(`${PLAN}\n## Units\n### more\n#### Scope\n- x\n`)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/two ## Units sections, at line 13 and at line \d+/),
    })
  })
})

describe('binding units', () => {
  it('binds each unit with its paths and checks, and the unit budget', async () => {
    const bound = bindContract(await parseContract(PLAN), {unitBudgetUsd: 2})
    expect(bound.units).toEqual([
      {budgetUsd: 2, name: 'api', paths: ['src/api/**', 'test/api'], verify: [{command: 'npm test -- test/api'}]},
      {budgetUsd: 2, name: 'web', paths: ['src/web/**'], verify: [{command: 'npm run build:web'}]},
      {budgetUsd: 2, name: 'docs-site', paths: ['src/docs/**'], verify: []},
    ])
    expect(bindContract(await parseContract(PLAN), {noVerify: true}).units?.map((unit) => unit.verify)).toEqual([[], [], []])
  })

  it('refuses units with problems (exit 2), naming them', async () => {
    const contract = await parseContract(PLAN.replace('- src/web/**', '- src/**'))
    expect(() => bindContract(contract)).toThrow(/cannot be approved: Units api and web can change the same files/)
  })

  it("refuses units outside the approver's --scope", async () => {
    const contract = await parseContract(PLAN)
    expect(() => bindContract(contract, {scope: ['src/api', 'src/web', 'test']})).toThrow(
      /Unit docs-site's scope src\/docs\/\*\* is not inside the approved --scope/,
    )
    expect(bindContract(contract, {scope: ['src', 'test']}).units).toHaveLength(3)
  })

  it('refuses --unit-budget-usd for a plan without units', async () => {
    expect(() => bindContract(contract0(), {unitBudgetUsd: 1})).toThrow(/--unit-budget-usd bounds each unit, and the plan has no ## Units section/)
  })
})

function contract0() {
  return {problems: [], scope: [], sections: {scope: false, verify: false}, unitErrors: [], units: [], verify: [], warnings: []}
}
