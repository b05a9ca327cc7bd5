/**
 * How wave runs git outside the sandbox: with every program a repository's own config could name turned
 * off, and without wave's credentials in git's environment.
 *
 * Why: a sandboxed command writes anywhere in the workspace but its top `.git/` and `.wave/`, so a
 * repository's config is not always the user's: a nested `sub/.git` a command made, or a `.gitattributes`
 * naming a filter, is read by the next wave that starts there. A config key that names a program
 * (`core.fsmonitor`, hooks, a filter's `clean`, a credential helper ...) would then run the command's
 * code with wave's environment. Command-line config (`-c`) comes after every config file, so these
 * values win; a filter driver has a name of the repository's choosing, so its keys are read first
 * (`git config --get-regexp`, which runs nothing) and emptied through GIT_CONFIG_COUNT.
 *
 * This module imports nothing but node's own modules: snapshot.ts, which bin/run.js loads first, uses it.
 */
import {execFile} from 'node:child_process'

/**
 * `-c` pairs for every git wave runs. Each key names a program, or makes git start another git that
 * reads a config this list would not reach (submodules), or signs (gpg.program).
 */
const SAFE_GIT_CONFIG: readonly string[] = [
  'core.fsmonitor=false',
  // No hook runs: post-checkout, post-commit, reference-transaction, pre-push, post-index-change ...
  'core.hooksPath=/dev/null',
  'core.pager=cat',
  'core.askPass=',
  // An empty value empties the list of helpers gathered from the config files.
  'credential.helper=',
  'core.sshCommand=ssh',
  'protocol.ext.allow=never',
  'protocol.git.allow=never',
  'log.showSignature=false',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'gc.auto=0',
  'maintenance.auto=false',
  'submodule.recurse=false',
  'fetch.recurseSubmodules=false',
  'diff.ignoreSubmodules=dirty',
  'status.submoduleSummary=false',
]

/** SAFE_GIT_CONFIG as git's arguments: `-c key=value` each. */
export const SAFE_GIT_ARGS: readonly string[] = SAFE_GIT_CONFIG.flatMap((pair) => ['-c', pair])

/**
 * Names that look like credentials (the sandbox's environment uses the same list): wave's own git gets
 * none of them. Wider than `*_KEY`, `*_TOKEN`, `*_SECRET`: `npm_config__authToken` and `CLIENT_SECRET_ID` count too.
 */
const SECRET_LIKE = [
  /^ANTHROPIC_/i,
  /^AWS_/i,
  /^GOOGLE_/i,
  /^GITHUB_TOKEN$/i,
  /^GH_TOKEN$/i,
  /KEY$/i,
  /TOKEN$/i,
  /SECRET/i,
  /PASSWORD/i,
  /PASSWD/i,
  /CREDENTIAL/i,
]

export function looksSecret(name: string): boolean {
  return SECRET_LIKE.some((pattern) => pattern.test(name))
}

/**
 * The environment wave's git runs in: the process's, less everything that looks like a credential, with
 * no pager, editor or password prompt. `extra` comes last (delivery's push adds its token's header).
 */
export function gitEnvironment(extra: Record<string, string> = {}, source: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && !looksSecret(name) && name !== 'SSH_ASKPASS') env[name] = value
  }

  // An empty GIT_ASKPASS is set, so core.askPass and SSH_ASKPASS are not looked at, and asks no one.
  return {...env, GIT_ASKPASS: '', GIT_EDITOR: ':', GIT_PAGER: 'cat', GIT_TERMINAL_PROMPT: '0', ...extra}
}

/** The filter keys whose values run programs; `required` is set false so an emptied filter is not an error. */
const FILTER_KEYS = String.raw`^filter\..*\.(clean|smudge|process|required)$`

/**
 * GIT_CONFIG_* entries that empty every filter driver the config at `cwd` names (after the entries
 * `env` already has). Filters run on status, add, diff and checkout: wherever git reads a work-tree file.
 */
async function filterOverrides(cwd: string, env: Record<string, string>): Promise<Record<string, string>> {
  const keys = await new Promise<string[]>((resolve) => {
    execFile('git', [...SAFE_GIT_ARGS, 'config', '--name-only', '--get-regexp', FILTER_KEYS], {cwd, encoding: 'utf8', env}, (error, stdout) => {
      resolve(error ? [] : stdout.split('\n').filter(Boolean))
    })
  })
  return configEntries(keys, env)
}

/** GIT_CONFIG_COUNT/KEY/VALUE for `keys`, after the entries `env` holds: `required` false, the rest empty. */
function configEntries(keys: string[], env: Record<string, string | undefined>): Record<string, string> {
  if (keys.length === 0) return {}
  let count = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10) || 0
  const entries: Record<string, string> = {}
  for (const key of new Set(keys.map((key) => key.trim()))) {
    entries[`GIT_CONFIG_KEY_${count}`] = key
    entries[`GIT_CONFIG_VALUE_${count}`] = /\.required$/i.test(key) ? 'false' : ''
    count++
  }

  entries.GIT_CONFIG_COUNT = String(count)
  return entries
}

/**
 * The environment for a git command that may read work-tree files (status, add, checkout ...) at `cwd`:
 * gitEnvironment() with every filter emptied. Read each time: a config may include a file that changed.
 */
export async function safeGitEnvironment(cwd: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const env = gitEnvironment(extra)
  return {...env, ...(await filterOverrides(cwd, env))}
}

/**
 * The same hardening in POSIX shell, for a shell that runs git: `git` is the hardened git, and
 * `emptyFilters` reads the filter keys and exports the GIT_CONFIG_* entries that empty them (as
 * filterOverrides does), so that one shell reads the keys and runs git where node would spawn twice.
 */
export const SAFE_GIT_SHELL = [
  `git() { command git ${SAFE_GIT_ARGS.join(' ')} "$@"; }`,
  `emptyFilters() { keys=$(git config --name-only --get-regexp '${FILTER_KEYS}') || return 0; n=\${GIT_CONFIG_COUNT:-0}; while IFS= read -r key; do case $key in *.required) v=false;; *) v=;; esac; export "GIT_CONFIG_KEY_$n=$key" "GIT_CONFIG_VALUE_$n=$v"; n=$((n + 1)); done <<EOF
$keys
EOF
export GIT_CONFIG_COUNT=$n; }`,
].join('\n')

/** The shell safeGitCommand runs: the filters emptied, then the program git (`exec` never runs a function). */
const SAFE_GIT_SCRIPT = `${SAFE_GIT_SHELL}\nemptyFilters\nexec git ${SAFE_GIT_ARGS.join(' ')} "$@"`

/**
 * A hardened git at `cwd`, its filters emptied, as the file, arguments and environment to spawn: one
 * shell that reads the filter keys and execs git. A spawn from node forks wave's whole process (~2–3 ms of
 * a session's CPU each), and safeGitEnvironment then git spawned twice for every call. Where there is no
 * POSIX shell (Windows), git itself after safeGitEnvironment.
 */
export async function safeGitCommand(
  cwd: string,
  args: readonly string[],
  extra: Record<string, string> = {},
): Promise<{file: string; args: string[]; env: Record<string, string>}> {
  if (process.platform === 'win32') return {args: [...SAFE_GIT_ARGS, ...args], env: await safeGitEnvironment(cwd, extra), file: 'git'}
  return {args: ['-c', SAFE_GIT_SCRIPT, 'sh', ...args], env: gitEnvironment(extra), file: '/bin/sh'}
}
