/**
 * MCP servers as tool sources, through @modelcontextprotocol/sdk (stdio and streamable HTTP). Each
 * server's tools become `mcp__<server>__<tool>`: access `read` when the server annotates them
 * `readOnlyHint: true` (so plan mode may offer them), `execute` otherwise (so a run mode needs an allow
 * rule, `mcp__<server>` or `mcp__<server>__<tool>`, except bypassPermissions). A server that fails to
 * start is reported on stderr and skipped; its own stderr never reaches stdout.
 *
 * This module loads the SDK itself only when a session has servers configured.
 */
import path from 'node:path'

import type {Client} from '@modelcontextprotocol/sdk/client/index.js'
import type {Transport} from '@modelcontextprotocol/sdk/shared/transport.js'
import {z} from 'zod'

import {DEFAULT_RESULT_CAP, ToolError, type ToolPlugin} from '../tool.js'
import type {McpServerConfig} from '../../config/settings.js'

/** How long a server may take to start and list its tools (ms); `MCP_TIMEOUT` overrides it. */
const MCP_STARTUP_TIMEOUT_MS = 30_000
/** How long one tool call may take (ms) unless the server's `timeout` or `MCP_TOOL_TIMEOUT` says otherwise. */
const MCP_TOOL_TIMEOUT_MS = 60_000
const MAX_DESCRIPTION = 2048
const STDERR_LINES = 20
const API_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

interface McpTools {
  tools: ToolPlugin[]
  /** The servers that started, by name. */
  servers: string[]
  close(): Promise<void>
}

interface McpOptions {
  workspace: string
  warn(message: string): void
  /** Tool names already taken. */
  taken: Set<string>
  clientVersion?: string
  env?: NodeJS.ProcessEnv
}

/** Starts every configured server in parallel; returns the tools of those that started. */
export async function connectMcpServers(servers: Record<string, McpServerConfig>, options: McpOptions): Promise<McpTools> {
  const entries = Object.entries(servers)
  const settled = await Promise.all(entries.map(([name, config]) => connectServer(name, config, options)))
  const connected = settled.filter((server): server is Connected => server !== undefined)
  const tools: ToolPlugin[] = []
  const taken = new Set(options.taken)
  for (const server of connected) {
    for (const tool of server.tools) {
      if (taken.has(tool.name)) {
        options.warn(`MCP server "${server.name}": tool ${tool.name} skipped, the name is already taken.`)
        continue
      }

      taken.add(tool.name)
      tools.push(tool)
    }
  }

  return {
    async close() {
      await Promise.all(connected.map((server) => server.client.close().catch(() => {})))
    },
    servers: connected.map((server) => server.name),
    tools,
  }
}

interface Connected {
  name: string
  client: Client
  tools: ToolPlugin[]
}

async function connectServer(name: string, config: McpServerConfig, options: McpOptions): Promise<Connected | undefined> {
  const env = options.env ?? process.env
  const startupTimeout = positive(env.MCP_TIMEOUT) ?? MCP_STARTUP_TIMEOUT_MS
  const callTimeout = config.timeout ?? positive(env.MCP_TOOL_TIMEOUT) ?? MCP_TOOL_TIMEOUT_MS
  const stderr: string[] = []
  let client: Client | undefined
  try {
    const [{Client}, transport] = await Promise.all([import('@modelcontextprotocol/sdk/client/index.js'), makeTransport(name, config, options, env, stderr)])
    client = new Client({name: 'wave', version: options.clientVersion ?? '0.0.0'}, {capabilities: {}})
    await client.connect(transport, {timeout: startupTimeout})
    const listed = await listAllTools(client, startupTimeout)
    const tools: ToolPlugin[] = []
    for (const tool of listed) {
      const made = toToolPlugin(name, tool, client, callTimeout)
      if (typeof made === 'string') options.warn(made)
      else tools.push(made)
    }

    return {client, name, tools}
  } catch (error) {
    await client?.close().catch(() => {})
    const tail = stderr.length > 0 ? ` Its stderr ended with: ${stderr.slice(-3).join(' | ')}` : ''
    options.warn(`MCP server "${name}" failed to start (${describe(error)}); its tools are not available.${tail}`)
    return undefined
  }
}

async function makeTransport(name: string, config: McpServerConfig, options: McpOptions, env: NodeJS.ProcessEnv, stderr: string[]): Promise<Transport> {
  if (config.type === 'http') {
    const {StreamableHTTPClientTransport} = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const headers = Object.fromEntries(Object.entries(config.headers ?? {}).map(([key, value]) => [key, expandVars(value, env)]))
    return new StreamableHTTPClientTransport(new URL(expandVars(config.url, env)), {requestInit: {headers}})
  }

  const {StdioClientTransport} = await import('@modelcontextprotocol/sdk/client/stdio.js')
  // The SDK passes only a safe default environment (HOME, PATH, ...) plus `env`: never wave's API key.
  const transport = new StdioClientTransport({
    args: (config.args ?? []).map((arg) => expandVars(arg, env)),
    command: expandVars(config.command, env),
    cwd: path.resolve(options.workspace, expandVars(config.cwd ?? '.', env)),
    env: Object.fromEntries(Object.entries(config.env ?? {}).map(([key, value]) => [key, expandVars(value, env)])),
    stderr: 'pipe',
  })
  // A server's stderr is its log: kept for the failure message, shown on stderr only with DEBUG.
  let partial = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines.filter((l) => l.trim())) {
      stderr.push(line.trim())
      if (stderr.length > STDERR_LINES) stderr.shift()
      if (env.DEBUG) process.stderr.write(`[mcp ${name}] ${line}\n`)
    }
  })
  return transport
}

interface ListedTool {
  name: string
  description?: string
  title?: string
  inputSchema: Record<string, unknown>
  annotations?: {readOnlyHint?: boolean; title?: string}
}

async function listAllTools(client: Client, timeout: number): Promise<ListedTool[]> {
  if (!client.getServerCapabilities()?.tools) return []
  const tools: ListedTool[] = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor ? {cursor} : undefined, {timeout})
    tools.push(...(page.tools as ListedTool[]))
    cursor = page.nextCursor
  } while (cursor)
  return tools
}

/** The model-facing name of an MCP tool: `mcp__<server>__<tool>`, with characters the API refuses replaced. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replaceAll(/[^A-Za-z0-9_-]/g, '_')}`
}

function toToolPlugin(server: string, tool: ListedTool, client: Client, timeout: number): string | ToolPlugin {
  const name = mcpToolName(server, tool.name)
  if (!API_TOOL_NAME.test(name)) return `MCP server "${server}": tool ${tool.name} skipped, ${name} is longer than the 64 characters a tool name may have.`
  const readOnly = tool.annotations?.readOnlyHint === true
  const {$schema: _ignored, ...schema} = tool.inputSchema ?? {}
  const about = (tool.description ?? tool.title ?? tool.annotations?.title ?? '').trim() || `The ${tool.name} tool of the MCP server ${server}.`
  return {
    // Not read-only: the server may do anything, so it is `execute` (needs a rule, or bypassPermissions).
    access: readOnly ? 'read' : 'execute',
    // Sent deferred, as Claude Code sends MCP tools: a server can list dozens, each re-read from the cache
    // on every request, and a session calls few of them; ToolSearch loads the ones it needs.
    deferred: true,
    description: about.length > MAX_DESCRIPTION ? about.slice(0, MAX_DESCRIPTION) + '…' : about,
    // The server validates arguments against its own schema; wave only checks they form an object.
    input: z.looseObject({}),
    inputSchema: {...schema, type: 'object'},
    name,
    origin: 'mcp',
    resultCap: DEFAULT_RESULT_CAP,
    async run(input, ctx) {
      const result = await client.callTool({arguments: input, name: tool.name}, undefined, {signal: ctx.signal, timeout})
      const text = resultText(result as CallResult)
      if (result.isError) throw new ToolError(text || `${name} failed.`)
      return text
    },
    source: `MCP server ${server}`,
  }
}

interface CallResult {
  content?: Array<{type: string; text?: string; mimeType?: string; data?: string; uri?: string; resource?: {uri?: string; text?: string; mimeType?: string}}>
  structuredContent?: unknown
  toolResult?: unknown
}

/** A tool result as text: text blocks as they are, other blocks described. */
export function resultText(result: CallResult): string {
  const parts: string[] = []
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text': {
        parts.push(block.text ?? '')
        break
      }

      case 'resource': {
        parts.push(block.resource?.text ?? `[resource ${block.resource?.uri ?? ''}${block.resource?.mimeType ? ` (${block.resource.mimeType})` : ''}]`)
        break
      }

      case 'resource_link': {
        parts.push(`[resource link ${block.uri ?? ''}]`)
        break
      }

      default: {
        const size = block.data ? ` (${Math.floor((block.data.length * 3) / 4)} bytes)` : ''
        parts.push(`[${block.type}${block.mimeType ? ` ${block.mimeType}` : ''}${size} not shown]`)
      }
    }
  }

  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent, null, 2)
  if (parts.length === 0 && result.toolResult !== undefined) return JSON.stringify(result.toolResult, null, 2)
  return parts.join('\n')
}

/** `${VAR}` and `${VAR:-default}` in a server's command, args, env, url and headers, as Claude Code expands them. */
export function expandVars(value: string, env: NodeJS.ProcessEnv = process.env): string {
  return value.replaceAll(/\$\{([A-Za-z_]\w*)(?::-([^}]*))?\}/g, (_whole, name: string, fallback: string | undefined) => env[name] ?? fallback ?? '')
}

function positive(value: string | undefined): number | undefined {
  const n = Number(value)
  return Number.isFinite(n) && n > 0 ? n : undefined
}

function describe(error: unknown): string {
  const e = error as NodeJS.ErrnoException
  if (e?.code === 'ENOENT' && e.path) return `command not found: ${e.path}`
  const message = e instanceof Error ? e.message : String(error)
  return message.split('\n')[0]
}
