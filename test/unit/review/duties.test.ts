import {describe, expect, it} from 'vitest'

import {dutiesOf} from '../../../src/review/duties.js'

describe('dutiesOf', () => {
  it('reads separation of duties from flags, else WAVE_REQUIRE_* (1/true/on), the same for both forges', () => {
    expect(dutiesOf({}, {})).toEqual({requireMergeable: false, requireOtherApprover: false, requireReview: false})
    expect(dutiesOf({}, {WAVE_REQUIRE_OTHER_APPROVER: '1', WAVE_REQUIRE_REVIEW: 'true', WAVE_REQUIRE_MERGEABLE: 'false'})).toEqual({
      requireMergeable: false,
      requireOtherApprover: true,
      requireReview: true,
    })
    expect(dutiesOf({'require-review': false}, {WAVE_REQUIRE_REVIEW: '1'}).requireReview).toBe(false)
    expect(() => dutiesOf({}, {WAVE_REQUIRE_REVIEW: 'maybe'})).toThrow(expect.objectContaining({exitCode: 2}))
  })
})
