/**
 * Real-shaped projects for the contract's tests (issue 47): a pytest project with its virtualenv, and
 * a node project with a test runner installed in node_modules (a package, its `.bin` link, and a cache it
 * writes under node_modules/.vite as vitest does). What is committed is what such projects commit; what
 * they ignore (the virtualenv, node_modules, the caches) is made after, ignored.
 */
import {execFileSync} from 'node:child_process'
import {chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import path from 'node:path'

export const PYTEST_FILES: Readonly<Record<string, string>> = {
  '.gitignore': '.venv/\n__pycache__/\n.pytest_cache/\n',
  'README.md': '# calc\n',
  'calc/__init__.py': 'def add(a, b):\n    return a + b\n',
  'pyproject.toml': '[project]\nname = "calc"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
  'tests/test_calc.py': 'from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_sub():\n    assert sub(5, 3) == 2\n',
}

/** The change the model makes to the pytest project: `sub`, which its failing test asks for. */
export const PYTEST_WORK = 'def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n'

let found: string | undefined

/** A python3 that has pytest (this machine's, or Debian's python3-pytest): its real executable. */
export function pythonWithPytest(): string {
  if (found) return found
  for (const candidate of ['python3', '/usr/bin/python3']) {
    try {
      const executable = execFileSync(candidate, ['-c', 'import pytest, sys; print(sys.executable)'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim()
      if (executable) {
        found = executable
        return found
      }
    } catch {}
  }

  throw new Error('No python3 with pytest here: install it (apt-get install -y python3-pytest), as .ci/run does.')
}

/**
 * The project's virtualenv at `.venv` (ignored), seeing the interpreter's pytest, as `python -m venv
 * --system-site-packages` makes it; its `bin/python` is what the plan's checks run.
 */
export function makeVirtualenv(repo: string): void {
  execFileSync(pythonWithPytest(), ['-m', 'venv', '--system-site-packages', '--without-pip', path.join(repo, '.venv')], {stdio: 'ignore'})
}

export const NODE_FILES: Readonly<Record<string, string>> = {
  '.gitignore': 'node_modules/\ncoverage/\n',
  'README.md': '# greet\n',
  'index.js': 'export const greet = (name) => `hello ${name}`\n',
  'package.json': '{\n  "name": "greet",\n  "type": "module",\n  "scripts": {"test": "testrunner"}\n}\n',
  'test/greet.test.js':
    "import {greet} from '../index.js'\n\nexport const tests = {\n  greets: () => greet('ada') === 'hello ada',\n  bids: async () => (await import('../index.js')).farewell?.('ada') === 'bye ada',\n}\n",
}

/**
 * A test runner installed as npm installs one: node_modules/testrunner/lib/cli.js, linked from
 * node_modules/.bin/testrunner. It runs every export of test/*.test.js, prints a tally, exits 1 when one
 * failed, and writes its cache as vitest does (node_modules/.vite/results.json) and a coverage report
 * (coverage/summary.txt), both ignored. Installing again puts back what was there.
 */
export function installTestRunner(repo: string): void {
  const lib = path.join(repo, 'node_modules', 'testrunner', 'lib')
  mkdirSync(lib, {recursive: true})
  writeFileSync(
    path.join(repo, 'node_modules', 'testrunner', 'package.json'),
    '{"name": "testrunner", "version": "1.0.0", "bin": {"testrunner": "lib/cli.js"}}\n',
  )
  writeFileSync(path.join(lib, 'cli.js'), TEST_RUNNER)
  chmodSync(path.join(lib, 'cli.js'), 0o755)
  mkdirSync(path.join(repo, 'node_modules', '.bin'), {recursive: true})
  rmSync(path.join(repo, 'node_modules', '.bin', 'testrunner'), {force: true})
  symlinkSync('../testrunner/lib/cli.js', path.join(repo, 'node_modules', '.bin', 'testrunner'))
}

const TEST_RUNNER = `#!/usr/bin/env node
import {mkdirSync, readdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'

const results = {}
for (const file of readdirSync('test').filter((name) => name.endsWith('.test.js'))) {
  const {tests} = await import(path.resolve('test', file))
  for (const [name, test] of Object.entries(tests)) results[file + ' ' + name] = Boolean(await test())
}
const failed = Object.entries(results).filter(([, passed]) => !passed).map(([name]) => name)
mkdirSync('node_modules/.vite/testrunner', {recursive: true})
writeFileSync('node_modules/.vite/testrunner/results.json', JSON.stringify(results))
mkdirSync('coverage', {recursive: true})
writeFileSync('coverage/summary.txt', Object.keys(results).length + ' tests\\n')
for (const name of failed) console.log('FAIL ' + name)
console.log(Object.keys(results).length - failed.length + ' tests passed, ' + failed.length + ' failed')
process.exit(failed.length > 0 ? 1 : 0)
`
