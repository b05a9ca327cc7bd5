import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {environmentSection, readEnvironment} from '../../../src/session/environment.js'
import {LARGE_WORK_TREE} from '../../../src/base/workspace/snapshot.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, {force: true, recursive: true})
})

function workspace(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-env-')))
  dirs.push(root)
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, name)), {recursive: true})
    writeFileSync(path.join(root, name), content)
  }

  return root
}

function git(cwd: string, ...args: string[]): void {
  const env = {GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: cwd, PATH: process.env.PATH ?? '/usr/bin:/bin'}
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', '-c', 'commit.gpgsign=false', ...args], {cwd, env, stdio: 'ignore'})
}

function repository(files: Record<string, string>, commits: string[]): string {
  const root = workspace(files)
  git(root, '-c', 'init.defaultBranch=trunk', 'init', '-q')
  for (const [index, subject] of commits.entries()) {
    writeFileSync(path.join(root, `c${index}.txt`), subject)
    git(root, 'add', '-A')
    git(root, 'commit', '-q', '-m', subject)
  }

  return root
}

describe('the environment block', () => {
  it('names the date, platform, workspace, branch, status, recent commits and the top level', async () => {
    const root = repository({'README.md': '# r\n', 'src/app.ts': 'x\n'}, ['first', 'second', 'third', 'fourth', 'fifth', 'sixth'])
    writeFileSync(path.join(root, 'README.md'), '# changed\n')
    writeFileSync(path.join(root, 'notes.txt'), 'new\n')
    const text = environmentSection(await readEnvironment({now: new Date(2031, 0, 9, 23, 59), workspace: root}))

    expect(text).toBe(
      [
        '# Environment',
        'Date: 2031-01-09',
        `Platform: ${process.platform} ${process.arch}; the Bash tool runs bash`,
        `Workspace: ${root}`,
        'Git branch: trunk',
        'Git status (2 changed):',
        '   M README.md',
        '  ?? notes.txt',
        'Recent commits:',
        '  sixth',
        '  fifth',
        '  fourth',
        '  third',
        '  second',
        'Top level: README.md c0.txt c1.txt c2.txt c3.txt c4.txt c5.txt notes.txt src/',
      ].join('\n'),
    )
  })

  it('caps the status and the layout, and says how much more there is', async () => {
    const files = Object.fromEntries(Array.from({length: 45}, (_, i) => [`f${String(i).padStart(2, '0')}.txt`, 'x']))
    const root = repository({}, ['only'])
    for (const [name, content] of Object.entries(files)) writeFileSync(path.join(root, name), content)
    const text = environmentSection(await readEnvironment({workspace: root}))

    expect(text).toContain('Git status (45 changed):')
    expect(text).toContain('  ?? f19.txt\n... and 25 more')
    expect(text).not.toContain('f20.txt\n')
    expect(text).toMatch(/Top level: c0\.txt f00\.txt .* f38\.txt \.\.\. \(6 more\)$/)
  })

  it('leaves out what a Read deny rule hides, from the layout and the status', async () => {
    const root = repository({'README.md': '# r\n'}, ['first'])
    writeFileSync(path.join(root, 'secrets.env'), 'TOKEN=1\n')
    const hidden = (absolute: string) => path.basename(absolute) === 'secrets.env'
    const text = environmentSection(await readEnvironment({hidden, workspace: root}))
    expect(text).not.toContain('secrets.env')
    expect(text).toContain('Git status: clean')
  })

  it('leaves out the status of a work tree too large to read before the first request', async () => {
    // More index entries than LARGE_WORK_TREE, none in the work tree: `git status` would stat them all.
    const root = repository({'README.md': '# r\n'}, ['first'])
    const blob = execFileSync('git', ['hash-object', '-w', 'README.md'], {cwd: root}).toString().trim()
    const entries = Array.from({length: LARGE_WORK_TREE}, (_, i) => `100644 ${blob}\tbig/${i}.txt\n`).join('')
    execFileSync('git', ['update-index', '--index-info'], {cwd: root, input: entries})
    const text = environmentSection(await readEnvironment({workspace: root}))
    expect(text).toContain(`Git branch: trunk\nGit status: not read (a large work tree: ${LARGE_WORK_TREE + 2} files)\nRecent commits:\n  first`)
  })

  it('says so outside a git repository, and in one without commits', async () => {
    const plain = workspace({'a.txt': 'a'})
    const outside = environmentSection(await readEnvironment({workspace: plain}))
    expect(outside).toContain('Git: not a repository')
    expect(outside).toContain('Top level: a.txt')

    const empty = repository({'a.txt': 'a'}, [])
    const fresh = environmentSection(await readEnvironment({workspace: empty}))
    expect(fresh).toContain('Git branch: No commits yet on trunk')
    expect(fresh).toContain('  ?? a.txt')
    expect(fresh).not.toContain('Recent commits')
  })
})
