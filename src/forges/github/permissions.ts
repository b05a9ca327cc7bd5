/**
 * Who may act: a person's role on the repository, as GitHub reports it
 * (`GET /repos/{owner}/{repo}/collaborators/{username}/permission`), against the configured minimum.
 */
export const ROLES = ['read', 'triage', 'write', 'maintain', 'admin'] as const
export type Role = (typeof ROLES)[number]

/** What the permission endpoint answers: `role_name` (the fine role) and `permission` (the base one). */
export interface PermissionAnswer {
  permission?: string | null
  role_name?: string | null
}

/**
 * The role to compare: `role_name` when it is one of GitHub's five roles; a custom role (an
 * organisation's own name) counts as its base `permission`, which the API maps to admin, write, read or
 * none. None (not a collaborator, no access) is undefined: below every minimum.
 */
export function roleOf(answer: PermissionAnswer | undefined): Role | undefined {
  if (!answer) return undefined
  for (const candidate of [answer.role_name, answer.permission]) {
    if (candidate && (ROLES as readonly string[]).includes(candidate)) return candidate as Role
  }

  return undefined
}

/** Whether `role` reaches `minimum` in the order read < triage < write < maintain < admin. */
export function mayAct(role: Role | undefined, minimum: Role): boolean {
  return role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(minimum)
}
