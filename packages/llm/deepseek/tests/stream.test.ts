import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { adapterFor, collect, finishOf, startServer } from './helpers.js'

describe('streaming', () => {
  it('streams plain text into deltas and a finished message with its record', async () => {
    const server = await startServer({
      script: [{ text: 'Hello there, friend.', chunking: { text: 5 }, id: 'resp-1' }],
    })
    const adapter = adapterFor(server)
    const before = Date.now()
    const chunks = await collect(adapter)
    const deltas = chunks.filter((c) => c.type === 'text-delta').map((c) => c.text)
    expect(deltas).toEqual(['Hello', ' ther', 'e, fr', 'iend.'])
    const finish = finishOf(chunks)
    expect(finish.reason).toBe('stop')
    expect(finish.message).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Hello there, friend.' }],
    })
    expect(finish.record).toMatchObject({
      provider: 'deepseek',
      model: 'deepseek-v4-flash',
      responseId: 'resp-1',
      finishReason: 'stop',
    })
    expect(finish.record.chunks).toBe(server.lastRequest?.chunksSent)
    expect(finish.record.startedAt).toBeGreaterThanOrEqual(before)
    expect(finish.record.firstChunkAt).toBeGreaterThanOrEqual(finish.record.startedAt)
    expect(finish.record.endedAt).toBeGreaterThanOrEqual(finish.record.firstChunkAt ?? 0)
  })

  it('turns reasoning_content into reasoning deltas and a reasoning block, skipping the empty first one', async () => {
    const server = await startServer({
      script: [{ reasoning: 'First, think. Then answer.', text: 'Answer.', chunking: { reasoning: 6 } }],
    })
    const chunks = await collect(adapterFor(server))
    const reasoning = chunks.filter((c) => c.type === 'reasoning-delta').map((c) => c.text)
    expect(reasoning.every((piece) => piece.length > 0)).toBe(true)
    expect(reasoning.join('')).toBe('First, think. Then answer.')
    const kinds = chunks.map((c) => c.type)
    expect(kinds.lastIndexOf('reasoning-delta')).toBeLessThan(kinds.indexOf('text-delta'))
    expect(finishOf(chunks).message.content).toEqual([
      { type: 'reasoning', text: 'First, think. Then answer.' },
      { type: 'text', text: 'Answer.' },
    ])
  })

  it('reports usage with cache hit/miss and reasoning tokens', async () => {
    const server = await startServer({
      script: [
        {
          reasoning: 'hmm',
          text: 'ok',
          usage: { promptTokens: 1200, completionTokens: 40, cacheHitTokens: 1024, reasoningTokens: 12 },
        },
      ],
    })
    const chunks = await collect(adapterFor(server))
    const usage = {
      inputTokens: 1200,
      outputTokens: 40,
      totalTokens: 1240,
      cacheHitTokens: 1024,
      cacheMissTokens: 176,
      reasoningTokens: 12,
    }
    expect(chunks.filter((c) => c.type === 'usage')).toEqual([{ type: 'usage', usage }])
    expect(finishOf(chunks).usage).toEqual(usage)
    // The usage chunk arrives after the finish_reason chunk and before [DONE].
    expect(chunks.at(-2)?.type).toBe('usage')
  })

  it('finishes without usage when the server sends none', async () => {
    const server = await startServer({ script: [{ text: 'x', usage: false }] })
    const chunks = await collect(adapterFor(server))
    expect(chunks.some((c) => c.type === 'usage')).toBe(false)
    expect(finishOf(chunks).usage).toBeUndefined()
  })

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['content_filter', 'content-filter'],
    // insufficient_system_resource is a retryable failure, not a finish: see robustness.test.ts
  ] as const)('maps finish_reason %s to %s', async (wire, ours) => {
    const server = await startServer({ script: [{ text: 'partial answer', finishReason: wire }] })
    const finish = finishOf(await collect(adapterFor(server)))
    expect(finish.reason).toBe(ours)
    expect(finish.record.finishReason).toBe(ours)
  })

  it('assembles several tool calls per index, in streamed order, with the raw arguments', async () => {
    const server = await startServer({
      script: [
        {
          reasoning: 'Two files.',
          text: 'Reading.',
          toolCalls: [
            { id: 'call_a', name: 'read_file', arguments: '{"path":"caf\\u00e9.txt"}' },
            { id: 'call_b', name: 'grep', arguments: '{"pattern": "ü{2}", "path": "."' },
          ],
          chunking: { arguments: [1, 14, 15, 16, 17] },
        },
      ],
    })
    const chunks = await collect(adapterFor(server))
    const first = chunks.filter((c) => c.type === 'tool-call-delta')
    expect(first[0]).toEqual({
      type: 'tool-call-delta',
      index: 0,
      id: 'call_a',
      name: 'read_file',
      argumentsDelta: '',
    })
    expect(first.filter((c) => c.id !== undefined).map((c) => c.index)).toEqual([0, 1])
    const finish = finishOf(chunks)
    expect(finish.reason).toBe('tool-calls')
    expect(finish.message.content).toEqual([
      { type: 'reasoning', text: 'Two files.' },
      { type: 'text', text: 'Reading.' },
      { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"caf\\u00e9.txt"}' },
      // Not valid JSON: kept exactly as the model produced it.
      { type: 'tool-call', id: 'call_b', name: 'grep', arguments: '{"pattern": "ü{2}", "path": "."' },
    ])
  })

  it('any split of the arguments reassembles exactly (property)', async () => {
    const server = await startServer()
    const adapter = adapterFor(server)
    // JSON with every non-ASCII character written as a \uXXXX escape, so cuts land inside escapes.
    const escaped = fc
      .json({ stringUnit: 'binary' })
      .map((json) =>
        json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
      )
    const args = fc.oneof(
      fc.json({ stringUnit: 'grapheme' }),
      escaped,
      fc.string({ unit: 'binary' }),
      fc.string({ unit: 'grapheme' }),
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(args, { minLength: 1, maxLength: 3 }),
        fc.oneof(fc.array(fc.nat({ max: 80 }), { maxLength: 12 }), fc.integer({ min: 1, max: 5 })),
        fc.string(),
        async (argumentsList, cuts, textBefore) => {
          server.enqueue({
            text: textBefore,
            toolCalls: argumentsList.map((a, j) => ({ name: `tool_${j}`, arguments: a })),
            chunking: { arguments: cuts },
          })
          const chunks = await collect(adapter)
          const blocks = finishOf(chunks).message.content.filter((b) => b.type === 'tool-call')
          expect(blocks.map((b) => b.arguments)).toEqual(argumentsList)
          expect(blocks.map((b) => b.name)).toEqual(argumentsList.map((_, j) => `tool_${j}`))
          for (const [i, expected] of argumentsList.entries()) {
            const deltas = chunks.flatMap((c) =>
              c.type === 'tool-call-delta' && c.index === i ? [c.argumentsDelta] : [],
            )
            expect(deltas.join('')).toBe(expected)
          }
        },
      ),
      { numRuns: 60 },
    )
  })

  it('ignores keep-alive comment lines', async () => {
    const step = {
      reasoning: 'r',
      text: 'same answer',
      toolCalls: [{ id: 'call_1', name: 'ls', arguments: {} }],
    }
    const server = await startServer({ script: [{ ...step, keepAlive: 3 }, step] })
    const adapter = adapterFor(server)
    const withoutRecord = (chunks: Awaited<ReturnType<typeof collect>>) =>
      chunks.map((c) =>
        c.type === 'finish'
          ? { ...c, record: { ...c.record, startedAt: 0, endedAt: 0, firstChunkAt: 0, responseId: '' } }
          : c,
      )
    const withKeepAlive = withoutRecord(await collect(adapter))
    const without = withoutRecord(await collect(adapter))
    expect(withKeepAlive).toEqual(without)
    expect(finishOf(withKeepAlive).message.content.map((b) => b.type)).toEqual([
      'reasoning',
      'text',
      'tool-call',
    ])
  })

  it('delivers a slow stream chunk by chunk', async () => {
    const server = await startServer({
      script: [{ text: 'slow but sure', chunking: { text: 3 }, delayMs: 25 }],
    })
    const seen: string[] = []
    for await (const chunk of adapterFor(server).stream({ messages: [{ role: 'user', content: [] }] })) {
      if (chunk.type === 'text-delta') seen.push(chunk.text)
      if (chunk.type === 'finish')
        expect(chunk.message.content).toEqual([{ type: 'text', text: 'slow but sure' }])
    }
    expect(seen).toEqual(['slo', 'w b', 'ut ', 'sur', 'e'])
  })

  it('works against the /v1 base URL too, with the default model overridden per request', async () => {
    const server = await startServer({ script: [{ text: 'v1' }] })
    const adapter = adapterFor(server, { baseURL: server.baseURL, model: 'deepseek-v4-pro' })
    const finish = finishOf(await collect(adapter, { model: 'my-local-model' }))
    expect(server.lastRequest?.path).toBe('/v1/chat/completions')
    expect(server.lastRequest?.body?.model).toBe('my-local-model')
    expect(finish.record.model).toBe('my-local-model')
  })
})
