import {describe, expect, it} from 'vitest'

import {contractLine, parseContract} from '../../../src/plans/contract.js'

const PLAN = `# Add a verbose flag

## Goal
Make the CLI chatty.

## Scope
- src/cli.ts
- \`test/cli.test.ts\` (new tests)
- docs/** — the guide
- ./README.md

## Verification
- \`npm test\`
- run \`npm run lint\` (allow rule \`Bash(npm run lint:*)\`)
- \`npm test && echo "<done>"\`
- reading the output by eye

## Risks
- \`rm -rf /\` is not a check
`

describe('parseContract', () => {
  it('reads the Scope and Verification sections', async () => {
    const contract = await parseContract(PLAN)
    expect(contract.scope).toEqual(['src/cli.ts', 'test/cli.test.ts', 'docs/**', 'README.md'])
    expect(contract.verify).toEqual(['npm test', 'npm run lint', 'npm test && echo "<done>"'])
    expect(contract.sections).toEqual({scope: true, verify: true})
    expect(contract.problems).toEqual([])
  })

  it('reads neither section out of a code block, and ends a section at the next heading', async () => {
    const contract = await parseContract('# P\n\n```md\n## Scope\n- everything\n```\n\n## Changes\n- `npm publish`\n')
    expect(contract).toEqual({problems: [], scope: [], sections: {scope: false, verify: false}, verify: []})
  })

  it('leaves out absolute paths and paths that climb out, saying why', async () => {
    const contract = await parseContract('## Scope\n- /etc/passwd\n- ../other/x\n- src/ok.ts\n- none\n')
    expect(contract.scope).toEqual(['src/ok.ts'])
    expect(contract.problems).toHaveLength(2)
    expect(contract.problems[0]).toMatch(/relative to the workspace root/)
  })

  it('takes a section that says none as present and empty', async () => {
    const contract = await parseContract('## Scope\n- _none_\n\n## Verification\nNone needed.\n')
    expect(contract).toEqual({problems: [], scope: [], sections: {scope: true, verify: true}, verify: []})
  })

  it('nested bullets do not count as their own entries', async () => {
    const contract = await parseContract('## Scope\n- src/a.ts\n  - because it is there\n')
    expect(contract.scope).toEqual(['src/a.ts'])
  })
})

describe('contractLine', () => {
  it('says what the plan holds the run to', async () => {
    expect(contractLine(await parseContract('## Scope\n- a\n- b\n- c\n## Verification\n- `npm test`\n- `npm run lint`\n'))).toBe(
      'Plan: 3 paths in scope, 2 checks (npm test, npm run lint)',
    )
    expect(contractLine(await parseContract('## Scope\n- a\n## Verification\n- `npm test`\n'))).toBe('Plan: 1 path in scope, 1 check (npm test)')
    expect(contractLine(await parseContract('# Only a title\n'))).toMatch(/nothing will be held to/)
  })
})

describe('a plan stating its contract twice', () => {
  it('is refused, naming both places: two ## Scope sections, two ## Verification sections (exit 2)', async () => {
    const twice = `${PLAN}\n${'filler line\n\n'.repeat(20)}## Scope\n- .github/workflows/ci.yml\n`
    await expect(parseContract(twice)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/two ## Scope sections, at line 6 and at line \d{2}/),
    })
    await expect(parseContract(`${PLAN}\n### Verification steps\n- \`exit 0\`\n`)).rejects.toThrow(/two ## Verification sections, at line 12 and at line/)
  })

  it('is read when each section is there once, and a heading inside a code block is no section (control)', async () => {
    await expect(parseContract(`${PLAN}\n\`\`\`md\n## Scope\n- anything\n\`\`\`\n`)).resolves.toMatchObject({
      scope: ['src/cli.ts', 'test/cli.test.ts', 'docs/**', 'README.md'],
    })
  })
})
