/**
 * Every command's --help as a user reads it: a USAGE line naming each flag once, with no empty
 * alternative (`[--resume |  |  | ]`, what oclif's own usage printed for wave run). Needs dist/.
 */
import {mkdtempSync, readFileSync, realpathSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {PROJECT_ROOT, runWave} from '../support/cli.js'

const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-help-e2e-')))
afterAll(() => rmSync(home, {force: true, recursive: true}))

const manifest = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {hidden?: boolean}>}
const COMMANDS = Object.entries(manifest.commands)
  // `wave help --help` is the root help, whose usage is `wave [COMMAND]`.
  .filter(([id, command]) => !command.hidden && id !== 'help')
  .map(([id]) => id)

/** The USAGE section of a help text, its wrapped lines joined. */
function usageOf(help: string): string {
  const section = help.split(/^USAGE\n/m)[1]?.split('\n\n')[0] ?? ''
  return section.replaceAll(/\s+/g, ' ').trim()
}

describe('--help', {timeout: 60_000}, () => {
  it.each(COMMANDS)('%s: a usage line with no empty alternative, each flag once', async (id) => {
    const result = await runWave([...id.split(':'), '--help'], {cwd: home, home})
    expect(result.code).toBe(0)
    const usage = usageOf(result.stdout)
    expect(usage).toMatch(new RegExp(`^\\$ wave ${id.replaceAll(':', ' ')}\\b`))
    expect(usage).not.toMatch(/\|\s*\||\|\s*\]|\[\s*\||\s\]|\[\s|\(\s*\)/)
    const flags = usage.match(/--[a-z][\w-]*/g) ?? []
    expect(flags.length, usage).toBe(new Set(flags).size)
  })

  it('wave run: the inline approval and --resume read as a user types them', async () => {
    const usage = usageOf((await runWave(['run', '--help'], {cwd: home, home})).stdout)
    expect(usage).toContain('[--approval <value> | --approve]')
    expect(usage).toContain('[--resume]')
    expect(usage).toContain('[--force]')
  })
})
