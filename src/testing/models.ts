/**
 * The models the server serves: their limits (which the strictness checks enforce) and the API's
 * description of each, which `GET /v1/models` and `GET /v1/models/{id}` answer with.
 */

export type Effort = 'low' | 'medium' | 'high' | 'xhigh' | 'max'

/** A model the server serves: its limits and what its requests may ask for. */
export interface ServedModel {
  id: string
  display_name?: string
  /** The largest window: beyond 200k tokens only with the `context-1m-2025-08-07` beta. */
  max_input_tokens: number
  /** The largest `max_tokens`. */
  max_tokens: number
  /** The `thinking.type` values accepted besides `disabled`. */
  thinking: Array<'adaptive' | 'enabled'>
  /** Effort levels accepted in `output_config.effort` (none: effort is not supported). */
  effort: Effort[]
}

/** The 1M-token window beta, and the window without it. */
export const CONTEXT_1M_BETA = 'context-1m-2025-08-07'
export const STANDARD_WINDOW = 200_000

export const ALL_EFFORTS: Effort[] = ['low', 'medium', 'high', 'xhigh', 'max']

/**
 * The models the scripted server knows (a few, as the API would describe them); any other model ID is
 * accepted on `POST /v1/messages` without limits (tests name models freely) and is a 404 on `GET /v1/models/{id}`.
 */
export const MODELS: readonly ServedModel[] = [
  {effort: ALL_EFFORTS, id: 'claude-sonnet-5-5', max_input_tokens: 1_000_000, max_tokens: 128_000, thinking: ['adaptive', 'enabled']},
  {effort: ALL_EFFORTS, id: 'claude-opus-5-5', max_input_tokens: 1_000_000, max_tokens: 128_000, thinking: ['adaptive', 'enabled']},
  {effort: ['low', 'medium', 'high'], id: 'claude-opus-4-5', max_input_tokens: 200_000, max_tokens: 64_000, thinking: ['enabled']},
  {effort: [], id: 'claude-haiku-4-5', max_input_tokens: 200_000, max_tokens: 64_000, thinking: ['enabled']},
]

/** The API's description of a model (`GET /v1/models/{id}`), as SDK 1.x types it (ModelInfo). */
export function modelInfo(model: ServedModel): Record<string, unknown> {
  const supported = (yes: boolean) => ({supported: yes})
  return {
    capabilities: {
      batch: supported(true),
      citations: supported(true),
      code_execution: supported(false),
      context_management: {clear_thinking_20251015: null, clear_tool_uses_20250919: null, compact_20260112: null, supported: false},
      effort: {
        high: supported(model.effort.includes('high')),
        low: supported(model.effort.includes('low')),
        max: supported(model.effort.includes('max')),
        medium: supported(model.effort.includes('medium')),
        supported: model.effort.length > 0,
        xhigh: supported(model.effort.includes('xhigh')),
      },
      image_input: supported(true),
      pdf_input: supported(true),
      server_tools: {code_execution: supported(false), supported: false, web_search: supported(false)},
      structured_outputs: supported(true),
      thinking: {
        supported: model.thinking.length > 0,
        types: {
          adaptive: supported(model.thinking.includes('adaptive')),
          between_tools: supported(false),
          disabled: supported(true),
          enabled: supported(model.thinking.includes('enabled')),
        },
      },
    },
    created_at: '2026-01-01T00:00:00Z',
    deprecated_at: null,
    display_name: model.display_name ?? model.id,
    id: model.id,
    lifecycle: 'active',
    line: /-(haiku|sonnet|opus|fable|mythos)-/.exec(model.id)?.[1] ?? null,
    max_input_tokens: model.max_input_tokens,
    max_tokens: model.max_tokens,
    retires_at: null,
    type: 'model',
  }
}

/**
 * The answer to a model look-up: the list for `/v1/models`, one model for `/v1/models/{id}`, or
 * undefined for a model the server does not know (a 404).
 */
export function answerModelLookup(path: string, models: ReadonlyMap<string, ServedModel>): Record<string, unknown> | undefined {
  if (path === '/v1/models' || path === '/v1/models/') {
    const data = [...models.values()].map(modelInfo)
    return {data, first_id: data[0]?.id ?? null, has_more: false, last_id: data.at(-1)?.id ?? null}
  }

  const model = models.get(decodeURIComponent(path.slice('/v1/models/'.length)))
  return model ? modelInfo(model) : undefined
}
