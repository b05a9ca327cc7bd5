/**
 * The commit statuses `wave/plan` and `wave/apply`, as Atlantis posts `atlantis/plan` and `atlantis/apply`:
 * what branch protection can require of a pull (merge) request, so that it merges only once a plan for
 * its head was approved and ran. They follow the plan's comment (its sticky state): every save of the
 * comment sets the statuses its state says, on the commit the plan was made against (a pull or merge
 * request's head) and, once a run delivered, on the commit it delivered. Each links the comment.
 */
import type {CommitStatus} from './forge.js'
import type {ExitCodeValue} from '../base/errors.js'
import {EXIT_MEANINGS, type StickyState} from './comment-body.js'

interface StatusOnCommit {
  sha: string
  status: CommitStatus
}

/** The statuses a plan's state calls for; none for a plan on an issue until a run delivers a commit. */
export function commitStatuses(state: StickyState, commentUrl: string | undefined): StatusOnCommit[] {
  const {name} = state
  const approved = [...state.history].reverse().find((entry) => entry.event === 'approved')?.by
  const by = approved ? `, approved by @${approved}` : ''
  const make = (context: CommitStatus['context'], status: CommitStatus['state'], description: string): CommitStatus => ({
    context,
    description: description.length > 140 ? `${description.slice(0, 139)}…` : description,
    state: status,
    targetUrl: commentUrl,
  })
  const plan = (status: CommitStatus['state'], description: string) => make('wave/plan', status, description)
  const apply = (status: CommitStatus['state'], description: string) => make('wave/apply', status, description)

  let onHead: CommitStatus[] = []
  switch (state.status) {
    case 'planning': {
      onHead = [plan('running', `Planning ${name}`)]
      break
    }

    case 'changes_requested':
    case 'revising': {
      onHead = [
        plan(state.status === 'revising' ? 'running' : 'pending', `Revising ${name}`),
        apply('pending', `No approved plan yet: ${name} is being revised`),
      ]
      break
    }

    case 'awaiting_approval': {
      onHead = [plan('success', `Plan ${name} awaits approval`), apply('pending', `Plan ${name} awaits /wave approve`)]
      break
    }

    case 'running': {
      onHead = [plan('success', `Plan ${name} approved${by}`), apply('running', `Running ${name}${by}`)]
      break
    }

    case 'done': {
      onHead = [apply('success', `Ran ${name}${by}: ${state.delivery ? `delivered ${state.delivery.commit.slice(0, 12)}` : 'no file changed'}`)]
      break
    }

    case 'rejected': {
      onHead = [plan('failure', `Plan ${name} rejected`), apply('failure', `Plan ${name} rejected: nothing to apply`)]
      break
    }

    // The head's statuses are the plan its task was planned again as: on the same commit they are that plan's.
    case 'superseded': {
      break
    }

    case 'failed': {
      const failure = state.failure
      const why = failure ? ` (exit ${failure.exitCode}: ${shortMeaning(failure.exitCode)})` : ''
      onHead =
        failure?.phase === 'plan'
          ? [plan('failure', `Planning ${name} failed${why}`)]
          : [apply('failure', `${failure?.phase === 'delivery' ? 'Delivering' : 'The run of'} ${name} failed${why}`)]
      break
    }
  }

  // A plan on an issue protects no branch until its run opens a pull (merge) request.
  const statuses = state.thread.pull ? onHead.map((status) => ({sha: state.commit, status})) : []
  // The delivered commit is the head branch protection looks at next: the plan it carries was approved and applied.
  if (state.status === 'done' && state.delivery && state.delivery.commit !== state.commit) {
    const {commit} = state.delivery
    statuses.push({sha: commit, status: plan('success', `Plan ${name} approved${by}`)}, {sha: commit, status: apply('success', `Applied plan ${name}${by}`)})
  }

  return statuses
}

/** An exit code's meaning up to its first parenthesis or colon: a status description is one short line. */
const shortMeaning = (code: number) => (EXIT_MEANINGS[code as ExitCodeValue] ?? 'failure').split(/ \(|:/)[0]

/** An open change request whose head is a commit, as the forge lists it (forge.ts, openChangeRequestsAt). */
interface HeadedHere {
  number: number
  head: {ref: string; sameRepository: boolean}
}

/**
 * The open change requests other than the plan's own that a status on `sha` would also pass: a status
 * attaches to a commit, not to a pull request, so `wave/apply` success on a head two pull requests share
 * would let the one no plan was approved on merge too. The plan's own is its thread, or, for the commit
 * the run delivered, the one on the branch it delivered to.
 */
export function openSiblings(state: StickyState, sha: string, open: HeadedHere[]): number[] {
  const delivered = state.delivery?.commit === sha ? state.delivery.branch : undefined
  return open
    .filter((pull) => !(state.thread.pull && pull.number === state.thread.number))
    .filter((pull) => !(delivered !== undefined && pull.head.sameRepository && pull.head.ref === delivered))
    .map((pull) => pull.number)
}

/** `wave/apply` on a head other open change requests share: failure, naming where to apply it instead. */
export function sharedHeadStatus(status: CommitStatus, sha: string, siblings: string[]): CommitStatus {
  const description = `${sha.slice(0, 12)} is also the head of ${siblings.join(', ')}: plan and apply it there`
  return {...status, description: description.length > 140 ? `${description.slice(0, 139)}…` : description, state: 'failure'}
}
