import { Session } from '@keel/session'
import { defineTool, type Tool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { AgentError, createAgent } from '../src/index.js'
import { instantClock, probeTools, recorder, rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

describe('a multi-step turn', () => {
  it('runs concurrency-safe calls in parallel and the others serially, committing results in model order', async () => {
    const probes = probeTools(2)
    const rec = recorder()
    const r = await open(
      [
        {
          reasoning: 'Let me look at a, b and d, and poke c.',
          text: 'Checking.',
          toolCalls: [
            { id: 'call_a', name: 'peek', arguments: { key: 'a', delay: 30 } },
            { id: 'call_b', name: 'peek', arguments: { key: 'b' } },
            { id: 'call_c', name: 'poke', arguments: { key: 'c' } },
            { id: 'call_d', name: 'peek', arguments: { key: 'd' } },
          ],
          usage: { promptTokens: 100, completionTokens: 20, cacheHitTokens: 60, reasoningTokens: 9 },
        },
        { text: 'All done.', usage: { promptTokens: 180, completionTokens: 5 } },
      ],
      { tools: probes.tools, observers: [rec] },
    )
    const result = await r.agent.send('Look around.')
    expect(result).toMatchObject({ turn: 1, reason: 'completed', text: 'All done.' })

    // a and b overlapped; c ran alone after both; d after c.
    expect(probes.maxActive).toBe(2)
    expect(probes.log).toEqual([
      'begin peek a',
      'begin peek b',
      'end peek b',
      'end peek a',
      'begin poke c',
      'end poke c',
      'begin peek d',
      'end peek d',
    ])
    expect(r.types()).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/context',
      'request/header',
      'assistant/message',
      'tool/call',
      'tool/call',
      'tool/call',
      'tool/call',
      'tool/result',
      'tool/result',
      'tool/result',
      'tool/result',
      'step/end',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(r.events('tool/call').map((e) => e.data.callId)).toEqual(['call_a', 'call_b', 'call_c', 'call_d'])
    expect(r.events('tool/result').map((e) => e.data.message.toolCallId)).toEqual([
      'call_a',
      'call_b',
      'call_c',
      'call_d',
    ])
    expect(r.events('tool/result')[2]!.data.message.content).toEqual([{ type: 'text', text: 'poked c' }])
    expect(r.events('tool/call')[0]!.data.arguments).toBe('{"key":"a","delay":30}')

    // reasoning and usage are kept on the assistant message
    const first = r.events('assistant/message')[0]!.data
    expect(first.message.content[0]).toEqual({
      type: 'reasoning',
      text: 'Let me look at a, b and d, and poke c.',
    })
    expect(first.message.content[1]).toEqual({ type: 'text', text: 'Checking.' })
    expect(first.usage).toEqual({
      inputTokens: 100,
      outputTokens: 20,
      totalTokens: 120,
      cacheHitTokens: 60,
      cacheMissTokens: 40,
      reasoningTokens: 9,
    })
    expect(first.stream.finishReason).toBe('tool-calls')
    expect(first.stream.provider).toBe('deepseek')
    expect(r.events('turn/end')[0]!.data).toEqual({ turn: 1, reason: 'completed' })

    // live callbacks: deltas streamed, tools announced, finishes reported in model order
    expect(rec.reasoning).toBe('Let me look at a, b and d, and poke c.')
    expect(rec.text).toBe('Checking.All done.')
    expect(rec.log.filter((l) => l.startsWith('finish'))).toEqual([
      'finish call_a',
      'finish call_b',
      'finish call_c',
      'finish call_d',
    ])

    // the second model call saw the tool results in model order, after the assistant's calls
    const second = r.server.requests[1]!.body!
    const roles = second.messages!.map((m) => m.role)
    expect(roles).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'tool'])
    expect(second.messages!.slice(2).map((m) => m.tool_call_id)).toEqual([
      'call_a',
      'call_b',
      'call_c',
      'call_d',
    ])
    expect(second.messages![1]!.tool_calls!.map((c) => c.id)).toEqual([
      'call_a',
      'call_b',
      'call_c',
      'call_d',
    ])
    expect(second.tools!.map((t) => t.function.name)).toEqual(['peek', 'poke'])
  })

  it('bounds parallel calls by maxParallelTools', async () => {
    const probes = probeTools(99) // the barrier never fills: each peek waits at most 2 s
    let active = 0
    let maxActive = 0
    const slow: Tool<{ n: number }> = defineTool({
      name: 'slow_read',
      description: 'Reads slowly.',
      inputSchema: z.strictObject({ n: z.number() }),
      annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
      isConcurrencySafe: true,
      async call(input) {
        active++
        maxActive = Math.max(maxActive, active)
        await new Promise((r) => setTimeout(r, 15))
        active--
        return `read ${input.n}`
      },
    })
    const r = await open(
      [{ toolCalls: [1, 2, 3, 4, 5].map((n) => ({ name: 'slow_read', arguments: { n } })) }, { text: 'ok' }],
      { tools: [slow, ...probes.tools], maxParallelTools: 2 },
    )
    await r.agent.send('go')
    expect(maxActive).toBe(2)
    expect(r.events('tool/result').map((e) => e.data.message.content[0])).toEqual(
      [1, 2, 3, 4, 5].map((n) => ({ type: 'text', text: `read ${n}` })),
    )
  })

  it('appends the system prompt once and sends it first', async () => {
    const r = await open([{ text: 'hi' }, { text: 'again' }], { systemPrompt: 'You are terse.' })
    await r.agent.send('hello')
    await r.agent.send('hello again')
    expect(r.events('system/message')).toHaveLength(1)
    expect(r.session.events[0]!.type).toBe('system/message')
    expect(r.server.requests[1]!.body!.messages!.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ])
  })
})

describe('the inbox', () => {
  it('runs sent turns one at a time, in order, and injects developer messages before the next step', async () => {
    const r = await open([{ text: 'one' }, { text: 'two' }])
    r.agent.inject('Remember: be brief.', { source: 'test' })
    const first = r.agent.send('first')
    const second = r.agent.send(
      { role: 'user', content: [{ type: 'text', text: 'second' }] },
      { source: 'schedule/x' },
    )
    expect(r.agent.busy).toBe(true)
    const [a, b] = await Promise.all([first, second])
    expect([a.turn, a.text, b.turn, b.text]).toEqual([1, 'one', 2, 'two'])
    await r.agent.idle()
    expect(r.agent.busy).toBe(false)
    expect(r.types()).toEqual([
      'turn/start',
      'user/message',
      'developer/message',
      'step/start',
      'request/context',
      'request/header',
      'assistant/message',
      'step/end',
      'turn/end',
      'turn/start',
      'user/message',
      'step/start',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    expect(r.events('developer/message')[0]!.data.source).toBe('test')
    expect(r.events('user/message')[1]!.data.source).toBe('schedule/x')
    // developer messages reach the model (as system messages on OpenAI-compatible endpoints)
    expect(r.server.requests[0]!.body!.messages!.length).toBe(2)
  })

  it('refuses malformed input and sends after close with typed errors', async () => {
    const r = await open([])
    await expect(r.agent.send({ role: 'user', content: 'nope' } as never)).rejects.toMatchObject({
      code: 'AGENT_INPUT_INVALID',
    })
    expect(() => r.agent.inject({ role: 'developer', content: [{ type: 'image' }] } as never)).toThrow(
      AgentError,
    )
    await r.agent.close()
    await expect(r.agent.send('late')).rejects.toMatchObject({ code: 'AGENT_CLOSED' })
    expect(() => r.agent.inject('late')).toThrow(expect.objectContaining({ code: 'AGENT_CLOSED' }))
    expect(r.session.events).toHaveLength(0)
  })

  it('rejects bad options with AGENT_OPTIONS_INVALID', async () => {
    const session = Session.create('opts')
    const llm = {
      provider: 'none',
      model: 'none',
      stream: () => ({
        [Symbol.asyncIterator]: () => ({ next: async () => ({ done: true as const, value: undefined }) }),
      }),
    }
    await expect(createAgent({ llm, session, cwd: '.', maxSteps: 0 })).rejects.toMatchObject({
      code: 'AGENT_OPTIONS_INVALID',
      details: { option: 'maxSteps' },
    })
    await expect(createAgent({ llm, session, cwd: '.', retry: { maxRetries: -1 } })).rejects.toMatchObject({
      code: 'AGENT_OPTIONS_INVALID',
    })
  })
})

describe('tool call failures', () => {
  it('answers invalid arguments and unknown tools with error results, without running anything', async () => {
    const probes = probeTools(1)
    const r = await open(
      [
        {
          toolCalls: [
            { id: 'bad_json', name: 'poke', arguments: '{"key": "c"' },
            { id: 'bad_schema', name: 'poke', arguments: { key: 5 } },
            { id: 'unknown', name: 'launch_rockets', arguments: {} },
          ],
        },
        { text: 'Sorry.' },
      ],
      { tools: probes.tools },
    )
    const result = await r.agent.send('poke c')
    expect(result.reason).toBe('completed')
    expect(probes.log).toEqual([])
    const results = r.events('tool/result').map((e) => e.data)
    expect(results.map((d) => d.errorCode)).toEqual([
      'TOOL_INPUT_INVALID_JSON',
      'TOOL_INPUT_INVALID',
      'TOOL_NOT_FOUND',
    ])
    expect(results.every((d) => d.message.isError === true)).toBe(true)
    expect(results[2]!.message.content[0]).toMatchObject({
      text: expect.stringContaining('available tools: peek, poke'),
    })
    // the raw arguments are logged exactly as sent
    expect(r.events('tool/call')[0]!.data.arguments).toBe('{"key": "c"')
  })

  it('keeps call ids unique within a turn when the model reuses one', async () => {
    const probes = probeTools(1)
    const again = (key: string) => ({ toolCalls: [{ id: 'call_0', name: 'poke', arguments: { key } }] })
    const r = await open([again('a'), again('b'), { text: 'ok' }], { tools: probes.tools })
    const result = await r.agent.send('poke twice')
    expect(result.reason).toBe('completed')
    expect(r.events('tool/call').map((e) => e.data.callId)).toEqual(['call_0', 'call_0_2_0'])
    expect(r.events('tool/result').map((e) => e.data.message.toolCallId)).toEqual(['call_0', 'call_0_2_0'])
    const sent = r.server.requests[2]!.body!.messages!
    expect(sent.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(['call_0', 'call_0_2_0'])
    expect(probes.log).toEqual(['begin poke a', 'end poke a', 'begin poke b', 'end poke b'])
  })

  it('ends the turn with max-steps when the model keeps calling tools', async () => {
    const probes = probeTools(1)
    const loop = { toolCalls: [{ name: 'poke', arguments: { key: 'x' } }] }
    const r = await open([loop, loop, loop], { tools: probes.tools, maxSteps: 2 })
    const result = await r.agent.send('loop')
    expect(result.reason).toBe('max-steps')
    expect(r.events('step/start')).toHaveLength(2)
    expect(r.server.requests).toHaveLength(2)
    expect(r.events('turn/end')[0]!.data).toEqual({ turn: 1, reason: 'max-steps' })
    // the last step's result is committed even though the model has not seen it yet
    expect(r.events('tool/result')).toHaveLength(2)
  })
})

describe('retries', () => {
  it('retries a 429, honours Retry-After, logs llm/retry and the failed attempt, and fabricates nothing', async () => {
    const clock = instantClock()
    const rec = recorder()
    const r = await open([{ fault: { type: 'rate-limit', retryAfter: 3 } }, { text: 'Recovered.' }], {
      clock,
      observers: [rec],
      retry: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 100 },
    })
    const result = await r.agent.send('hi')
    expect(result).toMatchObject({ reason: 'completed', text: 'Recovered.' })
    expect(r.types()).toEqual([
      'turn/start',
      'user/message',
      'step/start',
      'request/context',
      'request/header',
      'assistant/attempt',
      'llm/retry',
      'assistant/message',
      'step/end',
      'turn/end',
    ])
    const attempt = r.events('assistant/attempt')[0]!.data
    expect(attempt).toMatchObject({ turn: 1, step: 1, attempt: 1, error: { code: 'LLM_RATE_LIMIT' } })
    expect(attempt.stream.finishReason).toBeUndefined()
    const retry = r.events('llm/retry')[0]!.data
    expect(retry).toMatchObject({
      attempt: 1,
      status: 429,
      retryAfterMs: 3000,
      error: { code: 'LLM_RATE_LIMIT' },
    })
    expect(retry.delayMs).toBe(3000) // the server's wait wins over the 10 ms backoff
    expect(clock.waits).toEqual([3000])
    expect(rec.log).toContain('retry 1')
    // only one assistant message; the retried request carried exactly the same history
    expect(r.events('assistant/message')).toHaveLength(1)
    expect(r.server.requests[1]!.body!.messages).toEqual(r.server.requests[0]!.body!.messages)
    expect(r.session.deriveMessages().map((m) => m.role)).toEqual(['user', 'assistant'])
  })

  it('ends the turn with error once retries of a 500 are exhausted, logging every attempt', async () => {
    const clock = instantClock()
    const fail = { fault: { type: 'server-error' as const } }
    const r = await open([fail, fail, fail], { clock, random: () => 0.5 })
    const result = await r.agent.send('hi')
    expect(result.reason).toBe('error')
    expect(result.error).toMatchObject({
      code: 'LLM_SERVER',
      message: expect.stringContaining('gave up after 3 attempts'),
    })
    expect(r.events('assistant/attempt').map((e) => e.data.attempt)).toEqual([1, 2, 3])
    expect(r.events('llm/retry').map((e) => e.data.attempt)).toEqual([1, 2])
    expect(r.events('assistant/message')).toHaveLength(0)
    expect(r.events('turn/end')[0]!.data).toMatchObject({ reason: 'error', error: { code: 'LLM_SERVER' } })
    // backoff doubles (base 1 ms, jitter 0.5 → 0.75 of the exponential, rounded)
    expect(r.events('llm/retry').map((e) => e.data.delayMs)).toEqual([1, 2])
    expect(r.types().slice(-2)).toEqual(['step/end', 'turn/end'])
  })

  it('does not retry errors that are not retryable', async () => {
    const r = await open([{ fault: { type: 'auth' } }, { text: 'never' }])
    const result = await r.agent.send('hi')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'LLM_AUTH' } })
    expect(r.events('llm/retry')).toHaveLength(0)
    expect(r.server.requests).toHaveLength(1)
  })

  it('retries a stream cut mid-way and keeps only the complete answer', async () => {
    const rec = recorder()
    const r = await open(
      [
        { text: 'This answer will be cut somewhere in the middle.', fault: { type: 'cut', afterChunks: 3 } },
        { text: 'Complete answer.' },
      ],
      { clock: instantClock(), observers: [rec] },
    )
    const result = await r.agent.send('hi')
    expect(result).toMatchObject({ reason: 'completed', text: 'Complete answer.' })
    expect(r.events('assistant/attempt')[0]!.data.error.code).toBe('LLM_STREAM_CUT')
    expect(r.events('assistant/attempt')[0]!.data.stream.chunks).toBeGreaterThan(0)
    expect(r.events('llm/retry')).toHaveLength(1)
    expect(r.events('assistant/message').map((e) => e.data.message.content)).toEqual([
      [{ type: 'text', text: 'Complete answer.' }],
    ])
    // live UIs saw the cut prefix, then the retry notice, then the complete answer
    expect(rec.log).toEqual(['retry 1'])
    expect(rec.text.endsWith('Complete answer.')).toBe(true)
  })
})

describe('abort', () => {
  it('keeps the delivered prefix as an interrupted assistant message and ends the turn aborted', async () => {
    const text = 'One two three four five six seven eight nine ten eleven twelve.'
    let seen = ''
    const r = await open(
      [{ reasoning: 'Thinking.', text, delayMs: 20, chunking: { text: 4 } }, { text: 'next' }],
      {
        observers: [
          {
            onTextDelta: (d) => {
              if (d.turn !== 1) return
              seen += d.text
              if (seen.length >= 12) r.agent.abort()
            },
          },
        ],
      },
    )
    const result = await r.agent.send('count')
    expect(result.reason).toBe('aborted')
    const msg = r.events('assistant/message')[0]!.data
    expect(msg.interrupted).toBe(true)
    expect(msg.stream.finishReason).toBeUndefined()
    expect(msg.message.content[0]).toEqual({ type: 'reasoning', text: 'Thinking.' })
    const kept = msg.message.content[1]
    expect(kept?.type).toBe('text')
    const keptText = (kept as { text: string }).text
    expect(text.startsWith(keptText)).toBe(true)
    expect(keptText.length).toBeGreaterThanOrEqual(12)
    expect(keptText.length).toBeLessThan(text.length)
    expect(r.types().slice(-3)).toEqual(['assistant/message', 'step/end', 'turn/end'])
    expect(r.events('turn/end')[0]!.data.reason).toBe('aborted')
    // the next turn runs normally and the model sees the interrupted prefix
    const next = await r.agent.send('go on')
    expect(next.reason).toBe('completed')
    expect(r.server.requests[1]!.body!.messages![1]).toMatchObject({ role: 'assistant', content: keptText })
  })

  it('drops an incomplete tool call from the interrupted prefix and answers complete ones as aborted', async () => {
    const probes = probeTools(1)
    const fragments: string[] = []
    const r = await open(
      [
        {
          text: 'Go.',
          toolCalls: [
            { id: 'whole', name: 'poke', arguments: { key: 'first' } },
            { id: 'partial', name: 'poke', arguments: { key: 'second-key-that-streams-slowly' } },
          ],
          chunking: { arguments: 3 },
        },
      ],
      {
        tools: probes.tools,
        observers: [
          {
            onToolCallDelta: (d) => {
              fragments.push(`${d.index}:${d.argumentsDelta}`)
              // abort a few fragments into the second call
              if (d.index === 1 && fragments.filter((f) => f.startsWith('1:')).length === 3) r.agent.abort()
            },
          },
        ],
      },
    )
    const result = await r.agent.send('poke twice')
    expect(result.reason).toBe('aborted')
    expect(fragments.filter((f) => f.startsWith('1:'))).toHaveLength(3)
    const msg = r.events('assistant/message')[0]!.data
    expect(msg.interrupted).toBe(true)
    const calls = msg.message.content.filter((b) => b.type === 'tool-call')
    expect(calls).toEqual([{ type: 'tool-call', id: 'whole', name: 'poke', arguments: '{"key":"first"}' }])
    expect(r.events('tool/result').map((e) => [e.data.message.toolCallId, e.data.errorCode])).toEqual([
      ['whole', 'TOOL_ABORTED'],
    ])
    expect(probes.log).toEqual([])
    expect(r.events('turn/end')[0]!.data.reason).toBe('aborted')
  })

  it('logs an attempt (not a message) when aborted before any content', async () => {
    const controller = new AbortController()
    const r = await open([{ text: 'late', headersDelayMs: 10_000 }])
    const pending = r.agent.send('hi', { signal: controller.signal })
    // abort once the request reached the server, long before any header or content can come back
    await new Promise<void>((resolve) => {
      const tick = setInterval(() => {
        if (r.server.requests.length > 0) {
          clearInterval(tick)
          resolve()
        }
      }, 2)
    })
    controller.abort()
    const result = await pending
    expect(result.reason).toBe('aborted')
    expect(r.events('assistant/message')).toHaveLength(0)
    expect(r.events('assistant/attempt')[0]!.data.error.code).toBe('LLM_ABORTED')
    expect(r.session.deriveMessages().map((m) => m.role)).toEqual(['user'])
  })

  it('aborts running tools through their signal, answers the rest as aborted, and ends the turn', async () => {
    let sawAbort = false
    const wait: Tool<Record<string, never>> = defineTool({
      name: 'wait_forever',
      description: 'Waits until cancelled.',
      inputSchema: z.strictObject({}),
      annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
      call: (_input, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            sawAbort = true
            reject(new Error('cancelled'))
          })
        }),
    })
    const probes = probeTools(1)
    const r = await open(
      [
        {
          toolCalls: [
            { id: 'w', name: 'wait_forever', arguments: {} },
            { id: 'p', name: 'poke', arguments: { key: 'after' } },
          ],
        },
      ],
      {
        tools: [wait, ...probes.tools],
        observers: [{ onToolCallStarted: (i) => i.call.id === 'w' && setTimeout(() => r.agent.abort(), 10) }],
      },
    )
    const result = await r.agent.send('wait')
    expect(result.reason).toBe('aborted')
    expect(sawAbort).toBe(true)
    expect(probes.log).toEqual([])
    expect(r.events('tool/result').map((e) => [e.data.message.toolCallId, e.data.errorCode])).toEqual([
      ['w', 'TOOL_ABORTED'],
      ['p', 'TOOL_ABORTED'],
    ])
    expect(r.types().slice(-2)).toEqual(['step/end', 'turn/end'])
    expect(r.server.requests).toHaveLength(1)
  })

  it('starts and immediately ends a turn whose signal was aborted while it was queued, keeping the message', async () => {
    const r = await open([{ text: 'never' }])
    const controller = new AbortController()
    controller.abort()
    const result = await r.agent.send('too late', { signal: controller.signal })
    expect(result.reason).toBe('aborted')
    expect(r.types()).toEqual(['turn/start', 'user/message', 'turn/end'])
    expect(r.server.requests).toHaveLength(0)
  })

  it('aborts during a retry backoff without another model call', async () => {
    const r = await open([{ fault: { type: 'rate-limit', retryAfter: 600 } }, { text: 'never' }], {
      observers: [{ onRetry: () => r.agent.abort() }],
      retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 },
    })
    const result = await r.agent.send('hi')
    expect(result.reason).toBe('aborted')
    // Retry-After asked for 600 s: honoured up to retry.maxRetryAfterMs (default 60 s), and logged as asked
    expect(r.events('llm/retry')[0]!.data).toMatchObject({ delayMs: 60_000, retryAfterMs: 600_000 })
    expect(r.server.requests).toHaveLength(1)
    expect(r.types().slice(-4)).toEqual(['assistant/attempt', 'llm/retry', 'step/end', 'turn/end'])
  })
})
