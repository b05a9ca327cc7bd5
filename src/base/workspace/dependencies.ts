/**
 * The project's dependencies as a run's contract knows them: the git-ignored directories that hold
 * programs a check runs (`node_modules/`, a virtualenv, vendored tools). Writes to ignored paths by the
 * approved checks are their outputs (caches, reports), not the model's changes; writes to these are
 * never outputs: what lies there is what a later check executes.
 */
import path from 'node:path'

/** Ignored directories known by their name to hold what checks run. */
const DEPENDENCY_NAMES = new Set(['node_modules', '.venv', 'venv', 'vendor', 'bower_components', '__pypackages__'])

/** Whether a workspace-relative path (`/`-separated, a directory with or without its trailing `/`) lies in a dependency directory named so. */
export function isDependencyPath(relative: string): boolean {
  return relative.split('/').some((segment) => DEPENDENCY_NAMES.has(segment))
}

/** Whether `dir` (a directory's name) is one of the names dependencies live under. */
export function isDependencyName(dir: string): boolean {
  return DEPENDENCY_NAMES.has(path.basename(dir.replace(/\/$/, '')))
}
