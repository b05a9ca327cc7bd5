import {mkdir, mkdtemp, realpath, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {afterEach} from 'vitest'

import type {ToolContext} from '../../../src/tools/tool.js'
import {isInside, realPathOf, resolvePath} from '../../../src/base/workspace/paths.js'

/** A fresh temporary workspace holding `files` (path → content); returns its real path. */
export async function makeWorkspace(files: Record<string, string | Buffer> = {}): Promise<string> {
  const root = await realpath(await mkdtemp(path.join(tmpdir(), 'wave-tools-')))
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name)
    await mkdir(path.dirname(file), {recursive: true})
    await writeFile(file, content)
  }

  return root
}

export async function removeWorkspace(root: string): Promise<void> {
  await rm(root, {force: true, recursive: true})
}

/** What the dispatcher would hand a tool whose call passed the policy. */
export async function contextFor(
  root: string,
  input: {file_path?: string; path?: string} = {},
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolContext> {
  const refuse = async (): Promise<string> => {
    throw new Error('session control is not available in tool tests')
  }

  return {
    readable: async (absolute) => isInside(root, await realPathOf(absolute)),
    root,
    session: {enterPlanMode: refuse, exitPlanMode: refuse},
    signal,
    target: await resolvePath(root, input.file_path ?? input.path ?? '.'),
  }
}

/**
 * Registers cleanup and returns a maker of temporary workspaces: each test's workspaces are removed
 * after it, whatever it asserted.
 */
export function useWorkspaces(): (files?: Record<string, string | Buffer>) => Promise<string> {
  const roots: string[] = []
  afterEach(async () => {
    await Promise.all(roots.splice(0).map((root) => removeWorkspace(root)))
  })
  return async (files = {}) => {
    const root = await makeWorkspace(files)
    roots.push(root)
    return root
  }
}
