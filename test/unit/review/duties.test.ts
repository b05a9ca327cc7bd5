import {describe, expect, it} from 'vitest'

import {dutiesOf} from '../../../src/review/duties.js'

describe('dutiesOf', () => {
  it('reads separation of duties from flags, else WAVE_REQUIRE_* (1/true/on), the same for both forges', () => {
    expect(dutiesOf({}, {})).toEqual({requiredApprovals: 1, requireMergeable: false, requireOtherApprover: false, requireReview: false})
    expect(dutiesOf({}, {WAVE_REQUIRE_OTHER_APPROVER: '1', WAVE_REQUIRE_REVIEW: 'true', WAVE_REQUIRE_MERGEABLE: 'false'})).toEqual({
      requiredApprovals: 1,
      requireMergeable: false,
      requireOtherApprover: true,
      requireReview: true,
    })
    expect(dutiesOf({'require-review': false}, {WAVE_REQUIRE_REVIEW: '1'}).requireReview).toBe(false)
    expect(() => dutiesOf({}, {WAVE_REQUIRE_REVIEW: 'maybe'})).toThrow(expect.objectContaining({exitCode: 2}))
  })

  it('reads WAVE_REQUIRED_APPROVALS as a whole number from 1 (empty: 1); anything else is a usage error', () => {
    expect(dutiesOf({}, {WAVE_REQUIRED_APPROVALS: ' 2 '}).requiredApprovals).toBe(2)
    expect(dutiesOf({}, {WAVE_REQUIRED_APPROVALS: ''}).requiredApprovals).toBe(1)
    for (const bad of ['0', 'two', '1.5', '-1'])
      expect(() => dutiesOf({}, {WAVE_REQUIRED_APPROVALS: bad})).toThrow(
        expect.objectContaining({exitCode: 2, message: expect.stringContaining('WAVE_REQUIRED_APPROVALS')}),
      )
  })
})
