/**
 * Claude Code's `Skill` tool (`skill`, `args?`, as its sdk-tools.d.ts has it): the skills found
 * (skills/catalog.ts) are listed in its description as Claude Code lists them, within a size budget
 * (past it, by name only); calling it returns the skill's body with the folder its files are in. It
 * only reads: offered in plan mode too. A skill's scripts are run by the model through Bash, under the
 * session's policy and sandbox, like any command.
 */
import {z} from 'zod'

import type {Skill} from './skills/catalog.js'
import {DEFAULT_RESULT_CAP, defineTool, ToolError} from './tool.js'

/**
 * Characters of skill descriptions the tool's description carries: Claude Code's default (1% of a
 * 200k-token window, at four characters a token), or its SLASH_COMMAND_TOOL_CHAR_BUDGET.
 */
const SKILL_LISTING_BUDGET = 8000

const INSTRUCTIONS = `Execute a skill within the main conversation

<skills_instructions>
When users ask you to perform tasks, check if any of the available skills below can help complete the task more effectively. Skills provide specialized capabilities and domain knowledge.

How to use skills:
- Invoke skills using this tool with the skill name only (no arguments), or with args the skill asks for
- The skill's instructions come back as the result, with the base directory of its files: read them and run its scripts from there (Bash, under this session's permissions)
- Examples:
  - \`skill: "pdf"\` - invoke the pdf skill
  - \`skill: "changelog", args: "v2.1.0"\` - invoke the changelog skill with arguments

Important:
- Only use skills listed in <available_skills> below
- Do not invoke a skill that is already running
</skills_instructions>`

interface SkillListing {
  description: string
  /** Skills whose descriptions did not fit the budget: listed by name only. */
  nameOnly: string[]
}

/** The tool's description: each skill's name, description and location, until the budget is spent; then names only. */
export function skillListing(skills: readonly Skill[], budget = listingBudget()): SkillListing {
  const entries: string[] = []
  const nameOnly: string[] = []
  let used = 0
  for (const skill of skills) {
    const entry = `<skill>\n<name>\n${skill.name}\n</name>\n<description>\n${skill.description}\n</description>\n<location>\n${skill.location}\n</location>\n</skill>`
    if (nameOnly.length === 0 && used + entry.length <= budget) {
      entries.push(entry)
      used += entry.length
    } else nameOnly.push(skill.name)
  }

  const rest = nameOnly.length > 0 ? `\n\nMore skills (descriptions left out to fit the listing's size; invoke by name): ${nameOnly.join(', ')}` : ''
  return {description: `${INSTRUCTIONS}\n\n<available_skills>\n${entries.join('\n')}\n</available_skills>${rest}`, nameOnly}
}

function listingBudget(): number {
  const set = Number(process.env.SLASH_COMMAND_TOOL_CHAR_BUDGET)
  return Number.isInteger(set) && set > 0 ? set : SKILL_LISTING_BUDGET
}

/** The Skill tool over the skills of a session. */
export function skillTool(skills: readonly Skill[], description = skillListing(skills).description) {
  const byName = new Map(skills.map((skill) => [skill.name, skill]))
  return defineTool({
    access: 'read',
    description,
    input: z.object({
      skill: z.string().describe('The skill name. E.g., "commit", "review-pr", or "pdf"'),
      args: z.string().optional().describe('Optional arguments for the skill'),
    }),
    name: 'Skill',
    resultCap: DEFAULT_RESULT_CAP,
    async run(input) {
      // "/name", as a user would type it, is the same skill.
      const skill = byName.get(input.skill.trim().replace(/^\//, ''))
      if (!skill) throw new ToolError(`Unknown skill "${input.skill}". Available skills: ${[...byName.keys()].join(', ')}.`)
      const args = input.args?.trim() ? `\n\nARGUMENTS: ${input.args.trim()}` : ''
      return `Base directory for this skill: ${skill.dir}\n\n${skill.body}${args}`
    },
  })
}
