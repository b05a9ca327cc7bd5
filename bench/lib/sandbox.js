/** A throwaway workspace (a git repository) and HOME, and a way to run wave in them as a user would. */
import {execFileSync, spawn} from 'node:child_process'
import {mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {performance} from 'node:perf_hooks'
import {fileURLToPath} from 'node:url'

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const BIN_RUN = path.join(PROJECT_ROOT, 'bin', 'run.js')
export const API_KEY = 'sk-bench-not-a-real-key'

/** `files`: relative path → content. Returns {root, home, repo, cleanup}. */
export function makeSandbox(files) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'wave-bench-')))
  const home = path.join(root, 'home')
  const repo = path.join(root, 'repo')
  mkdirSync(home)
  mkdirSync(repo)
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(repo, name)
    mkdirSync(path.dirname(file), {recursive: true})
    writeFileSync(file, content)
  }

  const git = (...args) =>
    execFileSync('git', args, {cwd: repo, env: {...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1'}, stdio: 'ignore'})
  git('-c', 'init.defaultBranch=main', 'init', '-q')
  git('-c', 'user.email=bench@example.com', '-c', 'user.name=bench', '-c', 'commit.gpgsign=false', 'add', '-A')
  git('-c', 'user.email=bench@example.com', '-c', 'user.name=bench', '-c', 'commit.gpgsign=false', 'commit', '-q', '-m', 'bench')
  return {cleanup: () => rmSync(root, {force: true, recursive: true}), home, repo, root}
}

/** A large work tree for makeSandbox: `files` small TypeScript files spread over `dirs` directories under src/. */
export function smallFiles(files, dirs) {
  const perDir = Math.ceil(files / dirs)
  const tree = {}
  for (let i = 0; i < files; i++) tree[`src/m${Math.floor(i / perDir)}/f${i % perDir}.ts`] = `export const v${i} = ${i}\n`
  return tree
}

/**
 * Spawns `node [nodeArgs] bin/run.js ...args` (`bin`: another build's, e.g. a base commit's) with a clean environment (CI=1, no colours, the sandbox
 * HOME, the server's URL and a key). Resolves with the exit code, output, and `startedAt` (performance.now()
 * just before the spawn, on the same clock as the server's timestamps).
 */
/**
 * @param {string[]} args
 * @param {{bin?: string, cwd: string, env?: Record<string, string>, home: string, nodeArgs?: string[], server?: {url: string}, timeoutMs?: number}} options
 */
export function runWave(args, {bin = BIN_RUN, cwd, env = {}, home, nodeArgs = [], server, timeoutMs = 60_000}) {
  const childEnv = {CI: '1', HOME: home, NO_COLOR: '1', PATH: process.env.PATH, WAVE_HOME: path.join(home, '.wave')}
  if (process.env.TMPDIR) childEnv.TMPDIR = process.env.TMPDIR
  if (server) {
    childEnv.ANTHROPIC_BASE_URL = server.url
    childEnv.ANTHROPIC_API_KEY = API_KEY
    // The scripted server stands in for Anthropic's own API: tool search on, as it is there.
    childEnv.ENABLE_TOOL_SEARCH = 'true'
  }

  Object.assign(childEnv, env)
  return new Promise((resolve, reject) => {
    const startedAt = performance.now()
    const child = spawn(process.execPath, [...nodeArgs, bin, ...args], {cwd, env: childEnv, stdio: ['ignore', 'pipe', 'pipe']})
    const stdout = []
    const stderr = []
    child.stdout.on('data', (chunk) => stdout.push(chunk))
    child.stderr.on('data', (chunk) => stderr.push(chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({code, endedAt: performance.now(), startedAt, stderr: Buffer.concat(stderr).toString(), stdout: Buffer.concat(stdout).toString()})
    })
  })
}
