/**
 * The project's dependencies (base/workspace/dependencies.ts) and the guard that holds them through a
 * run's checks (plans/dependency-guard.ts): which ignored directories are dependencies, what their
 * fingerprints see and leave out, and the checks' sandbox binding them read-only, their runners' caches
 * writable, where bubblewrap starts (each denial beside its control).
 */
import {mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

import {describe, expect, it} from 'vitest'

import {sandboxStatus} from '../../../../src/base/process/sandbox.js'
import {findDependencies, fingerprintDependencies, isDependencyPath} from '../../../../src/base/workspace/dependencies.js'
import {changedBetween, WorkTreeWatch} from '../../../../src/base/workspace/worktree.js'
import {runChecks} from '../../../../src/plans/checks.js'
import {DependencyGuard} from '../../../../src/plans/dependency-guard.js'
import {put, useRepositories} from '../../../support/repository.js'

const repositories = useRepositories('dependencies')
const signal = new AbortController().signal

/** A repository ignoring node_modules/, a virtualenv by another name (env/) and a cache, with all three present. */
async function project(): Promise<string> {
  const {root} = await repositories.repository({'.gitignore': 'node_modules/\nenv/\n.cache/\n', 'index.js': 'export {}\n'})
  await put(root, {
    '.cache/x': 'cached\n',
    'env/bin/python': '#!/bin/sh\n',
    'env/pyvenv.cfg': 'home = /usr/bin\n',
    'node_modules/.vite/results.json': '{}\n',
    'node_modules/runner/cli.js': 'console.log("real")\n',
  })
  return root
}

const reading = (root: string) => new WorkTreeWatch({top: root, workspace: root}).read()

describe('the dependencies', () => {
  it('are the ignored directories named so or holding a pyvenv.cfg, with the caches runners keep in node_modules; an ignored cache is not one', async () => {
    const root = await project()
    expect(await findDependencies(root, await reading(root))).toEqual({
      caches: ['node_modules/.vite', 'node_modules/.cache', 'node_modules/.vitest'],
      dirs: ['env', 'node_modules'],
    })
    expect(['node_modules/.bin/x', 'a/.venv/bin/python', 'vendor'].map(isDependencyPath)).toEqual([true, true, true])
    expect(isDependencyPath('src/vendors.ts')).toBe(false)
  })

  it('show a file rewritten in place (same size, mtime put back), one added, one removed; not the caches', async () => {
    const root = await project()
    const found = await findDependencies(root, await reading(root))
    const before = await fingerprintDependencies(root, found)
    expect(changedBetween(before, await fingerprintDependencies(root, found))).toEqual([])
    const cli = path.join(root, 'node_modules/runner/cli.js')
    const {execFileSync} = await import('node:child_process')
    execFileSync('sh', ['-c', `m=$(stat -c %y "$1"); printf 'console.log("fake")\\n' > "$1"; touch -d "$m" "$1"`, 'sh', cli])
    writeFileSync(path.join(root, 'env/bin/pytest'), '#!/bin/sh\n')
    rmSync(path.join(root, 'env/bin/python'))
    writeFileSync(path.join(root, 'node_modules/.vite/results.json'), '{"forged": true}\n')
    expect(changedBetween(before, await fingerprintDependencies(root, found))).toEqual(['env/bin/pytest', 'env/bin/python', 'node_modules/runner/cli.js'])
  })

  it.skipIf(!sandboxStatus().available)(
    'are read-only to the checks in the sandbox, their caches writable; control: without the guard the same check writes both',
    async () => {
      const root = await project()
      const guard = new DependencyGuard(root, reading(root), true)
      const check = [{command: 'echo fake > node_modules/runner/cli.js; echo $? > status; echo ran > node_modules/.vite/results.json'}]
      const base = {root, sandbox: {enabled: true, network: false}, signal}
      await runChecks(check, await guard.checkOptions(base, () => {}))
      expect(readFileSync(path.join(root, 'node_modules/runner/cli.js'), 'utf8')).toBe('console.log("real")\n')
      expect(readFileSync(path.join(root, 'status'), 'utf8')).toBe('1\n')
      expect(readFileSync(path.join(root, 'node_modules/.vite/results.json'), 'utf8')).toBe('ran\n')

      await runChecks(check, base)
      expect(readFileSync(path.join(root, 'node_modules/runner/cli.js'), 'utf8')).toBe('fake\n')
    },
  )

  it.skipIf(!sandboxStatus().available)(
    'a cache the model made a symlink (to .git/hooks) is not made writable: the link leads into the read-only tree',
    async () => {
      const root = await project()
      mkdirSync(path.join(root, '.git', 'hooks'), {recursive: true})
      symlinkSync('../.git/hooks', path.join(root, 'node_modules/.cache'))
      const guard = new DependencyGuard(root, reading(root), true)
      const check = [{command: 'echo "#!/bin/sh" > node_modules/.cache/pre-commit'}]
      const [result] = await runChecks(check, await guard.checkOptions({root, sandbox: {enabled: true, network: false}, signal}, () => {}))
      expect(result.exitCode).not.toBe(0)
      expect(() => readFileSync(path.join(root, '.git/hooks/pre-commit'))).toThrow()
      // Control: the link does lead there (a write through it outside the sandbox lands in .git/hooks).
      writeFileSync(path.join(root, 'node_modules/.cache/probe'), 'x')
      expect(readFileSync(path.join(root, '.git/hooks/probe'), 'utf8')).toBe('x')
    },
  )

  it("are read-only to the model's commands (caches too), and a file tool's write into them is named", async () => {
    const root = await project()
    const guard = new DependencyGuard(root, reading(root), true)
    expect(guard.forCommands()).toBeUndefined()
    await guard.ready()
    expect(guard.forCommands()).toEqual({readOnly: [path.join(root, 'env'), path.join(root, 'node_modules')], writable: []})
    expect(guard.writtenInto([path.join(root, 'index.js'), path.join(root, 'node_modules/runner/cli.js')])).toEqual(['node_modules/runner/cli.js'])
    expect(await guard.changes()).toEqual([])
  })

  it('with the sandbox off, are verified before each check: a change stops the checks after it, named (control: none, all run)', async () => {
    const root = await project()
    const guard = new DependencyGuard(root, reading(root), false)
    await guard.ready()
    const found: string[][] = []
    const options = await guard.checkOptions({root, sandbox: {enabled: false, network: false}, signal}, (changed) => found.push(changed))
    const checks = [{command: 'true'}, {command: 'true'}]
    expect((await runChecks(checks, options)).map((check) => check.exitCode)).toEqual([0, 0])
    const results = await runChecks([{command: 'echo fake > node_modules/runner/cli.js'}, {command: 'true'}, {command: 'true'}], options)
    expect(results.map((check) => check.exitCode)).toEqual([0, null, null])
    expect(results[1].outputTail).toMatch(/^Not run: the project's dependencies changed since the run began \(node_modules\/runner\/cli\.js\)/)
    expect(found).toEqual([['node_modules/runner/cli.js']])
  })
})
