import type { Message } from '@keel/llm'
import { text } from '@keel/llm'
import { describe, expect, it } from 'vitest'
import { DEFAULT_IDLE_TIMEOUT_MS } from '../src/index.js'
import { adapterFor, collect, failure, finishOf, startServer } from './helpers.js'

describe('per-stream idle timeout', () => {
  it('ends a stream that stops sending bytes as a retryable stream-idle failure, keeping the prefix', async () => {
    const server = await startServer({
      script: [
        { text: 'first words then silence', chunking: { text: 6 }, fault: { type: 'stall', afterChunks: 2 } },
      ],
    })
    const { error, chunks } = await failure(adapterFor(server, { idleTimeoutMs: 300 }))
    expect(error.kind).toBe('stream-idle')
    expect(error.code).toBe('LLM_STREAM_IDLE')
    expect(error.retryable).toBe(true)
    expect(error.message).toContain('300 ms')
    expect(chunks.length).toBeGreaterThan(0)
    expect(error.partial?.content[0]).toMatchObject({ type: 'text' })
    // the socket was really given up: the server saw the client go away
    await server.settled()
    expect(server.requests[0]!.outcome).toBe('client-closed')
  })

  it('counts keep-alive comments as bytes: a stall filled with them is not idle', async () => {
    const server = await startServer({
      script: [
        {
          text: 'slow but alive',
          chunking: { text: 5 },
          fault: { type: 'stall', afterChunks: 1, keepAliveMs: 50, forMs: 900 },
        },
      ],
    })
    const chunks = await collect(adapterFor(server, { idleTimeoutMs: 400 }))
    expect(finishOf(chunks).message.content).toEqual([{ type: 'text', text: 'slow but alive' }])
  })

  it('defaults to five minutes', () => {
    expect(DEFAULT_IDLE_TIMEOUT_MS).toBe(300_000)
  })
})

describe('finish reasons', () => {
  it('insufficient_system_resource is a retryable failure with the prefix, not a finish', async () => {
    const server = await startServer({
      script: [{ text: 'half an answ', finishReason: 'insufficient_system_resource' }],
    })
    const { error } = await failure(adapterFor(server))
    expect(error.kind).toBe('insufficient-resources')
    expect(error.code).toBe('LLM_INSUFFICIENT_RESOURCES')
    expect(error.retryable).toBe(true)
    expect(error.partial?.content).toEqual([{ type: 'text', text: 'half an answ' }])
  })

  it('length and content_filter finish with their own reasons', async () => {
    const server = await startServer({
      script: [
        { text: 'cut by the li', finishReason: 'length' },
        { text: '', finishReason: 'content_filter' },
      ],
    })
    const adapter = adapterFor(server)
    expect(finishOf(await collect(adapter)).reason).toBe('length')
    expect(finishOf(await collect(adapter)).reason).toBe('content-filter')
  })
})

describe('well-formed history', () => {
  it('refuses to send an assistant tool call without its tool result (typed error, no request)', async () => {
    const server = await startServer({ script: [{ text: 'never' }] })
    const messages: Message[] = [
      { role: 'user', content: [text('run it')] },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', id: 'call_1' as never, name: 'bash', arguments: '{}' }],
      },
      { role: 'user', content: [text('hello again')] },
    ]
    const { error } = await failure(adapterFor(server), { messages })
    expect(error.kind).toBe('unanswered-tool-call')
    expect(error.code).toBe('LLM_UNANSWERED_TOOL_CALL')
    expect(error.retryable).toBe(false)
    expect(error.message).toContain("'call_1' (bash, message 1)")
    expect(server.requests).toHaveLength(0)
  })
})
