import type {Dirent} from 'node:fs'
import {readdir} from 'node:fs'
import {readFile} from 'node:fs/promises'
import path from 'node:path'
import ignore, {type Ignore} from 'ignore'
import {glob, type GlobOptions} from 'tinyglobby'

import {isInside} from './workspace.js'

export interface ListFilesOptions {
  /** A glob relative to `base` (tinyglobby syntax). Default: every file. */
  pattern?: string
  signal?: AbortSignal
}

// Git on Linux compares ignore patterns case-sensitively; macOS and Windows file systems fold case.
const IGNORE_CASE = process.platform === 'darwin' || process.platform === 'win32'

/**
 * Absolute paths of the files below `base` that match `pattern`, leaving out what git would ignore:
 * `.gitignore` files from the workspace `root` down (nested ones apply to their own subtree and override
 * their parents), `root/.git/info/exclude`, and always `.git` itself. Ignored directories are pruned
 * while crawling, so a large `node_modules` costs nothing. Symbolic links are not followed or listed.
 *
 * A `base` that is itself ignored (say `node_modules/some-pkg`) was asked for on purpose: it is searched,
 * and only the ignore files found below it apply.
 */
export async function listFiles(root: string, base: string, options: ListFilesOptions = {}): Promise<string[]> {
  const filter = new IgnoreFilter(base)
  if (isInside(root, base)) await filter.loadAncestors(root)

  const globOptions: GlobOptions = {
    cwd: base,
    dot: true,
    followSymbolicLinks: false,
    fs: {readdir: filter.readdir},
    onlyFiles: true,
    signal: options.signal,
  }
  const found = await glob(options.pattern ?? '**/*', globOptions)
  options.signal?.throwIfAborted()
  return found.map((file) => path.join(base, file))
}

type ReaddirCallback = (error: NodeJS.ErrnoException | null, entries: Dirent[]) => void

/**
 * Gitignore semantics for one crawl. tinyglobby (through fdir) reads every directory with the `readdir`
 * given here, a directory's parent always before the directory itself, so the ignore files of a
 * directory's ancestors are known by the time its entries are filtered. Entries dropped here are never
 * crawled.
 */
class IgnoreFilter {
  /** Ignore rules by directory (absolute, no trailing slash). */
  private readonly rules = new Map<string, Ignore>()
  /** Directories whose ignore files have been looked for. */
  private readonly loaded = new Set<string>()

  constructor(private readonly base: string) {}

  /** Loads `root/.git/info/exclude` and the `.gitignore` files from `root` down to `base`'s parent. */
  async loadAncestors(root: string): Promise<void> {
    // Within one directory, later files take precedence: .gitignore overrides info/exclude.
    await this.load(root, [path.join(root, '.git', 'info', 'exclude'), path.join(root, '.gitignore')])
    if (this.base === root) return
    await this.loadDown(root, path.dirname(this.base))
    // An ignored base was named on purpose: forget the ancestors' rules, which would exclude all of it.
    if (this.isIgnored(this.base, true)) this.rules.clear()
  }

  /** fdir's `readdir`: the native one, then drop `.git` and ignored entries. */
  readonly readdir = ((dir: string, options: unknown, callback: ReaddirCallback) => {
    readdir(dir, options as {withFileTypes: true}, (error, entries) => {
      if (error) {
        callback(error, [])
        return
      }

      this.filter(path.resolve(dir), entries).then(
        (kept) => callback(null, kept),
        (filterError: NodeJS.ErrnoException) => callback(filterError, []),
      )
    })
  }) as NonNullable<GlobOptions['fs']>['readdir']

  private async filter(dir: string, entries: Dirent[]): Promise<Dirent[]> {
    // tinyglobby may start crawling below `base` (at `src` for the pattern `src/**`): pick up the ignore
    // files of the directories it skipped over.
    if (dir !== this.base && !this.loaded.has(path.dirname(dir))) await this.loadDown(this.base, path.dirname(dir))
    const hasGitignore = entries.some((entry) => entry.name === '.gitignore' && entry.isFile())
    await this.load(dir, hasGitignore ? [path.join(dir, '.gitignore')] : [])
    return entries.filter((entry) => !this.skips(dir, entry))
  }

  private skips(dir: string, entry: Dirent): boolean {
    // `.git` is a directory in a repository and a file in a worktree or submodule: never search either.
    if (entry.name === '.git') return true
    return this.isIgnored(path.join(dir, entry.name), entry.isDirectory())
  }

  /** Deepest rules first: the first ignore file with an opinion on the path decides, as in git. */
  private isIgnored(file: string, isDirectory: boolean): boolean {
    for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
      const rules = this.rules.get(dir)
      if (rules) {
        const relative = path.relative(dir, file).split(path.sep).join('/') + (isDirectory ? '/' : '')
        const result = rules.test(relative)
        if (result.ignored) return true
        if (result.unignored) return false
      }

      if (path.dirname(dir) === dir) return false
    }
  }

  /** Loads the `.gitignore` of `from`, `to` and every directory between, top down. */
  private async loadDown(from: string, to: string): Promise<void> {
    const dirs: string[] = []
    for (let dir = to; isInside(from, dir); dir = path.dirname(dir)) {
      dirs.unshift(dir)
      if (dir === from) break
    }

    for (const dir of dirs) await this.load(dir, [path.join(dir, '.gitignore')])
  }

  /** Adds the rules of those of `files` that exist, once per directory. */
  private async load(dir: string, files: string[]): Promise<void> {
    if (this.loaded.has(dir)) return
    this.loaded.add(dir)
    const rules = ignore({ignorecase: IGNORE_CASE})
    let any = false
    for (const file of files) {
      try {
        rules.add(await readFile(file, 'utf8'))
        any = true
      } catch {
        // Missing or unreadable: no rules from this file.
      }
    }

    if (any) this.rules.set(dir, rules)
  }
}
