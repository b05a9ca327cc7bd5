import {describe, expect, it} from 'vitest'

import {commandEnvironment} from '../../../src/base/process/sandbox.js'
import {registerSecret, scrubSecrets, secretValues} from '../../../src/base/secrets.js'

describe('secrets wave learns as it runs (an identity token read from its file, the exchanged bearer)', () => {
  it('are scrubbed once registered; control: the same text before, shown as it is', () => {
    const bearer = 'sk-ant-oat01-exchanged-bearer-value'
    const line = `Authorization: Bearer ${bearer}`
    expect(scrubSecrets(line)).toBe(line)
    registerSecret(bearer)
    expect(scrubSecrets(line)).toBe('Authorization: Bearer [redacted]')
    expect(secretValues()).toContain(bearer)
  })

  it('a value too short to be one is not registered (it would scrub words)', () => {
    registerSecret('short')
    expect(secretValues()).not.toContain('short')
  })

  it('ANTHROPIC_IDENTITY_TOKEN is scrubbed and never handed to a command, even listed; control: another listed variable passes', () => {
    const source = {ANTHROPIC_IDENTITY_TOKEN: 'eyJhbGciOi.identity.token', DEPLOY_REGION: 'eu'}
    expect(commandEnvironment(['ANTHROPIC_IDENTITY_TOKEN', 'DEPLOY_REGION'], {}, source)).toEqual({DEPLOY_REGION: 'eu'})
    const saved = process.env.ANTHROPIC_IDENTITY_TOKEN
    process.env.ANTHROPIC_IDENTITY_TOKEN = 'eyJhbGciOi.identity.token'
    try {
      expect(scrubSecrets('token eyJhbGciOi.identity.token')).toBe('token [redacted]')
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_IDENTITY_TOKEN
      else process.env.ANTHROPIC_IDENTITY_TOKEN = saved
    }
  })
})
