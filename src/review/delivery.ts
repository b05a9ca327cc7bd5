/**
 * Delivering a successful run: its changes committed, then pushed to the pull (merge) request's own
 * branch, or to a new branch `wave/<plan>` with a pull (merge) request (for an issue, against the branch
 * the plan was made from; for a pull request, against its head branch, or its base for one from a fork).
 */
import type {Forge} from './forge.js'
import type {Remote} from './remote.js'
import type {StickyState} from './comment-body.js'

export const PR_DELIVERIES = ['push', 'pull-request'] as const
export type PrDelivery = (typeof PR_DELIVERIES)[number]

export interface Delivery {
  kind: 'push' | 'pull_request'
  branch: string
  commit: string
  url: string
}

interface DeliveryInput {
  state: StickyState
  files: string[]
  /** The pull request the plan was made on, if it was. */
  pull?: {number: number; headRef: string; baseRef: string; sameRepository: boolean}
  prDelivery: PrDelivery
  /** The plan's comment, the approval's, and a resumed run's `/wave resume` beside it. */
  links: {plan: string; approval: string; resumed?: string}
  approver: string
}

/** Commits and delivers; undefined when the run changed no file (nothing to deliver). */
export async function deliver(client: Forge, remote: Remote, input: DeliveryInput): Promise<Delivery | undefined> {
  const {state, pull} = input
  const commit = await remote.commit(input.files, commitMessage(input))
  if (!commit) return undefined
  const commitUrl = client.commitUrl(commit)
  if (pull?.sameRepository && input.prDelivery === 'push') {
    await remote.push(pull.headRef)
    return {branch: pull.headRef, commit, kind: 'push', url: commitUrl}
  }

  const branch = `wave/${state.name}`
  const base = pull ? (pull.sameRepository ? pull.headRef : pull.baseRef) : state.base
  await remote.push(branch)
  const created = await client.createChangeRequest({base, body: pullBody(input, client), head: branch, title: `wave: ${titleOf(state.task)}`})
  return {branch, commit, kind: 'pull_request', url: created.url}
}

function commitMessage(input: DeliveryInput): string {
  const {state, links} = input
  return `wave: ${titleOf(state.task)}

Plan ${state.name} (sha256 ${state.sha256}), approved by @${input.approver}.
Plan: ${links.plan}
Approval: ${links.approval}
${links.resumed ? `Resumed: ${links.resumed}\n` : ''}`
}

function pullBody(input: DeliveryInput, client: Forge): string {
  const {state, pull, links} = input
  const {words} = client
  const origin = pull
    ? `${words.changeRequest} ${words.ref({number: pull.number, pull: true})}${pull.sameRepository ? '' : ' (from a fork: this branch holds its commits too)'}`
    : words.ref(state.thread)
  const rules = state.allow.length > 0 ? state.allow.map((rule) => `\`${rule}\``).join(', ') : 'none'
  return `wave ran the plan [\`${state.name}\`](${links.plan}) (sha256 \`${state.sha256}\`), made against \`${state.commit}\` for ${origin}.

- Approval: [by @${input.approver}](${links.approval}), mode \`${state.mode}\`, rules ${rules}
${links.resumed ? `- Resumed: [the run stopped, then went on](${links.resumed})\n` : ''}- Files changed: ${input.files.map((file) => `\`${file}\``).join(', ')}
`
}

/** A commit or pull request title from the task's first line. */
function titleOf(task: string): string {
  const line = task.trim().split('\n')[0].trim()
  return line.length > 72 ? line.slice(0, 71) + '…' : line
}
