/**
 * The environment block of every session's system prompt: where the model is (date, platform, workspace,
 * branch, a short `git status`, recent commits, the top-level layout), so that it need not spend turns
 * finding out. Read once when the session starts and never again: the system prompt must stay the same
 * between turns for the prompt cache, so a session that crosses midnight keeps its date.
 */
import type {Dirent} from 'node:fs'
import {readdir} from 'node:fs/promises'
import path from 'node:path'

import {repositorySummary, type RepositorySummary} from '../base/workspace/git.js'

/** Status lines shown; a workspace with more changes gets a count of the rest. */
const MAX_STATUS_LINES = 20
const MAX_LAYOUT_ENTRIES = 40
const MAX_SUBJECT_CHARS = 100
/** A status line with a very long path is cut: the block stays a few KB at most. */
const MAX_STATUS_CHARS = 160

export interface Environment {
  /** The local date, YYYY-MM-DD. */
  date: string
  platform: string
  workspace: string
  /** Null outside a git work tree. */
  repository: RepositorySummary | null
  /** Top-level entries of the workspace, sorted, directories with a trailing `/`. */
  layout: string[]
}

interface EnvironmentOptions {
  workspace: string
  /** Whether a path may not be named to the model (a `Read(...)` deny rule): left out of the layout and the status. */
  hidden?: (absolute: string) => boolean
  now?: Date
  /** What the session's repository snapshot says (its reads began before the session): else read now. */
  repository?: Promise<RepositorySummary | null>
}

/** Reads what the block says: the repository's summary (snapshot.ts) and one readdir, in parallel (a few milliseconds). */
export async function readEnvironment({hidden = () => false, now = new Date(), repository: read, workspace}: EnvironmentOptions): Promise<Environment> {
  const [repository, entries] = await Promise.all([read ?? repositorySummary(workspace), readdir(workspace, {withFileTypes: true}).catch(() => [] as Dirent[])])
  const layout = entries
    .filter((entry) => entry.name !== '.git' && !hidden(path.join(workspace, entry.name)))
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
    .sort()
  if (repository) {
    // Status paths are relative to the workspace (git's working directory); a rename names both sides.
    const named = (line: string) =>
      line
        .slice(3)
        .split(' -> ')
        .some((file) => hidden(path.resolve(workspace, unquote(file))))
    repository.status = repository.status.filter((line, index) => (index === 0 && line.startsWith('## ')) || !named(line))
  }

  return {date: localDate(now), layout, platform: `${process.platform} ${process.arch}`, repository, workspace}
}

/** The block as the system prompt carries it. */
export function environmentSection(env: Environment): string {
  const lines = ['# Environment', `Date: ${env.date}`, `Platform: ${env.platform}; the Bash tool runs bash`, `Workspace: ${env.workspace}`]
  const repository = env.repository
  if (repository) {
    const [first, ...rest] = repository.status
    const header = first?.startsWith('## ') ? first.slice(3) : undefined
    const changes = header === undefined ? repository.status : rest
    lines.push(`Git branch: ${header ?? 'unknown'}`)
    if (repository.unread !== undefined) {
      // Past LARGE_WORK_TREE files, `git status` would take longer than all else before the first request (snapshot.ts).
      lines.push(`Git status: not read (a large work tree: ${repository.unread} files)`)
    } else if (changes.length === 0) {
      lines.push('Git status: clean')
    } else {
      const more = changes.length > MAX_STATUS_LINES ? [`... and ${changes.length - MAX_STATUS_LINES} more`] : []
      lines.push(`Git status (${changes.length} changed):`, ...changes.slice(0, MAX_STATUS_LINES).map((line) => `  ${cut(line, MAX_STATUS_CHARS)}`), ...more)
    }

    if (repository.subjects.length > 0) lines.push('Recent commits:', ...repository.subjects.map((subject) => `  ${cut(subject, MAX_SUBJECT_CHARS)}`))
  } else {
    lines.push('Git: not a repository')
  }

  const shown = env.layout.slice(0, MAX_LAYOUT_ENTRIES).join(' ')
  const more = env.layout.length > MAX_LAYOUT_ENTRIES ? ` ... (${env.layout.length - MAX_LAYOUT_ENTRIES} more)` : ''
  lines.push(`Top level: ${shown || '(empty)'}${more}`)
  return lines.join('\n')
}

function localDate(now: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0')
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/** A path as `git status` prints it: quoted, with C escapes, when it holds unusual characters. */
function unquote(file: string): string {
  if (!file.startsWith('"') || !file.endsWith('"')) return file
  try {
    return JSON.parse(file) as string
  } catch {
    return file.slice(1, -1)
  }
}
