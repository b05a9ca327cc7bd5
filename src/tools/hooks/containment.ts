/**
 * Where a hook runs. A project's hook is the repository's code: always in the sandbox. A user's hook is
 * the user's own command, run as the user's, unless it runs what the session could have written: a file
 * of the workspace (`sh ./scripts/stop-check.sh`, `$CLAUDE_PROJECT_DIR/...`), or a program that runs the
 * project's own files (`npm run lint` runs package.json's script, `make` the Makefile). Such a hook runs
 * in the session's sandbox too: the model could have rewritten that file, and wave's rule is that nothing
 * a sandboxed command writes is later run outside it (issue 48). In plan mode every sandboxed hook is
 * throwaway, as plan mode's Bash: nothing it writes survives it.
 */
import {existsSync} from 'node:fs'
import path from 'node:path'

import {isInside} from '../../base/workspace/paths.js'
import type {SandboxSettings} from '../../base/process/sandbox.js'
import type {ConfiguredHook} from '../../config/hooks.js'

/** Programs that run files of the directory they are started in (the hook's is the workspace). */
const PROJECT_RUNNERS = new Set([
  'bun',
  'cargo',
  'gradle',
  'just',
  'make',
  'mvn',
  'npm',
  'npx',
  'pnpm',
  'poetry',
  'pytest',
  'rake',
  'task',
  'tox',
  'uv',
  'yarn',
])

/** Programs that run the file they are given (`sh ./scripts/stop-check.sh`, `node tools/check.js`). */
const INTERPRETERS = new Set(['.', 'bash', 'bun', 'dash', 'deno', 'node', 'perl', 'php', 'python', 'python3', 'ruby', 'sh', 'source', 'tsx', 'zsh'])

/**
 * Why a user's hook runs in the sandbox, or undefined when it runs as the user's own command: each
 * simple command's program is a file of the workspace, an interpreter given one, or a program that runs
 * the project's own files; or the command names $CLAUDE_PROJECT_DIR. What a command only reads or
 * writes (`>> .hook-log`) is not run.
 */
export function workspaceCodeIn(command: string, workspace: string): string | undefined {
  if (/CLAUDE_PROJECT_DIR/.test(command)) return 'it names $CLAUDE_PROJECT_DIR'
  const inWorkspace = (word: string) => {
    const absolute = path.resolve(workspace, word)
    return isInside(workspace, absolute) && absolute !== workspace && existsSync(absolute)
  }

  // Simple commands and their words as a shell splits them, near enough: a redirection's target is dropped.
  for (const segment of command.split(/[;&|()\n]+|\b(?:then|do|else)\b/)) {
    const words = segment
      .replaceAll(/\d*[<>]+&?\s*\S+/g, ' ')
      .split(/\s+/)
      .map((word) => word.replaceAll(/["'`]/g, ''))
      .filter(Boolean)
    const at = words.findIndex((word) => !/^\w+=/.test(word))
    if (at === -1) continue
    const program = words[at]
    const name = path.basename(program)
    if (program.includes('/') && inWorkspace(program)) return `it runs ${program}, a file of the workspace`
    if (PROJECT_RUNNERS.has(name)) return `${name} runs the project's own files`
    if (INTERPRETERS.has(name)) {
      const file = words.slice(at + 1).find((word) => !word.startsWith('-') && inWorkspace(word))
      if (file) return `${name} runs ${file}, a file of the workspace`
    }
  }

  return undefined
}

/** The sandbox a hook runs in: none for a user's own command, the session's (throwaway in plan mode) otherwise. */
export function hookSandbox(hook: ConfiguredHook, session: SandboxSettings, workspace: string, mode: string): SandboxSettings {
  const contained = hook.scope !== 'user' || workspaceCodeIn(hook.command, workspace) !== undefined
  if (!contained) return {...session, enabled: false}
  return mode === 'plan' ? {...session, enabled: true, throwaway: true} : {...session, enabled: true}
}
