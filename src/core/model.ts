import type Anthropic from '@anthropic-ai/sdk'

import {ExitCode, WaveError} from './errors.js'

export const DEFAULT_MODEL = 'claude-sonnet-5-5'

/** SDK retries for 408/409/429/5xx/529 and connection errors, with its exponential backoff. */
const SDK_RETRIES = 4

export function modelFrom(flag?: string): string {
  return flag || process.env.WAVE_MODEL || DEFAULT_MODEL
}

/** Fails before any request when no credential is set, naming the variable users expect. */
export function assertCredentials(): void {
  if (process.env.ANTHROPIC_API_KEY?.trim() || process.env.ANTHROPIC_AUTH_TOKEN?.trim()) return
  throw new WaveError(
    'ANTHROPIC_API_KEY is not set: wave needs it (or ANTHROPIC_AUTH_TOKEN) to reach the model.',
    ExitCode.usage,
    'Export ANTHROPIC_API_KEY, and ANTHROPIC_BASE_URL for an Anthropic-compatible endpoint.',
  )
}

/** The SDK costs ~200 ms to import, so it loads only when a command talks to the model. */
export async function createClient(): Promise<Anthropic> {
  assertCredentials()
  const {default: AnthropicClient} = await import('@anthropic-ai/sdk')
  return new AnthropicClient({logLevel: 'off', maxRetries: SDK_RETRIES})
}

/** Secrets that must never reach a log, a transcript or an error line. */
function secrets(): string[] {
  return [process.env.ANTHROPIC_API_KEY, process.env.ANTHROPIC_AUTH_TOKEN].filter(
    (value): value is string => typeof value === 'string' && value.trim().length >= 8,
  )
}

export function scrubSecrets(text: string): string {
  let clean = text
  for (const secret of secrets()) clean = clean.split(secret).join('[redacted]')
  return clean
}

/** One clear line for a model API failure: status, request id, and the API's own message. */
export function describeApiError(error: unknown): string {
  const e = error as {status?: number; requestID?: string | null; error?: {error?: {message?: string}}; message?: string}
  const apiMessage = e?.error?.error?.message ?? e?.message ?? String(error)
  const parts = ['Model API request failed']
  if (e?.status) parts.push(`with status ${e.status}`)
  if (e?.requestID) parts.push(`(request ${e.requestID})`)
  return scrubSecrets(`${parts.join(' ')}: ${apiMessage.split('\n')[0]}`)
}
