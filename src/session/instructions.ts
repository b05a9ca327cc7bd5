/**
 * What a session is told besides its task: the repository's own instructions for agents (AGENTS.md,
 * the convention Codex, Gemini CLI and others read, or CLAUDE.md where a directory has none), the
 * `instructions` of the settings files, and `--append-system-prompt`. Read when a session starts, so an
 * approved plan runs with the instructions as they are at run time, not as they were at planning time.
 */
import {open, realpath} from 'node:fs/promises'
import path from 'node:path'

import {isInside} from '../base/workspace/paths.js'

/** In order of preference: a directory's AGENTS.md, else its CLAUDE.md. */
const INSTRUCTION_FILES = ['AGENTS.md', 'CLAUDE.md'] as const

/** The repository's instructions reach the model up to this many bytes (Codex's default cap). */
const INSTRUCTIONS_CAP_BYTES = 32 * 1024

/** Below this, a file that does not fit is left out rather than shown as a fragment. */
const MIN_SHOWN_BYTES = 256

interface InstructionFile {
  /** Relative to the directory the search started at, with `/`: `AGENTS.md`, `service/CLAUDE.md`. */
  file: string
  /** The file's text, or as much of it as the cap could ever use. */
  text: string
  /** The file's size in bytes, all of it. */
  size: number
}

/**
 * The instruction files from `top` (the repository root) down to `cwd` (where the command was
 * started), root first: one per directory, AGENTS.md where there is one, else CLAUDE.md. A file whose
 * real path leads out of `top` (a symlink to elsewhere) is not read, nor one that is not UTF-8 text.
 */
export async function readInstructionFiles(top: string, cwd: string): Promise<InstructionFile[]> {
  const dirs = [top]
  if (cwd !== top && isInside(top, cwd)) {
    for (const part of path.relative(top, cwd).split(path.sep)) dirs.push(path.join(dirs.at(-1)!, part))
  }

  const files: InstructionFile[] = []
  for (const dir of dirs) {
    for (const name of INSTRUCTION_FILES) {
      const read = await readConfined(top, path.join(dir, name))
      if (read === undefined) continue
      if (read.text.trim()) files.push({file: path.relative(top, path.join(dir, name)).split(path.sep).join('/'), ...read})
      break // a directory's AGENTS.md stands for it, even when its CLAUDE.md says more
    }
  }

  return files
}

async function readConfined(top: string, file: string): Promise<{text: string; size: number} | undefined> {
  let real: string
  try {
    real = await realpath(file)
  } catch {
    return undefined
  }

  if (!isInside(top, real)) return undefined
  const handle = await open(real, 'r').catch(() => undefined)
  if (!handle) return undefined
  try {
    const info = await handle.stat()
    if (!info.isFile()) return undefined
    // No more than the cap could use, however large the file.
    const buffer = Buffer.alloc(Math.min(info.size, INSTRUCTIONS_CAP_BYTES + 4))
    const {bytesRead} = await handle.read(buffer, 0, buffer.length, 0)
    return {size: Math.max(info.size, bytesRead), text: buffer.subarray(0, bytesRead).toString('utf8')}
  } finally {
    await handle.close()
  }
}

interface InstructionsInput {
  /** The repository's instruction files, root first. */
  repository: InstructionFile[]
  /** The settings files' `instructions`, user file first. */
  settings: string[]
  /** `--append-system-prompt`. */
  appended?: string
}

interface InstructionsSection {
  /** The system prompt's sections, joined by blank lines ('' when there is nothing to say). */
  text: string
  /** When the repository's instructions were cut at the cap: a line for stderr. */
  cut?: string
}

/**
 * The instructions as system prompt sections, each marked with where it comes from. The repository's
 * are capped at INSTRUCTIONS_CAP_BYTES, root first, so the deepest files are the ones cut; where they
 * are cut, a note says so in the prompt itself, and `cut` says so for the user.
 */
export function instructionsSections(input: InstructionsInput, cap = INSTRUCTIONS_CAP_BYTES): InstructionsSection {
  const sections: string[] = []
  let cut: string | undefined
  if (input.repository.length > 0) {
    let budget = cap
    const shown: string[] = []
    const left: string[] = []
    let missing = 0
    for (const {file, size, text} of input.repository) {
      // What does not fit is cut, unless too little room is left for more than a fragment of it.
      if (size > budget && budget < MIN_SHOWN_BYTES) {
        left.push(file)
        missing += size
        budget = 0
        continue
      }

      const kept = size <= budget ? text : truncateUtf8(text, budget)
      budget = size <= budget ? budget - Buffer.byteLength(kept) : 0
      const rest = size - Buffer.byteLength(kept)
      if (rest > 0) {
        left.push(file)
        missing += rest
      }

      shown.push(`<instructions file="${file}">\n${kept.trimEnd()}\n</instructions>`)
    }

    const files = input.repository.map((entry) => entry.file).join(', ')
    const note =
      left.length > 0
        ? `\n\n[wave: the repository's instructions exceed the ${cap / 1024} KiB cap and were cut; ${missing} bytes of ${left.join(', ')} are not shown.]`
        : ''
    if (left.length > 0)
      cut = `The repository's instructions (${files}) exceed the ${cap / 1024} KiB cap: ${missing} bytes of ${left.join(', ')} were left out of the prompt.`
    sections.push(
      `# Repository instructions\n\nThe repository's instructions for agents (AGENTS.md, or CLAUDE.md where a directory has none), root first: a deeper file refines its parents'. Follow them; they cannot change what the permission rules allow.\n\n${shown.join('\n\n')}${note}`,
    )
  }

  const fromSettings = input.settings.map((text) => text.trim()).filter(Boolean)
  if (fromSettings.length > 0) sections.push(`# Instructions from the settings\n\n${fromSettings.join('\n\n')}`)
  if (input.appended?.trim()) sections.push(`# Additional instructions\n\n${input.appended.trim()}`)
  return {cut, text: sections.join('\n\n')}
}

/** The longest prefix of `text` within `bytes` UTF-8 bytes, ending at a line break where one is near. */
function truncateUtf8(text: string, bytes: number): string {
  let prefix = Buffer.from(text).subarray(0, bytes).toString('utf8')
  if (prefix.endsWith('\uFFFD')) prefix = prefix.slice(0, -1) // a character cut in two
  const line = prefix.lastIndexOf('\n')
  return line > prefix.length / 2 ? prefix.slice(0, line + 1) : prefix
}
