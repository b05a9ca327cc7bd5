/**
 * A check's verdict rests on what the approval can see: the project's dependencies (node_modules, a
 * virtualenv, vendored tools: base/workspace/dependencies.ts), which hold the programs the checks run,
 * are held as they were when the run began. Nothing the model does may change them without the run
 * failing:
 * - out of reach in the sandbox: the model's commands (background ones, the project's hooks and its
 *   approved checks run through Bash included) see them read-only, and so do wave's checks, but for the
 *   runners' caches inside node_modules, writable to the checks only. Code a first check loads cannot
 *   rewrite what a second runs;
 * - a file tool's write into them (Write, Edit: wave's own process, no sandbox) is found from the
 *   paths the tools report, before the checks: named, and no check runs;
 * - with the sandbox off (nothing read-only), they are fingerprinted when the run begins and verified
 *   before every check instead.
 */
import path from 'node:path'

import type {CheckOptions} from './checks.js'
import {DEFAULT_SANDBOX, type Frozen} from '../base/process/sandbox.js'
import {type Dependencies, type DependencyPrints, findDependencies, fingerprintDependencies, makeRunnerCaches} from '../base/workspace/dependencies.js'
import {isInside} from '../base/workspace/paths.js'
import {changedBetween, type WorkTreeState} from '../base/workspace/worktree.js'

export class DependencyGuard {
  /** The dependencies as the run began, and (with the sandbox off) their fingerprints. */
  private readonly start: Promise<{found: Dependencies; prints?: DependencyPrints}>
  /** The dependencies once found: what commands see read-only. */
  private found?: Dependencies

  /**
   * `state`: the work tree as the run began (worktree.ts), whose ignored directories are searched;
   * `sandboxed`: whether commands and checks run in the sandbox (else the dependencies are fingerprinted).
   */
  constructor(
    private readonly workspace: string,
    state: Promise<WorkTreeState>,
    sandboxed: boolean,
  ) {
    this.start = state.then(async (tree) => {
      const found = await findDependencies(workspace, tree)
      this.found = found
      return {found, prints: sandboxed ? undefined : await fingerprintDependencies(workspace, found)}
    })
  }

  /** Resolves once the dependencies as the run began are known: before the first tool runs. */
  async ready(): Promise<void> {
    await this.start
  }

  /** What the model's commands may not write: every dependency directory, its caches included (asked at each spawn). */
  forCommands(): Frozen | undefined {
    return this.found && {readOnly: this.absolute(this.found.dirs), writable: []}
  }

  /** Of the files the file tools wrote (real paths), those inside the dependencies, workspace-relative. */
  writtenInto(written: Iterable<string>): string[] {
    const dirs = this.absolute(this.found?.dirs ?? [])
    return [...written].filter((file) => dirs.some((dir) => isInside(dir, file))).map((file) => path.relative(this.workspace, file).split(path.sep).join('/'))
  }

  /** The dependencies' entries changed since the run began (fingerprinted only with the sandbox off). */
  async changes(): Promise<string[]> {
    const {found, prints} = await this.start
    if (!prints || found.dirs.length === 0) return []
    // Fingerprints compare as work-tree readings do; their keys (entries, never `dir/`) come back as they are.
    return changedBetween(prints, await fingerprintDependencies(this.workspace, found))
  }

  /**
   * The checks' options held to the dependencies: in the sandbox, the dependencies read-only, their
   * runners' caches writable; without it, a verification before each check. `onChange` records what was found changed.
   */
  async checkOptions<T extends CheckOptions>(options: T, onChange: (changed: string[]) => void): Promise<T> {
    const {found} = await this.start
    if (found.dirs.length === 0) return options
    const sandbox = options.sandbox ?? DEFAULT_SANDBOX
    if (sandbox.enabled) {
      await makeRunnerCaches(this.workspace, found.caches)
      return {...options, sandbox: {...sandbox, frozen: {readOnly: this.absolute(found.dirs), writable: this.absolute(found.caches)}}}
    }

    return {
      ...options,
      guard: async () => {
        const changed = await this.changes()
        if (changed.length === 0) return undefined
        onChange(changed)
        return dependenciesChangedMessage(changed)
      },
    }
  }

  private absolute(dirs: string[]): string[] {
    return dirs.map((dir) => path.join(this.workspace, dir))
  }
}

/** Why no check runs once the dependencies changed. */
export function dependenciesChangedMessage(changed: string[]): string {
  const most = 5
  const named = changed.length > most ? `${changed.slice(0, most).join(', ')}, and ${changed.length - most} more` : changed.join(', ')
  return `the project's dependencies changed since the run began (${named}): a check's verdict must rest on what the approval can see`
}
