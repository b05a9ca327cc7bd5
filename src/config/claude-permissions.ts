/**
 * Claude Code's `permissions` in `.claude/settings.json` and `.claude/settings.local.json`, read as its
 * users write them. They become the rules of a project file (settings.ts merges them): `deny` and `ask`
 * always (they only narrow), `allow` only where project settings are trusted, as a project's hooks are.
 * What wave cannot honour as written is named, never dropped in silence: a deny or ask rule wave cannot
 * read governs its whole tool instead (it narrows more, never less); an allow rule it cannot read is left
 * out; the keys wave has no equivalent for (`defaultMode`, `additionalDirectories`, ...) are named.
 */
import {z} from 'zod'

import {usageError} from '../base/errors.js'
import {parseRule} from '../policy/policy.js'

/** Loose: Claude Code's permissions hold keys wave has no equivalent for; each is named, none refused. */
export const claudePermissionsSchema = z.looseObject({
  allow: z.array(z.string()).optional(),
  ask: z.array(z.string()).optional(),
  deny: z.array(z.string()).optional(),
})

type ClaudePermissions = z.infer<typeof claudePermissionsSchema>

/** The keys of Claude Code's permissions wave reads; any other is named as not honoured. */
const READ_KEYS = new Set(['allow', 'ask', 'deny'])

/** Why wave leaves a key of Claude Code's permissions to Claude Code. */
const NOT_HONOURED: Record<string, string> = {
  additionalDirectories: "wave's file tools stay inside the workspace",
  defaultMode: "a run's mode is the approval's (or --mode)",
  disableBypassPermissionsMode: 'the approver chooses the mode, and wave approve shows it',
}

/** A rule's tool name, where the rule names one even if wave cannot read the rest. */
const TOOL_NAME = /^\s*([A-Za-z_][\w-]*)(?:\(|\s*$)/

export interface ReadPermissions {
  permissions?: {allow?: string[]; deny?: string[]; ask?: string[]}
  /** What wave cannot honour as written, one line each, naming the file. */
  unhonoured: string[]
}

/** A `.claude` file's permissions as wave's rules, and what of them it cannot honour as written. */
export function claudePermissions(permissions: ClaudePermissions | undefined, file: string): ReadPermissions {
  if (!permissions) return {unhonoured: []}
  const unhonoured: string[] = []
  for (const key of Object.keys(permissions).filter((key) => !READ_KEYS.has(key))) {
    unhonoured.push(`${file}: permissions.${key} is not honoured: ${NOT_HONOURED[key] ?? 'wave has no equivalent of it'}`)
  }

  const read = (kind: 'allow' | 'ask' | 'deny') => {
    const rules: string[] = []
    for (const source of permissions[kind] ?? []) {
      const rule = readableRule(source, kind, file)
      if (rule.note) unhonoured.push(rule.note)
      if (rule.rule) rules.push(rule.rule)
    }

    return rules
  }

  return {permissions: {allow: read('allow'), ask: read('ask'), deny: read('deny')}, unhonoured}
}

/**
 * One rule as wave can honour it: as written when wave reads it; else a deny or ask rule governs its whole
 * tool (wider, so never less safe), and an allow rule is left out. A rule naming no tool at all cannot be
 * honoured in any form: a deny of it refuses the file (exit 2), as a bad rule of wave's own files does.
 */
function readableRule(source: string, kind: 'allow' | 'ask' | 'deny', file: string): {rule?: string; note?: string} {
  try {
    parseRule(source)
    return {rule: source}
  } catch (error) {
    const why = (error as Error).message
    if (kind === 'allow') return {note: `${file}: the allow rule ${source} is not honoured (${why})`}
    const tool = TOOL_NAME.exec(source)?.[1]
    if (!tool) throw usageError(`Invalid settings file ${file}: the ${kind} rule ${source} names no tool wave can honour (${why}).`)
    return {note: `${file}: the ${kind} rule ${source} is honoured as ${tool}, all of it (${why})`, rule: tool}
  }
}
