/**
 * ToolSearch, as Claude Code 2.1.332 has it: the model loads a deferred tool (one sent with
 * `defer_loading: true`, whose definition the API keeps out of the prompt) by calling it, and its result
 * is a `tool_reference` to each tool found, which the API expands inline into that tool's definition.
 * The tools array never changes within a session, so the cached prefix holds: a loaded tool's
 * definition is part of the conversation, where its reference is. The registry offers it only when the
 * session has a deferred tool (registry.ts), and it finds only what the policy offers in the mode.
 */
import {z} from 'zod'

import {DEFAULT_RESULT_CAP, defineTool, ToolError} from '../tool.js'

export const TOOL_SEARCH = 'ToolSearch'
/** How many tools a keyword query loads unless it asks for another number: Claude Code's default. */
const DEFAULT_MAX_RESULTS = 5

const HEAD = `Loads deferred tools; call one once loaded. query "select:A,B", or keywords: best first, max_results (default ${DEFAULT_MAX_RESULTS}). Deferred:`

/**
 * ToolSearch's description for a session whose deferred tools are `deferred`: each on a line of its own,
 * by name, as Claude Code lists them (its available-deferred-tools block). A name alone: the request's
 * weight is what every turn sends, and ToolSearch's keywords match the descriptions.
 */
export function toolSearchDescription(deferred: ReadonlyArray<{name: string}>): string {
  return [HEAD, ...deferred.map((tool) => tool.name)].join('\n')
}

/**
 * The deferred tools a query finds, best first: `select:` names them (in the order given, unknown names
 * skipped); keywords score a tool by its name (a word of it, or the whole) above its description, and a
 * `+word` must occur in one of them.
 */
export function searchDeferred<T extends {name: string; description: string}>(query: string, tools: readonly T[], maxResults: number): T[] {
  const trimmed = query.trim()
  const select = /^select:(.*)$/is.exec(trimmed)
  if (select) {
    const wanted = select[1].split(',').map((name) => name.trim().toLowerCase())
    return [...new Set(wanted)].flatMap((name) => tools.filter((tool) => tool.name.toLowerCase() === name))
  }

  const words = trimmed.toLowerCase().split(/\s+/).filter(Boolean)
  const required = words.filter((word) => word.startsWith('+') && word.length > 1).map((word) => word.slice(1))
  const terms = words.map((word) => word.replace(/^\+/, '')).filter(Boolean)
  const scored = tools.flatMap((tool, order) => {
    const name = tool.name.toLowerCase()
    const parts = tool.name.split(/(?=[A-Z])|[_\-\s]+/).map((part) => part.toLowerCase())
    const text = tool.description.toLowerCase()
    if (!required.every((word) => name.includes(word) || text.includes(word))) return []
    const score = terms.reduce(
      (sum, term) => sum + (name === term ? 10 : parts.includes(term) ? 5 : name.includes(term) ? 3 : 0) + (text.includes(term) ? 1 : 0),
      0,
    )
    return score > 0 ? [{order, score, tool}] : []
  })
  return scored
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, maxResults)
    .map((each) => each.tool)
}

export default defineTool({
  access: 'read',
  description: HEAD,
  input: () =>
    z.object({
      max_results: z.number().int().optional(),
      query: z.string(),
    }),
  name: TOOL_SEARCH,
  resultCap: DEFAULT_RESULT_CAP,
  async run(input, ctx) {
    const catalog = ctx.deferred
    if (!catalog) throw new ToolError('No deferred tools exist here.')
    const offered = catalog.offered()
    const found = searchDeferred(input.query, offered, Math.max(1, input.max_results ?? DEFAULT_MAX_RESULTS))
    if (found.length === 0) {
      return `No deferred tool matches "${input.query}". Deferred tools here: ${offered.map((tool) => tool.name).join(', ') || 'none'}.`
    }

    catalog.load(found.map((tool) => tool.name))
    return `Loaded ${found.map((tool) => tool.name).join(', ')}.`
  },
})
