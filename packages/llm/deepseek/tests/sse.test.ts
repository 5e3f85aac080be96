import fc from 'fast-check'
import { APIError } from 'openai'
import { describe, expect, it } from 'vitest'
import { SseChunks } from '../src/sse.js'

/** A body that sends `parts` (bytes) one network read each, then ends. */
function body(parts: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const p of parts) controller.enqueue(p)
      controller.close()
    },
  })
}

/** What a reader of `parts` hands out: its chunks, whether it saw `[DONE]`, what it threw. */
async function read(parts: readonly Uint8Array[]) {
  const sse = new SseChunks(body(parts), new Headers())
  const chunks: unknown[] = []
  let thrown: unknown
  try {
    for await (const c of sse) chunks.push(c)
  } catch (error) {
    thrown = error
  }
  return { chunks, done: sse.done, thrown }
}

const bytes = (text: string) => new TextEncoder().encode(text)

/** `all` cut at `at` (byte offsets: a cut may split a UTF-8 sequence or a CRLF). */
const cut = (all: Uint8Array, at: readonly number[]): Uint8Array[] => {
  const ends = [...new Set(at)].filter((a) => a > 0 && a < all.length).sort((a, b) => a - b)
  return [0, ...ends].map((from, i) => all.subarray(from, ends[i] ?? all.length))
}

describe('the SSE reader', () => {
  // events as the wire may send them: any line end, comments, fields it ignores, data in lines
  const events = [
    'data: {"n":1,"text":"h\\u00e9llo \u00e9\u6f22\ud83d\ude00"}\n\n',
    ': keep-alive\r\n\r\n',
    'event: message\rid: 7\rretry: 10\rdata:{"n":2}\r\r',
    'data: {"n":\r\ndata: 3}\r\n\r\n',
    'data\n\n',
    'event: only-a-name\n\n',
    'data: {"n":4,"text":"a: b"}\n\n',
  ]
  const wire = `${events.join('')}data: [DONE]\n\ndata: {"n":5}\n\n`
  const expected = [
    { n: 1, text: 'h\u00e9llo \u00e9\u6f22\ud83d\ude00' },
    { n: 2 },
    { n: 3 },
    { n: 4, text: 'a: b' },
  ]

  it('reads the same chunks and the marker however the bytes are cut (property)', async () => {
    const all = bytes(wire)
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: all.length }), { maxLength: 40 }), async (at) => {
        // `data` with no value is an empty payload, which is not JSON: the stream is malformed
        const result = await read(cut(all, at))
        expect(result.thrown).toBeInstanceOf(SyntaxError)
        expect(result.chunks).toEqual(expected.slice(0, 3))
      }),
      { seed: 23, numRuns: 300 },
    )
    const wellFormed = bytes(wire.replace('data\n\n', ''))
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat({ max: wellFormed.length }), { maxLength: 40 }), async (at) => {
        expect(await read(cut(wellFormed, at))).toEqual({ chunks: expected, done: true, thrown: undefined })
      }),
      { seed: 24, numRuns: 300 },
    )
  })

  it('drops a leading byte-order mark, even cut over reads, and only that one', async () => {
    const all = bytes('\ufeffdata: {"n":1}\n\n\ufeffdata: {"n":2}\n\ndata: [DONE]\n\n')
    for (const at of [[], [1], [2], [1, 2], [3]]) {
      // the second mark starts a field named "\ufeffdata", which is ignored
      expect(await read(cut(all, at))).toEqual({ chunks: [{ n: 1 }], done: true, thrown: undefined })
    }
  })

  it('a CR ending one read and the LF opening the next are one line end', async () => {
    const parts = ['data: {"n":1}\r', '\n\r', '\ndata: [DONE]\r', '\n\r\n'].map(bytes)
    expect(await read(parts)).toEqual({ chunks: [{ n: 1 }], done: true, thrown: undefined })
  })

  it('a stream without the marker, or with it in an event the body never ended, is not done', async () => {
    expect((await read([bytes('data: {"n":1}\n\n')])).done).toBe(false)
    expect(await read([bytes('data: {"n":1}\n\ndata: [DONE]\n')])).toEqual({
      chunks: [{ n: 1 }],
      done: false,
      thrown: undefined,
    })
    expect(await read([])).toEqual({ chunks: [], done: false, thrown: undefined })
  })

  it("an event carrying an error object throws the client's APIError after the chunks before it", async () => {
    const result = await read([
      bytes('data: {"n":1}\n\ndata: {"error":{"message":"overloaded","code":"busy"}}\n\ndata: {"n":2}\n\n'),
    ])
    expect(result.chunks).toEqual([{ n: 1 }])
    expect(result.thrown).toBeInstanceOf(APIError)
    expect((result.thrown as APIError).status).toBeUndefined()
    expect((result.thrown as APIError).message).toBe('overloaded')
  })

  it('stops at return: the body is cancelled and nothing more is handed out', async () => {
    let cancelled = false
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(bytes('data: {"n":1}\n\n'))
      },
      cancel() {
        cancelled = true
      },
    })
    const sse = new SseChunks(stream, new Headers())
    expect(await sse.next()).toEqual({ done: false, value: { n: 1 } })
    await sse.return()
    expect(cancelled).toBe(true)
    expect(await sse.next()).toEqual({ done: true, value: undefined })
  })
})
