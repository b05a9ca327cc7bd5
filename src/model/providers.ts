/**
 * Whose client reaches the model: the Anthropic API (the default), Amazon Bedrock or Google Vertex AI,
 * through the SDK family's own clients. `WAVE_PROVIDER=bedrock|vertex`, else Claude Code's
 * CLAUDE_CODE_USE_BEDROCK / CLAUDE_CODE_USE_VERTEX, else the user settings' `provider`. Each cloud's
 * client reads its own standard variables (AWS_REGION and the AWS credential chain; CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID and Google's Application Default Credentials),
 * and is loaded only when chosen: the default provider's start pays nothing for them.
 */
import type Anthropic from '@anthropic-ai/sdk'

import {ExitCode, WaveError} from '../base/errors.js'

export const PROVIDERS = ['anthropic', 'bedrock', 'vertex'] as const
export type Provider = (typeof PROVIDERS)[number]
type CloudProvider = Exclude<Provider, 'anthropic'>

const CLOUD_NAMES: Record<CloudProvider, string> = {bedrock: 'Amazon Bedrock', vertex: 'Vertex AI'}

/**
 * Claude Code's switches for the same clouds: a Claude Code user's environment chooses the same cloud
 * for wave, unless WAVE_PROVIDER says otherwise. The other variables those users set (AWS_REGION,
 * ANTHROPIC_BEDROCK_BASE_URL; CLOUD_ML_REGION, ANTHROPIC_VERTEX_PROJECT_ID, ANTHROPIC_VERTEX_BASE_URL)
 * are the ones the clients below read already.
 */
const CLAUDE_CODE_SWITCHES = {bedrock: 'CLAUDE_CODE_USE_BEDROCK', vertex: 'CLAUDE_CODE_USE_VERTEX'} as const satisfies Record<CloudProvider, string>

/** A switch as Claude Code reads one: on for 1, true, yes or on (any case); anything else, or unset, is off. */
const switchedOn = (name: string) => /^(?:1|true|yes|on)$/i.test(process.env[name]?.trim() ?? '')

interface ProviderChoice {
  provider: Provider
  /** What chose it, as the user would look for it: `WAVE_PROVIDER=bedrock`, `CLAUDE_CODE_USE_VERTEX=1`, the settings, the default. */
  source: string
  /** A line for stderr where the choice is not what WAVE_PROVIDER alone says: a Claude Code switch honoured, or overruled. */
  note?: string
}

/**
 * `WAVE_PROVIDER`, else Claude Code's CLAUDE_CODE_USE_BEDROCK / CLAUDE_CODE_USE_VERTEX, else the
 * settings' `provider`, else the Anthropic API. An unknown name, or both Claude Code switches on with
 * no WAVE_PROVIDER to settle it, is a usage error.
 */
export function chooseProvider(fromSettings?: Provider): ProviderChoice {
  const switched = (Object.entries(CLAUDE_CODE_SWITCHES) as Array<[CloudProvider, string]>).filter(([, name]) => switchedOn(name))
  const given = process.env.WAVE_PROVIDER?.trim().toLowerCase()
  if (given) {
    if (!(PROVIDERS as readonly string[]).includes(given)) {
      throw new WaveError(`WAVE_PROVIDER must be one of ${PROVIDERS.join(', ')}, not "${process.env.WAVE_PROVIDER}".`, ExitCode.usage)
    }

    const provider = given as Provider
    const overruled = switched.filter(([cloud]) => cloud !== provider).map(([, name]) => `${name}=${process.env[name]?.trim()}`)
    return {
      provider,
      source: `WAVE_PROVIDER=${provider}`,
      ...(overruled.length > 0
        ? {note: `WAVE_PROVIDER=${provider} is used; ${overruled.join(' and ')} (Claude Code's) ${overruled.length > 1 ? 'are' : 'is'} ignored.`}
        : {}),
    }
  }

  if (switched.length > 1) {
    throw new WaveError(
      `Both ${switched.map(([, name]) => name).join(' and ')} are set: wave cannot tell whether to reach the model through Amazon Bedrock or Vertex AI.`,
      ExitCode.usage,
      'Unset one of them, or choose with WAVE_PROVIDER=bedrock or WAVE_PROVIDER=vertex.',
    )
  }

  if (switched.length === 1) {
    const [[provider, name]] = switched
    const source = `${name}=${process.env[name]?.trim()}`
    const over = fromSettings && fromSettings !== provider ? ` over the settings' provider ${fromSettings}` : ''
    return {note: `${source} (Claude Code's): wave uses ${CLOUD_NAMES[provider]}, as with WAVE_PROVIDER=${provider}${over}.`, provider, source}
  }

  if (fromSettings) return {provider: fromSettings, source: "the user settings' provider"}
  return {provider: 'anthropic', source: 'the default'}
}

/** The provider a session uses: `chooseProvider`'s choice. */
/**
 * Whether the session's deferred tools are sent behind ToolSearch (`defer_loading`, `tool_reference`):
 * as Claude Code decides it. ENABLE_TOOL_SEARCH (true or false) says so; else only where the request goes
 * to Anthropic's own API (no ANTHROPIC_BASE_URL, or one whose host is api.anthropic.com). A gateway or
 * proxy may not pass those fields on, and Bedrock and Vertex are not Anthropic's endpoint: there every
 * tool is sent whole, as before tool search, and ENABLE_TOOL_SEARCH=true turns it on where it is known to work.
 */
export function toolSearchOn(provider: Provider, env: NodeJS.ProcessEnv = process.env): boolean {
  const given = env.ENABLE_TOOL_SEARCH?.trim().toLowerCase()
  if (given === 'true' || given === '1') return true
  if (given === 'false' || given === '0') return false
  if (provider !== 'anthropic') return false
  const base = env.ANTHROPIC_BASE_URL?.trim()
  if (!base) return true
  try {
    return new URL(base).host === 'api.anthropic.com'
  } catch {
    return false
  }
}

export function providerFrom(fromSettings?: Provider): Provider {
  return chooseProvider(fromSettings).provider
}

/** The region a Bedrock client signs for: AWS_REGION, else AWS_DEFAULT_REGION (as the AWS CLI reads them). */
const awsRegion = () => process.env.AWS_REGION?.trim() || process.env.AWS_DEFAULT_REGION?.trim() || undefined

/**
 * What a cloud provider needs before any request, named when missing (exit 2). Credentials themselves
 * are the cloud's own chain (environment, profile, SSO, instance role; a credentials file or the
 * metadata server), which only a request can try.
 */
export function assertCloudSettings(provider: CloudProvider, source = `WAVE_PROVIDER=${provider}`): void {
  const missing =
    provider === 'bedrock'
      ? awsRegion()
        ? undefined
        : {
            fix: 'Export AWS_REGION (e.g. us-east-1) and AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or AWS_BEARER_TOKEN_BEDROCK).',
            what: 'AWS_REGION is not set',
          }
      : !process.env.CLOUD_ML_REGION?.trim()
        ? {
            fix: 'Export CLOUD_ML_REGION (e.g. us-east5 or global) and ANTHROPIC_VERTEX_PROJECT_ID; credentials come from GOOGLE_APPLICATION_CREDENTIALS or gcloud auth application-default login.',
            what: 'CLOUD_ML_REGION is not set',
          }
        : process.env.ANTHROPIC_VERTEX_PROJECT_ID?.trim()
          ? undefined
          : {fix: 'Export ANTHROPIC_VERTEX_PROJECT_ID, the Google Cloud project whose Vertex AI serves Claude.', what: 'ANTHROPIC_VERTEX_PROJECT_ID is not set'}
  if (missing) {
    throw new WaveError(`${missing.what}: wave needs it to reach the model through ${CLOUD_NAMES[provider]} (${source}).`, ExitCode.usage, missing.fix)
  }
}

interface ClientOptions {
  maxRetries: number
  timeout: number
}

/**
 * What every client of wave's is built with, whichever the provider. Logging off: wave says what went
 * wrong in its own one line. The SDK's OpenTelemetry off: its spans go to a tracer provider registered
 * with the global OpenTelemetry API, and wave registers none (its own telemetry is written from the
 * session's record, output/telemetry/), so each request paid for headers, attributes and a span that
 * went nowhere, and for trace-context headers no one set.
 */
export const CLIENT_DEFAULTS = {logLevel: 'off', openTelemetry: {propagation: false, traces: false}} as const

/**
 * The cloud's client, imported now and only now. Both speak the Messages API to wave (same `messages`
 * resource, same stream events; Bedrock's binary event stream is turned back into SSE by its SDK), so
 * the loop is unaware of the provider. Base URLs come from ANTHROPIC_BEDROCK_BASE_URL and
 * ANTHROPIC_VERTEX_BASE_URL, as the SDKs read them (gateways, and the tests' local servers).
 */
export async function createCloudClient(provider: CloudProvider, options: ClientOptions): Promise<Anthropic> {
  assertCloudSettings(provider)
  if (provider === 'bedrock') {
    const {AnthropicBedrock} = await import('@anthropic-ai/bedrock-sdk')
    // Claude Code's switch for a gateway that signs the requests itself (ANTHROPIC_BEDROCK_BASE_URL): wave sends them unsigned too.
    const skipAuth = switchedOn('CLAUDE_CODE_SKIP_BEDROCK_AUTH')
    return new AnthropicBedrock({...CLIENT_DEFAULTS, awsRegion: awsRegion(), ...(skipAuth ? {skipAuth} : {}), ...options}) as unknown as Anthropic
  }

  const {AnthropicVertex} = await import('@anthropic-ai/vertex-sdk')
  return new AnthropicVertex({
    ...CLIENT_DEFAULTS,
    projectId: process.env.ANTHROPIC_VERTEX_PROJECT_ID?.trim(),
    region: process.env.CLOUD_ML_REGION?.trim(),
    ...options,
  }) as unknown as Anthropic
}
