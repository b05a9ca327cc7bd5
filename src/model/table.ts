import type Anthropic from '@anthropic-ai/sdk'
import type {Middleware} from '@anthropic-ai/sdk'

import {loadBundle, runningFromBundles} from '../base/bundles.js'
import {ExitCode, WaveError} from '../base/errors.js'
import {registerSecret, scrubSecrets} from '../base/secrets.js'
import {assertAnthropicCredential, credentialInUse, federationFailure, identityTokenValue} from './credentials.js'
import {assertCloudSettings, CLIENT_DEFAULTS, chooseProvider, createCloudClient, type Provider} from './providers.js'

const DEFAULT_MODEL = 'claude-sonnet-5-5'

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

/** --model, then $WAVE_MODEL, then $ANTHROPIC_MODEL, then the settings files' `model` (project over user), then the default (an alias among them resolves in aliases.ts). */
export function modelFrom(flag?: string, fromSettings?: string): string {
  // ANTHROPIC_MODEL as Claude Code reads it, below wave's own variable.
  return flag || process.env.WAVE_MODEL?.trim() || process.env.ANTHROPIC_MODEL?.trim() || fromSettings || DEFAULT_MODEL
}

/** Fails before any request when no credential is set (naming the variable users expect) or a knob is invalid. */
export function assertCredentials(settingsProvider?: Provider): void {
  checkedApi(settingsProvider)
}

/** The provider and the API knobs a client is made with, once the credentials check has passed. */
function checkedApi(settingsProvider?: Provider): {provider: Provider; maxRetries: number; timeoutMs: number} {
  const api = apiSettings()
  // Bedrock and Vertex AI take their cloud's credentials, never ANTHROPIC_API_KEY.
  const {provider, source} = chooseProvider(settingsProvider)
  if (provider !== 'anthropic') {
    assertCloudSettings(provider, source)
    return {...api, provider}
  }

  assertAnthropicCredential()
  return {...api, provider}
}

/**
 * The SDK, loaded only when a command talks to the model: from the build's one-file bundle of it
 * (scripts/bundle.js, loaded with V8's code cache by base/bundles.ts), or the package when wave runs
 * from its sources.
 */
async function loadSdk(): Promise<typeof import('@anthropic-ai/sdk')> {
  return runningFromBundles() ? loadBundle('vendor/anthropic-sdk') : import('@anthropic-ai/sdk')
}

/**
 * Node's fetch made ready ahead of the first request: its first `Headers` (which the SDK builds for every
 * request) loads undici, ~15–20 ms of the main thread that the bare SDK spends on the way to its request
 * too. Done at the event loop's next turn, when a session opening waits on git and the file system, so
 * that the load fills those waits instead of following them. base/wasm.ts still turns Liftoff on before
 * the parser first runs (fetchParsedByLiftoff).
 */
export function loadFetchSoon(): void {
  setImmediate(() => globalThis.Headers)
}

export async function createClient(settingsProvider?: Provider): Promise<Anthropic> {
  const {maxRetries, provider, timeoutMs} = checkedApi(settingsProvider)
  if (provider !== 'anthropic') return createCloudClient(provider, {maxRetries, timeout: timeoutMs})
  const {default: AnthropicClient} = await loadSdk()
  // Keyless: the SDK's own credential chain exchanges the identity token (no exchange of wave's); the
  // token and the bearer it returns are scrubbed wherever a key would be.
  const federated = credentialInUse()?.kind === 'federation'
  if (federated) registerSecret(identityTokenValue())
  return new AnthropicClient({...CLIENT_DEFAULTS, maxRetries, ...(federated ? {middleware: [bearerKeeper()]} : {}), timeout: timeoutMs})
}

/**
 * Client middleware, which the SDK runs around its token exchange too: the bearer `/v1/oauth/token`
 * answers with becomes a secret (base/secrets.ts) before the SDK sends it anywhere.
 */
function bearerKeeper(): Middleware {
  return async (request, next) => {
    const response = await next(request)
    if (!new URL(request.url).pathname.endsWith('/v1/oauth/token') || !response.ok) return response
    const body = (await response
      .clone()
      .json()
      .catch(() => undefined)) as {access_token?: unknown} | undefined
    if (typeof body?.access_token === 'string') registerSecret(body.access_token)
    return response
  }
}

/**
 * The value of the most specific key that is a prefix of the model ID, followed by nothing or by what
 * names a snapshot of the same model: a date, `-latest`, Bedrock's `-v1:0`, Vertex's `@date`, `[1m]`.
 * So `claude-opus-4` matches `claude-opus-4-20250514` but not `claude-opus-4-10`, a model it knows nothing of.
 */
export function lookupByModel<T>(table: Record<string, T>, model: string): T | undefined {
  const id = model.toLowerCase()
  const at = id.indexOf('claude-')
  const name = at > 0 ? id.slice(at) : id
  let best: string | undefined
  for (const key of Object.keys(table)) {
    const prefix = key.toLowerCase()
    if (!name.startsWith(prefix) || !/^(?:$|[@:[]|-\d{8}|-v\d|-latest)/.test(name.slice(prefix.length))) continue
    if (!best || prefix.length > best.length) best = key
  }

  return best === undefined ? undefined : table[best]
}

/** Effort levels (`output_config.effort`), lowest first. */
export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'] as const
export type Effort = (typeof EFFORTS)[number]

/** The `thinking.type` values besides `disabled` (which every model takes). */
export type ThinkingType = 'adaptive' | 'enabled'

interface ModelLimits {
  /** Tokens a request's prompt may hold (beyond 200k only with the 1M-context beta). */
  contextWindow: number
  /** The largest `max_tokens` the model takes. */
  maxOutput: number
}

interface ModelTableEntry extends ModelLimits {
  /** The thinking types the model takes: adaptive (it decides), enabled (a budget). */
  thinking: ThinkingType[]
  /** The effort levels the model takes; none: no effort parameter. */
  efforts: Effort[]
}

const ALL_EFFORTS: Effort[] = [...EFFORTS]
const entry = (contextWindow: number, maxOutput: number, thinking: ThinkingType[], efforts: Effort[] = []): ModelTableEntry => ({
  contextWindow,
  efforts,
  maxOutput,
  thinking,
})
/** The current generation: a 1M window (with the beta), 128k out, adaptive thinking and every effort level. */
const CURRENT = entry(1_000_000, 128_000, ['adaptive', 'enabled'], ALL_EFFORTS)

/**
 * Known windows, output limits and capabilities (platform.claude.com model pages), by model ID
 * (snapshots included): the fallback when the API's model description (catalog.ts) is not at hand.
 * Every model of the SDK's `Model` union is here (test/unit/model/pricing.test.ts checks it).
 */
const MODEL_TABLE: Record<string, ModelTableEntry> = {
  'claude-3-5-haiku': entry(200_000, 8192, []),
  'claude-3-7-sonnet': entry(200_000, 64_000, ['enabled']),
  'claude-3-haiku': entry(200_000, 4096, []),
  'claude-fable-5': CURRENT,
  'claude-fable-5-1': CURRENT,
  'claude-fable-5-2': CURRENT,
  'claude-haiku-4-5': entry(200_000, 64_000, ['enabled']),
  'claude-haiku-5-5': CURRENT,
  'claude-mythos-5': CURRENT,
  'claude-mythos-5-1': CURRENT,
  'claude-mythos-5-2': CURRENT,
  'claude-mythos-preview': CURRENT,
  'claude-opus-4': entry(200_000, 32_000, ['enabled']),
  'claude-opus-4-0': entry(200_000, 32_000, ['enabled']),
  'claude-opus-4-1': entry(200_000, 32_000, ['enabled']),
  'claude-opus-4-5': entry(200_000, 64_000, ['enabled'], ['low', 'medium', 'high']),
  'claude-opus-4-6': entry(1_000_000, 128_000, ['adaptive', 'enabled'], ['low', 'medium', 'high', 'max']),
  'claude-opus-4-7': CURRENT,
  'claude-opus-4-8': CURRENT,
  'claude-opus-5': CURRENT,
  'claude-opus-5-5': CURRENT,
  'claude-sonnet-4': entry(200_000, 64_000, ['enabled']),
  'claude-sonnet-4-0': entry(200_000, 64_000, ['enabled']),
  'claude-sonnet-4-5': entry(200_000, 64_000, ['enabled']),
  'claude-sonnet-4-6': entry(1_000_000, 64_000, ['adaptive', 'enabled'], ['low', 'medium', 'high']),
  'claude-sonnet-5': CURRENT,
  'claude-sonnet-5-5': CURRENT,
}

/** The model's window and output limit, or undefined for a model wave knows nothing of. */
export function modelLimits(model: string): ModelLimits | undefined {
  const known = lookupByModel(MODEL_TABLE, model)
  return known && {contextWindow: known.contextWindow, maxOutput: known.maxOutput}
}

/** Every model ID the table knows (an alias resolves among them without the API). */
export const modelTableIds = (): string[] => Object.keys(MODEL_TABLE)

/** What the built-in table knows of a model (limits and capabilities), or undefined. */
export function modelTableEntry(model: string): ModelTableEntry | undefined {
  return lookupByModel(MODEL_TABLE, model)
}

/**
 * The window assumed for an unknown model (another endpoint's, a newer one): the smallest of current
 * Claude models. Too small only compacts early; too large would let requests fail. Nor is max_tokens
 * ever raised for such a model.
 */
export const FALLBACK_CONTEXT_WINDOW = 200_000

/**
 * Per-request middleware (the SDK runs it around every HTTP attempt, inside its retry loop) that
 * - reports each retry the SDK makes, with why the attempt before failed: the SDK numbers attempts in
 *   the `X-Stainless-Retry-Count` header, so a retry is seen as it is sent, never guessed from logs;
 * - makes sure no retry follows an answer no retry cures (400, 401, 403, 404, 413), whatever an
 *   endpoint's `x-should-retry` says: a bad key must fail at once, not after minutes of backoff.
 * Only the status or the kind of connection failure is reported, never a URL (it may hold credentials).
 */
export function retryObserver(onRetry: (retry: {attempt: number; reason: string}) => void): Middleware {
  let lastFailure: string | undefined
  return async (request, next) => {
    const attempt = Number(request.headers.get('x-stainless-retry-count') ?? 0)
    if (attempt > 0) onRetry({attempt, reason: lastFailure ?? 'request failed'})
    let response: Response
    try {
      response = await next(request)
    } catch (error) {
      lastFailure = isTimeout(error) ? 'connection timed out' : 'connection failed'
      throw error
    }

    lastFailure = response.ok ? undefined : `status ${response.status} from the API`
    if (!FINAL_STATUSES.has(response.status)) return response
    const headers = new Headers(response.headers)
    headers.set('x-should-retry', 'false')
    return new Response(response.body, {headers, status: response.status, statusText: response.statusText})
  }
}

/** Statuses that say the request itself is wrong (or its credentials): the same request fails again. */
const FINAL_STATUSES = new Set([400, 401, 403, 404, 413])

function isTimeout(error: unknown): boolean {
  const text = `${(error as Error)?.name} ${(error as Error)?.message} ${String((error as {cause?: unknown})?.cause ?? '')}`
  return /abort|timed? ?out/i.test(text)
}

interface SdkError {
  status?: number
  requestID?: string | null
  error?: {error?: {message?: string; type?: string}}
  message?: string
  name?: string
  cause?: unknown
}

/**
 * A 400 (or 413) saying the prompt does not fit the model's window, with the counts when the API gives
 * them ("prompt is too long: 210345 tokens > 200000 maximum").
 */
export function promptTooLong(error: unknown): {tokens?: number; limit?: number} | undefined {
  const e = error as SdkError
  const message = e?.error?.error?.message ?? e?.message ?? ''
  const tooLong = /prompt is too long/i.test(message) || e?.status === 413 || e?.error?.error?.type === 'request_too_large'
  if (!tooLong) return undefined
  const counts = /(\d+) tokens? > (\d+)/.exec(message)
  return counts ? {limit: Number(counts[2]), tokens: Number(counts[1])} : {}
}

interface ApiContext {
  /** The client's base URL; only its scheme, host and port are ever shown. */
  baseURL?: string
  model: string
  /** The request id, when the response had begun before the failure. */
  requestId?: string | null
}

/**
 * A model API failure as one line with an exit code and a hint someone can act on: the credentials
 * (401/403, exit 2), the model (404, exit 2), the endpoint (connection failures name the host and
 * ANTHROPIC_BASE_URL), else the status, request id and the API's own message (exit 1).
 */
export function apiFailure(error: unknown, context: ApiContext): WaveError {
  const federation = federationFailure(error)
  if (federation) return federation
  const e = error as SdkError
  const line = describeApiError(error, context.requestId)
  const endpoint = endpointOf(context.baseURL)
  switch (e?.status) {
    case 401:
    case 403: {
      const variable = process.env.ANTHROPIC_API_KEY?.trim() || !process.env.ANTHROPIC_AUTH_TOKEN?.trim() ? 'ANTHROPIC_API_KEY' : 'ANTHROPIC_AUTH_TOKEN'
      const why = e.status === 401 ? 'refused the credentials' : 'denied access with these credentials'
      const check = endpoint.cloud ?? `${variable}${variable === 'ANTHROPIC_API_KEY' ? ' (or ANTHROPIC_AUTH_TOKEN)' : ''}`
      return new WaveError(line, ExitCode.usage, `${endpoint.name} ${why}: check ${check}.`)
    }

    case 404: {
      const baseHint =
        process.env.ANTHROPIC_BASE_URL && !endpoint.cloud
          ? ` If the model is right, check ANTHROPIC_BASE_URL (${endpoint.origin}): it must be the API's root, without /v1.`
          : ''
      return new WaveError(line, ExitCode.usage, `Is "${context.model}" a model ${endpoint.name} serves? Choose another with --model or WAVE_MODEL.${baseHint}`)
    }
  }

  // fetch refuses a URL with a user or password in it before sending anything.
  if (e?.status === undefined && causes(error).some((cause) => /URL that includes credentials/i.test(String((cause as Error)?.message)))) {
    return new WaveError(
      'The model API URL holds credentials (user:password@host), which requests cannot carry.',
      ExitCode.usage,
      'Remove them from ANTHROPIC_BASE_URL; the key goes in ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN.',
    )
  }

  if (e?.status === undefined && !context.requestId && /connection|timed? ?out/i.test(`${e?.name} ${e?.message}`)) {
    const timedOut = /timed? ?out/i.test(`${e?.name} ${e?.message}`)
    const cause = networkCause(error)
    const what = timedOut ? 'timed out' : `could not be reached${cause ? ` (${cause})` : ''}`
    const where = endpoint.cloud
      ? `the cloud endpoint is ${endpoint.origin}`
      : process.env.ANTHROPIC_BASE_URL
        ? `ANTHROPIC_BASE_URL is ${endpoint.origin}`
        : `ANTHROPIC_BASE_URL is not set, so wave uses ${endpoint.origin}`
    return new WaveError(
      scrubSecrets(`The model API at ${endpoint.host} ${what}, after retries.`),
      ExitCode.runtime,
      `Check the network and the endpoint: ${where}.`,
    )
  }

  return new WaveError(line, ExitCode.runtime)
}

/**
 * The endpoint as it may be shown: scheme, host and port only (a URL's user, password, path and query
 * may hold secrets); for Bedrock's and Vertex AI's hosts, the credentials to check instead of wave's.
 */
function endpointOf(baseURL: string | undefined): {host: string; origin: string; name: string; cloud?: string} {
  try {
    const url = new URL(baseURL ?? 'https://api.anthropic.com')
    const name = url.hostname === 'api.anthropic.com' ? 'The Anthropic API' : `The endpoint ${url.host}`
    const cloud = url.hostname.endsWith('.amazonaws.com')
      ? 'the AWS credentials (AWS_PROFILE or AWS_ACCESS_KEY_ID, or AWS_BEARER_TOKEN_BEDROCK)'
      : url.hostname.endsWith('googleapis.com')
        ? 'the Google Cloud credentials (gcloud auth application-default login, or GOOGLE_APPLICATION_CREDENTIALS)'
        : undefined
    return {cloud, host: url.host, name, origin: url.origin}
  } catch {
    return {host: 'the configured endpoint', name: 'The endpoint', origin: 'not a valid URL'}
  }
}

/** One clear line for a model API failure: status, request id, and the API's own message (or the network's). */
function describeApiError(error: unknown, requestId?: string | null): string {
  const e = error as SdkError
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
  for (const cause of causes(error)) {
    const code = (cause as {code?: unknown}).code
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code
  }

  return undefined
}

/** The errors behind an error (its `cause` chain), a few deep. */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = []
  let current = (error as {cause?: unknown})?.cause
  for (let depth = 0; current && depth < 5; depth++) {
    chain.push(current)
    current = (current as {cause?: unknown}).cause
  }

  return chain
}
