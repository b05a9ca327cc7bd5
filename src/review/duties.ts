/**
 * Separation of duties, checked before an approval runs anything, the same on every forge (as Atlantis'
 * apply requirements): the approver is not who asked for the plan (`require-other-approver`); the pull
 * (merge) request was approved on the forge by someone else (`require-review`); the pull request can be
 * merged (`require-mergeable`, where the forge can say). Each is a flag, else a WAVE_REQUIRE_* variable
 * (`1`, `true`, `on`), and a refusal says which requirement and why, in a reply.
 */
import {Flags} from '@oclif/core'

import {ExitCode, usageError, WaveError} from '../base/errors.js'
import {type ChangeRequest, type Forge, type ForgeWords, type Person, samePerson} from './forge.js'
import type {StickyState} from './comment-body.js'

export interface Duties {
  requireOtherApprover: boolean
  requireReview: boolean
  requireMergeable: boolean
  /** How many distinct people's `/wave approve` a plan needs before it runs (WAVE_REQUIRED_APPROVALS; default 1). */
  requiredApprovals?: number
}

export interface DutyFlags {
  'require-other-approver'?: boolean
  'require-review'?: boolean
  'require-mergeable'?: boolean
}

/** The three flags of `wave github` and `wave gitlab`, in the forge's words. */
export function dutyFlags(words: Pick<ForgeWords, 'changeRequest' | 'forge'>) {
  return {
    'require-mergeable': Flags.boolean({
      allowNo: true,
      description: `Run an approved plan only on a ${words.changeRequest} ${words.forge} can merge ($WAVE_REQUIRE_MERGEABLE=1)`,
    }),
    'require-other-approver': Flags.boolean({
      allowNo: true,
      description: 'Refuse an approval by the person who asked for the plan ($WAVE_REQUIRE_OTHER_APPROVER=1)',
    }),
    'require-review': Flags.boolean({
      allowNo: true,
      description: `Run an approved plan only on a ${words.changeRequest} someone else approved ($WAVE_REQUIRE_REVIEW=1)`,
    }),
  }
}

const VARIABLES = {
  requireMergeable: ['require-mergeable', 'WAVE_REQUIRE_MERGEABLE'],
  requireOtherApprover: ['require-other-approver', 'WAVE_REQUIRE_OTHER_APPROVER'],
  requireReview: ['require-review', 'WAVE_REQUIRE_REVIEW'],
} as const

/** A flag given wins; else the variable (empty counts as unset, as an Action input left empty); else off. */
export function dutiesOf(flags: DutyFlags, env: NodeJS.ProcessEnv = process.env): Duties {
  const read = ([flag, variable]: readonly [keyof DutyFlags, string]): boolean => {
    if (flags[flag] !== undefined) return flags[flag]
    const value = (env[variable] ?? '').trim().toLowerCase()
    if (value === '') return false
    if (['1', 'true', 'on', 'yes'].includes(value)) return true
    if (['0', 'false', 'off', 'no'].includes(value)) return false
    throw usageError(`${variable} must be 1 or 0 (got "${value.slice(0, 40)}").`)
  }

  return {
    requiredApprovals: requiredApprovalsOf(env),
    requireMergeable: read(VARIABLES.requireMergeable),
    requireOtherApprover: read(VARIABLES.requireOtherApprover),
    requireReview: read(VARIABLES.requireReview),
  }
}

/** WAVE_REQUIRED_APPROVALS: a whole number from 1 (empty: 1, as an Action input left empty). */
function requiredApprovalsOf(env: NodeJS.ProcessEnv): number {
  const value = (env.WAVE_REQUIRED_APPROVALS ?? '').trim()
  if (value === '') return 1
  if (!/^\d{1,3}$/.test(value) || Number(value) < 1) throw usageError(`WAVE_REQUIRED_APPROVALS must be a whole number from 1 (got "${value.slice(0, 40)}").`)
  return Number(value)
}

/**
 * Refuses (exit 3, not approved) an approval the configured duties do not allow. `pull` is the change
 * request the plan was made on, if any: a plan on an issue has nothing to review or merge, so a
 * requirement of either refuses it (fail closed: the requirement was asked for).
 */
export async function assertDuties(
  duties: Duties,
  forge: Forge,
  input: {actor: Person; author: string; state: StickyState; pull?: ChangeRequest},
): Promise<void> {
  const {actor, pull, state} = input
  // By the forge's ids where the comment recorded one: a requester who renamed herself is still her.
  const requester: Person = {id: state.requestedById, login: state.requestedBy}
  const author: Person | undefined = pull?.author === undefined ? undefined : {id: pull.authorId, login: pull.author}
  const {words} = forge
  const refusal = (setting: string, why: string, hint: string) => new WaveError(`${why} (${setting}).`, ExitCode.notApproved, hint)
  if (duties.requireOtherApprover && samePerson(actor, requester)) {
    throw refusal(
      'require-other-approver',
      `Plan ${state.name} was asked for by @${state.requestedBy}, who may not approve it too: an approval must come from someone else`,
      'Ask another person with access to approve it.',
    )
  }

  if (duties.requireReview) {
    if (!pull) {
      throw refusal(
        'require-review',
        `Plan ${state.name} is on an issue, and runs need an approved ${words.changeRequest}: there is none to review`,
        `Plan on a ${words.changeRequest} instead.`,
      )
    }

    // Neither the plan's requester, nor the change's author, nor wave itself counts as "someone else".
    const excluded = [requester, author, {login: input.author}].filter((person): person is Person => person !== undefined)
    const approvers = await forge.approvers(pull.number)
    const others = approvers.filter((approver) => !excluded.some((person) => samePerson(person, approver)))
    if (others.length === 0) {
      const given = approvers.length > 0 ? `its only approvals are by ${approvers.map((approver) => `@${approver.login}`).join(', ')}` : 'it has no approval'
      throw refusal(
        'require-review',
        `${words.changeRequest[0].toUpperCase()}${words.changeRequest.slice(1)} ${words.ref(state.thread)} needs an approval by someone other than @${state.requestedBy}${author && !samePerson(author, requester) ? ` and @${author.login}` : ''} before wave runs a plan, and ${given}`,
        `Approve the ${words.changeRequest} on ${words.forge}, then approve the plan again.`,
      )
    }
  }

  if (duties.requireMergeable) {
    if (!pull) {
      throw refusal(
        'require-mergeable',
        `Plan ${state.name} is on an issue, and runs need a mergeable ${words.changeRequest}: there is none`,
        `Plan on a ${words.changeRequest} instead.`,
      )
    }

    const mergeable = await forge.mergeable(pull.number)
    if (mergeable === false) {
      throw refusal(
        'require-mergeable',
        `${words.changeRequest[0].toUpperCase()}${words.changeRequest.slice(1)} ${words.ref(state.thread)} cannot be merged (conflicts, or ${words.forge} could not tell), and runs need a mergeable one`,
        `Bring ${pull.head.ref} up to date with ${pull.base.ref}, make a new plan, and approve that.`,
      )
    }
  }
}
