/** Where deferred tools are sent behind ToolSearch (model/providers.ts, toolSearchOn): as Claude Code decides it. */
import {describe, expect, it} from 'vitest'

import {toolSearchOn} from '../../../src/model/providers.js'

describe('toolSearchOn', () => {
  it("is on at Anthropic's own API: no ANTHROPIC_BASE_URL, or one whose host is api.anthropic.com", () => {
    expect(toolSearchOn('anthropic', {})).toBe(true)
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: ' '})).toBe(true)
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: 'https://api.anthropic.com'})).toBe(true)
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: 'https://api.anthropic.com/'})).toBe(true)
  })

  it('is off at a gateway, a look-alike host, an unreadable URL, Bedrock and Vertex', () => {
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: 'https://llm-gateway.example.com'})).toBe(false)
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: 'https://api.anthropic.com.example.com'})).toBe(false)
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080'})).toBe(false)
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: 'not a url'})).toBe(false)
    expect(toolSearchOn('bedrock', {})).toBe(false)
    expect(toolSearchOn('vertex', {})).toBe(false)
  })

  it('is what ENABLE_TOOL_SEARCH says, wherever the requests go', () => {
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: 'https://llm-gateway.example.com', ENABLE_TOOL_SEARCH: 'true'})).toBe(true)
    expect(toolSearchOn('bedrock', {ENABLE_TOOL_SEARCH: '1'})).toBe(true)
    expect(toolSearchOn('anthropic', {ENABLE_TOOL_SEARCH: 'false'})).toBe(false)
    expect(toolSearchOn('anthropic', {ANTHROPIC_BASE_URL: 'https://api.anthropic.com', ENABLE_TOOL_SEARCH: '0'})).toBe(false)
  })
})
