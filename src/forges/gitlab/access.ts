/**
 * Who may act on GitLab: a member's access level on the project (GitLab's numbers: Guest 10, Planner 15,
 * Reporter 20, Developer 30, Maintainer 40, Owner 50), against a configured minimum, by name or number.
 */
import {usageError} from '../../base/errors.js'

export const ACCESS_LEVELS = {guest: 10, planner: 15, reporter: 20, developer: 30, maintainer: 40, owner: 50} as const
export type AccessLevel = number

const NAMES: Record<number, string> = {
  0: 'No access',
  5: 'Minimal access',
  10: 'Guest',
  15: 'Planner',
  20: 'Reporter',
  30: 'Developer',
  40: 'Maintainer',
  50: 'Owner',
}

export const accessLevelName = (level: number) => NAMES[level] ?? `level ${level}`

/** `developer`, `Developer` or `30`; anything else is exit 2, naming what is accepted. */
export function parseAccessLevel(value: string): AccessLevel {
  const key = value.trim().toLowerCase()
  if (key in ACCESS_LEVELS) return ACCESS_LEVELS[key as keyof typeof ACCESS_LEVELS]
  if (/^\d+$/.test(key) && Object.values(ACCESS_LEVELS).includes(Number(key) as never)) return Number(key)
  throw usageError(
    `The minimum access level must be one of ${Object.entries(ACCESS_LEVELS)
      .map(([name, level]) => `${name} (${level})`)
      .join(', ')} (got "${value.slice(0, 40)}").`,
  )
}
