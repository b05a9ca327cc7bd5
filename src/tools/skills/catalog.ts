/**
 * Agent Skills: folders holding a `SKILL.md` (YAML front matter with `name` and `description`, then a
 * Markdown body) and the files it uses, found where Claude Code and the other agents look: the user's
 * `$WAVE_HOME/skills/` and `~/.claude/skills/`, the workspace's `.claude/skills/` and `.agents/skills/`.
 * Like AGENTS.md, a skill is words for the model: it grants nothing; its scripts run through Bash, under
 * the session's policy and sandbox. A skill wave cannot read, or a second one of a name, is a warning
 * naming its file, never a silent gap.
 */
import {readdirSync, readFileSync, realpathSync} from 'node:fs'
import {homedir} from 'node:os'
import path from 'node:path'

import {parse as parseYaml} from 'yaml'

import {waveHome} from '../../base/home.js'
import {isInside} from '../../base/workspace/paths.js'

export interface Skill {
  name: string
  description: string
  /** The skill's folder (absolute): what the Skill tool tells the model its files are relative to. */
  dir: string
  /** The SKILL.md file. */
  file: string
  /** Claude Code's location label: user or project. */
  location: 'project' | 'user'
  /** The Markdown after the front matter. */
  body: string
}

interface SkillCatalog {
  skills: Skill[]
  /** One line each, naming the file. */
  warnings: string[]
}

/** The Agent Skills specification's limits. */
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
const MAX_NAME = 64
const MAX_DESCRIPTION = 1024
/** A SKILL.md larger than this is not a skill but a mistake (its body goes whole into a tool result). */
const MAX_SKILL_BYTES = 256 * 1024

/** Where skills are looked for, in order of precedence (Claude Code's: the user's own over a project's). */
function skillPlaces(workspace: string): Array<{dir: string; location: Skill['location']}> {
  return [
    {dir: path.join(waveHome(), 'skills'), location: 'user'},
    {dir: path.join(homedir(), '.claude', 'skills'), location: 'user'},
    {dir: path.join(workspace, '.claude', 'skills'), location: 'project'},
    {dir: path.join(workspace, '.agents', 'skills'), location: 'project'},
  ]
}

/** Every skill of the places, each name once (the first place's), with a warning for each one not loaded. */
export function loadSkills(workspace: string): SkillCatalog {
  const skills: Skill[] = []
  const warnings: string[] = []
  const seen = new Set<string>()
  const byName = new Map<string, Skill>()
  for (const place of skillPlaces(workspace)) {
    let real: string
    try {
      real = realpathSync(place.dir)
    } catch {
      continue // no such directory: nothing to load
    }

    // One directory reached two ways (~/.claude/skills linked to the workspace's) is read once.
    if (seen.has(real)) continue
    seen.add(real)
    let entries: string[]
    try {
      entries = readdirSync(place.dir).sort()
    } catch {
      continue
    }

    for (const entry of entries) {
      const file = path.join(place.dir, entry, 'SKILL.md')
      const read = readSkill(file, entry, place.location, workspace)
      if (read === undefined) continue
      if ('problem' in read) {
        warnings.push(`Skill ${file} not loaded: ${read.problem}.`)
        continue
      }

      const first = byName.get(read.skill.name)
      if (first) {
        warnings.push(`Skill ${file} not loaded: a skill named "${read.skill.name}" is already loaded from ${first.file}.`)
        continue
      }

      if (read.note) warnings.push(`Skill ${file}: ${read.note}.`)
      byName.set(read.skill.name, read.skill)
      skills.push(read.skill)
    }
  }

  return {skills, warnings}
}

/** One SKILL.md read: the skill, why it is not one, or undefined where the folder has none. */
function readSkill(
  file: string,
  folder: string,
  location: Skill['location'],
  workspace: string,
): {problem: string} | {skill: Skill; note?: string} | undefined {
  let real: string
  try {
    real = realpathSync(file)
  } catch {
    return undefined
  }

  // A repository's skill is the repository's file: a SKILL.md linked to a file elsewhere (a key, the
  // user's notes) would carry it into the model's context.
  if (location === 'project' && !isInside(realpathSync(workspace), real)) return {problem: `it leads outside the workspace (to ${real})`}
  let text: string
  try {
    const bytes = readFileSync(real)
    if (bytes.length > MAX_SKILL_BYTES) return {problem: `it is ${bytes.length} bytes; a SKILL.md is at most ${MAX_SKILL_BYTES}`}
    text = bytes.toString('utf8')
  } catch (error) {
    return {problem: `it cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`}
  }

  const match = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text)
  if (!match) return {problem: 'it does not begin with YAML front matter between --- lines (name and description)'}
  let front: unknown
  try {
    front = parseYaml(match[1])
  } catch (error) {
    return {problem: `its front matter is not YAML wave can read (${(error as Error).message.split('\n')[0]})`}
  }

  if (!front || typeof front !== 'object' || Array.isArray(front)) return {problem: 'its front matter is not a mapping with name and description'}
  const {description, name} = front as Record<string, unknown>
  if (typeof name !== 'string' || !name.trim()) return {problem: 'its front matter has no name'}
  if (name.length > MAX_NAME || !NAME.test(name))
    return {problem: `its name "${name}" is not lowercase letters, digits and single hyphens (at most ${MAX_NAME})`}
  if (typeof description !== 'string' || !description.trim()) return {problem: 'its front matter has no description'}
  if (description.length > MAX_DESCRIPTION) return {problem: `its description is ${description.length} characters; at most ${MAX_DESCRIPTION}`}
  const skill: Skill = {body: text.slice(match[0].length).trim(), description: description.trim(), dir: path.dirname(file), file, location, name}
  return {note: name === folder ? undefined : `its name "${name}" differs from its folder "${folder}" (the name is used)`, skill}
}
