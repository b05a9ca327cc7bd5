/**
 * The model aliases Claude Code takes (`--model sonnet`, `ANTHROPIC_MODEL=opus`): each names a family, and
 * means its newest model. The API's model list says which that is (newest first, as the API orders it);
 * without an answer, wave's table does. A session resolves the alias once, before its first request,
 * so every request, the result and the transcript name one model ID.
 */
import type Anthropic from '@anthropic-ai/sdk'

import {modelTableIds} from './table.js'

const MODEL_ALIASES = ['opus', 'sonnet', 'haiku', 'fable'] as const
export type ModelAlias = (typeof MODEL_ALIASES)[number]

export const isModelAlias = (model: string): model is ModelAlias => (MODEL_ALIASES as readonly string[]).includes(model)

/** `claude-<family>-<major>[-<minor>]`, no date: the IDs an alias may mean. */
const FAMILY_ID = /^claude-([a-z]+)-(\d+)(?:-(\d{1,2}))?$/

/** The table's newest model of the alias's family. */
export function aliasFromTable(alias: ModelAlias): string {
  let best: {id: string; major: number; minor: number} | undefined
  for (const id of modelTableIds()) {
    const match = FAMILY_ID.exec(id)
    if (!match || match[1] !== alias) continue
    const [major, minor] = [Number(match[2]), Number(match[3] ?? 0)]
    if (!best || major > best.major || (major === best.major && minor > best.minor)) best = {id, major, minor}
  }

  if (!best) throw new Error(`wave's model table has no ${alias} model`)
  return best.id
}

/**
 * The alias's model from the API's model list (its first entry of the family, the list being newest
 * first), else the table's; `source` says which, for the one line a session shows.
 */
export async function resolveAlias(client: Anthropic, alias: ModelAlias): Promise<{id: string; source: 'api' | 'table'}> {
  try {
    const page = await client.models.list({limit: 100})
    const found = page.data.find((model) => model.id.startsWith(`claude-${alias}-`))
    if (found) return {id: found.id, source: 'api'}
  } catch {
    // No list (a provider without one, a proxy, the network): the table answers.
  }

  return {id: aliasFromTable(alias), source: 'table'}
}
