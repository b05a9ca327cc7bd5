import {mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {instructionsSections, readInstructionFiles} from '../../../src/session/instructions.js'

let root: string
beforeEach(() => {
  root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-instructions-')))
})
afterEach(() => rmSync(root, {force: true, recursive: true}))

function write(relative: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, relative)), {recursive: true})
  writeFileSync(path.join(root, relative), text)
}

describe('readInstructionFiles', () => {
  it('reads one file per directory from the top down to the working directory, AGENTS.md before CLAUDE.md', async () => {
    write('repo/AGENTS.md', 'root\n')
    write('repo/CLAUDE.md', 'shadowed\n')
    write('repo/a/CLAUDE.md', 'a claude\n')
    write('repo/a/b/AGENTS.md', 'b agents\n')
    write('repo/a/b/c/AGENTS.md', '   \n') // blank: nothing to say
    write('repo/other/AGENTS.md', 'not on the way\n')
    const files = await readInstructionFiles(path.join(root, 'repo'), path.join(root, 'repo/a/b/c'))
    expect(files.map(({file, text}) => [file, text])).toEqual([
      ['AGENTS.md', 'root\n'],
      ['a/CLAUDE.md', 'a claude\n'],
      ['a/b/AGENTS.md', 'b agents\n'],
    ])
  })

  it('reads only the top when the working directory is elsewhere, and no link that leads out', async () => {
    write('repo/x', '')
    write('secret.md', 'secret\n')
    symlinkSync(path.join(root, 'secret.md'), path.join(root, 'repo/AGENTS.md'))
    write('repo/CLAUDE.md', 'fallback\n')
    expect(await readInstructionFiles(path.join(root, 'repo'), root)).toEqual([{file: 'CLAUDE.md', size: 9, text: 'fallback\n'}])
  })
})

describe('instructionsSections', () => {
  it('marks each source, in order: repository, settings, --append-system-prompt', () => {
    const {cut, text} = instructionsSections({
      appended: ' appended ',
      repository: [{file: 'AGENTS.md', size: 5, text: 'repo\n'}],
      settings: ['user', '  ', 'project'],
    })
    expect(cut).toBeUndefined()
    expect(text).toMatch(
      /^# Repository instructions\n\n.*\n\n<instructions file="AGENTS.md">\nrepo\n<\/instructions>\n\n# Instructions from the settings\n\nuser\n\nproject\n\n# Additional instructions\n\nappended$/s,
    )
    expect(instructionsSections({repository: [], settings: []}).text).toBe('')
  })

  it('cuts at the cap, deepest files first, with a note in the prompt and a line for the user', () => {
    const big = 'line\n'.repeat(300) // 1500 bytes
    const {cut, text} = instructionsSections(
      {
        repository: [
          {file: 'AGENTS.md', size: 1500, text: big},
          {file: 'sub/AGENTS.md', size: 20_000, text: 'DEEP-MARKER\n'.repeat(10)},
        ],
        settings: [],
      },
      1024,
    )
    expect(text).toContain('<instructions file="AGENTS.md">\nline\n')
    expect(text).not.toContain('DEEP-MARKER')
    expect(Buffer.byteLength(text.slice(text.indexOf('<instructions')))).toBeLessThan(1024 + 300)
    expect(text).toContain("[wave: the repository's instructions exceed the 1 KiB cap and were cut; 20480 bytes of AGENTS.md, sub/AGENTS.md are not shown.]")
    expect(cut).toBe(
      "The repository's instructions (AGENTS.md, sub/AGENTS.md) exceed the 1 KiB cap: 20480 bytes of AGENTS.md, sub/AGENTS.md were left out of the prompt.",
    )
  })

  it('never cuts a character in two', () => {
    const {text} = instructionsSections({repository: [{file: 'AGENTS.md', size: 3000, text: 'é'.repeat(1500)}], settings: []}, 1001)
    expect(text).not.toContain('\uFFFD')
    expect(text).toContain('é'.repeat(500) + '\n</instructions>')
  })
})
