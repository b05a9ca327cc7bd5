import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {bindContract, contractLine, parseContract} from '../../../src/plans/contract.js'

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
    expect(contract).toEqual({problems: [], scope: [], sections: {scope: false, verify: false}, unitErrors: [], units: [], verify: [], warnings: []})
  })

  it('leaves out absolute paths and paths that climb out, saying why', async () => {
    const contract = await parseContract('## Scope\n- /etc/passwd\n- ../other/x\n- src/ok.ts\n- none\n')
    expect(contract.scope).toEqual(['src/ok.ts'])
    expect(contract.problems).toHaveLength(2)
    expect(contract.problems[0]).toMatch(/relative to the workspace root/)
  })

  it('takes a section that says none as present and empty', async () => {
    const contract = await parseContract('## Scope\n- _none_\n\n## Verification\nNone needed.\n')
    expect(contract).toEqual({problems: [], scope: [], sections: {scope: true, verify: true}, unitErrors: [], units: [], verify: [], warnings: []})
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

describe('files the Changes name outside the Scope (issue #35)', () => {
  const plan = (scope: string, changes = '- `src/a.ts`: x\n- `docs/guide.md`: y\n  - and `test/a.test.ts`\n- see `npm test` and `https://x.io/a.js`') =>
    `# P\n\n## Changes\n${changes}\n\n## Scope\n${scope}\n`

  it.each<[string, string, string[]]>([
    ['every file listed', '- `src/a.ts`\n- `docs/guide.md`\n- `test/a.test.ts`', []],
    ['a glob covers them', '- `src/**`\n- `docs/**`\n- `test/**`', []],
    ['one missing', '- `src/a.ts`\n- `docs/**`', ['test/a.test.ts']],
    ['two missing', '- `src/**`', ['docs/guide.md', 'test/a.test.ts']],
  ])('%s', async (_name, scope, missing) => {
    const contract = await parseContract(plan(scope))
    if (missing.length === 0) expect(contract.warnings).toEqual([])
    else expect(contract.warnings).toEqual([expect.stringContaining(`The plan's Changes name ${missing.join(', ')}, which its ## Scope does not cover`)])
  })

  it('takes an identifier in prose for no path: a bare name counts only as a file of the workspace (issue 47)', async () => {
    const workspace = mkdtempSync(path.join(tmpdir(), 'wave-contract-'))
    try {
      writeFileSync(path.join(workspace, 'README.md'), '# x\n')
      const prose = plan('- `src/a.ts`\n- `docs/**`\n- `test/**`', '- `src/a.ts`: assert with `t.throws` and `path.join`\n- `README.md`: document it')
      // README.md exists and is outside the scope: named. t.throws and path.join are no files: not named.
      expect((await parseContract(prose, {workspace})).warnings).toEqual([expect.stringContaining("The plan's Changes name README.md, which")])
      // Control: where README.md is no file, nothing bare is named; with a separator, a new file still is.
      expect((await parseContract(prose, {workspace: path.join(workspace, 'nowhere')})).warnings).toEqual([])
      expect((await parseContract(prose)).warnings).toEqual([])
      expect(await parseContract(plan('- `src/a.ts`', '- `lib/t.throws`'))).toMatchObject({warnings: [expect.stringContaining('name lib/t.throws,')]})
    } finally {
      rmSync(workspace, {force: true, recursive: true})
    }
  })

  it('says nothing without a Scope section (the missing section has its own warning)', async () => {
    expect((await parseContract('# P\n\n## Changes\n- `src/a.ts`\n')).warnings).toEqual([])
  })

  it('is an approval warning unless the approver gives the scope', async () => {
    const contract = await parseContract(plan('- `src/a.ts`'))
    expect(bindContract(contract).warnings.some((warning) => warning.includes('does not cover'))).toBe(true)
    expect(bindContract(contract, {scope: ['**']}).warnings.some((warning) => warning.includes('does not cover'))).toBe(false)
  })
})
