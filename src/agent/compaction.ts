/**
 * Compaction: making a conversation that outgrew the model's window fit again, in two steps.
 *
 * 1. Old tool results are cleared: each tool_use/tool_result pair stays (the API needs both, and the
 *    model keeps the record of what it did), its content replaced by a note of what was there. Results
 *    the model has not answered yet, and the newest few, are kept. Old tool inputs too: a Write's
 *    `content` or an Edit's strings (any long string an old call sent) become a stub with the path and
 *    the size, the call itself kept.
 * 2. If that is not enough, older turns are replaced by a summary the model writes in a separate request.
 *
 * What never changes: the first user message (the task, the plan) stays verbatim, the list of files
 * changed so far is restated in full, and the system prompt (with the plan-mode reminder) is not part
 * of the conversation at all. Nothing here talks to the API: the loop passes `summarize`.
 *
 * When to compact is here too: a ContextMeter estimates how full the window is, and the Compactor
 * decides before each request and carries out the steps on the loop's conversation, in place.
 */
import type {ContentBlockParam, MessageParam, TextBlockParam, ToolResultBlockParam, ToolUseBlockParam} from '@anthropic-ai/sdk/resources/messages'

/** Tool results kept whatever their age, counted from the newest. */
const KEEP_RECENT_RESULTS = 3
/** Tool calls whose inputs are kept whatever their age, besides the last assistant message's. */
const KEEP_RECENT_INPUTS = 0
/** A result shorter than this costs less than the note that would replace it. */
const CLEARABLE_CHARS = 400
/** Assistant turns (with their results) kept verbatim after a summary. */
const KEEP_RECENT_TURNS = 2
/** How much of one block the summary request shows. */
const SUMMARY_BLOCK_CHARS = 2000

/** Compact before a request whose prompt would fill this much of the window (less the output it may take). */
const COMPACT_AT = 0.9
/** After clearing tool results, summarise as well unless the prompt is down to this much of the window. */
const COMPACT_TO = 0.6
/** How much the prompt must grow after a compaction before the window's nearness compacts again. */
const REGROWTH = 0.05

const CLEARED_MARK = '[wave cleared this tool result'
const CLEARED_INPUT_MARK = '[wave:'
const SUMMARY_MARK = '[wave: summary of earlier turns]'

/** The conversation was compacted to fit the model's window. Token counts are estimates. */
export interface CompactionEvent {
  type: 'compaction'
  turn: number
  /** The API refused the prompt as too long, or the conversation neared the window. */
  trigger: 'prompt_too_long' | 'near_window'
  clearedToolResults: number
  /** Old tool calls whose long input strings (a Write's content, an Edit's strings) were replaced by a stub. */
  clearedToolInputs: number
  summarizedMessages: number
  tokensBefore: number
  tokensAfter: number
}

/**
 * How full the window is, estimated from the size of a request: the API's count of the last prompt
 * (input, cache reads and writes) over that request's characters calibrates the next estimate.
 */
export class ContextMeter {
  tokensPerChar = 0.25

  constructor(public window: number) {}

  calibrate(chars: number, usage: {input_tokens?: number | null; cache_read_input_tokens?: number | null; cache_creation_input_tokens?: number | null}): void {
    this.calibrateTokens(chars, (usage.input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0))
  }

  calibrateTokens(chars: number, tokens: number): void {
    if (chars > 0 && tokens > 0) this.tokensPerChar = tokens / chars
  }

  estimate(chars: number): number {
    return Math.round(chars * this.tokensPerChar)
  }

  /** Whether a prompt leaves too little of the window for the answer (whose share is capped, for small windows). */
  nearWindow(tokens: number, maxTokens: number): boolean {
    return tokens > (this.window - Math.min(maxTokens, this.window / 4)) * COMPACT_AT
  }
}

/** What one compaction did: the event's figures, less the turn it happened in. */
type CompactionStep = Omit<CompactionEvent, 'turn' | 'type'>

/** Compacts one conversation (the loop's, in place) when it nears the window or the API finds it too long. */
export class Compactor {
  compactions = 0
  /** A response was cut because the window is full: the next request compacts first. */
  compactFirst = false
  /** The estimated prompt after the last compaction. */
  private compactedTo = 0

  constructor(
    private readonly messages: MessageParam[],
    readonly meter: ContextMeter,
    private readonly options: Omit<SummarizeOptions, 'maxChars' | 'changedFiles'> & {changedFiles(): string[]},
  ) {}

  /** Whether a request of `chars` characters should be compacted before it is sent. */
  due(chars: number, maxTokens: number): boolean {
    const estimate = this.meter.estimate(chars)
    // Near the window, and grown since the last compaction (else every turn would summarise again).
    const due = this.compactFirst || (this.meter.nearWindow(estimate, maxTokens) && estimate > this.compactedTo + this.meter.window * REGROWTH)
    this.compactFirst = false
    return due
  }

  /**
   * Clears old tool results, then summarises older turns unless clearing was enough; undefined when
   * nothing could be cleared or summarised. `overhead` is the request's characters besides the messages;
   * `counted` the API's own count and limit, when it refused the prompt as too long.
   */
  async compact(
    trigger: CompactionEvent['trigger'],
    overhead: number,
    counted: {tokens?: number; limit?: number} = {},
    summaryOnly = false,
  ): Promise<CompactionStep | undefined> {
    const {meter, messages} = this
    const promptChars = () => overhead + JSON.stringify(messages).length
    // The API's own count is the truth: it calibrates the estimates, and its limit is the window.
    if (counted.tokens) meter.calibrateTokens(promptChars(), counted.tokens)
    if (counted.limit) meter.window = Math.min(meter.window, counted.limit)
    const tokensBefore = counted.tokens ?? meter.estimate(promptChars())
    const replace = (step: Compacted) => messages.splice(0, messages.length, ...step.messages)

    let cleared = 0
    let clearedInputs = 0
    if (!summaryOnly) {
      const step = clearOldToolResults(messages)
      cleared = step.cleared
      if (cleared > 0) replace(step)
      const inputs = clearOldToolInputs(messages)
      clearedInputs = inputs.cleared
      if (clearedInputs > 0) replace(inputs)
    }

    let summarized = 0
    if (cleared + clearedInputs === 0 || meter.estimate(promptChars()) > meter.window * COMPACT_TO) {
      const maxChars = Math.floor((meter.window * 0.5) / meter.tokensPerChar)
      const step = await summarizeOlderTurns(messages, {changedFiles: this.options.changedFiles(), maxChars, summarize: this.options.summarize})
      if (step) {
        replace(step)
        summarized = step.summarized
      }
    }

    if (cleared === 0 && clearedInputs === 0 && summarized === 0) return undefined
    this.compactions++
    const tokensAfter = meter.estimate(promptChars())
    this.compactedTo = tokensAfter
    return {clearedToolInputs: clearedInputs, clearedToolResults: cleared, summarizedMessages: summarized, tokensAfter, tokensBefore, trigger}
  }
}

interface Compacted {
  messages: MessageParam[]
  /** Tool results whose content was cleared. */
  cleared: number
  /** Messages replaced by the summary. */
  summarized: number
}

/** Step 1: old tool results cleared, pairs kept. Returns new message objects where something changed. */
function clearOldToolResults(messages: MessageParam[], keepRecent = KEEP_RECENT_RESULTS): Compacted {
  const calls = toolCallsById(messages)
  const positions: Array<[number, number]> = []
  for (const [m, message] of messages.entries()) {
    if (message.role !== 'user' || typeof message.content === 'string') continue
    for (const [b, block] of message.content.entries()) if (block.type === 'tool_result') positions.push([m, b])
  }

  const last = messages.length - 1
  const keep = new Set(positions.slice(-keepRecent).map(([m, b]) => `${m}:${b}`))
  const out = [...messages]
  let cleared = 0
  for (const [m, b] of positions) {
    if (m === last || keep.has(`${m}:${b}`)) continue
    const blocks = out[m].content as ContentBlockParam[]
    const block = blocks[b] as ToolResultBlockParam
    const text = resultText(block)
    if (text.length < CLEARABLE_CHARS || text.startsWith(CLEARED_MARK)) continue
    const call = calls.get(block.tool_use_id)
    const what = call ? `${call.name}${describeInput(call.input)}` : 'a tool call'
    const note = `${CLEARED_MARK} to keep the conversation within the model's context window: the result of ${what}, ${text.length} characters. Call the tool again if you need it.]`
    const copy = [...blocks]
    copy[b] = {...block, content: note}
    out[m] = {...out[m], content: copy} as MessageParam
    cleared++
  }

  return {cleared, messages: out, summarized: 0}
}

/**
 * Step 1, for inputs: the long strings of old tool calls (a Write's `content`, an Edit's `old_string` and
 * `new_string`) replaced by a stub naming the path and the size. The call and its result stay paired;
 * the calls of the last assistant message are kept whole. What an older call wrote is on disk, where
 * the model can read it again, so its input need not ride along in every later request.
 */
function clearOldToolInputs(messages: MessageParam[], keepRecent = KEEP_RECENT_INPUTS): Compacted {
  const positions: Array<[number, number]> = []
  for (const [m, message] of messages.entries()) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue
    for (const [b, block] of message.content.entries()) if (block.type === 'tool_use') positions.push([m, b])
  }

  const lastAssistant = positions.at(-1)?.[0] ?? -1
  const keep = new Set(positions.slice(positions.length - keepRecent).map(([m, b]) => `${m}:${b}`))
  const out = [...messages]
  let cleared = 0
  for (const [m, b] of positions) {
    if (m === lastAssistant || keep.has(`${m}:${b}`)) continue
    const blocks = out[m].content as ContentBlockParam[]
    const block = blocks[b] as ToolUseBlockParam
    const input = (block.input ?? {}) as Record<string, unknown>
    const long = Object.entries(input).filter(
      ([key, value]) => key !== 'file_path' && typeof value === 'string' && value.length >= CLEARABLE_CHARS && !value.startsWith(CLEARED_INPUT_MARK),
    )
    if (long.length === 0) continue
    const where = typeof input.file_path === 'string' ? ` for ${input.file_path}` : ''
    const stubbed = Object.fromEntries(
      long.map(([key, value]) => [
        key,
        `${CLEARED_INPUT_MARK} ${(value as string).length} characters of ${key}${where} sent by this ${block.name} call, cleared to keep the conversation within the model's context window]`,
      ]),
    )
    const copy = [...blocks]
    copy[b] = {...block, input: {...input, ...stubbed}}
    out[m] = {...out[m], content: copy} as MessageParam
    cleared++
  }

  return {cleared, messages: out, summarized: 0}
}

export interface SummaryRequest {
  system: string
  prompt: string
}

interface SummarizeOptions {
  /** Asks the model (no tools) and returns the text of its answer. */
  summarize(request: SummaryRequest): Promise<string>
  /** The files changed so far, restated verbatim after the summary. */
  changedFiles: string[]
  /** The most characters of earlier turns the summary request may carry (it must fit the window too). */
  maxChars: number
}

/**
 * Step 2: the turns between the first message and the newest few replaced by a summary, appended to the
 * first message as a block of its own (the original blocks stay as they were). Undefined when there is
 * nothing older to summarise.
 */
async function summarizeOlderTurns(messages: MessageParam[], options: SummarizeOptions): Promise<Compacted | undefined> {
  const tail = tailStart(messages)
  if (tail === undefined) return undefined
  const [first, ...rest] = messages
  const older = rest.slice(0, tail - 1)
  const opening = blocksOf(first)
  const original = opening.filter((block) => !isSummary(block))
  const earlier = opening.filter(isSummary).map((block) => (block as TextBlockParam).text)

  const transcript = clip([...earlier, ...older.map(renderMessage)].join('\n\n'), options.maxChars)
  const summary = (
    await options.summarize({
      prompt: summaryPrompt(original.map(renderBlock).join('\n'), transcript),
      system: SUMMARY_SYSTEM,
    })
  ).trim()

  const files = options.changedFiles.length > 0 ? options.changedFiles.map((file) => `- ${file}`).join('\n') : 'none'
  const text = [
    SUMMARY_MARK,
    `To keep this session within the model's context window, wave replaced ${older.length} earlier messages by this summary.`,
    '',
    summary || mechanicalSummary(older),
    '',
    `Files changed so far:\n${files}`,
  ].join('\n')
  const compactedFirst = {...first, content: [...original, {text, type: 'text'}]} as MessageParam
  return {cleared: 0, messages: [compactedFirst, ...messages.slice(tail)], summarized: older.length}
}

const SUMMARY_SYSTEM =
  "You summarise the earlier part of a coding agent's session. The agent goes on from your summary alone, so keep everything it needs and nothing it does not."

function summaryPrompt(task: string, transcript: string): string {
  return `The session's first message (the agent keeps it verbatim):
<first-message>
${clip(task, 8000)}
</first-message>

The earlier turns of the session, which your summary replaces:
<turns>
${transcript}
</turns>

Write the summary the agent will continue from, under these headings:
- Progress: the steps of the task or plan done, in progress and still to do.
- Findings: what it learned about the code: files, functions, conventions, facts that matter.
- Changes: what it changed, file by file, and why.
- Checks: the commands it ran (tests, builds) with their results, and checks refused or not yet run.
- Problems: errors met and refused calls, and what worked instead; decisions and their reasons.
- Next: what it was about to do.
Be specific: paths, names, commands, exact error messages. Write only the summary.`
}

/** Where the kept tail begins: an assistant message, so that every tool_use keeps its tool_result after it. */
function tailStart(messages: MessageParam[]): number | undefined {
  const assistants = messages.flatMap((message, index) => (message.role === 'assistant' && index > 0 ? [index] : []))
  for (let keep = KEEP_RECENT_TURNS; keep >= 1; keep--) {
    const start = assistants.at(-keep)
    // Something must lie between the first message and the tail, or there is nothing to summarise.
    if (start !== undefined && start > 1) return start
  }

  return undefined
}

/** Without a summary from the model, a list of what was done still tells the agent where it is. */
function mechanicalSummary(older: MessageParam[]): string {
  const calls = older.flatMap((message) => blocksOf(message).filter((block): block is ToolUseBlockParam => block.type === 'tool_use'))
  if (calls.length === 0) return 'The earlier turns held no tool calls.'
  return `The earlier turns made these tool calls:\n${calls.map((call) => `- ${call.name}${describeInput(call.input)}`).join('\n')}`
}

function renderMessage(message: MessageParam): string {
  return blocksOf(message)
    .map((block) => `[${message.role}${block.type === 'text' ? '' : ` ${block.type}`}] ${renderBlock(block)}`)
    .join('\n')
}

function renderBlock(block: ContentBlockParam): string {
  switch (block.type) {
    case 'text': {
      return clip(block.text, SUMMARY_BLOCK_CHARS)
    }

    case 'tool_use': {
      return `${block.name} ${clip(JSON.stringify(block.input), SUMMARY_BLOCK_CHARS / 4)}`
    }

    case 'tool_result': {
      return `${block.is_error ? '(error) ' : ''}${clip(resultText(block), SUMMARY_BLOCK_CHARS)}`
    }

    default: {
      return `(${block.type})`
    }
  }
}

function toolCallsById(messages: MessageParam[]): Map<string, ToolUseBlockParam> {
  const calls = new Map<string, ToolUseBlockParam>()
  for (const message of messages) {
    if (message.role !== 'assistant') continue
    for (const block of blocksOf(message)) if (block.type === 'tool_use') calls.set(block.id, block)
  }

  return calls
}

/** The one argument that says what a call was about (a path, a command, a pattern). */
function describeInput(input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>
  const main = fields.file_path ?? fields.command ?? fields.pattern ?? fields.path ?? fields.url
  return typeof main === 'string' ? ` ${clip(main.replaceAll(/\s+/g, ' '), 120)}` : ''
}

function resultText(block: ToolResultBlockParam): string {
  if (typeof block.content === 'string') return block.content
  return (block.content ?? []).map((part) => (part.type === 'text' ? part.text : `(${part.type})`)).join('\n')
}

const blocksOf = (message: MessageParam): ContentBlockParam[] =>
  typeof message.content === 'string' ? [{text: message.content, type: 'text'}] : message.content

const isSummary = (block: ContentBlockParam) => block.type === 'text' && block.text.startsWith(SUMMARY_MARK)

/** At most about `max` characters: a long text keeps its beginning and its end, the cut marked. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text
  const half = Math.floor(max / 2)
  return `${text.slice(0, half)}\n[... ${text.length - 2 * half} characters left out ...]\n${text.slice(-half)}`
}
