import type { LlmChunk } from '@keel/llm'
import { LlmError } from '@keel/llm'
import { type ScriptedFault, startScriptedServer } from '@keel/scripted-server'
import { describe, expect, it } from 'vitest'
import { DeepSeekAdapter } from '../src/index.js'
import { adapterFor, failure, hello, startServer } from './helpers.js'

describe('HTTP errors are classified', () => {
  it.each([
    [{ type: 'rate-limit', retryAfter: 2 }, 'rate-limit', 'LLM_RATE_LIMIT', 429, true],
    [{ type: 'server-error' }, 'server', 'LLM_SERVER', 500, true],
    [{ type: 'overloaded' }, 'server', 'LLM_SERVER', 503, true],
    [{ type: 'auth' }, 'auth', 'LLM_AUTH', 401, false],
    [{ type: 'insufficient-balance' }, 'insufficient-balance', 'LLM_INSUFFICIENT_BALANCE', 402, false],
    [{ type: 'context-length' }, 'context-overflow', 'LLM_CONTEXT_OVERFLOW', 400, false],
    [
      { type: 'http', status: 400, message: 'Invalid tools: name must match ^[a-zA-Z0-9_-]+$' },
      'invalid-request',
      'LLM_INVALID_REQUEST',
      400,
      false,
    ],
    [
      { type: 'http', status: 422, message: 'temperature out of range' },
      'invalid-request',
      'LLM_INVALID_REQUEST',
      422,
      false,
    ],
  ] as Array<[ScriptedFault, string, string, number, boolean]>)(
    '%j → %s',
    async (fault, kind, code, status, retryable) => {
      const server = await startServer({ script: [{ text: 'never', fault }] })
      const { error, chunks } = await failure(adapterFor(server))
      expect(chunks).toEqual([])
      expect(error.kind).toBe(kind)
      expect(error.code).toBe(code)
      expect(error.status).toBe(status)
      expect(error.retryable).toBe(retryable)
      expect(error.partial).toBeUndefined()
      expect(error.record).toMatchObject({ provider: 'deepseek', model: 'deepseek-v4-flash', chunks: 0 })
      expect(error.record?.finishReason).toBeUndefined()
      // The openai client never retries on its own.
      expect(server.requests).toHaveLength(1)
    },
  )

  it('reads Retry-After as seconds or as an HTTP date', async () => {
    const server = await startServer({
      script: [
        { fault: { type: 'rate-limit', retryAfter: 2 } },
        { fault: { type: 'rate-limit', retryAfter: new Date(Date.now() + 3_600_000).toUTCString() } },
        { fault: { type: 'rate-limit' } },
        { fault: { type: 'overloaded' } },
      ],
    })
    const adapter = adapterFor(server)
    expect((await failure(adapter)).error.retryAfterMs).toBe(2000)
    const dated = (await failure(adapter)).error.retryAfterMs ?? 0
    expect(dated).toBeGreaterThan(3_000_000)
    expect(dated).toBeLessThanOrEqual(3_600_000)
    expect((await failure(adapter)).error.retryAfterMs).toBeUndefined()
    expect((await failure(adapter)).error.retryAfterMs).toBeUndefined()
  })

  it('classifies an error object sent inside the stream', async () => {
    const server = await startServer({
      script: [
        {
          text: 'partial',
          fault: {
            type: 'malformed',
            afterChunks: 2,
            line: '{"error":{"message":"Service busy","type":"server_error"}}',
          },
        },
      ],
    })
    const { error } = await failure(adapterFor(server))
    expect(error.kind).toBe('server')
    expect(error.retryable).toBe(true)
    expect(error.message).toContain('Service busy')
  })
})

describe('transport failures', () => {
  it('a cut stream is a stream-cut error carrying the delivered prefix', async () => {
    const server = await startServer({
      script: [
        {
          reasoning: 'thinking',
          text: 'Hello world, this is cut',
          chunking: { text: 5, reasoning: 20 },
          fault: { type: 'cut', afterChunks: 4 },
        },
      ],
    })
    const { error, chunks } = await failure(adapterFor(server))
    expect(error).toBeInstanceOf(LlmError)
    expect(error.kind).toBe('stream-cut')
    expect(error.code).toBe('LLM_STREAM_CUT')
    expect(error.retryable).toBe(true)
    // role chunk, one reasoning chunk, two text chunks were sent before the cut.
    expect(chunks.map((c) => c.type)).toEqual(['reasoning-delta', 'text-delta', 'text-delta'])
    expect(error.partial).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'thinking' },
        { type: 'text', text: 'Hello worl' },
      ],
    })
    expect(error.record?.chunks).toBe(4)
    expect(error.record?.finishReason).toBeUndefined()
    expect(server.lastRequest?.outcome).toBe('cut')
  })

  it('a stream that ends cleanly without a finish reason or [DONE] is a stream cut too', async () => {
    const server = await startServer({
      script: [
        { text: 'abcdef', chunking: { text: 2 }, fault: { type: 'cut', afterChunks: 3, graceful: true } },
      ],
    })
    const { error } = await failure(adapterFor(server))
    expect(error.kind).toBe('stream-cut')
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'abcd' }])
  })

  it('a finish reason without the closing data: [DONE] is still a stream cut', async () => {
    const server = await startServer({
      script: [
        // role, 2 text chunks, finish, usage = 5 chunks; the response ends cleanly before [DONE].
        { text: 'done?', chunking: { text: 3 }, fault: { type: 'cut', afterChunks: 4, graceful: true } },
        { text: 'done?', chunking: { text: 3 }, fault: { type: 'cut', afterChunks: 5, graceful: true } },
      ],
    })
    for (let i = 0; i < 2; i++) {
      const { error, chunks } = await failure(adapterFor(server))
      expect(error.kind).toBe('stream-cut')
      expect(error.message).toContain('[DONE]')
      expect(error.partial?.content).toEqual([{ type: 'text', text: 'done?' }])
      expect(chunks.some((c) => c.type === 'finish')).toBe(false)
    }
  })

  it('keeps finished tool calls in the partial and drops the one that was cut', async () => {
    const server = await startServer({
      script: [
        {
          toolCalls: [
            { id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
            { id: 'c2', name: 'read_file', arguments: '{"path":"bbbbbbbbbb"}' },
          ],
          chunking: { arguments: 4 },
          fault: { type: 'cut', afterChunks: 8 },
        },
      ],
    })
    const { error } = await failure(adapterFor(server))
    expect(error.kind).toBe('stream-cut')
    expect(error.partial?.content).toEqual([
      { type: 'tool-call', id: 'c1', name: 'read_file', arguments: '{"path":"a"}' },
    ])
  })

  it('a cut after the finish chunk keeps every tool call in the partial', async () => {
    const server = await startServer({
      script: [
        {
          toolCalls: [
            { id: 'c1', name: 'ls', arguments: '{}' },
            { id: 'c2', name: 'ls', arguments: '{"path":"src"}' },
          ],
          chunking: { arguments: 100 },
          // role, 2 × (first fragment + arguments), finish = 6 chunks; cut before the usage chunk.
          fault: { type: 'cut', afterChunks: 6 },
        },
      ],
    })
    const { error } = await failure(adapterFor(server))
    expect(error.kind).toBe('stream-cut')
    expect(error.partial?.content.map((b) => (b.type === 'tool-call' ? b.id : b.type))).toEqual(['c1', 'c2'])
  })

  it('a malformed SSE line is a retryable transport failure (malformed-stream) carrying the prefix', async () => {
    const server = await startServer({
      script: [{ text: 'good start', chunking: { text: 5 }, fault: { type: 'malformed', afterChunks: 2 } }],
    })
    const { error, chunks } = await failure(adapterFor(server))
    expect(error.kind).toBe('malformed-stream')
    expect(error.code).toBe('LLM_MALFORMED_STREAM')
    expect(error.retryable).toBe(true)
    expect(chunks).toEqual([{ type: 'text-delta', text: 'good ' }])
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'good ' }])
  })

  it('a tool call that never gets a name is a malformed response', async () => {
    const chunk = {
      id: 'x',
      object: 'chat.completion.chunk',
      created: 0,
      model: 'm',
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 3, function: { arguments: '{}' } }] },
          finish_reason: 'tool_calls',
        },
      ],
    }
    const server = await startServer({
      script: [{ fault: { type: 'malformed', afterChunks: 1, line: JSON.stringify(chunk) } }],
    })
    const { error } = await failure(adapterFor(server))
    expect(error.kind).toBe('malformed-response')
    expect(error.message).toMatch(/Tool call #3/)
    expect(error.record?.finishReason).toBe('stop')
  })

  it('an unreachable server is a network error', async () => {
    const closed = await startScriptedServer()
    const url = closed.url
    await closed.close()
    const adapter = new DeepSeekAdapter({ baseURL: url, env: {} })
    const { error } = await failure(adapter)
    expect(error.kind).toBe('network')
    expect(error.code).toBe('LLM_NETWORK')
    expect(error.retryable).toBe(true)
  })

  it('no response headers within timeoutMs is a network error', async () => {
    const server = await startServer({ script: [{ text: 'late', headersDelayMs: 5_000 }] })
    const { error } = await failure(adapterFor(server, { timeoutMs: 100 }))
    expect(error.kind).toBe('network')
    expect(error.message).toContain('100 ms')
  })
})

describe('abort', () => {
  it('stops the HTTP stream and keeps the delivered prefix', async () => {
    const server = await startServer({
      script: [{ reasoning: 'hm', text: 'x'.repeat(200), chunking: { text: 1 }, delayMs: 20 }],
    })
    const controller = new AbortController()
    const delivered: LlmChunk[] = []
    let caught: unknown
    try {
      for await (const chunk of adapterFor(server).stream({ messages: hello, signal: controller.signal })) {
        delivered.push(chunk)
        if (delivered.filter((c) => c.type === 'text-delta').length === 3) controller.abort()
      }
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(LlmError)
    const error = caught as LlmError
    expect(error.kind).toBe('aborted')
    expect(error.code).toBe('LLM_ABORTED')
    expect(error.retryable).toBe(false)
    expect(error.partial).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'hm' },
        { type: 'text', text: 'xxx' },
      ],
    })
    await server.settled()
    const request = server.lastRequest
    expect(request?.outcome).toBe('client-closed')
    // 204 chunks (20 ms apart) were scripted; the server stopped soon after the abort.
    expect(request?.chunksSent).toBeLessThan(50)
  })

  it('an already aborted signal sends nothing', async () => {
    const server = await startServer({ script: [{ text: 'x' }] })
    const { error } = await failure(adapterFor(server), { signal: AbortSignal.abort() })
    expect(error.kind).toBe('aborted')
    expect(error.partial).toBeUndefined()
    expect(server.requests).toHaveLength(0)
  })

  it('aborting while waiting for headers is an abort, not a timeout', async () => {
    const server = await startServer({ script: [{ text: 'x', headersDelayMs: 5_000 }] })
    const controller = new AbortController()
    const pending = failure(adapterFor(server), { signal: controller.signal })
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    controller.abort()
    const { error } = await pending
    expect(error.kind).toBe('aborted')
    await server.settled()
    expect(server.lastRequest?.outcome).toBe('client-closed')
  })

  it('a consumer that stops reading closes the HTTP stream', async () => {
    const server = await startServer({
      script: [{ text: 'y'.repeat(100), chunking: { text: 1 }, delayMs: 20 }],
    })
    for await (const chunk of adapterFor(server).stream({ messages: hello })) {
      if (chunk.type === 'text-delta') break
    }
    await server.settled()
    expect(server.lastRequest?.outcome).toBe('client-closed')
    expect(server.lastRequest?.chunksSent).toBeLessThan(40)
  })
})
