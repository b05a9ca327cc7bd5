import {describe, expect, it} from 'vitest'

import type {StickyState} from '../../../src/review/comment-body.js'
import {openSiblings, sharedHeadStatus} from '../../../src/review/commit-status.js'

const HEAD = 'c'.repeat(40)
const DELIVERED = 'd'.repeat(40)

function stateOf(overrides: Partial<StickyState> = {}): StickyState {
  return {
    allow: [],
    base: 'main',
    commit: HEAD,
    cost: {plan: 0.01},
    delivery: {branch: 'wave/brave-otter', commit: DELIVERED, kind: 'pull_request', url: 'https://github.test/o/r/pull/100'},
    history: [],
    mode: 'acceptEdits',
    name: 'brave-otter',
    requestedBy: 'alice',
    sha256: '0'.repeat(64),
    status: 'done',
    task: 'Add a farewell',
    thread: {number: 7, pull: true},
    version: 1,
    ...overrides,
  }
}

const pull = (number: number, ref: string, sameRepository = true) => ({head: {ref, sameRepository}, number})

describe("openSiblings: the open pull requests a wave/apply status would pass beside the plan's own", () => {
  it('leaves out the thread and, on the delivered commit, the pull request on the branch wave delivered to', () => {
    expect(openSiblings(stateOf(), HEAD, [pull(7, 'feature')])).toEqual([])
    expect(openSiblings(stateOf(), DELIVERED, [pull(100, 'wave/brave-otter')])).toEqual([])
  })

  it("counts any other: another branch on the head, and a fork's branch of the delivered branch's name", () => {
    expect(openSiblings(stateOf(), HEAD, [pull(7, 'feature'), pull(12, 'copy')])).toEqual([12])
    expect(openSiblings(stateOf(), DELIVERED, [pull(100, 'wave/brave-otter'), pull(13, 'wave/brave-otter', false)])).toEqual([13])
    // The delivered branch's name excuses nothing on another commit.
    expect(openSiblings(stateOf(), HEAD, [pull(14, 'wave/brave-otter')])).toEqual([14])
  })

  it("an issue's thread number is no pull request of its own", () => {
    expect(openSiblings(stateOf({thread: {number: 7, pull: false}}), HEAD, [pull(7, 'feature')])).toEqual([7])
  })
})

describe('sharedHeadStatus', () => {
  it("is failure, naming the others, within GitHub's 140 characters", () => {
    const status = sharedHeadStatus({context: 'wave/apply', description: 'Ran', state: 'success'}, HEAD, ['#12', '#13'])
    expect(status).toEqual({context: 'wave/apply', description: `${HEAD.slice(0, 12)} is also the head of #12, #13: plan and apply it there`, state: 'failure'})
    const many = sharedHeadStatus(
      {context: 'wave/apply', description: 'Ran', state: 'success'},
      HEAD,
      Array.from({length: 40}, (_, i) => `#${i}`),
    )
    expect(many.description).toHaveLength(140)
  })
})
