import type { Message, ToolCallId } from '@keel/llm'
import { LlmError, text } from '@keel/llm'
import { describe, expect, it } from 'vitest'
import {
  DeepSeekAdapter,
  DeepSeekConfigError,
  defaultModelCapabilities,
  LOCAL_PLACEHOLDER_KEY,
} from '../src/index.js'
import { adapterFor, collect, failure, startServer } from './helpers.js'

const id = (value: string) => value as ToolCallId
const png = { type: 'image', mediaType: 'image/png', data: 'A'.repeat(4096) } as const

/** Two turns: the first with reasoning and a tool call, the second mid tool-call chain. */
const conversation: Message[] = [
  { role: 'system', content: [text('You are Keel.')] },
  { role: 'user', content: [text('Look at this'), png] },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'old reasoning' },
      { type: 'text', text: 'Reading it.' },
      { type: 'tool-call', id: id('call_1'), name: 'read_file', arguments: '{"path":"a.txt"}' },
    ],
  },
  { role: 'tool', toolCallId: id('call_1'), toolName: 'read_file', content: [text('contents of a')] },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'done thinking' },
      { type: 'text', text: 'It says a.' },
    ],
  },
  { role: 'user', content: [text('Now list the dir'), text('and grep it')] },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'current ' },
      { type: 'reasoning', text: 'reasoning' },
      { type: 'tool-call', id: id('call_2'), name: 'list_dir', arguments: '{}' },
      { type: 'tool-call', id: id('call_3'), name: 'grep', arguments: '{"pattern":"x"}' },
    ],
  },
  { role: 'tool', toolCallId: id('call_2'), toolName: 'list_dir', content: [] },
  { role: 'tool', toolCallId: id('call_3'), toolName: 'grep', content: [text('no match')], isError: true },
  { role: 'developer', content: [text('Reminder: be brief.')] },
  { role: 'assistant', content: [{ type: 'reasoning', text: 'next step' }] },
]

describe('request mapping (as recorded by the server)', () => {
  it('maps roles, content, tool calls, tool results and reasoning_content per the DeepSeek rules', async () => {
    const server = await startServer({ script: [{ text: 'ok' }] })
    await collect(adapterFor(server), { messages: conversation })
    expect(server.lastRequest?.body?.messages).toEqual([
      { role: 'system', content: 'You are Keel.' },
      {
        role: 'user',
        content: 'Look at this\n\n[image omitted: image/png, about 3 KiB; this model reads text only]',
      },
      // Earlier turn: no reasoning_content.
      {
        role: 'assistant',
        content: 'Reading it.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'contents of a' },
      { role: 'assistant', content: 'It says a.' },
      { role: 'user', content: 'Now list the dir\n\nand grep it' },
      // Current turn's tool-call chain: reasoning sent back; content "" rather than null.
      {
        role: 'assistant',
        content: '',
        reasoning_content: 'current reasoning',
        tool_calls: [
          { id: 'call_2', type: 'function', function: { name: 'list_dir', arguments: '{}' } },
          { id: 'call_3', type: 'function', function: { name: 'grep', arguments: '{"pattern":"x"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_2', content: '(no output)' },
      { role: 'tool', tool_call_id: 'call_3', content: 'no match' },
      { role: 'system', content: 'Reminder: be brief.' },
      { role: 'assistant', content: '', reasoning_content: 'next step' },
    ])
  })

  it('sends tools, stream options, limits and extra body fields', async () => {
    const server = await startServer({ script: [{ text: 'ok' }] })
    const adapter = adapterFor(server, {
      extraBody: { thinking: { type: 'enabled' }, stream: false, model: 'nope' },
    })
    const parameters = {
      type: 'object',
      properties: { path: { type: 'string' } },
      required: ['path'],
      additionalProperties: false,
    }
    await collect(adapter, {
      tools: [{ name: 'read_file', description: 'Read a file.', parameters }],
      maxTokens: 512,
      temperature: 0.2,
    })
    const body = server.lastRequest?.body
    expect(body?.model).toBe('deepseek-v4-flash')
    expect(body?.stream).toBe(true)
    expect(body?.stream_options).toEqual({ include_usage: true })
    expect(body?.tools).toEqual([
      { type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters } },
    ])
    expect(body?.max_tokens).toBe(512)
    expect(body?.temperature).toBe(0.2)
    expect(body?.thinking).toEqual({ type: 'enabled' })
    expect(server.lastRequest?.headers['content-type']).toContain('application/json')
  })

  it('omits tools, max_tokens and temperature when not given', async () => {
    const server = await startServer({ script: [{ text: 'ok' }] })
    await collect(adapterFor(server))
    const body = server.lastRequest?.body ?? {}
    expect(Object.keys(body).sort()).toEqual(['messages', 'model', 'stream', 'stream_options'])
  })

  it("refuses images with images: 'reject', before sending anything", async () => {
    const server = await startServer({ script: [{ text: 'ok' }] })
    const { error } = await failure(adapterFor(server, { images: 'reject' }), {
      messages: [{ role: 'user', content: [text('see'), png] }],
    })
    expect(error).toBeInstanceOf(LlmError)
    expect(error.kind).toBe('invalid-request')
    expect(error.message).toContain('image/png')
    expect(server.requests).toHaveLength(0)
  })

  it('rejects a non-positive maxTokens before sending anything', async () => {
    const server = await startServer({ script: [{ text: 'ok' }] })
    const { error } = await failure(adapterFor(server), { maxTokens: 0 })
    expect(error.code).toBe('LLM_INVALID_REQUEST')
    expect(server.requests).toHaveLength(0)
  })
})

describe('configuration', () => {
  it('requires an API key for a remote endpoint', () => {
    const make = () => new DeepSeekAdapter({ env: {} })
    expect(make).toThrow(DeepSeekConfigError)
    try {
      make()
    } catch (error) {
      expect((error as DeepSeekConfigError).code).toBe('DEEPSEEK_MISSING_API_KEY')
      expect((error as DeepSeekConfigError).message).toContain('DEEPSEEK_API_KEY')
    }
    expect(() => new DeepSeekAdapter({ baseURL: 'https://example.invalid/v1', env: {} })).toThrow(
      /DEEPSEEK_API_KEY/,
    )
  })

  it('sends a placeholder key to a loopback server when none is configured', async () => {
    const server = await startServer({ script: [{ text: 'ok' }] })
    await collect(adapterFor(server))
    expect(server.lastRequest?.headers.authorization).toBe(`Bearer ${LOCAL_PLACEHOLDER_KEY}`)
  })

  it('reads DEEPSEEK_API_KEY and DEEPSEEK_BASE_URL from the environment; options win', async () => {
    const server = await startServer({ script: [{ text: 'one' }, { text: 'two' }], apiKey: 'sk-env' })
    const fromEnv = new DeepSeekAdapter({
      env: { DEEPSEEK_API_KEY: 'sk-env', DEEPSEEK_BASE_URL: server.url },
    })
    expect(fromEnv.baseURL).toBe(server.url)
    await collect(fromEnv)
    expect(server.lastRequest?.headers.authorization).toBe('Bearer sk-env')
    const explicit = new DeepSeekAdapter({
      apiKey: 'sk-option',
      baseURL: server.baseURL,
      env: { DEEPSEEK_API_KEY: 'sk-env', DEEPSEEK_BASE_URL: 'https://elsewhere.invalid' },
      headers: { 'x-keel': '1' },
    })
    const { error } = await failure(explicit)
    expect(error.kind).toBe('auth')
    expect(server.lastRequest?.headers.authorization).toBe('Bearer sk-option')
    expect(server.lastRequest?.headers['x-keel']).toBe('1')
  })

  it('defaults to api.deepseek.com and deepseek-v4-flash', () => {
    const adapter = new DeepSeekAdapter({ env: { DEEPSEEK_API_KEY: 'sk' } })
    expect(adapter.baseURL).toBe('https://api.deepseek.com')
    expect(adapter.model).toBe('deepseek-v4-flash')
    expect(adapter.provider).toBe('deepseek')
  })

  it.each([
    [{ timeoutMs: -1 }, 'timeoutMs'],
    [{ baseURL: 'ftp://example.com' }, 'baseURL'],
    [{ images: 'drop' }, 'images'],
    [{ modle: 'typo' }, 'modle'],
  ])('rejects bad options %j with DEEPSEEK_INVALID_OPTIONS', (options, path) => {
    try {
      new DeepSeekAdapter({ ...(options as object), env: { DEEPSEEK_API_KEY: 'sk' } })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(DeepSeekConfigError)
      expect((error as DeepSeekConfigError).code).toBe('DEEPSEEK_INVALID_OPTIONS')
      expect((error as DeepSeekConfigError).message).toContain(path)
    }
  })

  it('rejects a DEEPSEEK_BASE_URL that is not a URL', () => {
    expect(
      () => new DeepSeekAdapter({ env: { DEEPSEEK_API_KEY: 'sk', DEEPSEEK_BASE_URL: 'not a url' } }),
    ).toThrow(/DEEPSEEK_BASE_URL/)
  })

  it('knows model capabilities, with a default for unknown ids and overrides', () => {
    const adapter = new DeepSeekAdapter({
      env: { DEEPSEEK_API_KEY: 'sk' },
      capabilities: { 'deepseek-chat': { contextWindow: 64_000 }, 'my-model': { reasoning: true } },
    })
    expect(adapter.capabilities()).toEqual({
      contextWindow: 1_048_576,
      maxOutputTokens: 384_000,
      reasoning: true,
      reasoningEfforts: ['low', 'high', 'max'],
    })
    expect(adapter.capabilities('deepseek-chat')).toEqual({
      contextWindow: 64_000,
      maxOutputTokens: 8_192,
      reasoning: false,
    })
    expect(adapter.capabilities('unknown-model')).toEqual({ ...defaultModelCapabilities, assumed: true })
    expect(adapter.capabilities('my-model')).toEqual({ ...defaultModelCapabilities, reasoning: true })
  })
})
