/**
 * End-to-end harness: a sandbox (temp HOME + a small git repository) and `runWave`, which spawns
 * `bin/run.js` asynchronously (the scripted Messages server runs in this process) with a clean env.
 *
 * bin/run.js loads compiled commands from dist/: run `npm run build` before e2e tests.
 */
import {type ChildProcess, execFileSync, spawn} from 'node:child_process'
import {createHash} from 'node:crypto'
import {cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import type {MessagesServer} from './messages-server.js'

export const BIN_RUN = fileURLToPath(new URL('../../bin/run.js', import.meta.url))
export const PROJECT_ROOT = dirname(dirname(BIN_RUN))

/** The API key runWave passes when a server is given; assert it never shows up in output or files. */
export const TEST_API_KEY = 'sk-test-key-never-logged'

export interface Sandbox {
  /** Temp directory holding everything below (real path). */
  root: string
  /** Temp HOME for the child (wave's default WAVE_HOME is `${home}/.wave`). */
  home: string
  /** A git repository with committed files and an ignored `ignored/secret.txt`. */
  repo: string
  /** `${home}/.wave/plans`, where plans land by default (created by wave on demand). */
  plansDir: string
  cleanup(): void
}

/** Files committed in the sandbox repository (relative path → content). */
export const SANDBOX_FILES: Readonly<Record<string, string>> = {
  'README.md': '# demo\n\nA tiny project for wave e2e tests.\n',
  'src/app.ts': "import {greet} from './util.js'\n\nconsole.log(greet('world'))\n",
  'src/util.ts': 'export function greet(name: string): string {\n  return `hello ${name}`\n}\n',
  '.gitignore': 'ignored/\n',
}

/** Content of the ignored, uncommitted `ignored/secret.txt`. */
export const SANDBOX_SECRET = 'secret: do-not-read\n'

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    // no user or system config: identity comes from the repository's own config
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? cwd,
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
      LC_ALL: 'C',
    },
  }).trim()
}

/**
 * The committed repository of each file set, made once a worker (git init, add, commit, repack: seven spawns of
 * git from a large process) and copied for each sandbox. Removed when the worker exits.
 */
const templates = new Map<string, string>()

function templateRepository(files: Record<string, string>): string {
  const key = JSON.stringify(Object.entries(files))
  const known = templates.get(key)
  if (known) return known
  if (templates.size === 0) {
    process.once('exit', () => {
      for (const made of templates.values()) rmSync(dirname(made), {force: true, recursive: true})
    })
  }
  const repo = join(realpathSync(mkdtempSync(join(tmpdir(), 'wave-e2e-template-'))), 'repo')
  mkdirSync(repo)
  for (const [rel, content] of Object.entries(files)) {
    const abs = join(repo, rel)
    mkdirSync(dirname(abs), {recursive: true})
    writeFileSync(abs, content)
  }
  // No template (git's sample hooks, description, info/exclude) and the objects in one pack: half the files
  // of the default, which every sandbox copies and removes (on ext4, creating and deleting them was ~25 ms a test).
  git(repo, ['-c', 'init.defaultBranch=main', 'init', '-q', '--template='])
  git(repo, ['config', 'user.email', 'e2e@example.com'])
  git(repo, ['config', 'user.name', 'wave e2e'])
  git(repo, ['config', 'commit.gpgsign', 'false'])
  git(repo, ['add', '-A'])
  git(repo, ['commit', '-q', '-m', 'initial commit'])
  git(repo, ['repack', '-a', '-d', '-q', '-n'])
  templates.set(key, repo)
  return repo
}

/** Create a sandbox: `root/home` (empty) and `root/repo` (git repo, one commit, plus an ignored file). */
export function makeSandbox(files: Record<string, string> = SANDBOX_FILES): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'wave-e2e-')))
  const home = join(root, 'home')
  const repo = join(root, 'repo')
  mkdirSync(home)
  cpSync(templateRepository(files), repo, {recursive: true})
  mkdirSync(join(repo, 'ignored'))
  writeFileSync(join(repo, 'ignored', 'secret.txt'), SANDBOX_SECRET)
  return {
    root,
    home,
    repo,
    plansDir: join(home, '.wave', 'plans'),
    cleanup() {
      rmSync(root, {recursive: true, force: true})
    },
  }
}

/** `git rev-parse HEAD` of a repository. */
export function gitHead(repo: string): string {
  return git(repo, ['rev-parse', 'HEAD'])
}

/** `git status --porcelain` of a repository ('' when clean; ignored files are not listed). */
export function gitStatus(repo: string): string {
  return git(repo, ['status', '--porcelain'])
}

/** Commit everything in the repository (e.g. to move HEAD and make a plan stale); returns the new HEAD. */
export function gitCommitAll(repo: string, message = 'change'): string {
  git(repo, ['add', '-A'])
  git(repo, ['commit', '-q', '--allow-empty', '-m', message])
  return gitHead(repo)
}

/**
 * Every entry under `dir` (skipping any `.git/`), as relative path (with `/`) → sha256 hex of the
 * content; a symlink maps to `-> target` (not followed); a directory maps to `<dir>` under its path
 * with a trailing `/` (so created empty directories show up too). Keys are sorted, so
 * `expect(snapshotTree(d)).toEqual(before)` gives a readable diff.
 */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (abs: string, rel: string) => {
    for (const name of readdirSync(abs).sort()) {
      if (name === '.git') continue
      const childAbs = join(abs, name)
      const childRel = rel ? `${rel}/${name}` : name
      const st = lstatSync(childAbs)
      if (st.isSymbolicLink()) {
        out[childRel] = `-> ${readlinkSync(childAbs)}`
      } else if (st.isDirectory()) {
        out[`${childRel}/`] = '<dir>'
        walk(childAbs, childRel)
      } else if (st.isFile()) {
        out[childRel] = createHash('sha256').update(readFileSync(childAbs)).digest('hex')
      } else {
        out[childRel] = '<special>'
      }
    }
  }
  walk(dir, '')
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

export interface RunWaveOptions {
  /** HOME for the child. */
  home: string
  /** Working directory of the child. */
  cwd: string
  /** Overrides on top of the clean env; `undefined` deletes a variable (e.g. `ANTHROPIC_API_KEY: undefined`). */
  env?: Record<string, string | undefined>
  /** Sets ANTHROPIC_BASE_URL to server.url and ANTHROPIC_API_KEY to TEST_API_KEY. */
  server?: MessagesServer
  /** Written to stdin, then stdin is closed. Without it, stdin is /dev/null (EOF, not a TTY). */
  input?: string
  /** Kill (SIGKILL) after this long; default 60000 (the e2e tier's test timeout: a loaded machine is slow, not wrong). */
  timeoutMs?: number
}

export interface RunWaveResult {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** True when the harness killed the child at timeoutMs. */
  timedOut: boolean
  durationMs: number
}

const SUITE_COMPILE_CACHE = join(tmpdir(), `wave-test-compile-cache-${process.getuid?.() ?? 0}`)

/** The env runWave gives the child (exported for tests that want to inspect or reuse it). */
export function waveEnv(opts: Pick<RunWaveOptions, 'home' | 'env' | 'server'>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: opts.home,
    CI: '1',
    NO_COLOR: '1',
  }
  if (process.env.TMPDIR) env.TMPDIR = process.env.TMPDIR
  // One V8 code cache for the whole suite (src/base/bundles.ts), as a user's runs share ~/.cache/wave: each
  // test's own HOME would make every spawn a first run. test/e2e/compile-cache.test.ts tests the cache itself.
  env.WAVE_COMPILE_CACHE = SUITE_COMPILE_CACHE
  if (opts.server) {
    env.ANTHROPIC_BASE_URL = opts.server.url
    env.ANTHROPIC_API_KEY = TEST_API_KEY
    // The scripted server stands in for Anthropic's own API, which takes deferred tools and tool_reference
    // blocks; at any other endpoint wave sends every tool whole (test/e2e/tool-search.test.ts says so).
    env.ENABLE_TOOL_SEARCH = 'true'
  }
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k]
    else env[k] = v
  }
  return env
}

/** Spawn `node bin/run.js ...args` asynchronously; resolves when the child has exited and its output closed. */
export function runWave(args: string[], opts: RunWaveOptions): Promise<RunWaveResult> {
  if (!existsSync(join(PROJECT_ROOT, 'dist', 'commands'))) {
    return Promise.reject(new Error(`runWave: ${join(PROJECT_ROOT, 'dist')} is missing: run \`npm run build\` first`))
  }
  return runNode(BIN_RUN, args, opts)
}

/** Spawn `node <script> ...args` the way runWave does (same env, stdin, timeout): runWave without the wave part. */
export function runNode(script: string, args: string[], opts: RunWaveOptions): Promise<RunWaveResult> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: opts.cwd,
      env: waveEnv(opts),
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    child.stdout!.on('data', (d: Buffer) => stdout.push(d))
    child.stderr!.on('data', (d: Buffer) => stderr.push(d))
    if (opts.input !== undefined) {
      child.stdin!.on('error', () => {}) // EPIPE when the child exits without reading
      child.stdin!.end(opts.input)
    }
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, opts.timeoutMs ?? 60_000)
    child.on('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({
        code,
        signal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        timedOut,
        durationMs: performance.now() - started,
      })
    })
  })
}

/** A plan written straight into the sandbox's plans directory (no state sidecar): a cheap stand-in for `wave plan`. */
export function writePlanFile(sandbox: Sandbox, content: string | Uint8Array, name = 'brave-otter'): string {
  mkdirSync(sandbox.plansDir, {recursive: true})
  const file = join(sandbox.plansDir, `${name}.md`)
  writeFileSync(file, content)
  return file
}

/** The sha256 hex digest of some bytes (a plan's, as the approval record binds it). */
export const sha256 = (data: string | Uint8Array): string => createHash('sha256').update(data).digest('hex')

/** A JSON file, parsed. */
export const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8'))

/**
 * Waits until `condition` holds, polling every 20 ms; past the deadline it throws, naming `what`, so a
 * test that waits for an event that never comes fails loudly instead of passing after a fixed pause.
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

export interface Finished {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

export interface StartedWave {
  child: ChildProcess
  /** Settles when the child has exited and its output closed (SIGKILL after `timeoutMs`, default 60000). */
  done: Promise<Finished>
  /** What the child has written to stderr so far (to wait on its progress). */
  stderr(): string
  /** What the child has written to stdout so far (to wait on the events it streams). */
  stdout(): string
}

/** `wave` as a child process the test can signal, with runWave's env; `done` settles when it has exited. */
export function startWave(args: string[], opts: Omit<RunWaveOptions, 'input'>): StartedWave {
  const child = spawn(process.execPath, [BIN_RUN, ...args], {cwd: opts.cwd, env: waveEnv(opts), stdio: ['ignore', 'pipe', 'pipe']})
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const done = new Promise<Finished>((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({code, signal, stderr, stdout})
    })
  })
  return {child, done, stderr: () => stderr, stdout: () => stdout}
}

/**
 * The host processes whose command line holds `marker` (read from /proc): a sandboxed command's children
 * live in their own PID namespace, so tests find them by a marker in their arguments instead of a PID.
 * With `argument`, only those with `marker` as one whole argument (`sleep 3.5`, not the `bash -c` around it).
 */
export function processesHolding(marker: string, {argument = false}: {argument?: boolean} = {}): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (argument ? cmdline.split('\0').includes(marker) : cmdline.includes(marker)) found.push(Number(entry))
    } catch {
      // the process ended while the list was read
    }
  }
  return found
}

/**
 * The processes still holding `marker` once they have had `withinMs` to go: polled, not slept. A
 * sandbox's command reports its exit before its PID namespace is torn down: bwrap's init tells the
 * outer bwrap the status as soon as the command exits, the outer bwrap exits with it, and only its death
 * (--die-with-parent) then ends the init, and with it everything left in the namespace. What the command
 * left behind may be seen for the moment that takes; a process the sandbox failed to end is still there
 * at the deadline.
 */
export async function processesOutliving(marker: string, withinMs: number): Promise<number[]> {
  const deadline = Date.now() + withinMs
  let found = processesHolding(marker)
  while (found.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    found = processesHolding(marker)
  }

  return found
}
