import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import {
  type ScriptedResponse,
  type ScriptedServer,
  ScriptValidationError,
  splitString,
  startScriptedServer,
} from '../src/index.js'

const servers: ScriptedServer[] = []
async function start(options: Parameters<typeof startScriptedServer>[0] = {}): Promise<ScriptedServer> {
  const server = await startScriptedServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: 'deepseek-v4-flash',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
})

function post(server: ScriptedServer, body: unknown, init: RequestInit = {}, path = '/chat/completions') {
  return fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(init.headers as Record<string, string> | undefined) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
  })
}

/** Splits an SSE body into its `data:` payloads and its comment lines. */
function parseSse(text: string): { data: string[]; comments: string[] } {
  const data: string[] = []
  const comments: string[] = []
  for (const line of text.split('\n')) {
    if (line.startsWith('data: ')) data.push(line.slice(6))
    else if (line.startsWith(':')) comments.push(line)
  }
  return { data, comments }
}

interface Chunk {
  choices: Array<{
    delta: {
      role?: string
      content?: string | null
      reasoning_content?: string | null
      tool_calls?: Array<{ index: number; id?: string; function: { name?: string; arguments: string } }>
    }
    finish_reason: string | null
  }>
  usage?: Record<string, unknown> | null
}

describe('script validation', () => {
  it('rejects a bad step up front, naming the step and the path', async () => {
    const script = [{ text: 'ok' }, { toolCalls: [{ name: '', arguments: '{}' }] }] as ScriptedResponse[]
    const error = await startScriptedServer({ script }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ScriptValidationError)
    const typed = error as ScriptValidationError
    expect(typed.code).toBe('SCRIPTED_SERVER_INVALID_STEP')
    expect(typed.step).toBe(1)
    expect(typed.issues.map((issue) => issue.path)).toContain('toolCalls[0].name')
    expect(typed.message).toContain('step 1')
  })

  it('numbers steps across enqueue calls and leaves the queue untouched on error', async () => {
    const server = await start({ script: [{ text: 'a' }] })
    server.enqueue({ text: 'b' })
    const bad = { text: 'c', fault: { type: 'explode' } } as unknown as ScriptedResponse
    expect(() => server.enqueue({ text: 'ok' }, bad)).toThrow(ScriptValidationError)
    try {
      server.enqueue({ text: 'ok' }, bad)
    } catch (error) {
      expect((error as ScriptValidationError).step).toBe(3)
    }
    expect(server.pending).toBe(2)
  })

  it('rejects unknown fields and bad numbers', async () => {
    const cases: unknown[] = [
      { txt: 'typo' },
      { delayMs: -1 },
      { fault: { type: 'http', status: 200 } },
      { chunking: { text: 0 } },
    ]
    for (const step of cases) {
      await expect(startScriptedServer({ script: [step as ScriptedResponse] })).rejects.toThrow(
        ScriptValidationError,
      )
    }
  })

  it('answers 500 and records a problem when a handler returns an invalid response', async () => {
    const server = await start({ handler: () => ({ finishReason: 'done' }) as unknown as ScriptedResponse })
    const response = await post(server, chatBody())
    expect(response.status).toBe(500)
    const body = (await response.json()) as { error: { type: string; message: string } }
    expect(body.error.type).toBe('script_error')
    expect(body.error.message).toContain('finishReason')
    expect(server.lastRequest?.outcome).toBe('rejected')
    expect(server.problems).toHaveLength(1)
  })
})

describe('request recording', () => {
  it('records path, headers and the parsed body of every request', async () => {
    const server = await start({ script: [{ text: 'one' }, { text: 'two' }] })
    await (await post(server, chatBody(), { headers: { authorization: 'Bearer k1', 'x-trace': 't' } })).text()
    await (await post(server, chatBody({ model: 'other' }), {}, '/v1/chat/completions?x=1')).text()
    expect(server.requests).toHaveLength(2)
    const [first, second] = server.requests
    expect(first?.path).toBe('/chat/completions')
    expect(first?.headers.authorization).toBe('Bearer k1')
    expect(first?.headers['x-trace']).toBe('t')
    expect(first?.body?.messages).toEqual([{ role: 'user', content: 'hi' }])
    expect(first?.response).toEqual({ text: 'one' })
    expect(second?.path).toBe('/v1/chat/completions')
    expect(second?.body?.model).toBe('other')
    expect(server.requests.map((r) => r.outcome)).toEqual(['completed', 'completed'])
    expect(server.pending).toBe(0)
  })

  it('records and rejects unknown routes, non-JSON bodies and an exhausted script', async () => {
    const server = await start({ script: [] })
    expect((await post(server, chatBody(), {}, '/embeddings')).status).toBe(404)
    expect((await post(server, '{nope')).status).toBe(400)
    expect((await post(server, '[1, 2]')).status).toBe(400)
    const exhausted = await post(server, chatBody())
    expect(exhausted.status).toBe(500)
    expect(((await exhausted.json()) as { error: { type: string } }).error.type).toBe('script_exhausted')
    expect(server.requests.map((r) => r.outcome)).toEqual(['rejected', 'rejected', 'rejected', 'rejected'])
    expect(server.requests[1]?.rawBody).toBe('{nope')
    expect(server.requests[2]?.body).toBeUndefined()
    expect(server.problems).toHaveLength(4)
  })

  it('checks the API key without consuming a step', async () => {
    const server = await start({ script: [{ text: 'x' }], apiKey: 'secret' })
    expect((await post(server, chatBody(), { headers: { authorization: 'Bearer wrong' } })).status).toBe(401)
    expect(server.pending).toBe(1)
    expect(server.problems).toHaveLength(1)
    expect((await post(server, chatBody(), { headers: { authorization: 'Bearer secret' } })).status).toBe(200)
    expect(server.pending).toBe(0)
  })

  it('falls back to the handler once the queue is empty', async () => {
    const server = await start({
      script: [{ text: 'queued' }],
      handler: (request) => ({ text: `dynamic ${request.index}` }),
    })
    const a = (await (await post(server, chatBody())).json()) as {
      choices: Array<{ message: { content: string } }>
    }
    const b = (await (await post(server, chatBody())).json()) as {
      choices: Array<{ message: { content: string } }>
    }
    expect(a.choices[0]?.message.content).toBe('queued')
    expect(b.choices[0]?.message.content).toBe('dynamic 1')
  })
})

describe('streaming', () => {
  it('streams reasoning, text and tool calls in DeepSeek chunk shapes, ending with usage and [DONE]', async () => {
    const server = await start({
      script: [
        {
          reasoning: 'Let me think.',
          text: 'Reading both.',
          toolCalls: [
            { name: 'read_file', arguments: { path: 'a.txt' } },
            { id: 'call_x', name: 'read_file', arguments: '{"path":"b.txt"}' },
          ],
          usage: { promptTokens: 100, completionTokens: 20, cacheHitTokens: 64, reasoningTokens: 5 },
          chunking: { text: 4, reasoning: 3, arguments: [1, 2, 9] },
        },
      ],
    })
    const response = await post(server, chatBody({ stream: true, stream_options: { include_usage: true } }))
    expect(response.headers.get('content-type')).toContain('text/event-stream')
    const { data } = parseSse(await response.text())
    expect(data.at(-1)).toBe('[DONE]')
    const chunks = data.slice(0, -1).map((line) => JSON.parse(line) as Chunk)
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: null, reasoning_content: '' })
    const deltas = chunks.flatMap((c) => c.choices.map((choice) => choice.delta))
    expect(deltas.map((d) => d.reasoning_content ?? '').join('')).toBe('Let me think.')
    expect(deltas.map((d) => d.content ?? '').join('')).toBe('Reading both.')
    expect(deltas.filter((d) => d.content).every((d) => (d.content ?? '').length <= 4)).toBe(true)
    const calls = new Map<number, { id?: string; name?: string; args: string }>()
    for (const delta of deltas) {
      for (const call of delta.tool_calls ?? []) {
        const entry = calls.get(call.index) ?? { args: '' }
        if (call.id) entry.id = call.id
        if (call.function.name) entry.name = call.function.name
        entry.args += call.function.arguments
        calls.set(call.index, entry)
      }
    }
    expect([...calls.values()]).toEqual([
      { id: 'call_0_0', name: 'read_file', args: '{"path":"a.txt"}' },
      { id: 'call_x', name: 'read_file', args: '{"path":"b.txt"}' },
    ])
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls')
    expect(chunks.at(-1)?.choices).toEqual([])
    expect(chunks.at(-1)?.usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      prompt_cache_hit_tokens: 64,
      prompt_cache_miss_tokens: 36,
      completion_tokens_details: { reasoning_tokens: 5 },
    })
    expect(server.lastRequest?.chunksSent).toBe(chunks.length)
  })

  it('sends no usage chunk without stream_options.include_usage, and keep-alive comments when asked', async () => {
    const server = await start({ script: [{ text: 'hello', keepAlive: 2, finishReason: 'length' }] })
    const { data, comments } = parseSse(await (await post(server, chatBody({ stream: true }))).text())
    const chunks = data.slice(0, -1).map((line) => JSON.parse(line) as Chunk)
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true)
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('length')
    expect(comments.length).toBe(2 * chunks.length)
    expect(comments.every((c) => c === ': keep-alive')).toBe(true)
  })

  it('answers stream:false with a chat.completion object', async () => {
    const server = await start({
      script: [{ reasoning: 'r', text: 't', toolCalls: [{ name: 'ls', arguments: {} }], usage: false }],
    })
    const body = (await (await post(server, chatBody())).json()) as Record<string, unknown>
    expect(body.object).toBe('chat.completion')
    expect(body.usage).toBeUndefined()
    expect(body.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 't',
          reasoning_content: 'r',
          tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'ls', arguments: '{}' } }],
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ])
  })
})

describe('faults', () => {
  it.each([
    [{ type: 'rate-limit', retryAfter: 3 }, 429, '3'],
    [{ type: 'server-error' }, 500, null],
    [{ type: 'overloaded' }, 503, null],
    [{ type: 'auth' }, 401, null],
    [{ type: 'insufficient-balance' }, 402, null],
    [
      { type: 'http', status: 422, message: 'bad param', retryAfter: 'Wed, 21 Oct 2015 07:28:00 GMT' },
      422,
      'Wed, 21 Oct 2015 07:28:00 GMT',
    ],
  ] as const)('answers %j with its status', async (fault, status, retryAfter) => {
    const server = await start({ script: [{ text: 'never sent', fault }] })
    const response = await post(server, chatBody({ stream: true }))
    expect(response.status).toBe(status)
    expect(response.headers.get('retry-after')).toBe(retryAfter)
    const body = (await response.json()) as { error: { message: string } }
    expect(body.error.message.length).toBeGreaterThan(0)
    expect(server.lastRequest?.outcome).toBe('http-error')
  })

  it('answers a context-length fault with a 400 naming the maximum context length', async () => {
    const server = await start({ script: [{ fault: { type: 'context-length' } }] })
    const response = await post(server, chatBody())
    expect(response.status).toBe(400)
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /maximum context length/,
    )
  })

  it('cuts a stream mid-way: the body read fails and no [DONE] arrives', async () => {
    const server = await start({
      script: [{ text: 'a'.repeat(80), chunking: { text: 8 }, fault: { type: 'cut', afterChunks: 3 } }],
    })
    const response = await post(server, chatBody({ stream: true }))
    expect(response.status).toBe(200)
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let received = ''
    const failure = await (async () => {
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return undefined
        received += decoder.decode(value)
      }
    })().catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(Error)
    expect(received).not.toContain('[DONE]')
    expect(parseSse(received).data).toHaveLength(3)
    expect(server.lastRequest?.outcome).toBe('cut')
  })

  it('sends one malformed data line and then continues', async () => {
    const server = await start({ script: [{ text: 'hello', fault: { type: 'malformed', afterChunks: 1 } }] })
    const { data } = parseSse(await (await post(server, chatBody({ stream: true }))).text())
    expect(data[1]).toBe('{"id": "broken')
    expect(() => JSON.parse(data[1] ?? '')).toThrow()
    expect(data.at(-1)).toBe('[DONE]')
  })

  it('notices a client that goes away during a slow stream', async () => {
    const server = await start({ script: [{ text: 'x'.repeat(100), chunking: { text: 1 }, delayMs: 20 }] })
    const controller = new AbortController()
    const response = await post(server, chatBody({ stream: true }), { signal: controller.signal })
    const reader = response.body!.getReader()
    await reader.read()
    controller.abort()
    await server.settled()
    expect(server.lastRequest?.outcome).toBe('client-closed')
    expect(server.lastRequest?.chunksSent).toBeLessThan(102)
  })
})

describe('splitString', () => {
  it('any split reassembles the string exactly', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary' }),
        fc.oneof(fc.integer({ min: 1, max: 20 }), fc.array(fc.integer({ min: 0, max: 60 }))),
        (value, split) => {
          const pieces = splitString(value, split)
          expect(pieces.join('')).toBe(value)
          expect(pieces.every((piece) => piece.length > 0)).toBe(true)
        },
      ),
    )
  })
})

describe('graceful cut', () => {
  it('ends the response cleanly without [DONE]', async () => {
    const server = await start({
      script: [
        { text: 'abcdefgh', chunking: { text: 2 }, fault: { type: 'cut', afterChunks: 2, graceful: true } },
      ],
    })
    const { data } = parseSse(await (await post(server, chatBody({ stream: true }))).text())
    expect(data).toHaveLength(2)
    expect(data).not.toContain('[DONE]')
    expect(server.lastRequest?.outcome).toBe('cut')
  })
})

describe('stall fault and tool-call answers', () => {
  it('stalls after N chunks, sending only keep-alive comments, then continues', async () => {
    const server = await start({
      script: [
        {
          text: 'abcdefgh',
          chunking: { text: 2 },
          fault: { type: 'stall', afterChunks: 2, keepAliveMs: 20, forMs: 150 },
        },
      ],
    })
    const res = await post(server, chatBody({ stream: true }))
    const { data, comments } = parseSse(await res.text())
    expect(comments.filter((c) => c.includes('keep-alive')).length).toBeGreaterThan(0)
    expect(data.at(-1)).toBe('[DONE]')
    expect(server.requests[0]!.outcome).toBe('completed')
  })

  it('without forMs, stalls until the client goes away', async () => {
    const server = await start({
      script: [{ text: 'abcdefgh', chunking: { text: 2 }, fault: { type: 'stall' } }],
    })
    const controller = new AbortController()
    const res = await post(server, chatBody({ stream: true }), { signal: controller.signal })
    const reader = res.body!.getReader()
    await reader.read() // the first chunk arrives, then nothing
    controller.abort()
    await server.settled()
    expect(server.requests[0]!.outcome).toBe('client-closed')
    expect(server.requests[0]!.chunksSent).toBe(1)
  })

  it('answers HTTP 400 to an assistant tool call that no tool message answers, as DeepSeek does', async () => {
    const server = await start({ script: [{ text: 'ok' }] })
    const messages = [
      { role: 'user', content: 'go' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'x', arguments: '{}' } }],
      },
      { role: 'user', content: 'again' },
    ]
    const res = await post(server, chatBody({ messages }))
    expect(res.status).toBe(400)
    expect(await res.text()).toContain('did not have response messages: c1')
    expect(server.pending).toBe(1)
    const answered = [
      ...messages.slice(0, 2),
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
      messages[2],
    ]
    expect((await post(server, chatBody({ messages: answered }))).status).toBe(200)
  })
})
