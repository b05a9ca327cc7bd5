import {APIConnectionError, AuthenticationError, BadRequestError, NotFoundError} from '@anthropic-ai/sdk'
import {afterEach, describe, expect, it} from 'vitest'

import {ExitCode} from '../../../src/base/errors.js'
import {apiFailure, promptTooLong} from '../../../src/model/table.js'

const body = (type: string, message: string) => ({error: {message, type}, type: 'error'})
const headers = new Headers({'request-id': 'req_0123'})

describe('API failures people can act on', () => {
  const names = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL'] as const
  const saved = names.map((name) => process.env[name])
  afterEach(() => {
    for (const [index, name] of names.entries()) {
      if (saved[index] === undefined) delete process.env[name]
      else process.env[name] = saved[index]
    }
  })

  it('401 on a Bedrock endpoint names the AWS credentials, not ANTHROPIC_API_KEY', () => {
    const error = new AuthenticationError(401, body('authentication_error', 'bad signature'), undefined, headers)
    const failure = apiFailure(error, {baseURL: 'https://bedrock-runtime.us-east-1.amazonaws.com', model: 'claude-sonnet-5-5'})
    expect(failure.exitCode).toBe(ExitCode.usage)
    expect(failure.hint).toMatch(/AWS credentials/)
    expect(failure.hint).not.toMatch(/ANTHROPIC_API_KEY/)
  })

  it('401 names ANTHROPIC_AUTH_TOKEN when that is the credential in use', () => {
    delete process.env.ANTHROPIC_API_KEY
    process.env.ANTHROPIC_AUTH_TOKEN = 'token-in-use-0123'
    const error = new AuthenticationError(401, body('authentication_error', 'invalid bearer token'), undefined, headers)
    expect(apiFailure(error, {model: 'm'}).hint).toBe('The Anthropic API refused the credentials: check ANTHROPIC_AUTH_TOKEN.')
  })

  it('404 with ANTHROPIC_BASE_URL set also points at the URL (a /v1 too many answers 404 as well)', () => {
    process.env.ANTHROPIC_BASE_URL = 'https://proxy.example.com/v1'
    const error = new NotFoundError(404, body('not_found_error', 'Not Found'), undefined, headers)
    const failure = apiFailure(error, {baseURL: 'https://proxy.example.com/v1', model: 'claude-x'})
    expect(failure.exitCode).toBe(ExitCode.usage)
    expect(failure.message).toBe('Model API request failed with status 404 (request req_0123): Not Found')
    expect(failure.hint).toMatch(/--model or WAVE_MODEL.*ANTHROPIC_BASE_URL \(https:\/\/proxy\.example\.com\)/)
  })

  it('a connection failure after the response began is not called unreachable', () => {
    const failure = apiFailure(new APIConnectionError({message: 'Connection error.'}), {model: 'm', requestId: 'req_9'})
    expect(failure.message).toMatch(/^Model API request failed \(request req_9\)/)
  })

  it('recognises "prompt is too long" with its counts, and nothing else as such', () => {
    const tooLong = new BadRequestError(400, body('invalid_request_error', 'prompt is too long: 210345 tokens > 200000 maximum'), undefined, headers)
    expect(promptTooLong(tooLong)).toEqual({limit: 200_000, tokens: 210_345})
    const other = new BadRequestError(400, body('invalid_request_error', 'max_tokens: too large'), undefined, headers)
    expect(promptTooLong(other)).toBeUndefined()
  })
})
