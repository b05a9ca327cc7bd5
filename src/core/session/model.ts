import type Anthropic from '@anthropic-ai/sdk'

import {ExitCode, WaveError} from '../errors.js'

export const DEFAULT_MODEL = 'claude-sonnet-5-5'

/** SDK retries for 408/409/429/5xx/529 and connection errors, with its exponential backoff. */
const SDK_RETRIES = 4
/** The SDK's own default: how long a request may wait for the response to begin, and a stream may sit idle. */
const API_TIMEOUT_MS = 600_000

/**
 * Knobs for CI and tests, read from the environment; an invalid value is a usage error rather than a
 * silent default. `WAVE_API_RETRIES` (0-10, default 4): the SDK's retries of 408/409/429/5xx/529 and
 * connection errors. `WAVE_API_TIMEOUT_MS` (default 600000): how long a request may wait for its
 * response to begin, and a stream may go without an event, before it is retried.
 */
export function apiSettings(): {maxRetries: number; timeoutMs: number} {
  return {
    maxRetries: integerFromEnv('WAVE_API_RETRIES', SDK_RETRIES, 0, 10),
    timeoutMs: integerFromEnv('WAVE_API_TIMEOUT_MS', API_TIMEOUT_MS, 1, 3_600_000),
  }
}

export function integerFromEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name]?.trim()
  if (!raw) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new WaveError(`${name} must be a whole number from ${min} to ${max}, not "${raw}".`, ExitCode.usage)
  }

  return value
}

/** --model, then $WAVE_MODEL, then the settings files' `model` (project over user), then the default. */
export function modelFrom(flag?: string, fromSettings?: string): string {
  return flag || process.env.WAVE_MODEL || fromSettings || DEFAULT_MODEL
}

/** Fails before any request when no credential is set (naming the variable users expect) or a knob is invalid. */
export function assertCredentials(): void {
  apiSettings()
  if (process.env.ANTHROPIC_API_KEY?.trim() || process.env.ANTHROPIC_AUTH_TOKEN?.trim()) return
  throw new WaveError(
    'ANTHROPIC_API_KEY is not set: wave needs it (or ANTHROPIC_AUTH_TOKEN) to reach the model.',
    ExitCode.usage,
    'Export ANTHROPIC_API_KEY, and ANTHROPIC_BASE_URL for an Anthropic-compatible endpoint.',
  )
}

/**
 * The SDK, loaded only when a command talks to the model. The build bundles it into one file
 * (dist/vendor/anthropic-sdk.js, scripts/bundle.js): the same code, read in ~35 ms instead of the
 * ~130 ms its 250 modules take through the ESM loader. The package itself is the fallback.
 */
export const SDK_BUNDLE = new URL('../vendor/anthropic-sdk.js', import.meta.url)

async function loadSdk(): Promise<typeof import('@anthropic-ai/sdk')> {
  try {
    return await import(SDK_BUNDLE.href)
  } catch {
    return import('@anthropic-ai/sdk')
  }
}

export async function createClient(): Promise<Anthropic> {
  assertCredentials()
  const {maxRetries, timeoutMs} = apiSettings()
  const {default: AnthropicClient} = await loadSdk()
  return new AnthropicClient({logLevel: 'off', maxRetries, timeout: timeoutMs})
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

/** One clear line for a model API failure: status, request id, and the API's own message (or the network's). */
export function describeApiError(error: unknown, requestId?: string | null): string {
  const e = error as {status?: number; requestID?: string | null; error?: {error?: {message?: string}}; message?: string}
  const apiMessage = e?.error?.error?.message ?? e?.message ?? String(error)
  const parts = ['Model API request failed']
  if (e?.status) parts.push(`with status ${e.status}`)
  const id = e?.requestID ?? requestId
  if (id) parts.push(`(request ${id})`)
  const cause = networkCause(error)
  const detail = cause && !apiMessage.includes(cause) ? `${apiMessage.split('\n')[0]} (${cause})` : apiMessage.split('\n')[0]
  return scrubSecrets(`${parts.join(' ')}: ${detail}`)
}

/** The system error behind a connection failure (ECONNREFUSED, ENOTFOUND, ...), which the SDK's "Connection error." hides. */
function networkCause(error: unknown): string | undefined {
  let current = (error as {cause?: unknown})?.cause
  for (let depth = 0; current && depth < 5; depth++) {
    const code = (current as {code?: unknown}).code
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code
    current = (current as {cause?: unknown}).cause
  }

  return undefined
}
