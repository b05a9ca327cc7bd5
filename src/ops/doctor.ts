/**
 * `wave doctor`'s checks: can the sandbox start, are credentials present (never shown), does the model
 * endpoint answer, are the settings files valid. Each says what it found and, when it fails, what fixes it.
 */
import {spawnSync} from 'node:child_process'
import http from 'node:http'
import https from 'node:https'
import {performance} from 'node:perf_hooks'

import {describeThrowaway, sandboxStatus} from '../base/process/sandbox.js'
import {type NetworkProxy, RELAY_PORT, startNetworkProxy} from '../base/process/proxy.js'
import {runCommand, spawnFor} from '../base/process/runner.js'
import {planBashOf} from '../session/plan-mode.js'
import {checkShellGrammar} from '../policy/shell.js'
import {assertCloudSettings, chooseProvider, type Provider, providerFrom} from '../model/providers.js'
import {assertAnthropicCredential, credentialInUse} from '../model/credentials.js'
import {type EffectiveSettings, loadSettings, projectSettingsPath, userSettingsPath} from '../config/settings.js'
import {describeHook} from '../config/hooks.js'
import {loadSkills} from '../tools/skills/catalog.js'
import {telemetryTarget} from '../output/telemetry/recorder.js'

export type CheckStatus = 'pass' | 'fail' | 'warn' | 'skip'

export interface Check {
  name: 'sandbox' | 'network-proxy' | 'plan-bash' | 'shell-grammar' | 'provider' | 'credentials' | 'endpoint' | 'settings' | 'hooks' | 'skills' | 'telemetry'
  status: CheckStatus
  /** Whether wave cannot work without it: a required check that fails makes doctor exit 1. */
  required: boolean
  /** What was found, and for a failure the fix. One line; never a secret. */
  detail: string
}

interface DoctorOptions {
  /** The workspace whose `.wave/settings.json` is checked (none: only the user's file). */
  workspace?: string
  /** Skip the endpoint check (no network here, or a proxy the check would not go through). */
  offline?: boolean
  /** How long the endpoint may take to answer. */
  timeoutMs?: number
}

const DEFAULT_BASE_URL = 'https://api.anthropic.com'
const ENDPOINT_TIMEOUT_MS = 3000

export async function runDoctorChecks(options: DoctorOptions = {}): Promise<{ok: boolean; checks: Check[]}> {
  // The settings are read once, as a session reads them: their provider decides what credentials mean.
  let settings: EffectiveSettings | Error
  try {
    settings = loadSettings(options.workspace)
  } catch (error) {
    settings = error as Error
  }

  const provider = settings instanceof Error ? undefined : settings.provider
  const checks = [
    sandboxCheck(),
    await networkProxyCheck(),
    planBashCheck(settings),
    await shellGrammarCheck(),
    providerCheck(provider),
    credentialsCheck(provider),
    await endpointCheck(options, provider),
    settingsCheck(options.workspace, settings),
    hooksCheck(settings),
    ...(options.workspace ? [skillsCheck(options.workspace)] : []),
    telemetryCheck(),
  ]
  return {checks, ok: !checks.some((check) => check.required && check.status === 'fail')}
}

/** Whether commands export OpenTelemetry, and where to (never required: telemetry never changes an outcome). */
function telemetryCheck(env: NodeJS.ProcessEnv = process.env): Check {
  const target = telemetryTarget(env)
  if (!target) return {detail: 'off (set OTEL_EXPORTER_OTLP_ENDPOINT to export spans and metrics)', name: 'telemetry', required: false, status: 'skip'}
  if ('problem' in target) return {detail: `off: ${target.problem}`, name: 'telemetry', required: false, status: 'warn'}
  const parent = env.TRACEPARENT?.trim() ? ', each command a child of TRACEPARENT' : ''
  return {
    detail: `on: ${target.protocol} to ${target.tracesEndpoint} and ${target.metricsEndpoint}${parent}`,
    name: 'telemetry',
    required: false,
    status: 'pass',
  }
}

function sandboxCheck(): Check {
  const status = sandboxStatus()
  if (!status.available) return {detail: status.problem, name: 'sandbox', required: true, status: 'fail'}
  const version = spawnSync(status.bwrap, ['--version'], {encoding: 'utf8', timeout: 5000}).stdout?.trim()
  return {detail: `${version || 'bubblewrap'} at ${status.bwrap} starts a sandbox here`, name: 'sandbox', required: true, status: 'pass'}
}

/**
 * Whether an approval's `--sandbox-network-allow` can work here: the proxy starts, a sandbox reaches it
 * through its relay, and it refuses a host not allowed (all offline: nothing leaves the machine). Not
 * required: only approvals naming hosts need it, and such a run refuses to start without it.
 */
async function networkProxyCheck(): Promise<Check> {
  const check = (status: CheckStatus, detail: string): Check => ({detail, name: 'network-proxy', required: false, status})
  if (!sandboxStatus().available) return check('skip', 'no sandbox: see the sandbox check')
  let proxy: NetworkProxy
  try {
    proxy = await startNetworkProxy(['allowed.wave-doctor.invalid'])
  } catch (error) {
    return check('fail', `the proxy for --sandbox-network-allow cannot start: ${(error as Error).message}`)
  }

  try {
    const root = process.cwd()
    // Raw HTTP over bash's /dev/tcp: no client program needed, and no name is resolved anywhere.
    const ask = `exec 3<>/dev/tcp/127.0.0.1/${RELAY_PORT} && printf 'CONNECT refused.wave-doctor.invalid:443 HTTP/1.1\r\nHost: refused.wave-doctor.invalid:443\r\n\r\n' >&3 && head -c 12 <&3`
    const spawn = spawnFor(ask, {root}, {enabled: true, network: false, networkAllow: [...proxy.hosts], proxy: proxy.directory})
    if ('problem' in spawn) return check('fail', spawn.problem)
    const result = await runCommand(spawn.plan, root, 10_000, AbortSignal.timeout(15_000))
    if (result.output.startsWith('HTTP/1.1 403'))
      return check('pass', 'sandboxed commands reach named hosts only through the filtering proxy (a host not allowed was refused)')
    return check('fail', `a sandbox could not reach the filtering proxy: ${result.output.trim().split('\n').at(-1) || `exit ${result.code}`}`)
  } finally {
    await proxy.close()
  }
}

/** How plan mode runs Bash here (a throwaway sandbox: overlay or read-only), or that it is off and why. Planning works either way. */
function planBashCheck(settings: EffectiveSettings | Error): Check {
  const planBash = planBashOf(settings instanceof Error ? {planModeBash: true} : settings)
  if (planBash.offered) return {detail: `plan mode runs Bash in a ${describeThrowaway(planBash.kind)}`, name: 'plan-bash', required: false, status: 'pass'}
  const off = !(settings instanceof Error) && !settings.planModeBash
  return {detail: `plan-mode Bash is off: ${planBash.why}`, name: 'plan-bash', required: false, status: off ? 'skip' : 'warn'}
}

/** Whether Bash rules can be read: the shell grammar (a WebAssembly file of the install) loads. */
async function shellGrammarCheck(): Promise<Check> {
  const problem = await checkShellGrammar()
  if (problem === undefined)
    return {detail: 'Bash commands are read with the bash grammar (tree-sitter-bash)', name: 'shell-grammar', required: true, status: 'pass'}
  return {detail: `no Bash rule can match: ${problem}`, name: 'shell-grammar', required: true, status: 'fail'}
}

/** Whose client a session here would use, and what chose it (WAVE_PROVIDER, a Claude Code switch, the settings, the default). */
function providerCheck(settingsProvider: Provider | undefined): Check {
  try {
    const {note, provider, source} = chooseProvider(settingsProvider)
    return {detail: `${provider}, chosen by ${source}${note ? `: ${note}` : ''}`, name: 'provider', required: true, status: 'pass'}
  } catch (error) {
    const hint = (error as {hint?: string}).hint
    return {detail: `${(error as Error).message}${hint ? ` Fix: ${hint}` : ''}`, name: 'provider', required: true, status: 'fail'}
  }
}

function credentialsCheck(settingsProvider: Provider | undefined): Check {
  let choice: ReturnType<typeof chooseProvider>
  try {
    choice = chooseProvider(settingsProvider)
  } catch {
    return {detail: 'no known provider: see the provider check', name: 'credentials', required: true, status: 'skip'}
  }

  const {provider} = choice
  try {
    if (provider !== 'anthropic') assertCloudSettings(provider, choice.source)
  } catch (error) {
    const hint = (error as {hint?: string}).hint
    return {detail: `${(error as Error).message}${hint ? ` Fix: ${hint}` : ''}`, name: 'credentials', required: true, status: 'fail'}
  }

  if (provider !== 'anthropic') {
    return {
      detail: `provider ${provider}: its settings are set; credentials come from the cloud's own chain (not checked here)`,
      name: 'credentials',
      required: true,
      status: 'pass',
    }
  }

  // The credential the SDK will use, named (never its value): a key, a token, or workload identity federation.
  try {
    return {detail: assertAnthropicCredential().shown, name: 'credentials', required: true, status: 'pass'}
  } catch (error) {
    const hint = (error as {hint?: string}).hint
    return {detail: `${(error as Error).message}${hint ? ` Fix: ${hint}` : ''}`, name: 'credentials', required: true, status: 'fail'}
  }
}

/** Whether the endpoint answers, and accepts the credentials: refused ones fail the check (and doctor). */
async function endpointCheck(options: DoctorOptions, settingsProvider: Provider | undefined): Promise<Check> {
  const check = (status: CheckStatus, detail: string): Check => ({detail, name: 'endpoint', required: false, status})
  let provider: Provider
  try {
    provider = providerFrom(settingsProvider)
  } catch {
    return check('skip', 'no known provider: see the provider check')
  }

  if (provider !== 'anthropic') return check('skip', `provider ${provider}: the endpoint is the cloud's`)
  let url: URL
  try {
    url = new URL(process.env.ANTHROPIC_BASE_URL?.trim() || DEFAULT_BASE_URL)
  } catch {
    // Not shown: a URL's user, password, path or query may hold a secret.
    return check('fail', 'ANTHROPIC_BASE_URL is not a valid URL')
  }

  if (url.protocol !== 'http:' && url.protocol !== 'https:') return check('fail', `ANTHROPIC_BASE_URL must be http:// or https://, not ${url.protocol}`)
  const shown = url.origin
  if (options.offline) return check('skip', `${shown}: not checked (--offline)`)
  const answer = await ask(url, options.timeoutMs ?? ENDPOINT_TIMEOUT_MS)
  // Federation's bearer is the SDK's to get, at the first request: doctor sends none, so a 401 says nothing of it.
  if ((answer.status === 401 || answer.status === 403) && credentialInUse()?.kind !== 'federation') {
    // The key is what fails here, and nothing would work with it: required, so doctor exits 1.
    return {
      ...check('fail', `${shown} refused the credentials (HTTP ${answer.status}). Fix: check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) for this endpoint`),
      required: true,
    }
  }
  if (answer.status !== undefined && answer.status >= 200 && answer.status < 300)
    return check('pass', `${shown} accepted the credentials (HTTP ${answer.status}, listing models) in ${answer.ms} ms`)
  if (answer.status !== undefined) return check('pass', `${shown} answered (HTTP ${answer.status}) in ${answer.ms} ms; the credentials were not confirmed`)
  return check('warn', `${shown} did not answer: ${answer.error}. Check the network, a proxy, or ANTHROPIC_BASE_URL`)
}

/**
 * Lists one model (`GET /v1/models?limit=1`): a request that costs nothing, answered 401/403 when the
 * endpoint refuses the credentials. The credentials go only to the endpoint they are configured for.
 */
function ask(base: URL, timeoutMs: number): Promise<{status?: number; error?: string; ms: number}> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const url = new URL(`${base.pathname.replace(/\/$/, '')}/v1/models?limit=1`, base)
  const headers: Record<string, string> = {'anthropic-version': '2023-06-01'}
  const key = process.env.ANTHROPIC_API_KEY?.trim()
  const token = process.env.ANTHROPIC_AUTH_TOKEN?.trim()
  if (key) headers['x-api-key'] = key
  else if (token) headers.authorization = `Bearer ${token}`
  return new Promise((resolve) => {
    const request = (url.protocol === 'https:' ? https : http).request(url, {headers, method: 'GET', timeout: timeoutMs}, (response) => {
      response.resume()
      resolve({ms: elapsed(), status: response.statusCode})
      request.destroy()
    })
    request.on('timeout', () => request.destroy(new Error(`no answer in ${timeoutMs} ms`)))
    request.on('error', (error: NodeJS.ErrnoException) => resolve({error: error.code ?? error.message, ms: elapsed()}))
    request.end()
  })
}

function settingsCheck(workspace: string | undefined, settings: EffectiveSettings | Error): Check {
  if (settings instanceof Error) {
    const hint = (settings as {hint?: string}).hint
    return {detail: `${settings.message}${hint ? ` ${hint}` : ''}`, name: 'settings', required: true, status: 'fail'}
  }

  const files = [userSettingsPath(), ...(workspace ? [projectSettingsPath(workspace)] : [])]
  const found = settings.files.length > 0 ? `valid: ${settings.files.join(', ')}` : `none (looked for ${files.join(', ')})`
  if (settings.ignored.length > 0) return {detail: `${found}; ${settings.ignored.join('; ')}`, name: 'settings', required: true, status: 'warn'}
  return {detail: found, name: 'settings', required: true, status: 'pass'}
}

/** The hooks a session here runs, each named; a project's that are not trusted are in the settings check's warning. */
function hooksCheck(settings: EffectiveSettings | Error): Check {
  if (settings instanceof Error) return {detail: 'unknown: the settings are not valid', name: 'hooks', required: false, status: 'skip'}
  if (settings.hooks.length === 0) return {detail: 'none', name: 'hooks', required: false, status: 'pass'}
  return {detail: settings.hooks.map((hook) => describeHook(hook)).join('; '), name: 'hooks', required: false, status: 'pass'}
}

/** The Agent Skills a session here loads, and any that it cannot (named). */
function skillsCheck(workspace: string): Check {
  const {skills, warnings} = loadSkills(workspace)
  const loaded = skills.length === 0 ? 'none' : skills.map((skill) => `${skill.name} (${skill.file})`).join(', ')
  if (warnings.length > 0) return {detail: `${loaded}; ${warnings.join(' ')}`, name: 'skills', required: false, status: 'warn'}
  return {detail: loaded, name: 'skills', required: false, status: 'pass'}
}
