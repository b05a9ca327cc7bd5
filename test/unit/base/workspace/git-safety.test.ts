import {execFileSync} from 'node:child_process'
import {existsSync} from 'node:fs'
import {writeFile} from 'node:fs/promises'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {safeGitCommand} from '../../../../src/base/workspace/git-safety.js'
import {changedPaths, workTreeStatus} from '../../../../src/base/workspace/git.js'
import {git, useRepositories} from '../../../support/repository.js'

const repositories = useRepositories('git-safety')

/** A repository whose config names a filter (a name a command could choose) for every file, and the marker its program writes. */
async function filtered(name: string) {
  const {root} = await repositories.repository({'a.txt': 'a\n'})
  const marker = path.join(await repositories.tempDir(), 'filter-ran')
  git(root, 'config', `filter.${name}.clean`, `touch '${marker}'; cat`)
  git(root, 'config', `filter.${name}.required`, 'true')
  await writeFile(path.join(root, '.gitattributes'), `* filter=${name}\n`)
  // As long as it was: git reads it (through the filter) to tell whether it changed.
  await writeFile(path.join(root, 'a.txt'), 'b\n')
  return {marker, root}
}

describe("wave's git in one shell (safeGitCommand)", () => {
  // A name a command chooses: shell's quotes and $ in it (an attribute's value ends at a space).
  for (const name of ['evil', `odd"name'$HOME`]) {
    it(`never runs the filter a repository's config names (${name}); plain git does (control)`, async () => {
      const {marker, root} = await filtered(name)
      expect(await changedPaths(root)).toEqual(
        new Map([
          ['.gitattributes', '??'],
          ['a.txt', ' M'],
        ]),
      )
      expect(await workTreeStatus(root)).toContain('a.txt')
      expect(existsSync(marker)).toBe(false)

      // Control: git as a user runs it reads a.txt through the filter.
      execFileSync('git', ['add', 'a.txt'], {cwd: root, env: {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1'}})
      expect(existsSync(marker)).toBe(true)
    })
  }

  it('passes every argument as it is, spaces, quotes and $ included', async () => {
    const {root} = await repositories.repository({'a b.txt': 'x\n', "it's $HOME.txt": 'y\n'})
    const command = await safeGitCommand(root, ['ls-files', '--', 'a b.txt', "it's $HOME.txt"])
    const out = execFileSync(command.file, command.args, {cwd: root, encoding: 'utf8', env: command.env})
    expect(out.split('\n').filter(Boolean)).toEqual(['a b.txt', "it's $HOME.txt"])
  })
})
