/**
 * git against the repository's remote, for `wave github` and `wave gitlab`: fetch and check out the commit a plan is made
 * against, commit a run's changes, push them. The token reaches git as an `http.<server>/.extraheader`
 * given through git's GIT_CONFIG_* environment (as actions/checkout sets it up): never in a URL, an
 * argument list anyone can read in `ps`, a config file the agent could read, or a message.
 */
import {execFile} from 'node:child_process'
import {promisify} from 'node:util'

import {ExitCode, WaveError} from '../base/errors.js'
import {SAFE_GIT_ARGS, safeGitEnvironment} from '../base/workspace/git-safety.js'

const run = promisify(execFile)

/** Who commits when the repository names no one: the identity Actions uses for its own commits. */
const FALLBACK_IDENTITY = {email: '41898282+github-actions[bot]@users.noreply.github.com', name: 'github-actions[bot]'}

interface RemoteOptions {
  workspace: string
  /** The remote's name in the workspace's git config (`origin` in an actions/checkout). */
  name: string
  token: string
  /** GITHUB_SERVER_URL (CI_SERVER_URL): the header is sent to this server only. */
  serverUrl: string
  /** The user name of HTTP basic authentication beside the token (default GitHub's x-access-token). */
  user?: string
  /** Who commits when the repository names no one (default Actions' identity). */
  identity?: {name: string; email: string}
  /** What to run first when the workspace is not clean (default actions/checkout). */
  checkoutStep?: string
}

export class Remote {
  constructor(private readonly options: RemoteOptions) {}

  /** Fetches `ref` (a branch, or a commit's sha) from the remote; returns the commit fetched. */
  async fetch(ref: string): Promise<string> {
    if (/^[0-9a-f]{40,64}$/.test(ref) && (await this.has(ref))) return ref
    await this.git(['fetch', '--no-tags', '--quiet', this.options.name, ref], {authenticated: true, what: `fetch ${ref} from ${this.options.name}`})
    return this.git(['rev-parse', '--verify', 'FETCH_HEAD^{commit}'], {what: 'read the commit fetched'})
  }

  /**
   * Checks `commit` out, detached, after fetching it if need be. A workspace with uncommitted changes is
   * refused: they would be carried into the plan's checkout (and a run's commit).
   */
  async checkout(commit: string): Promise<void> {
    const status = await this.git(['status', '--porcelain', '--untracked-files=normal'], {what: 'read the workspace status'})
    if (status) {
      throw new WaveError(
        `The workspace ${this.options.workspace} has uncommitted changes; wave checks out the commit it works on and needs a clean checkout.`,
        ExitCode.usage,
        `Run wave right after ${this.options.checkoutStep ?? 'actions/checkout'}, before steps that change files.`,
      )
    }

    await this.fetch(commit)
    await this.git(['checkout', '--quiet', '--detach', commit], {what: `check out ${commit.slice(0, 12)}`})
  }

  /** Commits exactly `files` (paths relative to the workspace, deletions included); undefined when nothing changed. */
  async commit(files: string[], message: string): Promise<string | undefined> {
    if (files.length === 0) return undefined
    // :(literal) so that a file named like a glob is only that file.
    const pathspecs = files.map((file) => `:(literal)${file}`)
    for (let i = 0; i < pathspecs.length; i += 200) {
      await this.git(['add', '--all', '--', ...pathspecs.slice(i, i + 200)], {what: 'stage the changes'})
    }

    const staged = await this.git(['diff', '--cached', '--name-only'], {what: 'list the staged changes'})
    if (!staged) return undefined
    const identity = await this.identity()
    await this.git(
      ['-c', `user.name=${identity.name}`, '-c', `user.email=${identity.email}`, '-c', 'commit.gpgsign=false', 'commit', '--quiet', '--no-verify', '-F', '-'],
      {
        input: message,
        what: 'commit the changes',
      },
    )
    return this.git(['rev-parse', 'HEAD'], {what: 'read the new commit'})
  }

  /**
   * The workspace's changes against HEAD as a binary patch, untracked files included (ignored ones not),
   * through a throwaway index: what a stopped run leaves for the job that resumes it (carryover.ts).
   */
  async changesPatch(scratch: string): Promise<string> {
    const env = {GIT_INDEX_FILE: scratch}
    await this.git(['read-tree', 'HEAD'], {env, what: 'read HEAD into a scratch index'})
    await this.git(['add', '--all'], {env, what: 'list the changes'})
    return this.git(['diff', '--cached', '--binary', 'HEAD'], {env, trim: false, what: 'write the changes as a patch'})
  }

  /** Applies a patch changesPatch wrote to the work tree (nothing staged). */
  async applyPatch(file: string): Promise<void> {
    await this.git(['apply', '--binary', '--whitespace=nowarn', file], {what: "apply the stopped run's changes"})
  }

  /** Pushes HEAD to `branch` on the remote, fast-forward only. */
  async push(branch: string): Promise<void> {
    await this.git(['push', '--quiet', this.options.name, `HEAD:refs/heads/${branch}`], {authenticated: true, what: `push to ${branch}`})
  }

  private async has(commit: string): Promise<boolean> {
    return this.git(['cat-file', '-e', `${commit}^{commit}`], {what: 'look up a commit'}).then(
      () => true,
      () => false,
    )
  }

  /** The repository's own identity when it has one (user.name and user.email), else the forge's. */
  private async identity(): Promise<{name: string; email: string}> {
    const get = (key: string) => this.git(['config', '--get', key], {what: 'read the git identity'}).catch(() => '')
    const [name, email] = await Promise.all([get('user.name'), get('user.email')])
    return name && email ? {email, name} : (this.options.identity ?? FALLBACK_IDENTITY)
  }

  private async git(
    args: string[],
    options: {what: string; authenticated?: boolean; input?: string; env?: Record<string, string>; trim?: boolean},
  ): Promise<string> {
    // Hardened (git-safety.ts): no program the repository's config names runs, and git gets no
    // credential but, for the commands that reach the remote, the token's header.
    const env = {...(await safeGitEnvironment(this.options.workspace)), ...options.env}
    if (options.authenticated) Object.assign(env, this.authEnvironment(env))
    const remote = this.options.name
    const transport = ['-c', `remote.${remote}.uploadpack=git-upload-pack`, '-c', `remote.${remote}.receivepack=git-receive-pack`]
    try {
      const child = run('git', [...SAFE_GIT_ARGS, ...transport, ...args], {cwd: this.options.workspace, encoding: 'utf8', env, maxBuffer: 16 * 1024 * 1024})
      if (options.input !== undefined) child.child.stdin?.end(options.input)
      const {stdout} = await child
      return options.trim === false ? stdout : stdout.trim()
    } catch (error) {
      const stderr = String((error as {stderr?: unknown}).stderr ?? '').trim()
      const detail = (
        stderr
          .split('\n')
          .filter((line) => line.trim())
          .at(-1) ?? (error as Error).message
      )
        .split(this.options.token)
        .join('[redacted]')
      throw new WaveError(`git could not ${options.what}: ${detail}`, ExitCode.runtime)
    }
  }

  /** The extraheader as environment, after any GIT_CONFIG_* entries already there. */
  private authEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
    const count = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10) || 0
    const server = this.options.serverUrl.replace(/\/+$/, '')
    const basic = Buffer.from(`${this.options.user ?? 'x-access-token'}:${this.options.token}`).toString('base64')
    return {
      GIT_CONFIG_COUNT: String(count + 1),
      [`GIT_CONFIG_KEY_${count}`]: `http.${server}/.extraheader`,
      [`GIT_CONFIG_VALUE_${count}`]: `AUTHORIZATION: basic ${basic}`,
    }
  }
}
