/**
 * What a session knows of its model: the window to plan for, the largest `max_tokens`, the thinking
 * types and effort levels it takes. The API describes a model (`client.models.retrieve`: max_input_tokens,
 * max_tokens, capabilities); its answer is kept under `$WAVE_HOME/cache/models/` for a day, per endpoint
 * and model. Asking never delays the first request: a fresh cached answer is read at once (a small
 * synchronous read), else the built-in table (table.ts) answers while the API is asked once the first
 * response has begun (`after`), and its answer serves the turns after it and the next sessions.
 *
 *   const known = knowModel({client, model})
 *   known.current()   // {contextWindow, maxOutput, thinking, efforts, betas, source}
 *   ...
 *   known.close()     // the session ended: stop a look-up still running
 */
import {createHash} from 'node:crypto'
import {mkdirSync, readFileSync} from 'node:fs'
import path from 'node:path'

import type Anthropic from '@anthropic-ai/sdk'
import writeFileAtomic from 'write-file-atomic'
import {z} from 'zod'

import {waveHome} from '../base/home.js'
import {type Effort, EFFORTS, FALLBACK_CONTEXT_WINDOW, modelTableEntry, type ThinkingType} from './table.js'

/** The beta that opens a window past 200k tokens (what Claude Code sends for these models). */
export const CONTEXT_1M_BETA = 'context-1m-2025-08-07'
/** The window of a request without that beta. */
export const STANDARD_WINDOW = 200_000
/** How long the API's description of a model is trusted. */
export const MODEL_CACHE_TTL_MS = 24 * 60 * 60 * 1000
/** A look-up that takes longer is given up: the table serves. */
const LOOKUP_TIMEOUT_MS = 10_000

export interface ModelProfile {
  model: string
  /** The window to plan for, in tokens: past 200k only with `betas` holding the 1M-context beta. */
  contextWindow: number
  /** The largest `max_tokens` the model takes; undefined when nothing says (a model wave does not know). */
  maxOutput?: number
  /** The thinking types it takes besides `disabled`; none: send no thinking. */
  thinking: ThinkingType[]
  /** The effort levels it takes; none: send no effort. */
  efforts: Effort[]
  /** `anthropic-beta` values every request for this window must carry. */
  betas: string[]
  /** Where the figures come from: the API (now or cached), the built-in table, or nowhere (defaults). */
  source: 'api' | 'cache' | 'table' | 'unknown'
}

export interface ModelKnowledge {
  /** What is known now: the cached answer or the table's, then the API's once it has come. */
  current(): ModelProfile
  /** The profile once the look-up has ended (at once when none was needed); never rejects. */
  readonly settled: Promise<ModelProfile>
  /** Stops a look-up still running. */
  close(): void
}

interface KnowModelOptions {
  model: string
  /** The client the session talks through; without one (or one with no models API: Bedrock, Vertex) the table answers. */
  client?: Pick<Anthropic, 'baseURL'> & {models?: Pick<Anthropic['models'], 'retrieve'>}
  /** Settings' `contextWindow`: the window to plan for, whatever the model's. */
  contextWindow?: number
  /** Default: $WAVE_HOME. */
  home?: string
  /** Default: Date.now. */
  now?: () => number
  /**
   * The look-up is sent once this settles (the session's first response has begun): on a 2-core machine
   * even a request sent alongside takes CPU from the first one. Default: at once.
   */
  after?: Promise<unknown>
}

/** The API's description of a model, as much of it as wave reads (SDK 1.x ModelInfo). */
const modelInfoSchema = z.lazy(() =>
  z.object({
    capabilities: z
      .object({
        effort: z.object({supported: z.boolean()}).catchall(z.unknown()).nullish(),
        thinking: z
          .object({
            supported: z.boolean(),
            types: z.object({adaptive: z.object({supported: z.boolean()}).nullish(), enabled: z.object({supported: z.boolean()}).nullish()}).passthrough(),
          })
          .nullish(),
      })
      .passthrough()
      .nullish(),
    id: z.string(),
    max_input_tokens: z.number().int().positive().nullish(),
    max_tokens: z.number().int().positive().nullish(),
  }),
)
type ModelInfo = z.infer<typeof modelInfoSchema>

const cacheEntrySchema = z.lazy(() => z.object({fetchedAt: z.number(), info: modelInfoSchema.nullable(), model: z.string()}))

/** The window to plan for and the betas it takes: the model's own past 200k only with the 1M beta, which is then sent. */
function planWindow(maxInput: number, settingsWindow?: number): {contextWindow: number; betas: string[]} {
  const contextWindow = settingsWindow ?? maxInput
  return {betas: contextWindow > STANDARD_WINDOW ? [CONTEXT_1M_BETA] : [], contextWindow}
}

/** What the built-in table says of a model (or the defaults for one it does not know). */
export function tableProfile(model: string, settingsWindow?: number): ModelProfile {
  const known = modelTableEntry(model)
  return {
    ...planWindow(known?.contextWindow ?? FALLBACK_CONTEXT_WINDOW, settingsWindow),
    efforts: known ? [...known.efforts] : [],
    maxOutput: known?.maxOutput,
    model,
    source: known ? 'table' : 'unknown',
    thinking: known ? [...known.thinking] : [],
  }
}

/** The API's description read as a profile; what it leaves out (no capabilities, no limits) comes from the table. */
function apiProfile(model: string, info: ModelInfo, source: 'api' | 'cache', settingsWindow?: number): ModelProfile {
  const table = tableProfile(model, settingsWindow)
  const capabilities = info.capabilities
  const thinking: ThinkingType[] = capabilities?.thinking
    ? (['adaptive', 'enabled'] as const).filter((type) => capabilities.thinking?.supported && capabilities.thinking.types[type]?.supported)
    : table.thinking
  const effort = capabilities?.effort
  const efforts: Effort[] = effort
    ? EFFORTS.filter((level) => effort.supported && (effort[level] as {supported?: boolean} | null | undefined)?.supported === true)
    : table.efforts
  const maxInput = info.max_input_tokens ?? modelTableEntry(model)?.contextWindow ?? FALLBACK_CONTEXT_WINDOW
  return {...planWindow(maxInput, settingsWindow), efforts, maxOutput: info.max_tokens ?? table.maxOutput, model, source, thinking}
}

/** Where the API's description of `model` at `baseURL` is kept: readable name, endpoint and model in the hash. */
export function modelCachePath(home: string, baseURL: string, model: string): string {
  const hash = createHash('sha256').update(`${baseURL}\0${model}`).digest('hex').slice(0, 16)
  const name = model.replaceAll(/[^\w.-]/g, '_').slice(0, 80)
  return path.join(home, 'cache', 'models', `${name}-${hash}.json`)
}

/**
 * Starts knowing `model`: a fresh cached description, else the table at once and the API asked
 * once `after` settles (its answer cached, a 404 too, so that an endpoint without the models API is not asked
 * every session). No failure of the look-up ever reaches the session: the table serves instead.
 */
export function knowModel(options: KnowModelOptions): ModelKnowledge {
  const {client, contextWindow, model} = options
  const now = options.now ?? Date.now
  let profile = tableProfile(model, contextWindow)
  const retrieve = client?.models?.retrieve
  if (!client || typeof retrieve !== 'function') return fixed(profile)

  const file = modelCachePath(options.home ?? waveHome(), client.baseURL, model)
  const cached = readCache(file)
  if (cached && cached.model === model && now() - cached.fetchedAt < MODEL_CACHE_TTL_MS && cached.fetchedAt <= now()) {
    return fixed(cached.info ? apiProfile(model, cached.info, 'cache', contextWindow) : profile)
  }

  const abort = new AbortController()
  let timeout: NodeJS.Timeout | undefined
  const settled = Promise.resolve(options.after)
    .catch(() => {})
    .then(() => {
      if (abort.signal.aborted) throw abort.signal.reason
      timeout = setTimeout(() => abort.abort(), LOOKUP_TIMEOUT_MS)
      timeout.unref()
      return retrieve.call(client.models, model, {}, {maxRetries: 0, signal: abort.signal, timeout: LOOKUP_TIMEOUT_MS})
    })
    .then(
      (answer: unknown) => {
        const parsed = modelInfoSchema.safeParse(answer)
        if (!parsed.success) return
        profile = apiProfile(model, parsed.data, 'api', contextWindow)
        writeCache(file, {fetchedAt: now(), info: parsed.data, model})
      },
      (error: unknown) => {
        // The endpoint does not know the model (or serves no models API): remember that, as an answer.
        if ((error as {status?: number})?.status === 404) writeCache(file, {fetchedAt: now(), info: null, model})
      },
    )
    .then(() => {
      clearTimeout(timeout)
      return profile
    })
  return {
    close: () => {
      clearTimeout(timeout)
      abort.abort()
    },
    current: () => profile,
    settled,
  }
}

function fixed(profile: ModelProfile): ModelKnowledge {
  return {close() {}, current: () => profile, settled: Promise.resolve(profile)}
}

function readCache(file: string): z.infer<typeof cacheEntrySchema> | undefined {
  try {
    const parsed = cacheEntrySchema.safeParse(JSON.parse(readFileSync(file, 'utf8')))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined // none yet, or unreadable: ask the API
  }
}

/**
 * Best effort: a cache that cannot be written only means asking again next time. Written whole or not at
 * all (a rename), but not flushed to disk: a flush held the session's one thread for the disk's time
 * (5 ms idle, tens loaded) in the middle of its turns, and a cache lost in a crash is only asked again.
 */
function writeCache(file: string, entry: z.infer<typeof cacheEntrySchema>): void {
  try {
    mkdirSync(path.dirname(file), {mode: 0o700, recursive: true})
    writeFileAtomic.sync(file, `${JSON.stringify(entry)}\n`, {fsync: false})
  } catch {
    // ignored on purpose
  }
}
